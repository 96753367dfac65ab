// The live view in a process of its own, fed by the run's process over a socket pair.
//
// Why a process: an emulated run is one thread, and glibc's malloc takes a cheaper path while a
// process has only one thread. Any thread in the run's process — the HTTP server's — puts every
// allocation on the locked path and slowed the default run by about 5%. So the run starts the
// server, troupe-live (live_server_main.cpp, beside the troupe binary), before its run starts and
// sends it each snapshot as JSON (a few a wall second); the run's process stays single-threaded
// and never loads the HTTP library.
//
// After the run the parent closes the socket; the server serves the final state for the linger
// time, or until SIGINT/SIGTERM (the parent forwards them from the run's end on), then exits.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "runtime/live_feed.hpp"

namespace troupe {

class LiveViewProcess : public LiveSink {
 public:
  LiveViewProcess() = default;
  ~LiveViewProcess() override;  // a view not finished is stopped at once
  LiveViewProcess(const LiveViewProcess&) = delete;
  LiveViewProcess& operator=(const LiveViewProcess&) = delete;

  // Starts the server; it listens on host:port (0: a free port) and stays up `linger_s` after
  // Finish. A port it cannot listen on is bad input naming `flag`.
  Status Start(const std::string& host, uint16_t port, const std::string& flag, double linger_s);
  uint16_t port() const { return port_; }

  // Called on the run's driving thread: the snapshot goes to the server as JSON.
  void Publish(LiveSnapshot snapshot) override;

  // The run has ended: the server hears so, and from here on SIGINT and SIGTERM end its linger
  // rather than this process. Call before saying the run has ended, so that a Ctrl-C right after
  // that line finds the forwarding in place.
  void EndRun();

  // Waits while the server lingers (Ctrl-C ends the wait); ends the run first where EndRun was
  // not called.
  void Finish();

 private:
  pid_t child_ = -1;
  int socket_ = -1;  // the parent's end
  uint16_t port_ = 0;
  int64_t version_ = 0;
  bool forwarding_ = false;  // between EndRun and the end of Finish
  struct sigaction old_int_ = {};
  struct sigaction old_term_ = {};
};

}  // namespace troupe
