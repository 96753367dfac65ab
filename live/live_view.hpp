// The live web view of a run (`troupe run --serve [HOST:]PORT`): an HTTP server on its own
// threads serving
//   /        the page (live_page.cpp: plain HTML, SVG and script, nothing fetched from elsewhere)
//   /state   the latest snapshot as JSON
//   /events  server-sent events: one `data:` message of that JSON per snapshot published
// It runs in a process of its own (live_process.hpp), which receives each snapshot as JSON and
// keeps the latest behind a mutex for the HTTP threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.hpp"

namespace httplib {
class Server;
}

namespace troupe {

class LiveView {
 public:
  LiveView();
  ~LiveView();  // stops serving
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  // Listens on host:port (port 0: a free port, see port()) and serves from then on. `flag` names
  // where the address came from, for the one-line error.
  Status Start(const std::string& host, uint16_t port, const std::string& flag);
  uint16_t port() const { return port_; }

  // The snapshot numbered `version` (SnapshotJson), newer than any before it.
  void Publish(std::string json, int64_t version);

  // The latest snapshot as JSON ({"version":0} before the first), and its version.
  std::string StateJson(int64_t* version = nullptr);
  // Waits until a snapshot newer than `seen` is published, serving stops, or `timeout_ms` pass.
  // Returns false when serving stops.
  bool WaitNewer(int64_t seen, int timeout_ms);

  // Stops serving: open event streams end, and the HTTP threads are joined if they end within
  // `grace`. False when they did not: a client holding a request open (one byte at a time, each
  // within the read timeout) keeps its thread, so the caller must end the process, which drops
  // the connection; the destructor would wait for it.
  bool Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  uint16_t port_ = 0;

  std::mutex mu_;
  std::condition_variable published_;
  std::string json_ = "{\"version\":0}";
  int64_t version_ = 0;
  bool stopping_ = false;
  bool served_ = false;  // the server's thread has returned
};

// The page served at /.
const char* LivePageHtml();

}  // namespace troupe
