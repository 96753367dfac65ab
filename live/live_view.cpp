#include "live/live_view.hpp"

#include <httplib.h>

#include <chrono>
#include <cstring>

namespace troupe {
namespace {

// An idle event stream sends a comment this often, so a closed browser is noticed.
constexpr int kKeepAliveMs = 5000;
// Wall seconds a connection may stay silent in the middle of a request (each read's bound).
constexpr int kReadTimeoutS = 5;

}  // namespace

LiveView::LiveView() : server_(std::make_unique<httplib::Server>()) {
  server_->set_keep_alive_timeout(1);  // Stop() waits for idle connections no longer than this
  server_->set_read_timeout(kReadTimeoutS, 0);
  server_->set_write_timeout(kReadTimeoutS, 0);
  // SO_REUSEADDR only: httplib's default, SO_REUSEPORT, would let a second troupe listen on a
  // port already taken and share its connections.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(LivePageHtml(), "text/html; charset=utf-8");
  });
  server_->Get("/state", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(StateJson(), "application/json");
  });
  server_->Get("/events", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    auto seen = std::make_shared<int64_t>(-1);
    res.set_chunked_content_provider("text/event-stream",
                                     [this, seen](size_t, httplib::DataSink& sink) {
                                       if (!WaitNewer(*seen, kKeepAliveMs)) return false;
                                       int64_t version = 0;
                                       std::string message = StateJson(&version);
                                       if (version == *seen) {
                                         message = ": idle\n\n";
                                       } else {
                                         *seen = version;
                                         message = "data: " + message + "\n\n";
                                       }
                                       return sink.write(message.data(), message.size());
                                     });
  });
}

LiveView::~LiveView() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

Status LiveView::Start(const std::string& host, uint16_t port, const std::string& flag) {
  const std::string where = flag + " " + host + ":" + std::to_string(port);
  if (port == 0) {
    const int bound = server_->bind_to_any_port(host);
    if (bound <= 0) {
      return Status::InvalidInput(where + ": cannot listen (" + std::strerror(errno) + ")");
    }
    port_ = static_cast<uint16_t>(bound);
  } else {
    if (!server_->bind_to_port(host, port)) {
      return Status::InvalidInput(where + ": cannot listen (" + std::strerror(errno) + ")");
    }
    port_ = port;
  }
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    {
      std::lock_guard lock(mu_);
      served_ = true;
    }
    published_.notify_all();
  });
  // Stop() can only stop a server that is running: wait until it is (a moment).
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::Ok();
}

void LiveView::Publish(std::string json, int64_t version) {
  {
    std::lock_guard lock(mu_);
    json_ = std::move(json);
    version_ = version;
  }
  published_.notify_all();
}

std::string LiveView::StateJson(int64_t* version) {
  std::lock_guard lock(mu_);
  if (version) *version = version_;
  return json_;
}

bool LiveView::WaitNewer(int64_t seen, int timeout_ms) {
  std::unique_lock lock(mu_);
  published_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return stopping_ || version_ > seen; });
  return !stopping_;
}

bool LiveView::Stop(std::chrono::milliseconds grace) {
  std::unique_lock lock(mu_);
  const bool first = !stopping_;
  stopping_ = true;
  lock.unlock();
  published_.notify_all();
  if (!thread_.joinable()) return true;  // never served, or joined already
  if (first) server_->stop();
  lock.lock();
  if (!published_.wait_for(lock, grace, [this] { return served_; })) return false;
  lock.unlock();
  if (thread_.joinable()) thread_.join();
  return true;
}

}  // namespace troupe
