#include "actors/compute_worker_actor.hpp"

#include <unistd.h>

#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>
#include <chrono>
#include <utility>

#include "actors/allreduce_rank_actor.hpp"
#include "base/status_macros.hpp"
#include "gpu/gang_exchange.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/run_clock.hpp"

namespace troupe {
namespace {

using WorkerSelf = caf::stateful_actor<ComputeWorkerState>;

// The longest a part waits for one exchange: the slowest part's step and the messages.
constexpr auto kExchangeTimeout = std::chrono::seconds(60);
constexpr double kNcclJoinTimeoutS = 60;

bool Gang(const ComputeWorkerState& st) { return st.rank || st.nccl; }

PartDone DoneOf(const ComputeWorkerState& st) {
  PartDone done;
  done.lease_start_s = st.work.lease_start_s;
  done.server = st.work.server;
  done.pid = static_cast<int64_t>(::getpid());
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) done.host = host;
  done.devices = st.devices;
  done.steps = st.sample.steps;
  done.exchanges = st.exchanges - st.work.first_exchange;
  if (Gang(st) && st.weights.whole()) done.weights_hash = gpu::WeightsHash(st.weights.values());
  return done;
}

void Fail(WorkerSelf* self, const std::string& why) {
  ComputeWorkerState& st = self->state;
  if (st.compute) st.compute->Release();
  PartDone done = DoneOf(st);
  done.why = why;
  Tell(self, st.telemetry, st.work.job, std::move(done));
  self->quit();
}

void Finish(WorkerSelf* self) {
  ComputeWorkerState& st = self->state;
  st.compute->Release();
  if (Gang(st) && st.work.part_rank == 0) {  // every part holds the same weights: one sends them
    ForEachGangChunk(st.work.lease_start_s, st.weights.values(), [&](GangWeights chunk) {
      Tell(self, st.telemetry, st.work.job, std::move(chunk));
    });
  }
  PartDone done = DoneOf(st);
  done.ok = true;
  done.seconds_per_iteration = gpu::MeasuredSecondsPerIteration(st.sample, st.options.sizing.scale);
  Tell(self, st.telemetry, st.work.job, std::move(done));
  self->quit();
}

// Backends made and the plan leased on every device; the gradients of a multi-GPU part filled.
Status Prepare(ComputeWorkerState& st) {
  const gpu::RealComputeOptions& o = st.options;
  const int32_t devices = static_cast<int32_t>(st.work.gpu_ids.size());
  RETURN_IF_ERROR(gpu::MakeComputeBackend(o.compute, &st.compute));
  RETURN_IF_ERROR(st.compute->Lease(PartPlan(st.work), devices, st.work.seed));
  if (devices < 2 || !(o.gradient_bytes > 0)) return Status::Ok();
  RETURN_IF_ERROR(gpu::MakeCollectiveBackend(o.collective, o.link, &st.collective));
  const int64_t floats = gpu::StepGradientFloats(o.gradient_bytes, o.sizing.scale);
  st.pristine.resize(static_cast<size_t>(devices));
  for (int32_t r = 0; r < devices; ++r) {
    std::vector<float>& g = st.pristine[static_cast<size_t>(r)];
    g.resize(static_cast<size_t>(floats));
    // Streams past the compute's (0: weights, 1 + d: inputs), so the values differ from those.
    for (int64_t i = 0; i < floats; ++i) {
      g[static_cast<size_t>(i)] = gpu::SeededValue(st.work.seed, 1 + devices + r, i);
    }
  }
  st.gradients = st.pristine;
  return Status::Ok();
}

// One step: the GEMM chain on every device, then the all-reduce among the part's devices.
Status Step(ComputeWorkerState& st, double* compute_s, double* allreduce_s) {
  gpu::StepTiming timing;
  RETURN_IF_ERROR(st.compute->RunStep(&timing));
  *compute_s = timing.seconds;
  *allreduce_s = 0;
  if (st.collective) {
    for (size_t r = 0; r < st.gradients.size(); ++r) {
      std::copy(st.pristine[r].begin(), st.pristine[r].end(), st.gradients[r].begin());
    }
    RETURN_IF_ERROR(st.collective->AllReduceSum(&st.gradients, allreduce_s));
  }
  return Status::Ok();
}

void Continue(WorkerSelf* self) { Tell(self, self->state.telemetry, self, work_step_atom::value); }

bool PastBudget(WorkerSelf* self) { return self->clock().now() >= self->state.deadline; }

// The exchange through the gang's NCCL communicator (actors/nccl_gang_part.hpp): it blocks this
// worker's own thread until every rank has taken part.
void ExchangeNccl(WorkerSelf* self, double compute_s, double allreduce_s) {
  ComputeWorkerState& st = self->state;
  const auto began = self->clock().now();
  double device_s = 0;
  bool stop = false;
  if (Status s = NcclExchange(*st.nccl, st.work.seed, st.exchanges, PastBudget(self),
                              st.weights.values(), &device_s, &stop);
      !s.ok()) {
    return Fail(self, "the gang's exchange failed: " + s.message());
  }
  ++st.exchanges;
  const double exchange_s = std::chrono::duration<double>(self->clock().now() - began).count();
  st.sample.Add(compute_s, allreduce_s + exchange_s);
  if (stop) return Finish(self);
  Continue(self);
}

// The gang's exchange after a step: this part's gradient and its vote to stop, all-reduced
// across the parts; the step's sample waits for it (the exchange is part of the step's time).
void Exchange(WorkerSelf* self, double compute_s, double allreduce_s) {
  ComputeWorkerState& st = self->state;
  if (st.nccl) return ExchangeNccl(self, compute_s, allreduce_s);
  const size_t floats = st.weights.values().size();
  std::vector<float> buffer(floats + 1);
  gpu::GangGradient(st.work.seed, st.work.part_rank, st.exchanges, st.weights.values(),
                    std::span<float>(buffer).first(floats));
  buffer[floats] = PastBudget(self) ? 1.0f : 0.0f;
  const auto began = self->clock().now();
  AskWithin(self, st.telemetry, st.rank, kExchangeTimeout,
            AllReduceStart{.round = st.exchanges, .values = FloatBlob::Of(buffer)})
      .await(
          [=](const AllReduceResult& result) {
            ComputeWorkerState& st = self->state;
            std::vector<float>& weights = st.weights.values();
            if (result.values.floats() != weights.size() + 1) {
              return Fail(self, "the gang's exchange answered a buffer of another length");
            }
            const std::span<const float> sum = result.values.values();  // the answer's own floats
            gpu::ApplyGangSum(sum.first(weights.size()), st.work.parts, weights);
            ++st.exchanges;
            const double exchange_s =
                std::chrono::duration<double>(self->clock().now() - began).count();
            st.sample.Add(compute_s, allreduce_s + exchange_s);
            if (sum.back() > 0) return Finish(self);
            Continue(self);
          },
          [=](const caf::error& e) {
            Fail(self, "the gang's exchange failed: " + self->system().render(e));
          });
}

void OnStep(WorkerSelf* self) {
  ComputeWorkerState& st = self->state;
  if (!st.compute) {
    if (Status s = Prepare(st); !s.ok()) return Fail(self, s.message());
  }
  double compute_s = 0;
  double allreduce_s = 0;
  if (Status s = Step(st, &compute_s, &allreduce_s); !s.ok()) return Fail(self, s.message());
  const int64_t steps = st.sample.steps + 1;
  if (Gang(st)) {
    if (steps % st.work.exchange_every_steps == 0) return Exchange(self, compute_s, allreduce_s);
    st.sample.Add(compute_s, allreduce_s);
    return Continue(self);  // a gang stops only after an exchange, all parts together
  }
  st.sample.Add(compute_s, allreduce_s);
  if (!PastBudget(self)) return Continue(self);
  Finish(self);
}

// A gang part exchanges when there is a gradient to exchange and a period to do it in.
bool ExchangesWithParts(const ComputeWorkerState& st) {
  return st.work.parts > 1 && st.work.exchange_every_steps > 0 &&
         gpu::StepGradientFloats(st.options.gradient_bytes, st.options.sizing.scale) > 0;
}

// A gang part steps once it has both its group and the weights to start from.
void StartWhenReady(WorkerSelf* self) {
  if (self->state.grouped && self->state.weights.whole()) Continue(self);
}

// The weights a gang part starts from: the seeded initial ones on the job's first lease, else
// those the job sends (GangWeights).
Status ExpectWeights(ComputeWorkerState& st) {
  const int64_t floats =
      gpu::StepGradientFloats(st.options.gradient_bytes, st.options.sizing.scale);
  if (st.work.weights_floats == 0) {
    st.weights.Expect(0);
    st.weights.values() = gpu::GangInitialWeights(st.work.seed, floats);
    return Status::Ok();
  }
  if (st.work.weights_floats != floats) {
    return Status::InvalidInput("the job's weights have " + std::to_string(st.work.weights_floats) +
                                " floats, the gang's gradient " + std::to_string(floats));
  }
  st.weights.Expect(floats);
  return Status::Ok();
}

// An NCCL gang (nccl_gang_part.hpp): this part's GPUs to part 0's worker.
void JoinNccl(WorkerSelf* self, const AllReduceGroup& group) {
  ComputeWorkerState& st = self->state;
  if (group.ranks.empty()) return Fail(self, "the gang's group names no worker");
  const auto gpus = static_cast<int32_t>(st.work.gpu_ids.size());
  Tell(self, st.telemetry, group.ranks.front(),
       NcclGangJoin{st.work.lease_start_s, st.work.part_rank, gpus});
}

// Part 0: once every part has joined, each its NCCL unique id and ranks.
void OnNcclJoin(WorkerSelf* self, const NcclGangJoin& join) {
  ComputeWorkerState& st = self->state;
  if (!st.nccl || join.lease_start_s != st.work.lease_start_s) return;
  auto sender = caf::actor_cast<caf::actor>(self->current_sender());
  for (auto& [worker, id] :
       CollectNcclJoin(*st.nccl, join, sender, st.work.parts, gpu::MakeNcclUniqueId)) {
    Tell(self, st.telemetry, worker, std::move(id));
  }
}

// This part's ranks join the communicator; then it steps as soon as its weights are in.
void OnNcclId(WorkerSelf* self, const NcclGangId& id) {
  ComputeWorkerState& st = self->state;
  if (!st.nccl || st.grouped || id.lease_start_s != st.work.lease_start_s) return;
  if (Status s = JoinNcclGang(*st.nccl, id, st.devices, kNcclJoinTimeoutS); !s.ok()) {
    return Fail(self, s.message());
  }
  st.grouped = true;
  StartWhenReady(self);
}

}  // namespace

void SetPartOptions(const gpu::RealComputeOptions& o, const gpu::StepPlan& plan, PartWork* w) {
  w->compute = o.compute;
  w->collective = o.collective;
  w->scale = o.sizing.scale;
  w->width = o.sizing.width;
  w->gemms = o.sizing.gemms;
  w->reference_flops_per_s = o.sizing.reference_flops_per_s;
  w->gradient_bytes = o.gradient_bytes;
  w->link_bytes_per_s = o.link.bytes_per_s;
  w->link_latency_s = o.link.latency_s;
  w->plan_rows = plan.rows;
  w->plan_width = plan.width;
  w->plan_gemms = plan.gemms;
}

gpu::RealComputeOptions PartOptions(const PartWork& w) {
  gpu::RealComputeOptions o;
  o.compute = w.compute;
  o.collective = w.collective;
  o.sizing.scale = w.scale;
  o.sizing.width = w.width;
  o.sizing.gemms = w.gemms;
  o.sizing.reference_flops_per_s = w.reference_flops_per_s;
  o.gradient_bytes = w.gradient_bytes;
  o.link.bytes_per_s = w.link_bytes_per_s;
  o.link.latency_s = w.link_latency_s;
  return o;
}

gpu::StepPlan PartPlan(const PartWork& w) {
  return gpu::StepPlan{w.plan_rows, w.plan_width, w.plan_gemms};
}

caf::behavior ComputeWorkerActor(WorkerSelf* self, PartWork work, std::vector<int32_t> devices,
                                 Telemetry* telemetry) {
  ComputeWorkerState& st = self->state;
  st.options = PartOptions(work);
  st.work = std::move(work);
  st.devices = std::move(devices);
  st.telemetry = telemetry;
  st.deadline = self->clock().now() + SecondsToTimespan(st.work.wall_budget_s);
  st.exchanges = st.work.first_exchange;
  self->monitor(st.work.job);
  self->set_down_handler([=](const caf::down_msg&) {
    if (self->state.compute) self->state.compute->Release();
    self->quit();
  });
  if (ExchangesWithParts(st)) {
    if (Status s = ExpectWeights(st); !s.ok()) {
      Fail(self, s.message());
      return {};
    }
    if (UsesNcclGang(st.work)) {
      st.nccl = std::make_unique<NcclGangPart>();
    } else {
      st.rank = self->spawn(AllReduceRankActor, telemetry);
      self->attach_functor(
          [rank = st.rank] { caf::anon_send_exit(rank, caf::exit_reason::user_shutdown); });
    }
  }
  // An NCCL gang's group lists the workers themselves (nccl_gang_part.hpp).
  caf::actor rank = st.nccl ? caf::actor_cast<caf::actor>(self) : st.rank;
  Tell(self, telemetry, st.work.job,
       PartStarted{.lease_start_s = st.work.lease_start_s, .server = st.work.server, .rank = rank});
  if (!Gang(st)) Continue(self);  // a gang part waits for its group and weights
  return {
      [=](work_step_atom) { OnStep(self); },
      [=](AllReduceGroup& group) {
        ComputeWorkerState& st = self->state;
        if (st.grouped) return;
        if (st.nccl) return JoinNccl(self, group);
        st.grouped = true;
        Tell(self, st.telemetry, st.rank, std::move(group));
        StartWhenReady(self);
      },
      [=](const GangWeights& chunk) {
        ComputeWorkerState& st = self->state;
        if (chunk.lease_start_s != st.work.lease_start_s) return;
        if (!st.weights.Add(chunk)) return Fail(self, "a chunk of the job's weights does not fit");
        StartWhenReady(self);
      },
      [=](const NcclGangJoin& join) { OnNcclJoin(self, join); },
      [=](const NcclGangId& id) { OnNcclId(self, id); },
  };
}

}  // namespace troupe
