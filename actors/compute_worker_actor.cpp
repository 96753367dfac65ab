#include "actors/compute_worker_actor.hpp"

#include <caf/system_messages.hpp>
#include <utility>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using Self = caf::stateful_actor<ComputeWorkerState>;

void Fail(Self* self, const std::string& why) {
  ComputeWorkerState& st = self->state;
  if (st.compute) st.compute->Release();
  Tell(self, st.telemetry, st.job, work_fail_atom::value, st.work.lease_start_s, why);
  self->quit();
}

// Backends made and the plan leased on every device; the gradients of a multi-GPU job filled.
Status Prepare(ComputeWorkerState& st) {
  const ComputeWork& w = st.work;
  if (Status s = gpu::MakeComputeBackend(w.options.compute, &st.compute); !s.ok()) return s;
  if (Status s = st.compute->Lease(w.plan, w.devices, w.seed); !s.ok()) return s;
  if (w.devices < 2 || !(w.options.gradient_bytes > 0)) return Status::Ok();
  Status s = gpu::MakeCollectiveBackend(w.options.collective, w.options.link, &st.collective);
  if (!s.ok()) return s;
  const int64_t floats = gpu::StepGradientFloats(w.options.gradient_bytes, w.options.sizing.scale);
  st.pristine.resize(static_cast<size_t>(w.devices));
  for (int32_t r = 0; r < w.devices; ++r) {
    std::vector<float>& g = st.pristine[static_cast<size_t>(r)];
    g.resize(static_cast<size_t>(floats));
    // Streams past the compute's (0: weights, 1 + d: inputs), so the values differ from those.
    for (int64_t i = 0; i < floats; ++i) {
      g[static_cast<size_t>(i)] = gpu::SeededValue(w.seed, 1 + w.devices + r, i);
    }
  }
  st.gradients = st.pristine;
  return Status::Ok();
}

// One step: the GEMM chain on every device, then the all-reduce of the step's gradient.
Status Step(ComputeWorkerState& st) {
  gpu::StepTiming timing;
  if (Status s = st.compute->RunStep(&timing); !s.ok()) return s;
  double allreduce_s = 0;
  if (st.collective) {
    for (size_t r = 0; r < st.gradients.size(); ++r) {
      std::copy(st.pristine[r].begin(), st.pristine[r].end(), st.gradients[r].begin());
    }
    if (Status s = st.collective->AllReduceSum(&st.gradients, &allreduce_s); !s.ok()) return s;
  }
  st.sample.Add(timing.seconds, allreduce_s);
  return Status::Ok();
}

void Continue(Self* self) {
  self->state.telemetry->messages.fetch_add(1, std::memory_order_relaxed);
  self->send(self, work_step_atom::value);
}

}  // namespace

caf::behavior ComputeWorkerActor(Self* self, ComputeWork work, caf::actor job, RunClock clock,
                                 Telemetry* telemetry) {
  ComputeWorkerState& st = self->state;
  st.work = std::move(work);
  st.job = std::move(job);
  st.clock = clock;
  st.telemetry = telemetry;
  self->monitor(st.job);
  self->set_down_handler([=](const caf::down_msg&) {
    if (self->state.compute) self->state.compute->Release();
    self->quit();
  });
  Continue(self);
  return {
      [=](work_step_atom) {
        ComputeWorkerState& st = self->state;
        if (!st.compute) {
          if (Status s = Prepare(st); !s.ok()) return Fail(self, s.message());
        }
        if (Status s = Step(st); !s.ok()) return Fail(self, s.message());
        if (st.clock.Seconds(self->clock().now()) < st.work.lease_end_s) return Continue(self);
        st.compute->Release();
        const double per_iteration =
            gpu::MeasuredSecondsPerIteration(st.sample, st.work.options.sizing.scale);
        Tell(self, st.telemetry, st.job, work_done_atom::value, st.work.lease_start_s,
             per_iteration, st.sample.steps);
        self->quit();
      },
  };
}

}  // namespace troupe
