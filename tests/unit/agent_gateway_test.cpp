// The agent gateway (agent/agent_gateway.hpp) over loopback, with a plain register
// hook instead of actors: every bad input closes that connection only, and is counted and logged.
#include "agent/agent_gateway.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "agent/agent_auth.hpp"
#include "agent/agent_client.hpp"

namespace troupe::agent_wire {
namespace {

using std::chrono::milliseconds;
constexpr char kSecret[] = "correct horse battery staple";

// Records what registered agents send, as a job proxy would receive it.
struct Recorder {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> events;  // "job:frame-kind" or "job:closed:reason"
  std::vector<std::shared_ptr<AgentLink>> links;

  AgentSink SinkFor(int64_t job_id) {
    return [this, job_id](AgentEvent e) {
      std::lock_guard lock(mutex);
      events.push_back(std::to_string(job_id) + ":" +
                       (e.closed ? "closed:" + e.reason : std::string(BodyName(*e.frame))));
      changed.notify_all();
    };
  }
  bool WaitFor(const std::string& prefix) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(5), [&] {
      for (const std::string& e : events) {
        if (e.rfind(prefix, 0) == 0) return true;
      }
      return false;
    });
  }
};

class AgentGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override { StartGateway(64); }
  void TearDown() override { gateway_->Stop(); }

  void StartGateway(int32_t max_connections, int32_t max_unauthenticated = 8,
                    size_t max_frame_bytes = 4096) {
    GatewayOptions options;
    options.secret = kSecret;
    options.max_connections = max_connections;
    options.max_unauthenticated = max_unauthenticated;
    options.max_frame_bytes = max_frame_bytes;
    options.read_timeout_s = 0.3;
    options.heartbeat_s = 0.1;
    gateway_ = std::make_unique<AgentGateway>(
        options, [this](const agent::Register& r, const std::shared_ptr<AgentLink>& link) {
          Admission a;
          if (r.job().iterations() < 1) {
            a.status = Status::InvalidInput("register: job.iterations: must be >= 1");
            return a;
          }
          std::lock_guard lock(recorder_.mutex);
          a.job_id = next_job_id_++;
          a.sink = recorder_.SinkFor(a.job_id);
          recorder_.links.push_back(link);
          return a;
        });
    ASSERT_TRUE(gateway_->Start().ok());
    ASSERT_GT(gateway_->port(), 0);
  }

  static agent::JobRequest Job() {
    agent::JobRequest job;
    job.set_model("ResNet18");
    job.set_gpus(1);
    job.set_iterations(10);
    return job;
  }

  // Connects and reads Hello; the client is then to register (or misbehave).
  void Connect(AgentClient* client) {
    ASSERT_TRUE(client->Connect("127.0.0.1", gateway_->port()).ok());
  }

  // Reads until the gateway closes the connection; returns the Error frame's message, if any.
  static std::string ErrorThenClose(AgentClient* client) {
    std::string error;
    agent::Envelope frame;
    for (;;) {
      Status s = client->Read(&frame, milliseconds(3000));
      if (!s.ok()) {
        EXPECT_EQ(s.message().rfind("closed", 0), 0u) << s.message();
        return error;
      }
      if (frame.has_error()) error = frame.error().message();
    }
  }

  template <class Counter>
  static bool Eventually(const Counter& counter, int64_t at_least) {
    for (int i = 0; i < 500 && counter.load() < at_least; ++i) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    return counter.load() >= at_least;
  }

  Recorder recorder_;
  int64_t next_job_id_ = 1000000;
  std::unique_ptr<AgentGateway> gateway_;
};

TEST_F(AgentGatewayTest, RegisteredAgentTalksToItsSinkAndTroupeTalksBack) {
  AgentClient client;
  Connect(&client);
  int64_t job_id = -1;
  ASSERT_TRUE(client.Register(Job(), kSecret, &job_id).ok());
  EXPECT_EQ(job_id, 1000000);
  EXPECT_EQ(client.hello().nonce().size(), kNonceBytes);
  EXPECT_DOUBLE_EQ(client.hello().heartbeat_s(), 0.1);
  agent::Envelope heartbeat;
  heartbeat.mutable_heartbeat()->set_sequence(1);
  ASSERT_TRUE(client.Send(heartbeat).ok());
  ASSERT_TRUE(recorder_.WaitFor("1000000:heartbeat"));
  agent::Envelope grant;
  grant.mutable_lease_grant()->set_round(4);
  recorder_.links.at(0)->Send(grant);
  agent::Envelope got;
  ASSERT_TRUE(client.Read(&got, milliseconds(2000)).ok());
  EXPECT_EQ(got.lease_grant().round(), 4);
  agent::Envelope bye;
  bye.mutable_goodbye()->set_reason("job finished");
  recorder_.links.at(0)->Close(std::make_shared<agent::Envelope>(bye));
  ASSERT_TRUE(client.Read(&got, milliseconds(2000)).ok());
  EXPECT_EQ(got.goodbye().reason(), "job finished");
  EXPECT_EQ(ErrorThenClose(&client), "");
  EXPECT_EQ(gateway_->counters().registered.load(), 1);
}

TEST_F(AgentGatewayTest, WrongOrMissingTokenIsRefused) {
  AgentClient wrong;
  Connect(&wrong);
  int64_t job_id = -1;
  Status s = wrong.Register(Job(), "not the secret", &job_id);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("wrong token"), std::string::npos) << s.message();
  AgentClient missing;
  Connect(&missing);
  agent::Envelope hello;
  ASSERT_TRUE(missing.Read(&hello, milliseconds(2000)).ok());
  agent::Envelope reg;
  *reg.mutable_register_()->mutable_job() = Job();
  ASSERT_TRUE(missing.Send(reg).ok());
  EXPECT_EQ(ErrorThenClose(&missing), "missing token");
  EXPECT_TRUE(Eventually(gateway_->counters().auth_failed, 2));
  EXPECT_EQ(gateway_->counters().registered.load(), 0);
}

TEST_F(AgentGatewayTest, GarbageOversizedAndTruncatedFramesCloseOnlyThatConnection) {
  AgentClient good;
  Connect(&good);
  int64_t job_id = -1;
  ASSERT_TRUE(good.Register(Job(), kSecret, &job_id).ok());

  AgentClient garbage;
  Connect(&garbage);
  ASSERT_TRUE(garbage.SendBytes(std::string("\x00\x00\x00\x08GARBAGE!", 12)).ok());
  EXPECT_NE(ErrorThenClose(&garbage).find("not an agent envelope"), std::string::npos);

  AgentClient oversized;
  Connect(&oversized);
  ASSERT_TRUE(oversized.SendBytes(std::string("\x00\x10\x00\x00", 4)).ok());  // 1 MiB > 4096
  EXPECT_NE(ErrorThenClose(&oversized).find("over the limit of 4096"), std::string::npos);

  AgentClient truncated;
  Connect(&truncated);
  ASSERT_TRUE(truncated.SendBytes(std::string("\x00\x00\x00\x20partial", 11)).ok());
  truncated.Close();
  EXPECT_TRUE(Eventually(gateway_->counters().bad_frames, 3));

  // A registered agent that sends garbage is closed, and its job learns why.
  AgentClient registered_then_bad;
  Connect(&registered_then_bad);
  int64_t bad_id = -1;
  ASSERT_TRUE(registered_then_bad.Register(Job(), kSecret, &bad_id).ok());
  ASSERT_TRUE(registered_then_bad.SendBytes(std::string("\xff\xff\xff\xff", 4)).ok());
  ASSERT_TRUE(recorder_.WaitFor(std::to_string(bad_id) + ":closed:frame 1"));

  // The first agent never noticed.
  agent::Envelope heartbeat;
  heartbeat.mutable_heartbeat();
  ASSERT_TRUE(good.Send(heartbeat).ok());
  EXPECT_TRUE(recorder_.WaitFor(std::to_string(job_id) + ":heartbeat"));
  EXPECT_EQ(gateway_->counters().open.load(), 1);
}

TEST_F(AgentGatewayTest, SilentClientIsClosedAfterTheReadTimeout) {
  AgentClient silent;
  Connect(&silent);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(ErrorThenClose(&silent).find("read timeout"), std::string::npos);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.25);
  EXPECT_LT(waited, 3.0);
  EXPECT_EQ(gateway_->counters().timed_out.load(), 1);
}

TEST_F(AgentGatewayTest, AgentThatStopsHeartbeatingFailsItsJob) {
  AgentClient quiet;
  Connect(&quiet);
  int64_t job_id = -1;
  ASSERT_TRUE(quiet.Register(Job(), kSecret, &job_id).ok());
  ASSERT_TRUE(recorder_.WaitFor(std::to_string(job_id) + ":closed:silent for"));
}

TEST_F(AgentGatewayTest, VanishedAgentClosesItsJob) {
  AgentClient gone;
  Connect(&gone);
  int64_t job_id = -1;
  ASSERT_TRUE(gone.Register(Job(), kSecret, &job_id).ok());
  gone.Close();
  ASSERT_TRUE(recorder_.WaitFor(std::to_string(job_id) + ":closed:the agent closed"));
}

TEST_F(AgentGatewayTest, RefusedJobGetsTheReasonAndOtherFramesFirstAreBad) {
  AgentClient refused;
  Connect(&refused);
  agent::JobRequest job = Job();
  job.set_iterations(0);
  int64_t job_id = -1;
  Status s = refused.Register(job, kSecret, &job_id);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("job.iterations"), std::string::npos) << s.message();
  AgentClient impatient;
  Connect(&impatient);
  agent::Envelope progress;
  progress.mutable_progress();
  ASSERT_TRUE(impatient.Send(progress).ok());
  EXPECT_NE(ErrorThenClose(&impatient).find("expected register first, got progress"),
            std::string::npos);
}

TEST_F(AgentGatewayTest, ConnectionsOverTheCapAreRefused) {
  gateway_->Stop();
  StartGateway(2);
  AgentClient a, b, c;
  int64_t job_id = -1;
  Connect(&a);
  ASSERT_TRUE(a.Register(Job(), kSecret, &job_id).ok());
  Connect(&b);
  ASSERT_TRUE(b.Register(Job(), kSecret, &job_id).ok());
  Connect(&c);
  EXPECT_NE(ErrorThenClose(&c).find("too many connections"), std::string::npos);
  EXPECT_EQ(gateway_->counters().refused_full.load(), 1);
}

TEST_F(AgentGatewayTest, IdleUnauthenticatedSocketsCannotLockAgentsOut) {
  gateway_->Stop();
  StartGateway(/*max_connections=*/4, /*max_unauthenticated=*/3);
  // An attacker holds far more idle sockets than either limit, never registering.
  std::vector<std::unique_ptr<AgentClient>> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(std::make_unique<AgentClient>());
    Connect(idle.back().get());
    agent::Envelope hello;
    ASSERT_TRUE(idle.back()->Read(&hello, milliseconds(2000)).ok()) << "idle socket " << i;
  }
  EXPECT_LE(gateway_->counters().unauthenticated.load(), 3);
  EXPECT_GE(gateway_->counters().evicted.load(), 17);
  // A real agent still gets in, and so do as many as max_connections.
  std::vector<std::unique_ptr<AgentClient>> agents;
  for (int i = 0; i < 4; ++i) {
    agents.push_back(std::make_unique<AgentClient>());
    Connect(agents.back().get());
    int64_t job_id = -1;
    ASSERT_TRUE(agents.back()->Register(Job(), kSecret, &job_id).ok()) << "agent " << i;
  }
  EXPECT_EQ(gateway_->counters().registered.load(), 4);
  EXPECT_EQ(gateway_->counters().refused_full.load(), 0);
}

TEST_F(AgentGatewayTest, UnregisteredConnectionsMaySendOnlySmallFrames) {
  gateway_->Stop();
  StartGateway(64, 8, /*max_frame_bytes=*/1 << 20);
  AgentClient stranger;
  Connect(&stranger);
  agent::Envelope hello;
  ASSERT_TRUE(stranger.Read(&hello, milliseconds(2000)).ok());
  // 100 KiB announced before registering: refused at the header, nothing buffered.
  ASSERT_TRUE(stranger.SendBytes(std::string("\x00\x01\x90\x00", 4)).ok());
  EXPECT_NE(ErrorThenClose(&stranger).find("over the limit of 65536"), std::string::npos);
  // A registered agent may send frames up to max_frame_bytes.
  AgentClient agent;
  Connect(&agent);
  int64_t job_id = -1;
  ASSERT_TRUE(agent.Register(Job(), kSecret, &job_id).ok());
  agent::Envelope large;
  large.mutable_error()->set_message(std::string(100 << 10, 'x'));
  ASSERT_TRUE(agent.Send(large).ok());
  EXPECT_TRUE(recorder_.WaitFor(std::to_string(job_id) + ":error"));
}

TEST(FrameDecoderCeilingTest, NoLimitGoesPastTheCeiling) {
  FrameDecoder decoder(size_t{1} << 31);  // a 2 GiB limit asked for
  EXPECT_EQ(decoder.max_frame_bytes(), kMaxFrameBytesCeiling);
  std::vector<agent::Envelope> frames;
  const uint32_t over = static_cast<uint32_t>(kMaxFrameBytesCeiling) + 1;
  const std::string header = {static_cast<char>(over >> 24), static_cast<char>(over >> 16),
                              static_cast<char>(over >> 8), static_cast<char>(over)};
  Status s = decoder.Feed(header, &frames);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("over the limit"), std::string::npos) << s.message();
  EXPECT_EQ(decoder.pending_bytes(), 4u);  // the header only: nothing allocated for the payload
}

TEST(AgentGatewayListenTest, BadAddressIsAnError) {
  GatewayOptions options;
  options.host = "not-an-ip";
  options.secret = "s";
  AgentGateway gateway(options, nullptr);
  Status s = gateway.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'not-an-ip' is not an IP address"), std::string::npos);
}

}  // namespace
}  // namespace troupe::agent_wire
