// The external scheduler's transport and mechanism (agent/external_link.hpp,
// agent/external_source.hpp, scheduling/external_mechanism.hpp) against a scripted scheduler on a
// thread of the test: only a scheduler holding the secret registers; a sound answer is used as
// sent; an overcommitting answer is refused with the reason (a Refusal frame) and the round is
// placed by the fallback; a malformed frame is refused (an Error frame), the connection closed,
// and every later round falls back; an answer too late is skipped by its ask number.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent_auth.hpp"
#include "agent/external_link.hpp"
#include "agent/external_source.hpp"
#include "scheduling/external_mechanism.hpp"
#include "scheduling/proportional.hpp"
#include "tests/unit/must.hpp"

namespace troupe::agent_wire {
namespace {

constexpr char kSecret[] = "external-test-secret";

// The scheduler's end, blocking.
class FakeScheduler {
 public:
  explicit FakeScheduler(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~FakeScheduler() { close(fd_); }

  void SendRaw(const std::string& bytes) {
    ASSERT_EQ(send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void Send(const external::Envelope& envelope) {
    const std::string payload = envelope.SerializeAsString();
    const uint32_t n = htonl(static_cast<uint32_t>(payload.size()));
    SendRaw(std::string(reinterpret_cast<const char*>(&n), 4) + payload);
  }
  // The next frame; an envelope with no body once the connection is closed.
  external::Envelope Read() {
    external::Envelope envelope;
    std::string header = ReadExact(4);
    if (header.size() < 4) return envelope;
    uint32_t n;
    std::memcpy(&n, header.data(), 4);
    envelope.ParseFromString(ReadExact(ntohl(n)));
    return envelope;
  }
  // Hello, Register with a token under `secret`; returns the reply.
  external::Envelope Register(const std::string& secret) {
    const external::Envelope hello = Read();
    EXPECT_TRUE(hello.has_hello());
    external::Envelope reg;
    reg.mutable_register_()->set_token(Must(AgentToken(secret, hello.hello().nonce())));
    reg.mutable_register_()->set_protocol_version(kExternalProtocolVersion);
    Send(reg);
    return Read();
  }
  void Answer(int64_t ask, const std::vector<scheduling::JobPlacement>& placements) {
    external::Envelope out;
    out.mutable_allocation()->set_ask(ask);
    for (const scheduling::JobPlacement& p : placements) {
      external::Placement* placement = out.mutable_allocation()->add_placements();
      placement->set_job_id(p.job_id);
      for (const scheduling::PlacementPart& part : p.parts) {
        external::Part* q = placement->add_parts();
        q->set_server(part.server);
        q->set_gpus(part.gpus);
        q->set_cpus(part.cpus);
        q->set_memory_gb(part.memory_gb);
      }
    }
    Send(out);
  }
  bool connected() const { return connected_; }

 private:
  std::string ReadExact(size_t n) {
    std::string data(n, '\0');
    size_t got = 0;
    while (got < n) {
      const ssize_t r = recv(fd_, data.data() + got, n - got, 0);
      if (r <= 0) return data.substr(0, got);
      got += static_cast<size_t>(r);
    }
    return data;
  }
  int fd_ = -1;
  bool connected_ = false;
};

// A listening link, one registered FakeScheduler driven by `script` on its own thread, and the
// external mechanism over them (fallback: GPU-proportional) on a 2 x 8-GPU cluster.
class ExternalScheduler : public ::testing::Test {
 protected:
  void Start(std::function<void(FakeScheduler&)> script, double answer_timeout_s = 5) {
    ExternalLinkOptions options;
    options.secret = kSecret;
    options.connect_timeout_s = 10;
    link_ = std::make_shared<ExternalLink>(options);
    ASSERT_TRUE(link_->Listen().ok());
    const uint16_t port = link_->port();
    thread_ = std::thread([port, script] {
      FakeScheduler scheduler(port);
      ASSERT_TRUE(scheduler.connected());
      ASSERT_TRUE(scheduler.Register(kSecret).has_registered());
      script(scheduler);
    });
    ASSERT_TRUE(link_->Accept(external::Hello{}).ok());
    source_ = std::make_shared<ExternalSource>(link_, answer_timeout_s);
    mechanism_ = std::make_unique<scheduling::ExternalMechanism>(
        source_, "proportional", std::make_unique<scheduling::ProportionalMechanism>());
    for (int i = 0; i < 3; ++i) {
      jobs_[i].id = i;
      jobs_[i].arrival_s = i;
      jobs_[i].gpus = 4;
      offered_.push_back(&jobs_[i]);
    }
  }
  void TearDown() override {
    if (link_) link_->Close("test over");
    if (thread_.joinable()) thread_.join();
  }
  std::vector<scheduling::JobPlacement> Place() {
    ledger_.Reset();
    mechanism_->StartRound(round_, 300.0 * round_);
    ++round_;
    return mechanism_->PlaceRound(offered_, ledger_);
  }
  static std::vector<int64_t> Ids(const std::vector<scheduling::JobPlacement>& placements) {
    std::vector<int64_t> ids;
    for (const auto& p : placements) ids.push_back(p.job_id);
    return ids;
  }

  std::shared_ptr<ExternalLink> link_;
  std::shared_ptr<ExternalSource> source_;
  std::unique_ptr<scheduling::ExternalMechanism> mechanism_;
  std::thread thread_;
  scheduling::SchedJob jobs_[3];
  std::vector<const scheduling::SchedJob*> offered_;
  scheduling::ClusterLedger ledger_{std::vector<scheduling::ServerShape>(2, {8, 24, 500})};
  int64_t round_ = 0;
};

TEST_F(ExternalScheduler, SoundAnswerIsUsedAsSent) {
  Start([](FakeScheduler& s) {
    const external::Envelope state = s.Read();
    ASSERT_TRUE(state.has_round_state());
    EXPECT_EQ(state.round_state().jobs_size(), 3);
    EXPECT_EQ(state.round_state().free_gpus_size(), 2);
    EXPECT_EQ(state.round_state().free_cpus(1), 24);
    EXPECT_EQ(state.round_state().sensitivities_size(), 3);  // every job is new
    // Job 2 first, across both servers; job 0 not at all.
    s.Answer(state.round_state().ask(), {{2, {{1, 2, 1, 10}, {0, 2, 1, 10}}}, {1, {{1, 4, 5, 5}}}});
    EXPECT_TRUE(s.Read().has_goodbye());
  });
  const std::vector<scheduling::JobPlacement> placed = Place();
  EXPECT_EQ(Ids(placed), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(ledger_.free(1).gpus, 2);
  EXPECT_EQ(ledger_.free(1).cpus, 18);
  EXPECT_EQ(source_->counters().accepted, 1);
  EXPECT_EQ(source_->counters().refused, 0);
}

TEST_F(ExternalScheduler, OvercommitIsRefusedWithReasonAndTheRoundFallsBack) {
  std::string refusal;
  Start([&refusal](FakeScheduler& s) {
    const external::Envelope state = s.Read();
    // 5 CPUs too many on server 0.
    s.Answer(state.round_state().ask(), {{0, {{0, 4, 12, 250}}}, {1, {{0, 4, 17, 250}}}});
    const external::Envelope answer = s.Read();
    ASSERT_TRUE(answer.has_refusal());
    EXPECT_EQ(answer.refusal().ask(), state.round_state().ask());
    EXPECT_EQ(answer.refusal().fallback(), "proportional");
    refusal = answer.refusal().reason();
    // The next round is answered soundly, and used; its jobs' matrices were sent already.
    const external::Envelope next = s.Read();
    EXPECT_EQ(next.round_state().sensitivities_size(), 0);
    s.Answer(next.round_state().ask(), {{2, {{1, 4, 12, 250}}}});
    EXPECT_TRUE(s.Read().has_goodbye());
  });
  // GPU-proportional in the policy's order: jobs 0 and 1 fill server 0... and job 2 server 1.
  const std::vector<scheduling::JobPlacement> fallback = Place();
  EXPECT_EQ(Ids(fallback), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(ledger_.free_gpus(), 4);
  EXPECT_EQ(Ids(Place()), (std::vector<int64_t>{2}));
  link_->Close("test over");
  thread_.join();
  EXPECT_NE(refusal.find("placement 1 (job 1) part 0: overcommits server 0: 17 CPUs wanted"),
            std::string::npos)
      << refusal;
  EXPECT_EQ(source_->counters().refused, 1);
  EXPECT_EQ(source_->counters().accepted, 1);
}

TEST_F(ExternalScheduler, MalformedFrameIsRefusedAndLaterRoundsFallBack) {
  std::string error;
  Start([&error](FakeScheduler& s) {
    s.Read();
    s.SendRaw(std::string("\x00\x00\x00\x03\xff\xff\xff", 7));  // not an envelope
    const external::Envelope answer = s.Read();
    ASSERT_TRUE(answer.has_error());
    error = answer.error().message();
    EXPECT_EQ(s.Read().body_case(), external::Envelope::BODY_NOT_SET);  // closed
  });
  EXPECT_EQ(Ids(Place()), (std::vector<int64_t>{0, 1, 2}));
  thread_.join();
  EXPECT_EQ(error, "malformed frame: 3 bytes that are not an external scheduler envelope");
  EXPECT_FALSE(link_->connected());
  EXPECT_EQ(Ids(Place()), (std::vector<int64_t>{0, 1, 2}));  // no connection: fallback
  EXPECT_EQ(source_->counters().asks, 2);
  EXPECT_EQ(source_->counters().refused, 2);
}

TEST_F(ExternalScheduler, OversizedFrameIsRefusedBeforeItsPayload) {
  std::string error;
  Start([&error](FakeScheduler& s) {
    s.Read();
    s.SendRaw(std::string("\x7f\x00\x00\x00", 4));
    error = s.Read().error().message();
  });
  Place();
  thread_.join();
  EXPECT_EQ(error, "malformed frame: length 2130706432 is over the limit of 1048576");
}

TEST_F(ExternalScheduler, NoRunnableJobAsksNothing) {
  Start([](FakeScheduler& s) { EXPECT_TRUE(s.Read().has_goodbye()); });
  offered_.clear();
  EXPECT_TRUE(Place().empty());
  EXPECT_EQ(source_->counters().asks, 0);
}

TEST_F(ExternalScheduler, LateAnswerIsSkippedByItsAsk) {
  Start(
      [](FakeScheduler& s) {
        const int64_t first = s.Read().round_state().ask();
        EXPECT_TRUE(s.Read().has_refusal());  // too slow: refused after the timeout
        const int64_t second = s.Read().round_state().ask();
        s.Answer(first, {{0, {{0, 4, 12, 250}}}});  // late: skipped
        s.Answer(second, {{1, {{1, 4, 12, 250}}}});
        s.Read();
      },
      0.3);
  EXPECT_EQ(Ids(Place()), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(Ids(Place()), (std::vector<int64_t>{1}));
  EXPECT_EQ(source_->counters().refused, 1);
}

TEST(ExternalLinkAuth, WrongTokenIsRefusedAndTheRightOneRegisters) {
  ExternalLinkOptions options;
  options.secret = kSecret;
  options.connect_timeout_s = 10;
  ExternalLink link(options);
  ASSERT_TRUE(link.Listen().ok());
  std::string refused;
  std::thread schedulers([port = link.port(), &refused] {
    {
      FakeScheduler impostor(port);
      refused = impostor.Register("not the secret").error().message();
    }
    FakeScheduler honest(port);
    EXPECT_TRUE(honest.Register(kSecret).has_registered());
    honest.Read();
  });
  EXPECT_TRUE(link.Accept(external::Hello{}).ok());
  link.Close("test over");
  schedulers.join();
  EXPECT_EQ(refused, "wrong token (HMAC-SHA256 of the nonce under the shared secret)");
}

TEST(ExternalLinkAuth, SilentConnectionGivesWayToTheScheduler) {
  ExternalLinkOptions options;
  options.secret = kSecret;
  options.connect_timeout_s = 8;
  ExternalLink link(options);
  ASSERT_TRUE(link.Listen().ok());
  std::thread schedulers([port = link.port()] {
    FakeScheduler silent(port);  // connects, never registers
    FakeScheduler honest(port);
    EXPECT_TRUE(honest.Register(kSecret).has_registered());
    honest.Read();
  });
  // Without giving way, the silent connection would hold Accept until its 8 s deadline.
  EXPECT_TRUE(link.Accept(external::Hello{}).ok());
  link.Close("test over");
  schedulers.join();
}

// Eight connections held open without a word: each waited its 5 s in turn before, so the
// scheduler behind them came 40 s late and the run gave up at 20 s. Now they are watched at once
// and the newcomer closes the oldest.
TEST(ExternalLinkAuth, SilentConnectionsCannotLockTheSchedulerOut) {
  ExternalLinkOptions options;
  options.secret = kSecret;
  options.connect_timeout_s = 20;
  ExternalLink link(options);
  ASSERT_TRUE(link.Listen().ok());
  std::vector<std::unique_ptr<FakeScheduler>> silent;
  for (int i = 0; i < 8; ++i) {
    silent.push_back(std::make_unique<FakeScheduler>(link.port()));
    ASSERT_TRUE(silent.back()->connected());
  }
  std::thread scheduler([port = link.port()] {
    FakeScheduler honest(port);
    // A real scheduler takes a moment to answer Hello: it must not have to race the deadline.
    // The delay is the behaviour under test (a slow newcomer), not an ordering.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(honest.Register(kSecret).has_registered());
    honest.Read();
  });
  const Status s = link.Accept(external::Hello{});
  EXPECT_TRUE(s.ok()) << s.message();
  link.Close("test over");
  scheduler.join();
  // The oldest silent one was closed for the newcomer, with a reason.
  EXPECT_TRUE(silent.front()->Read().has_hello());
  EXPECT_NE(silent.front()->Read().error().message().find("to make room"), std::string::npos);
}

TEST(ExternalLinkAuth, NoSchedulerWithinTheTimeoutIsAnError) {
  ExternalLinkOptions options;
  options.secret = kSecret;
  options.connect_timeout_s = 0.05;
  ExternalLink link(options);
  ASSERT_TRUE(link.Listen().ok());
  const Status s = link.Accept(external::Hello{});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("none registered within 0.05 s"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace troupe::agent_wire
