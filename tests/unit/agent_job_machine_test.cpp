// AgentJobMachine (agent/agent_job_machine.hpp): the lease protocol an agent-backed
// job speaks, driven event by event as the proxy actor would.
#include "agent/agent_job_machine.hpp"

#include <gtest/gtest.h>

#include "agent/job_request.hpp"

namespace troupe::agent_wire {
namespace {

AgentJobFacts Facts(int32_t gpus = 2) {
  AgentJobFacts f;
  f.job_id = 1000000;
  f.gpus = gpus;
  f.iterations = 100;
  f.sensitivity = SensitivityMatrix{{1, 4}, {10, 40}, {0.5, 0.5, 1.0, 1.5}};
  f.time_scale = 100;
  return f;
}

LeaseGrant Part(int32_t server, std::vector<int32_t> gpus, int32_t parts, int64_t round = 3) {
  LeaseGrant g;
  g.round = round;
  g.start_s = 900;
  g.end_s = 1200;
  g.server = server;
  g.gpu_ids = std::move(gpus);
  g.cpus = 4.0 * g.gpu_ids.size();
  g.memory_gb = 10.0 * g.gpu_ids.size();
  g.parts = parts;
  return g;
}

agent::Envelope CheckpointDone(int64_t round, int64_t done) {
  agent::Envelope e;
  e.mutable_checkpoint_done()->set_round(round);
  e.mutable_checkpoint_done()->set_iterations_done(done);
  return e;
}

// Grants the two-part lease and ends it; returns the LeaseGrant frame the agent got.
agent::LeaseGrant RunLease(AgentJobMachine& m) {
  EXPECT_TRUE(m.OnGrant(Part(0, {1}, 2)).to_agent.empty());  // waits for the gang's other part
  MachineOutput out = m.OnGrant(Part(5, {0}, 2));
  EXPECT_EQ(m.phase(), AgentJobMachine::Phase::kRunning);
  EXPECT_FALSE(out.report);
  EXPECT_EQ(out.lease_timer_at_s, 1200);
  EXPECT_EQ(out.to_agent.size(), 1u);
  MachineOutput end = m.OnLeaseTimer(3, 900);
  EXPECT_EQ(end.to_agent.size(), 1u);
  EXPECT_TRUE(end.to_agent.at(0).has_lease_end());
  EXPECT_EQ(m.phase(), AgentJobMachine::Phase::kCheckpointing);
  return out.to_agent.at(0).lease_grant();
}

TEST(AgentJobMachineTest, GangLeaseRunsThenReportsAfterTheCheckpoint) {
  AgentJobMachine m(Facts());
  const agent::LeaseGrant grant = RunLease(m);
  EXPECT_EQ(grant.parts_size(), 2);
  EXPECT_DOUBLE_EQ(grant.duration_wall_s(), 3.0);  // 300 run seconds at time_scale 100
  EXPECT_DOUBLE_EQ(grant.speedup(), 1.0);          // 4 CPUs, 10 GB per GPU
  MachineOutput out = m.OnAgentFrame(CheckpointDone(3, 40));
  ASSERT_TRUE(out.report);
  EXPECT_TRUE(out.report->ran);
  EXPECT_EQ(out.report_at_s, -1);
  EXPECT_EQ(out.report->iterations_done, 40);
  EXPECT_EQ(out.report->iterations_left, 60);
  EXPECT_EQ(out.report->gpus, 2);
  EXPECT_EQ(out.report->parts.size(), 2u);
  EXPECT_EQ(out.report->lease_start_s, 900);
  EXPECT_FALSE(out.report->finished);
  EXPECT_EQ(m.phase(), AgentJobMachine::Phase::kIdle);
  // A lost report is re-sent on a query; a lease it never held is answered ran=false.
  MachineOutput again = m.OnQuery(ProgressQuery{3, 900});
  ASSERT_TRUE(again.report);
  EXPECT_EQ(again.report->iterations_done, 40);
  MachineOutput never = m.OnQuery(ProgressQuery{4, 1200});
  ASSERT_TRUE(never.report);
  EXPECT_FALSE(never.report->ran);
  EXPECT_EQ(never.report->iterations_left, 60);
}

TEST(AgentJobMachineTest, DuplicatedGrantCountsOnce) {
  AgentJobMachine m(Facts());
  EXPECT_TRUE(m.OnGrant(Part(0, {1}, 2)).to_agent.empty());
  EXPECT_TRUE(m.OnGrant(Part(0, {1}, 2)).to_agent.empty()) << "the same part again";
  EXPECT_EQ(m.phase(), AgentJobMachine::Phase::kAssembling);
  MachineOutput out = m.OnGrant(Part(5, {0}, 2));
  ASSERT_EQ(out.to_agent.size(), 1u);
  EXPECT_EQ(out.to_agent[0].lease_grant().parts_size(), 2);
  EXPECT_EQ(m.phase(), AgentJobMachine::Phase::kRunning);
}

TEST(AgentJobMachineTest, RefusedPartReportsNotRunAtTheLeaseEnd) {
  AgentJobMachine m(Facts());
  m.OnGrant(Part(0, {1}, 2));
  LeaseGrant refused = Part(5, {}, 2);
  refused.granted = false;
  MachineOutput out = m.OnGrant(refused);
  EXPECT_TRUE(out.to_agent.empty());
  ASSERT_TRUE(out.report);
  EXPECT_FALSE(out.report->ran);
  EXPECT_EQ(out.report_at_s, 1200);
  EXPECT_EQ(m.phase(), AgentJobMachine::Phase::kIdle);
}

TEST(AgentJobMachineTest, FinishedDuringTheLeaseReportsAtOnce) {
  AgentJobMachine m(Facts(1));
  m.OnGrant(Part(0, {2}, 1));
  agent::Envelope finished;
  finished.mutable_finished()->set_iterations_done(100);
  MachineOutput out = m.OnAgentFrame(finished);
  ASSERT_TRUE(out.report);
  EXPECT_TRUE(out.finished);
  EXPECT_TRUE(out.report->finished);
  EXPECT_EQ(out.report->iterations_left, 0);
  EXPECT_EQ(m.phase(), AgentJobMachine::Phase::kFinished);
  EXPECT_TRUE(m.OnGrant(Part(0, {2}, 1, 4)).to_agent.empty());  // nothing after the end
}

TEST(AgentJobMachineTest, LostLeaseEndsAtOnceAndIgnoresItsCheckpoint) {
  AgentJobMachine m(Facts(1));
  m.OnGrant(Part(0, {2}, 1));
  MachineOutput out = m.OnLeaseLost(LeaseLost{3, 900, 0}, 1000);
  ASSERT_EQ(out.to_agent.size(), 1u);
  EXPECT_TRUE(out.to_agent[0].lease_end().lost());
  ASSERT_TRUE(out.report);
  EXPECT_FALSE(out.report->ran);
  EXPECT_DOUBLE_EQ(out.report->wasted_gpu_s, 100);  // 1 GPU for 100 s
  EXPECT_EQ(out.report_at_s, -1);
  EXPECT_FALSE(m.OnAgentFrame(CheckpointDone(3, 0)).report);  // expected, ignored
  EXPECT_EQ(m.iterations_left(), 100);
  EXPECT_FALSE(m.OnLeaseTimer(3, 900).to_agent.size());  // the stale timer does nothing
}

TEST(AgentJobMachineTest, ProtocolViolationsAreFaults) {
  auto fault_of = [](const agent::Envelope& frame, bool leased) {
    AgentJobMachine m(Facts(1));
    if (leased) m.OnGrant(Part(0, {2}, 1));
    MachineOutput out = m.OnAgentFrame(frame);
    EXPECT_EQ(m.phase(), AgentJobMachine::Phase::kFailed);
    EXPECT_EQ(out.to_agent.size(), 1u);  // the Error frame
    return out.fault.message();
  };
  agent::Envelope reg;
  reg.mutable_register_();
  EXPECT_NE(fault_of(reg, false).find("unexpected register"), std::string::npos);
  EXPECT_NE(fault_of(CheckpointDone(3, 1), true).find("without a lease_end"), std::string::npos);
  agent::Envelope progress;
  progress.mutable_progress()->set_iterations_done(101);
  EXPECT_NE(fault_of(progress, true).find("progress.iterations_done = 101 is outside [0, 100]"),
            std::string::npos);
  agent::Envelope finished;
  finished.mutable_finished();
  EXPECT_NE(fault_of(finished, false).find("finished outside a lease"), std::string::npos);
  agent::Envelope error;
  error.mutable_error()->set_message("CUDA out of memory");
  EXPECT_NE(fault_of(error, true).find("CUDA out of memory"), std::string::npos);
}

TEST(AgentJobMachineTest, CheckpointBeyondTheIterationsLeftIsAFault) {
  AgentJobMachine m(Facts());
  RunLease(m);
  MachineOutput out = m.OnAgentFrame(CheckpointDone(3, 101));
  EXPECT_FALSE(out.report);
  EXPECT_NE(out.fault.message().find("checkpoint_done.iterations_done = 101"), std::string::npos);
}

// An agent that heartbeats but never answers LeaseEnd held its lease, and so the round, for ever.
// Now LeaseEnd arms a checkpoint deadline (checkpoint_timeout_s wall seconds, at time_scale run
// seconds each) whose expiry fails the job as a lost agent; a checkpoint in time disarms it.
TEST(AgentJobMachineTest, NoCheckpointWithinTheTimeoutIsAFault) {
  AgentJobFacts facts = Facts();
  facts.checkpoint_timeout_s = 2;
  AgentJobMachine m(facts);
  m.OnGrant(Part(0, {1}, 2));
  m.OnGrant(Part(5, {0}, 2));
  const MachineOutput end = m.OnLeaseTimer(3, 900);
  ASSERT_TRUE(end.checkpoint_timer_at_s);
  EXPECT_DOUBLE_EQ(*end.checkpoint_timer_at_s, 1200 + 2 * 100);
  AgentJobMachine silent(facts);
  silent.OnGrant(Part(0, {1}, 2));
  silent.OnGrant(Part(5, {0}, 2));
  silent.OnLeaseTimer(3, 900);
  agent::Envelope heartbeat;
  heartbeat.mutable_heartbeat();
  EXPECT_TRUE(silent.OnAgentFrame(heartbeat).fault.ok());  // heartbeats do not count
  const MachineOutput late = silent.OnCheckpointTimer(3, 900);
  EXPECT_FALSE(late.report);
  EXPECT_EQ(late.fault.message(),
            "no checkpoint_done for round 3 within 2 s of its lease_end "
            "(agents.checkpoint_timeout_s)");
  EXPECT_EQ(silent.phase(), AgentJobMachine::Phase::kFailed);

  AgentJobMachine prompt(facts);
  RunLease(prompt);
  ASSERT_TRUE(prompt.OnAgentFrame(CheckpointDone(3, 40)).report);
  EXPECT_TRUE(prompt.OnCheckpointTimer(3, 900).fault.ok());  // answered in time: nothing
  EXPECT_EQ(prompt.phase(), AgentJobMachine::Phase::kIdle);
}

TEST(AgentJobRequestTest, CatalogueModelOrMeasuredSensitivity) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  agent::JobRequest r;
  r.set_model(catalog.models().front().name);
  r.set_gpus(2);
  r.set_iterations(10);
  ArrivedJob a;
  ASSERT_TRUE(MakeArrivedJob(r, catalog, {8}, 7, 12.5, &a).ok());
  EXPECT_EQ(a.spec.job_id, 7);
  EXPECT_EQ(a.spec.arrival_s, 12.5);
  EXPECT_EQ(a.iter_time_s, catalog.models().front().iter_time_s);
  r.clear_model();
  agent::Sensitivity* s = r.mutable_sensitivity();
  for (double c : {1.0, 3.0}) s->add_cpu_grid(c);
  s->add_memory_grid(10);
  s->add_values(0.5);
  s->add_values(1.0);
  s->set_ideal_cpus_per_gpu(3);
  s->set_ideal_memory_gb_per_gpu(10);
  r.set_iter_time_s(0.2);
  r.set_name("mine");
  ASSERT_TRUE(MakeArrivedJob(r, catalog, {8}, 8, 0, &a).ok());
  EXPECT_EQ(a.spec.model, "mine");
  EXPECT_DOUBLE_EQ(a.speedup_at_ideal, 1.0);
}

TEST(AgentJobRequestTest, BadRequestsNameTheField) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  auto error_of = [&](const agent::JobRequest& r) {
    ArrivedJob a;
    Status s = MakeArrivedJob(r, catalog, {8}, 1, 0, &a);
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  agent::JobRequest r;
  r.set_model("NoSuchNet");
  r.set_gpus(1);
  r.set_iterations(10);
  EXPECT_NE(error_of(r).find("job.model: 'NoSuchNet' is not in the catalogue"), std::string::npos);
  r.set_gpus(9);
  EXPECT_NE(error_of(r).find("job.gpus: must be in [1, 8]"), std::string::npos);
  r.set_gpus(1);
  r.set_iterations(0);
  EXPECT_NE(error_of(r).find("job.iterations"), std::string::npos);
  r.set_iterations(10);
  r.clear_model();
  EXPECT_NE(error_of(r).find("exactly one of"), std::string::npos);
  agent::Sensitivity* s = r.mutable_sensitivity();
  s->add_cpu_grid(2);
  s->add_cpu_grid(1);
  s->add_memory_grid(10);
  EXPECT_NE(error_of(r).find("job.sensitivity.cpu_grid[1]: the grid must be strictly ascending"),
            std::string::npos);
  s->set_cpu_grid(1, 3);
  s->add_values(1);
  EXPECT_NE(error_of(r).find("job.sensitivity.values: 1 values for a 2 x 1 grid"),
            std::string::npos);
}

}  // namespace
}  // namespace troupe::agent_wire
