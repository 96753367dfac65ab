// The registries of policies and mechanisms (scheduling/policy_registry.hpp,
// mechanism_registry.hpp): troupe's own are registered under their config spellings, with the
// flags the scheduler's shortcuts rely on; names are listed sorted; a name registered twice, or a
// registration without its function, stops troupe with a message saying which.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "scheduling/mechanism_registry.hpp"
#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

double Zero(const SchedJob&, double, const OrderOptions&) { return 0; }

TEST(PolicyRegistryTest, TroupesOwnPoliciesDeclareWhatTheirKeysRead) {
  const PolicyDefinition& fifo = PolicyNamed("fifo");
  EXPECT_TRUE(fifo.constant_key);
  EXPECT_FALSE(fifo.key_reads_clock);
  const PolicyDefinition& srtf = PolicyNamed("srtf");
  EXPECT_TRUE(srtf.key_reads_expected_speedup);
  EXPECT_FALSE(srtf.key_reads_clock);
  const PolicyDefinition& las = PolicyNamed("las");
  EXPECT_FALSE(las.key_reads_expected_speedup || las.key_reads_clock || las.constant_key);
  const PolicyDefinition& ftf = PolicyNamed("ftf");
  EXPECT_TRUE(ftf.key_reads_clock);
  EXPECT_TRUE(ftf.key_reads_expected_speedup);
  for (const PolicyDefinition* p : RegisteredPolicies()) {
    EXPECT_FALSE(p->summary.empty()) << p->name;
  }
}

TEST(PolicyRegistryTest, NamesAreListedSortedAndUnknownOnesAreNotFound) {
  const std::string names = RegisteredPolicyNames();
  EXPECT_EQ(names.find("fifo, ftf, las, "), 0u) << names;
  EXPECT_EQ(FindPolicy("FIFO"), nullptr);  // names are exact
  EXPECT_EQ(FindPolicy(""), nullptr);
}

TEST(MechanismRegistryTest, TroupesOwnMechanismsAreRegisteredAndMakeFreshInstances) {
  for (std::string_view name : {"proportional", "greedy", "tune", "opt"}) {
    const MechanismDefinition* m = FindMechanism(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->proportional_share_only, name == "proportional") << name;
    std::unique_ptr<Mechanism> a = MakeMechanism(name);
    std::unique_ptr<Mechanism> b = MakeMechanism(name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_NE(a.get(), b.get()) << name;
  }
  EXPECT_EQ(FindMechanism("tuned"), nullptr);
  EXPECT_NE(RegisteredMechanismNames().find("greedy, greedy_synergy_sim, greedy_synergy_sim_las, "
                                            "opt, proportional, tune, tune_synergy_sim, "
                                            "tune_synergy_sim_las"),
            std::string::npos)
      << RegisteredMechanismNames();
}

TEST(RegistryDeathTest, ANameRegisteredTwiceStopsTroupeSayingWhich) {
  EXPECT_DEATH(PolicyRegistrar({.name = "las", .key = Zero}), "policy 'las' registered twice");
  EXPECT_DEATH(PolicyRegistrar({.name = "", .key = Zero}), "without a name");
  EXPECT_DEATH(PolicyRegistrar({.name = "keyless"}), "policy 'keyless' registered without a key");
  EXPECT_DEATH(MechanismRegistrar(
                   {.name = "tune",
                    .make = [](const MechanismOptions&) { return MakeMechanism("proportional"); }}),
               "mechanism 'tune' registered twice");
  EXPECT_DEATH(PolicyNamed("nosuch"), "no policy 'nosuch' in this build");
}

}  // namespace
}  // namespace troupe::scheduling
