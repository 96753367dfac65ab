// Frames between a run and its live view's server process (live_process.hpp): an 8-byte length,
// then that many bytes. Writes never raise SIGPIPE: a server that went away is a false return.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace troupe::live_frames {

inline bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

inline bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

inline bool WriteFrame(int fd, const std::string& text) {
  const uint64_t size = text.size();
  return WriteAll(fd, reinterpret_cast<const char*>(&size), sizeof size) &&
         WriteAll(fd, text.data(), text.size());
}

inline bool ReadFrame(int fd, std::string* text) {
  uint64_t size = 0;
  if (!ReadAll(fd, reinterpret_cast<char*>(&size), sizeof size) || size > (uint64_t{1} << 30)) {
    return false;
  }
  text->resize(size);
  return ReadAll(fd, text->data(), size);
}

}  // namespace troupe::live_frames
