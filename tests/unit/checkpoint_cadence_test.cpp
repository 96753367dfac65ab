// Checkpoints and restarts (faults/checkpoint_cadence.hpp, docs/faults.md "Recovery"): the
// Young/Daly interval against hand values, a job that never fails loses nothing and pays one
// write per checkpoint, a failure loses exactly the training since the last checkpoint written
// (leases back), a write and a restart carry over into the next lease, and bad recovery blocks
// are refused naming their field.
#include "faults/checkpoint_cadence.hpp"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "faults/failure_model.hpp"

namespace troupe {
namespace {

config::Faults Block(const std::string& text) {
  config::Faults faults;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &faults)) << text;
  return faults;
}

std::string Refusal(const std::string& text) {
  const Status s = CheckRecovery(Block(text), "faults");
  return s.ok() ? "" : s.message();
}

TEST(CheckpointCadence, YoungDalyIsTheSquareRootOfTwiceWriteTimesMtbf) {
  EXPECT_DOUBLE_EQ(YoungDalyIntervalS(2, 100), 20);                       // sqrt(400)
  EXPECT_DOUBLE_EQ(YoungDalyIntervalS(60, 10800), std::sqrt(1296000.0));  // 1,138.4 s
  EXPECT_DOUBLE_EQ(YoungDalyIntervalS(0, 10800), 0);
}

TEST(CheckpointCadence, Llama3RateOfTheWholeClusterIsItsCountOverItsDays) {
  RecoveryPlan plan;
  plan.failures =
      ResolveFailureModel(Block("failure_model { preset: \"llama3\" }").failure_model());
  plan.gpus_per_server = 8;
  // 16,384 GPUs met 419 interruptions in 54 days: M = 1,296 h / 419 = 3.09 h.
  EXPECT_NEAR(1 / JobFailuresPerS(plan, 16384), 1296.0 * 3600 / 419, 1e-6);
  // One GPU still holds a whole server: the server's 8 GPUs fail under it.
  EXPECT_NEAR(JobFailuresPerS(plan, 1), JobFailuresPerS(plan, 8), 1e-18);
}

TEST(CheckpointCadence, YoungDalyCostsUseTheJobsOwnFailureRate) {
  RecoveryPlan plan;
  plan.recovery = Block(
                      "recovery { checkpoint: young_daly state_factor: 3 storage_gbps: 8 "
                      "restart_s: 30 }")
                      .recovery();
  plan.failures =
      ResolveFailureModel(Block("failure_model { preset: \"llama3\" }").failure_model());
  // 1e9 bytes x 3 at 8 Gb/s: 3 s to write, and a restart reads it back in 3 s more.
  const CheckpointCosts c = CostsFor(plan, 1e9, 16384);
  EXPECT_DOUBLE_EQ(c.write_s, 3);
  EXPECT_DOUBLE_EQ(c.restart_s, 33);
  EXPECT_NEAR(c.interval_s, std::sqrt(2 * 3 * 1296.0 * 3600 / 419), 1e-6);
}

TEST(CheckpointCadence, AJobThatNeverFailsLosesNothingAndPaysOneWriteACheckpoint) {
  const CheckpointCosts costs{.interval_s = 1000, .write_s = 10, .restart_s = 50};
  CheckpointCadence cadence;
  double train = 0, written = 0, held = 0;
  int checkpoints = 0;
  for (int lease = 0; lease < 40; ++lease) {  // 40 leases of 300 s
    const LeaseSpan span = RunSpan(costs, cadence, 300);
    train += span.train_s;
    written += span.checkpoint_s;
    checkpoints += span.checkpoints;
    EXPECT_EQ(span.restart_s, 0) << "no failure: no restart";
    cadence = span.after;
    held += 300;
  }
  // 12,000 s held: every 1,010 s one checkpoint (1,000 trained, 10 written); 11 of them done.
  EXPECT_EQ(checkpoints, 11);
  EXPECT_DOUBLE_EQ(written, checkpoints * costs.write_s);
  EXPECT_DOUBLE_EQ(train + written, held) << "the checkpoints' writes are all that is not training";
  EXPECT_DOUBLE_EQ(cadence.unsaved_train_s, train - checkpoints * costs.interval_s);
}

TEST(CheckpointCadence, AFailureLosesTheTrainingSinceTheLastCheckpointLeasesBack) {
  const CheckpointCosts costs{.interval_s = 1000, .write_s = 10, .restart_s = 50};
  CheckpointCadence cadence;
  for (int lease = 0; lease < 4; ++lease) cadence = RunSpan(costs, cadence, 300).after;
  // 1,200 s: trained 1,000, wrote 10, trained 190 since.
  EXPECT_DOUBLE_EQ(cadence.unsaved_train_s, 190);
  // A failure 100 s into the fifth lease: 190 + 100 s of training are lost, from two leases.
  const LeaseSpan cut = RunSpan(costs, cadence, 100);
  EXPECT_EQ(cut.checkpoints, 0);
  EXPECT_DOUBLE_EQ(cut.after.unsaved_train_s, 290);
}

TEST(CheckpointCadence, ACheckpointWrittenEarlierInTheLeaseKeepsItsWork) {
  const CheckpointCosts costs{.interval_s = 100, .write_s = 10, .restart_s = 0};
  const LeaseSpan span = RunSpan(costs, CheckpointCadence{}, 150);
  // Trained 100, wrote 10, trained 40 more: the cut was at 100 s of training.
  EXPECT_EQ(span.checkpoints, 1);
  EXPECT_DOUBLE_EQ(span.cut_train_s, 100);
  EXPECT_DOUBLE_EQ(span.after.unsaved_train_s, 40);
}

TEST(CheckpointCadence, AWriteAndARestartRunOnIntoTheNextLease) {
  const CheckpointCosts costs{.interval_s = 100, .write_s = 10, .restart_s = 30};
  CheckpointCadence owed{.restart_left_s = 30};
  const LeaseSpan first = RunSpan(costs, owed, 134);  // 30 restart, 100 train, 4 of 10 written
  EXPECT_DOUBLE_EQ(first.restart_s, 30);
  EXPECT_DOUBLE_EQ(first.train_s, 100);
  EXPECT_EQ(first.checkpoints, 0) << "a write that has not finished does not count";
  EXPECT_DOUBLE_EQ(first.after.writing_left_s, 6);
  EXPECT_DOUBLE_EQ(first.after.unsaved_train_s, 100) << "lost if a failure came now";
  const LeaseSpan second = RunSpan(costs, first.after, 20);
  EXPECT_EQ(second.checkpoints, 1);
  EXPECT_DOUBLE_EQ(second.cut_train_s, 0) << "cut before this lease";
  EXPECT_DOUBLE_EQ(second.checkpoint_s, 6);
  EXPECT_DOUBLE_EQ(second.train_s, 14);
  EXPECT_DOUBLE_EQ(second.after.unsaved_train_s, 14);
}

TEST(CheckpointCadence, EveryLeaseTrainsTheWholeLeaseAfterItsRestart) {
  const CheckpointCosts costs{.interval_s = 0, .write_s = 10, .restart_s = 30};
  const LeaseSpan span = RunSpan(costs, CheckpointCadence{.restart_left_s = 30}, 300);
  EXPECT_DOUBLE_EQ(span.restart_s, 30);
  EXPECT_DOUBLE_EQ(span.train_s, 270);
  EXPECT_DOUBLE_EQ(span.checkpoint_s, 0) << "every_lease checkpoints at the lease's end, free";
}

TEST(CheckpointCadence, BadRecoveryBlocksAreRefusedNamingTheField) {
  EXPECT_EQ(Refusal("recovery { checkpoint: fixed_interval }"),
            "faults.recovery.checkpoint_interval_s: checkpoint fixed_interval needs it");
  EXPECT_EQ(Refusal("recovery { checkpoint: young_daly checkpoint_interval_s: 600 }"),
            "faults.recovery.checkpoint_interval_s: only checkpoint fixed_interval takes an "
            "interval (checkpoint is young_daly)");
  EXPECT_EQ(Refusal("recovery { checkpoint_interval_s: 600 }"),
            "faults.recovery.checkpoint_interval_s: only checkpoint fixed_interval takes an "
            "interval (checkpoint is every_lease)");
  EXPECT_NE(Refusal("recovery { checkpoint: young_daly }")
                .find("faults.recovery.checkpoint: young_daly needs a failure_model"),
            std::string::npos);
  EXPECT_NE(Refusal("recovery { checkpoint: young_daly } failure_model { component { "
                    "component: \"gpu\" per_gpu_hour: 0 } }")
                .find("every rate of the failure_model is 0"),
            std::string::npos);
  EXPECT_EQ(Refusal("recovery { checkpoint: fixed_interval checkpoint_interval_s: 600 }"), "");
  EXPECT_EQ(Refusal("recovery { checkpoint: young_daly } failure_model { preset: \"llama3\" }"),
            "");
}

// Only the scheduler's emulated jobs checkpoint by the block: where nothing would apply it, it
// is refused rather than ignored.
TEST(CheckpointCadence, ARecoveryBlockWhereNothingAppliesItIsRefused) {
  const std::string recovery = "faults { recovery { restart_s: 60 } }\n";
  for (const std::string& run :
       {std::string("paramserver { }\n"), std::string("run { mode: real }\n")}) {
    SCOPED_TRACE(run);
    config::RunConfig cfg;
    ASSERT_TRUE(ParseConfigText(recovery + run, "r.textproto", &cfg).ok());
    const Status s = ValidateConfig(cfg, "r.textproto");
    EXPECT_NE(s.message().find("faults.recovery"), std::string::npos) << s.message();
  }
  config::RunConfig emulated;
  ASSERT_TRUE(ParseConfigText(recovery, "r.textproto", &emulated).ok());
  EXPECT_EQ(ValidateConfig(emulated, "r.textproto").message().find("faults.recovery"),
            std::string::npos);
}

}  // namespace
}  // namespace troupe
