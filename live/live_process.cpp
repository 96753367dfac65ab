#include "live/live_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "live/live_frames.hpp"
#include "live/live_json.hpp"

namespace troupe {
namespace {

constexpr int kRunSocket = 3;  // the server's end, as troupe-live expects it

std::atomic<pid_t> g_forward_to{-1};
void ForwardStop(int) {
  if (g_forward_to.load() > 0) kill(g_forward_to.load(), SIGTERM);
}

// troupe-live beside the running executable.
std::string ServerPath() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path("troupe-live") : exe.parent_path() / "troupe-live")
      .string();
}

// In the forked child: the server's end becomes fd 3, then troupe-live replaces the process.
[[noreturn]] void ExecServer(int fd, const std::string& path, const std::string& host,
                             uint16_t port, const std::string& flag, double linger_s) {
  if (fd != kRunSocket && dup2(fd, kRunSocket) < 0) _exit(2);  // dup2 clears close-on-exec
  if (fd == kRunSocket) fcntl(fd, F_SETFD, 0);
  char linger[32];
  std::snprintf(linger, sizeof linger, "%.17g", linger_s);
  const std::string port_text = std::to_string(port);
  execl(path.c_str(), "troupe-live", flag.c_str(), host.c_str(), port_text.c_str(), linger,
        static_cast<char*>(nullptr));
  live_frames::WriteFrame(kRunSocket, "!" + flag + ": cannot start the live view's server " + path +
                                          " (" + std::strerror(errno) + ")");
  _exit(2);
}

}  // namespace

Status LiveViewProcess::Start(const std::string& host, uint16_t port, const std::string& flag,
                              double linger_s) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Status::IoError(flag + ": cannot start the live view (" + std::strerror(errno) + ")");
  }
  const std::string path = ServerPath();  // before fork: the child only execs
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::IoError(flag + ": cannot start the live view (" + std::strerror(errno) + ")");
  }
  if (child == 0) ExecServer(fds[1], path, host, port, flag, linger_s);
  close(fds[1]);
  child_ = child;
  socket_ = fds[0];
  std::string answer;
  if (!live_frames::ReadFrame(socket_, &answer) || answer.empty() || answer[0] == '!') {
    Finish();
    if (answer.size() > 1) return Status::InvalidInput(answer.substr(1));
    return Status::IoError(flag + ": the live view's server " + path + " did not start");
  }
  port_ = static_cast<uint16_t>(std::stoul(answer));
  return Status::Ok();
}

void LiveViewProcess::Publish(LiveSnapshot snapshot) {
  if (socket_ < 0) return;
  // A server that went away (killed, crashed) stops being fed; the run goes on.
  if (!live_frames::WriteFrame(socket_, SnapshotJson(snapshot, ++version_))) {
    close(socket_);
    socket_ = -1;
  }
}

void LiveViewProcess::EndRun() {
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
  if (child_ <= 0 || forwarding_) return;
  g_forward_to.store(child_);
  struct sigaction forward = {};
  forward.sa_handler = ForwardStop;
  sigemptyset(&forward.sa_mask);
  sigaction(SIGINT, &forward, &old_int_);
  sigaction(SIGTERM, &forward, &old_term_);
  forwarding_ = true;
}

void LiveViewProcess::Finish() {
  EndRun();
  if (child_ <= 0) return;
  int status = 0;
  while (waitpid(child_, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  forwarding_ = false;
  g_forward_to.store(-1);
  child_ = -1;
}

LiveViewProcess::~LiveViewProcess() {
  if (child_ > 0) kill(child_, SIGTERM);
  Finish();
}

}  // namespace troupe
