// The lease protocol's typed interfaces (messages/actor_interfaces.hpp): each actor accepts what
// its interface names and nothing else — checked when this file compiles, as every Tell, TellAt
// and Ask is checked (runtime/counted_send.hpp) — and a typed handle reaches its actor and gets
// its typed answer, on the virtual clock.
#include <gtest/gtest.h>

#include <caf/check_typed_input.hpp>
#include <caf/response_type.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/agent/agent_job_proxy.hpp"
#include "actors/job_actor.hpp"
#include "actors/scheduler_actor.hpp"
#include "actors/server_actor.hpp"
#include "actors/workload_actor.hpp"
#include "messages/fault_messages.hpp"
#include "runtime/actor_runtime.hpp"

namespace troupe::testing {
namespace {

template <class Handle, class... Ts>
constexpr bool kAccepts =
    caf::response_type_unbox<caf::signatures_of_t<Handle>, caf::detail::type_list<Ts...>>::valid;

// What each answers, when it answers.
template <class Handle, class... Ts>
using AnswerTo =
    caf::response_type_unbox_t<caf::signatures_of_t<Handle>, caf::detail::type_list<Ts...>>;

// A server takes a round's leases and faults, and answers resizes with what it has free.
static_assert(kAccepts<server_actor, RoundLeases>);
static_assert(kAccepts<server_actor, SlowDown>);
static_assert(kAccepts<server_actor, PartWork>);
static_assert(
    std::is_same_v<AnswerTo<server_actor, LeaseResize>, caf::detail::type_list<ServerFree>>);
static_assert(!kAccepts<server_actor, LeaseGrant>);       // a job's
static_assert(!kAccepts<server_actor, JobProgress>);      // the scheduler's
static_assert(!kAccepts<server_actor, ArrivalsRequest>);  // the workload's

// A job takes its grants, queries and losses, whatever runs it (emulated or an agent's proxy).
static_assert(kAccepts<job_actor, LeaseGrant>);
static_assert(kAccepts<job_actor, ProgressQuery>);
static_assert(kAccepts<job_actor, LeaseLost>);
static_assert(!kAccepts<job_actor, RoundLeases>);
static_assert(!kAccepts<job_actor, JobProgress>);
static_assert(!kAccepts<job_actor, lease_end_atom, double>);  // its own timer, not its protocol
static_assert(kAccepts<emulated_job_actor, lease_end_atom, double>);
// Either kind of job's handle is a job_actor (the conversion checks the interface is a subset).
[[maybe_unused]] job_actor AsJob(const emulated_job_actor& job) { return job; }
[[maybe_unused]] job_actor AsJob(const agent_job_actor& job) { return job; }

// The workload answers arrivals with a batch and a recovery with every job it released.
static_assert(std::is_same_v<AnswerTo<workload_actor, ArrivalsRequest>,
                             caf::detail::type_list<ArrivalBatch>>);
static_assert(std::is_same_v<AnswerTo<workload_actor, RecoverRequest>,
                             caf::detail::type_list<RecoveredJobs>>);
static_assert(kAccepts<workload_actor, CrashJob>);
static_assert(!kAccepts<workload_actor, LeaseGrant>);
static_assert(!kAccepts<workload_actor, ask_later_atom>);  // its own requests' timer
[[maybe_unused]] workload_actor AsWorkload(const workload_actor_impl& w) { return w; }

// The scheduler takes reports, refusals and the word on faults; its round timer is its own.
static_assert(kAccepts<scheduler_actor, JobProgress>);
static_assert(kAccepts<scheduler_actor, LeaseRefusal>);
static_assert(kAccepts<scheduler_actor, ServerUp>);
static_assert(kAccepts<scheduler_actor, JobRespawned>);
static_assert(!kAccepts<scheduler_actor, LeaseGrant>);
static_assert(!kAccepts<scheduler_actor, round_end_atom, int64_t, double>);
[[maybe_unused]] scheduler_actor AsScheduler(const scheduler_actor_impl& s) { return s; }

void RunAll(ActorRuntime& runtime) {
  dynamic_cast<caf::scheduler::test_coordinator&>(runtime.system().scheduler()).run();
}

TEST(TypedInterfaces, ATypedServerHandleGetsTheServersTypedAnswer) {
  ActorRuntime runtime(RuntimeOptions{});
  server_actor server = runtime.system().spawn(
      ServerActor,
      ServerSpec{.index = 3, .name = "s3", .gpus = 8, .cpus = 24, .memory_gb = 500, .devices = {}},
      runtime.telemetry());
  std::vector<ServerFree> answers;
  runtime.system().spawn([&](caf::event_based_actor* self) {
    self->request(server, caf::infinite, caf::get_atom::value).then([&](const ServerFree& free) {
      answers.push_back(free);
    });
  });
  RunAll(runtime);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].server, 3);
  EXPECT_EQ(answers[0].gpus, 8);
  EXPECT_DOUBLE_EQ(answers[0].cpus, 24);
  EXPECT_DOUBLE_EQ(answers[0].memory_gb, 500);
  caf::anon_send_exit(server, caf::exit_reason::kill);
}

}  // namespace
}  // namespace troupe::testing
