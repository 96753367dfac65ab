// The parameter-server run under faults (docs/paramserver.md, "Faults"): a crashed and restarted
// shard loses no acknowledged update (the parameters are bit-identical to the fault-free run's,
// so the AUC matches the reference's as closely as the lossless test asks); a node that never
// restarts, or a disk that never heals, fails the run naming the node (and the file) and leaves
// no run directory; disk faults that end are retried through; a slow disk stretches the SSD stage
// by exactly its factor; the same faults and seed give the same run directory; and in real mode a
// restart that comes right after the kill neither stalls the run nor loses an update.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config/config_loader.hpp"
#include "paramserver/reference_trainer.hpp"
#include "paramserver/ssd_store.hpp"
#include "runner/ps/ps_run.hpp"
#include "tests/integration/ps_fixture.hpp"
#include "tests/integration/run_fixture.hpp"
#include "tests/unit/must.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

// ps_fixture's small run (about 16 ms of virtual time) with a faults block of `faults`.
PsRun RunPsWithFaults(const std::string& faults, const std::vector<std::string>& sets = {}) {
  const std::string block = faults.empty() ? "" : "faults {\n" + faults + "}\n";
  return RunPs(std::string(kSmallPsConfig) + block, sets);
}

// One `fault { ... }` of the faults block RunPsWithFaults wraps them in.
std::string Fault(const std::string& kind, const std::string& target, double at_s,
                  double duration_s, const std::string& extra = "") {
  std::ostringstream f;
  f << "  fault { kind: " << kind << " target: \"" << target << "\" at_s: " << at_s
    << " duration_s: " << duration_s << " " << extra << " }\n";
  return f.str();
}

size_t CountEvents(const PsRunResult& r, const std::string& event) {
  size_t n = 0;
  for (const PsFaultRecord& f : r.faults) n += f.event == event;
  return n;
}

TEST(PsFaults, CrashedShardRecoversEveryAcknowledgedUpdate) {
  const PsRun clean = RunPsWithFaults("");
  ASSERT_TRUE(clean.status.ok()) << clean.status.message();
  const double end_s = clean.result.summary.emulated_s();
  // ps:1 dies half way through the run and restarts 2 ms later (a step it had not made durable
  // is replayed from its peers' copies); ps:3 dies near the end.
  const PsRun crashed = RunPsWithFaults(Fault("crash", "ps:1", 0.5 * end_s, 0.002) +
                                        Fault("crash", "ps:3", 0.8 * end_s, 0.001));
  ASSERT_TRUE(crashed.status.ok()) << crashed.status.message();
  const summaries::PsRunSummary& s = crashed.result.summary;
  EXPECT_EQ(s.crashes(), 2);
  EXPECT_EQ(s.restarts(), 2);
  EXPECT_GE(s.steps_replayed(), 1);
  EXPECT_EQ(s.updates_lost(), 0);
  EXPECT_EQ(CountEvents(crashed.result, "updates_lost"), 0u);
  // Write-through and re-sent work reproduce the fault-free arithmetic exactly.
  EXPECT_EQ(paramserver::MaxAbsDifference(clean.result.parameters, crashed.result.parameters), 0.0);
  EXPECT_EQ(s.auc(), clean.result.summary.auc());
  EXPECT_TRUE(s.replicas_identical());

  // And so, like the fault-free run, the reference's AUC within the lossless test's tolerance.
  paramserver::ReferenceTrainer reference =
      Must(paramserver::ReferenceTrainer::Create(crashed.plan.options.model));
  const int64_t global = int64_t{crashed.plan.options.nodes} * crashed.plan.options.batch_size;
  const std::span<const paramserver::Example> train(*crashed.plan.train);
  for (int64_t step = 0; step < crashed.plan.options.batches; ++step) {
    reference.TrainBatch(train.subspan(step * global, global));
  }
  const double reference_auc = reference.Evaluate(crashed.plan.holdout);
  EXPECT_LT(std::fabs(s.auc() - reference_auc) / reference_auc, 1e-3);

  // The stall costs at least the downtime over the same run with write-through and no crash (a
  // crash planned after the end turns write-through on and never fires).
  const PsRun durable = RunPsWithFaults(Fault("crash", "ps:1", 10, 1));
  ASSERT_TRUE(durable.status.ok()) << durable.status.message();
  EXPECT_EQ(durable.result.summary.crashes(), 0);
  const double durable_s = durable.result.summary.emulated_s();
  EXPECT_GT(s.emulated_s(), durable_s + 0.002);
  std::printf(
      "[crash] AUC %.6f (reference %.6f, fault-free %.6f); %lld steps replayed, %lld updates "
      "lost; %.3f ms emulated vs %.3f ms with write-through and no crash (%.3f ms lost, 3 ms "
      "down) and %.3f ms without write-through\n",
      s.auc(), reference_auc, clean.result.summary.auc(),
      static_cast<long long>(s.steps_replayed()), static_cast<long long>(s.updates_lost()),
      1e3 * s.emulated_s(), 1e3 * durable_s, 1e3 * (s.emulated_s() - durable_s), 1e3 * end_s);
}

TEST(PsFaults, NodeThatNeverRestartsFailsTheRunNamingIt) {
  const std::string out = FreshDir("ps-crash-forever") + "/run";
  const PsRun run = RunPsWithFaults(Fault("crash", "ps:2", 0.005, 0), {"run.out_dir=" + out});
  ASSERT_FALSE(run.status.ok());
  EXPECT_NE(run.status.message().find("ps:2 crashed"), std::string::npos) << run.status.message();
  EXPECT_NE(run.status.exit_code(), 0);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".tmp-" + std::to_string(::getpid())));
}

TEST(PsFaults, DiskErrorsAreRetriedUntilTheFaultEnds) {
  const PsRun clean = RunPsWithFaults("");
  ASSERT_TRUE(clean.status.ok()) << clean.status.message();
  const std::string out = FreshDir("ps-disk") + "/run";
  const PsRun run = RunPsWithFaults(
      Fault("disk", "ps:0", 0.004, 0.003) + Fault("disk", "ps:3", 0.008, 0.002, "disk_full: true"),
      {"run.out_dir=" + out});
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  const summaries::PsRunSummary& s = run.result.summary;
  EXPECT_GE(s.disk_write_failures(), 2);
  EXPECT_EQ(s.disk_recoveries(), s.disk_write_failures());
  EXPECT_EQ(paramserver::MaxAbsDifference(clean.result.parameters, run.result.parameters), 0.0);
  const std::string csv = ReadFile(out + "/faults.csv");
  EXPECT_NE(csv.find("ps:0 SSD-PS: "), std::string::npos) << csv;
  EXPECT_NE(csv.find("Input/output error"), std::string::npos) << csv;
  EXPECT_NE(csv.find("node-3/"), std::string::npos) << csv;
  EXPECT_NE(csv.find("No space left on device"), std::string::npos) << csv;
  std::printf("[disk] %lld write failures, all recovered; %.3f ms emulated vs %.3f ms\n",
              static_cast<long long>(s.disk_write_failures()), 1e3 * s.emulated_s(),
              1e3 * clean.result.summary.emulated_s());
}

TEST(PsFaults, DiskThatNeverHealsFailsCleanlyAndLeavesTheStoreReadable) {
  const std::string root = FreshDir("ps-disk-forever");
  const std::string out = root + "/run";
  const PsRun run = RunPsWithFaults(Fault("disk", "ps:1", 0.004, 0, "disk_full: true"),
                                    {"run.out_dir=" + out, "paramserver.ssd_dir=" + root + "/ssd"});
  ASSERT_FALSE(run.status.ok());
  const std::string& why = run.status.message();
  EXPECT_NE(why.find("ps:1 SSD-PS: " + root + "/ssd/node-1/"), std::string::npos) << why;
  EXPECT_NE(why.find("No space left on device"), std::string::npos) << why;
  EXPECT_NE(why.find("still failing"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(out));
  // The failed writes left the store consistent: it opens, and every listed key reads back.
  paramserver::SsdStoreOptions options;
  options.layout = paramserver::EmbeddingLayout(run.plan.options.model);
  options.file_bytes = static_cast<uint64_t>(run.plan.options.ssd_file_bytes);
  std::unique_ptr<paramserver::SsdStore> store;
  const Status opened = paramserver::SsdStore::Open(root + "/ssd/node-1", options, &store);
  ASSERT_TRUE(opened.ok()) << opened.message();
  EXPECT_GT(store->size(), 0u);
  paramserver::RowBatch rows;
  ASSERT_TRUE(store->Get(store->Keys(), &rows, nullptr).ok());
  EXPECT_EQ(rows.size(), store->size());
}

// One node, so the batch's SSD stage is that node's: its time is its bytes over the slowed rate.
// A disk at a quarter of its speed for the whole run: the run reads and writes exactly the same
// bytes and trains exactly the same model, and because one node's pipeline is bound by its SSD
// stage, every step takes about four times as long — not less (stages would not be the bound),
// not more (work charged twice).
TEST(PsFaults, SlowDiskSlowsTheRunByItsFactorAndChangesNothingElse) {
  const std::vector<std::string> one = {"paramserver.nodes=1"};
  const PsRun clean = RunPsWithFaults("", one);
  const PsRun slow = RunPsWithFaults(Fault("slow", "ps:0", 0, 0, "factor: 0.25"), one);
  ASSERT_TRUE(clean.status.ok()) << clean.status.message();
  ASSERT_TRUE(slow.status.ok()) << slow.status.message();
  const summaries::PsRunSummary &c = clean.result.summary, &s = slow.result.summary;
  ASSERT_EQ(c.slowest_stage(), "ssd");
  EXPECT_EQ(s.ssd_bytes_read(), c.ssd_bytes_read());
  EXPECT_EQ(s.ssd_bytes_written(), c.ssd_bytes_written());
  EXPECT_EQ(s.compaction_bytes(), c.compaction_bytes());
  EXPECT_EQ(s.auc(), c.auc());
  EXPECT_EQ(s.final_loss(), c.final_loss());
  const double ssd_ratio = s.ssd_s() / c.ssd_s(), batch_ratio = s.batch_time_s() / c.batch_time_s();
  std::printf("[slow] SSD stage %.3f -> %.3f ms (x%.2f), batch %.3f -> %.3f ms (x%.2f) at 0.25x\n",
              1e3 * c.ssd_s(), 1e3 * s.ssd_s(), ssd_ratio, 1e3 * c.batch_time_s(),
              1e3 * s.batch_time_s(), batch_ratio);
  EXPECT_NEAR(ssd_ratio, 4.0, 0.05);
  EXPECT_GT(batch_ratio, 3.6);
  EXPECT_LT(batch_ratio, 4.05);
}

// summary.json without its wall-clock lines.
std::string WithoutWallClock(const std::string& json) {
  std::istringstream in(json);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("\"wall_s\"") == std::string::npos &&
        line.find("\"examples_per_s_wall\"") == std::string::npos) {
      out += line + "\n";
    }
  }
  return out;
}

TEST(PsFaults, SameFaultsAndSeedGiveTheSameRunDirectory) {
  const std::string faults = Fault("crash", "ps:2", 0.005, 0.001) +
                             Fault("disk", "ps:0", 0.003, 0.002) +
                             Fault("slow", "ps:1", 0.002, 0.004, "factor: 0.5");
  const std::string a = FreshDir("ps-fault-det-a") + "/run";
  const std::string b = FreshDir("ps-fault-det-b") + "/run";
  const PsRun first = RunPsWithFaults(faults, {"run.out_dir=" + a});
  const PsRun second = RunPsWithFaults(faults, {"run.out_dir=" + b});
  ASSERT_TRUE(first.status.ok()) << first.status.message();
  ASSERT_TRUE(second.status.ok()) << second.status.message();
  for (const char* file : {"/batches.csv", "/faults.csv"}) {
    EXPECT_TRUE(ReadFile(a + file) == ReadFile(b + file)) << file << " differs";
  }
  EXPECT_EQ(WithoutWallClock(ReadFile(a + "/summary.json")),
            WithoutWallClock(ReadFile(b + "/summary.json")));
  EXPECT_GE(ReadCsv(a + "/faults.csv").size(), 6u);  // crash, restart, 2 x began/ended, disk
}

// RunPsWithFaults on a thread, waiting at most `bound`. A real-mode run waits for its end without
// limit and cannot be stopped from outside, so a run that stalls fails the test and ends this
// process: a regression fails CI instead of hanging it.
PsRun RunPsBounded(const std::string& faults, const std::vector<std::string>& sets,
                   std::chrono::seconds bound) {
  std::promise<PsRun> promise;
  std::future<PsRun> future = promise.get_future();
  std::thread runner([&] { promise.set_value(RunPsWithFaults(faults, sets)); });
  if (future.wait_for(bound) == std::future_status::timeout) {
    ADD_FAILURE() << "the parameter-server run with faults\n"
                  << faults << "did not finish within " << bound.count() << " s: it stalled";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  runner.join();
  return future.get();
}

// Real mode (CAF's threads, the wall clock at 1/100 of the model's pace: about 40 ms a step) with
// ps:1 killed half way through and back 1 ns, 1 us or 20 ms of wall time later. The restart must
// come after the kill however close their timers are, and must not reopen the SSD-PS before the
// killed shard has stopped writing it; then, as in emulated mode, nothing acknowledged is lost
// and the parameters are bit-identical to the fault-free run's.
TEST(PsFaults, RealModeRestartRightAfterTheKillRecoversEverything) {
  const PsRun clean = RunPsWithFaults("");
  ASSERT_TRUE(clean.status.ok()) << clean.status.message();
  const double mid_s = 0.5 * clean.result.summary.emulated_s();
  const double time_scale = 0.01;
  const std::vector<std::string> real = {"run.mode=real", "run.threads=2",
                                         "run.time_scale=" + std::to_string(time_scale)};
  for (const double wall_downtime_s : {1e-9, 1e-6, 0.02}) {
    std::ostringstream trace;
    trace << "restart " << wall_downtime_s << " s of wall time after the kill";
    SCOPED_TRACE(trace.str());
    const PsRun run = RunPsBounded(Fault("crash", "ps:1", mid_s, wall_downtime_s * time_scale),
                                   real, std::chrono::seconds(90));
    ASSERT_TRUE(run.status.ok()) << run.status.message();
    const summaries::PsRunSummary& s = run.result.summary;
    EXPECT_EQ(s.crashes(), 1);
    EXPECT_EQ(s.restarts(), 1);
    EXPECT_EQ(s.updates_lost(), 0);
    EXPECT_EQ(paramserver::MaxAbsDifference(clean.result.parameters, run.result.parameters), 0.0);
    EXPECT_EQ(s.auc(), clean.result.summary.auc());
    EXPECT_TRUE(s.replicas_identical());
    for (const PsFaultRecord& f : run.result.faults) {
      if (f.event == "restarted") std::printf("[real crash] %s\n", f.detail.c_str());
    }
  }
}

}  // namespace
}  // namespace troupe::testing
