// The live web view of a run (`troupe run --serve [HOST:]PORT`): an HTTP server on its own
// threads serving
//   /        the page (live_page.cpp: plain HTML, SVG and script, nothing fetched from elsewhere)
//   /state   the latest snapshot as JSON
//   /events  server-sent events: one `data:` message of that JSON per snapshot published
// The run's driver publishes snapshots (LiveSink); the HTTP threads turn the latest one into JSON
// when someone asks, so an unwatched page costs the run one snapshot copy per publication.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.hpp"
#include "runtime/live_feed.hpp"

namespace httplib {
class Server;
}

namespace troupe {

class LiveView : public LiveSink {
 public:
  LiveView();
  ~LiveView() override;  // stops serving
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  // Listens on host:port (port 0: a free port, see port()) and serves from then on. `flag` names
  // where the address came from, for the one-line error.
  Status Start(const std::string& host, uint16_t port, const std::string& flag);
  uint16_t port() const { return port_; }

  void Publish(LiveSnapshot snapshot) override;

  // The latest snapshot as JSON, with the number of snapshots published so far.
  std::string StateJson(int64_t* version = nullptr);
  // Waits until a snapshot newer than `seen` is published, serving stops, or `timeout_ms` pass.
  // Returns false when serving stops.
  bool WaitNewer(int64_t seen, int timeout_ms);

  // Stops serving: open event streams end, the HTTP threads are joined.
  void Stop();

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  uint16_t port_ = 0;

  std::mutex mu_;
  std::condition_variable published_;
  LiveSnapshot latest_;
  int64_t version_ = 0;
  std::string json_;  // latest_ as JSON, for json_version_
  int64_t json_version_ = -1;
  bool stopping_ = false;
};

// The page served at /.
const char* LivePageHtml();

}  // namespace troupe
