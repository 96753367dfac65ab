#include "live/live_process.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "live/live_json.hpp"
#include "live/live_view.hpp"

namespace troupe {
namespace {

// Frames on the socket: an 8-byte length, then that many bytes.
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteFrame(int fd, const std::string& text) {
  const uint64_t size = text.size();
  return WriteAll(fd, reinterpret_cast<const char*>(&size), sizeof size) &&
         WriteAll(fd, text.data(), text.size());
}

bool ReadFrame(int fd, std::string* text) {
  uint64_t size = 0;
  if (!ReadAll(fd, reinterpret_cast<char*>(&size), sizeof size) || size > (1u << 30)) return false;
  text->resize(size);
  return ReadAll(fd, text->data(), size);
}

std::atomic<bool> g_stop{false};
std::atomic<pid_t> g_forward_to{-1};
void StopServing(int) { g_stop.store(true); }
void ForwardStop(int) {
  if (g_forward_to.load() > 0) kill(g_forward_to.load(), SIGTERM);
}

void OnStopSignals(void (*handler)(int)) {
  struct sigaction action = {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// The child: listens, reports "port" or the error on the socket, serves what arrives, lingers.
[[noreturn]] void Serve(int fd, const std::string& host, uint16_t port, const std::string& flag,
                        double linger_s) {
  LiveView view;
  const Status s = view.Start(host, port, flag);
  if (!WriteFrame(fd, s.ok() ? std::to_string(view.port()) : "!" + s.message()) || !s.ok()) {
    _exit(2);
  }
  std::string json;
  for (int64_t version = 1; ReadFrame(fd, &json); ++version) view.Publish(json, version);
  OnStopSignals(StopServing);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(linger_s);
  while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  view.Stop();
  _exit(0);
}

}  // namespace

Status LiveViewProcess::Start(const std::string& host, uint16_t port, const std::string& flag,
                              double linger_s) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Status::IoError(flag + ": cannot start the live view (" + std::strerror(errno) + ")");
  }
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::IoError(flag + ": cannot start the live view (" + std::strerror(errno) + ")");
  }
  if (child == 0) {
    close(fds[0]);
    Serve(fds[1], host, port, flag, linger_s);
  }
  close(fds[1]);
  child_ = child;
  socket_ = fds[0];
  std::string answer;
  if (!ReadFrame(socket_, &answer) || answer.empty() || answer[0] == '!') {
    Finish();
    if (answer.size() > 1) return Status::InvalidInput(answer.substr(1));
    return Status::IoError(flag + ": the live view did not start");
  }
  port_ = static_cast<uint16_t>(std::stoul(answer));
  return Status::Ok();
}

void LiveViewProcess::Publish(LiveSnapshot snapshot) {
  if (socket_ < 0) return;
  // A server that went away (killed, crashed) stops being fed; the run goes on.
  if (!WriteFrame(socket_, SnapshotJson(snapshot, ++version_))) {
    close(socket_);
    socket_ = -1;
  }
}

void LiveViewProcess::Finish() {
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
  if (child_ <= 0) return;
  g_forward_to.store(child_);
  struct sigaction old_int = {}, old_term = {};
  sigaction(SIGINT, nullptr, &old_int);
  sigaction(SIGTERM, nullptr, &old_term);
  OnStopSignals(ForwardStop);
  int status = 0;
  while (waitpid(child_, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  g_forward_to.store(-1);
  child_ = -1;
}

LiveViewProcess::~LiveViewProcess() {
  if (child_ > 0) kill(child_, SIGTERM);
  Finish();
}

}  // namespace troupe
