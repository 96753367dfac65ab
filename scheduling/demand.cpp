#include "scheduling/demand.hpp"

#include <algorithm>
#include <bit>
#include <initializer_list>
#include <limits>

#include "scheduling/interleave_placement.hpp"
#include "scheduling/rack_placement.hpp"

namespace troupe::scheduling {
namespace {

constexpr size_t kMaxShapeClasses = 64;  // one bit each in RoundDemands::Job::ideal_ok

bool SameShape(const ServerShape& a, const ServerShape& b) {
  return a.gpus == b.gpus && a.cpus == b.cpus && a.memory_gb == b.memory_gb;
}

// gpus x the ideal per GPU, capped at the server's capacity; proportional where there is none.
AuxDemand CappedIdeal(const SchedJob& job, const ServerShape& shape, const AuxDemand& share,
                      int32_t gpus) {
  const double cpus =
      job.ideal_cpus_per_gpu > 0 ? std::min(gpus * job.ideal_cpus_per_gpu, shape.cpus) : share.cpus;
  const double memory = job.ideal_memory_gb_per_gpu > 0
                            ? std::min(gpus * job.ideal_memory_gb_per_gpu, shape.memory_gb)
                            : share.memory_gb;
  return AuxDemand{cpus, memory};
}

double Throughput(const SchedJob& job, const AuxDemand& aux, int32_t gpus) {
  if (!job.sensitivity || job.sensitivity->empty() || gpus <= 0) return 1;
  return job.sensitivity->At(aux.cpus / gpus, aux.memory_gb / gpus);
}

// The fallback: the ideal where it frees resources for others (at or below the share in both
// dimensions), else the share.
AuxDemand FallbackOf(const AuxDemand& ideal, const AuxDemand& share) {
  return AboveShare(ideal, share) ? share : ideal;
}

// Whether the ideal buys at least the throughput of the proportional share.
bool IdealPays(const SchedJob& job, const AuxDemand& ideal, const AuxDemand& share, int32_t gpus) {
  if (!job.sensitivity || job.sensitivity->empty()) return true;
  return Throughput(job, ideal, gpus) >= Throughput(job, share, gpus) - 1e-12;
}

// A multiplicative mix of what decides a job's demands, asked for every job of a round.
uint64_t MixHash(std::initializer_list<uint64_t> words) {
  constexpr uint64_t kMix = 0x9e3779b97f4a7c15ull;
  uint64_t h = 0;
  for (const uint64_t word : words) h = (h ^ word) * kMix;
  return h ^ (h >> 32);  // the high bits mixed into the low
}

// Open addressing in `table`: the slot holding what `same` matches, else the unused slot that ends
// its probe, or nullptr where that would take the table past half full (`used` slots so far).
template <class Slot, size_t N, class Same>
Slot* Probe(std::array<Slot, N>& table, uint64_t hash, uint32_t used, const Same& same) {
  for (size_t slot = hash % N;; slot = (slot + 1) % N) {
    Slot& s = table[slot];
    if (!s.used) return used < N / 2 ? &s : nullptr;
    if (same(s)) return &s;
  }
}

}  // namespace

AuxDemand ProportionalDemand(const ClusterLedger& ledger, int32_t server, int32_t gpus) {
  return AuxDemand{ledger.ProportionalCpus(server, gpus),
                   ledger.ProportionalMemoryGb(server, gpus)};
}

AuxDemand IdealDemand(const SchedJob& job, const ClusterLedger& ledger, int32_t server,
                      int32_t gpus) {
  const AuxDemand share = ProportionalDemand(ledger, server, gpus);
  const AuxDemand ideal = CappedIdeal(job, ledger.shape(server), share, gpus);
  return IdealPays(job, ideal, share, gpus) ? ideal : share;
}

AuxDemand FallbackDemand(const SchedJob& job, const ClusterLedger& ledger, int32_t server,
                         int32_t gpus) {
  const AuxDemand share = ProportionalDemand(ledger, server, gpus);
  return FallbackOf(IdealDemand(job, ledger, server, gpus), share);
}

bool AboveShare(const AuxDemand& demand, const AuxDemand& share) {
  return demand.cpus > share.cpus + kDemandSlack ||
         demand.memory_gb > share.memory_gb + kDemandSlack;
}

double PartThroughput(const SchedJob& job, const PlacementPart& part) {
  return Throughput(job, AuxDemand{part.cpus, part.memory_gb}, part.gpus);
}

double PlacementThroughput(const SchedJob& job, const JobPlacement& placement) {
  if (placement.parts.empty()) return 0;
  double slowest = std::numeric_limits<double>::infinity();
  for (const PlacementPart& p : placement.parts)
    slowest = std::min(slowest, PartThroughput(job, p));
  return slowest;
}

double ProportionalThroughput(const SchedJob& job, const ClusterLedger& ledger,
                              const JobPlacement& placement) {
  if (placement.parts.empty()) return 0;
  double slowest = std::numeric_limits<double>::infinity();
  for (const PlacementPart& p : placement.parts) {
    slowest =
        std::min(slowest, Throughput(job, ProportionalDemand(ledger, p.server, p.gpus), p.gpus));
  }
  return slowest;
}

int32_t BestFitGpus(const ClusterLedger& ledger, int32_t gpus) {
  const int32_t free = ledger.FewestFreeGpusAtLeast(gpus);
  return free < 0 ? -1 : *ledger.ServersWithFreeGpus(free).begin();
}

PlacementParts SpreadGpus(const ClusterLedger& ledger, int32_t gpus, const SchedJob* job) {
  if (gpus <= 0 || gpus > ledger.free_gpus()) return {};
  return ChooseSpread(ledger, job, gpus, [&](int32_t first_rack) {
    PlacementParts parts;
    int32_t left = gpus;
    ForEachSpreadServer(
        ledger, gpus,
        [&](int32_t server, int32_t free) {
          const int32_t take = std::min(free, left);
          parts.push_back(PlacementPart{server, take, 0, 0});
          left -= take;
          return left == 0;
        },
        first_rack);
    return parts;
  });
}

RoundDemands::RoundDemands(const ClusterLedger& ledger) : ledger_(ledger) {
  class_of_.assign(ledger.server_count(), -1);
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    for (size_t c = 0; c < class_model_.size(); ++c) {
      if (SameShape(ledger.shape(class_model_[c]), ledger.shape(s))) {
        class_of_[s] = static_cast<int32_t>(c);
        break;
      }
    }
    if (class_of_[s] < 0 && class_model_.size() < kMaxShapeClasses) {
      class_of_[s] = static_cast<int32_t>(class_model_.size());
      class_model_.push_back(s);
    }
    if (class_of_[s] < 0) overflow_ = true;
  }
  uniform_ = class_model_.size() == 1 && !overflow_;
}

RoundDemands::DemandClass* RoundDemands::ClassSlot(const QueuedJob& job) const {
  const SensitivityMatrix* matrix = job.sensitivity;
  const auto cpus_bits = std::bit_cast<uint64_t>(job.ideal_cpus_per_gpu);
  const auto memory_bits = std::bit_cast<uint64_t>(job.ideal_memory_gb_per_gpu);
  const uint64_t hash = MixHash({reinterpret_cast<uintptr_t>(matrix), cpus_bits, memory_bits,
                                 static_cast<uint64_t>(job.gpus)});
  return Probe(classes_, hash, classes_met_, [&](const DemandClass& c) {
    return c.matrix == matrix && c.cpus_per_gpu == cpus_bits &&
           c.memory_gb_per_gpu == memory_bits && c.gpus == job.gpus;
  });
}

RoundDemands::Job RoundDemands::Prepare(const SchedJob& job) const {
  return Prepare(QueuedJobOf(job));
}

RoundDemands::Job RoundDemands::Prepare(const QueuedJob& queued) const {
  DemandClass* slot = ClassSlot(queued);
  Job out;
  if (slot != nullptr && slot->used) {
    out = slot->demands;
  } else {
    const SchedJob& job = *queued.job;
    out = Work(job);
    if (slot != nullptr) {
      ++classes_met_;
      AskQuestions(job, out);
      *slot = DemandClass{true,
                          job.sensitivity.get(),
                          std::bit_cast<uint64_t>(job.ideal_cpus_per_gpu),
                          std::bit_cast<uint64_t>(job.ideal_memory_gb_per_gpu),
                          job.gpus,
                          out};
    }
  }
  out.job = queued.job;
  out.id = queued.id;
  return out;
}

uint32_t RoundDemands::QuestionId(const QuestionKey& key) const {
  Question* q = Probe(questions_, MixHash({key[0], key[1], key[2], key[3]}), questions_met_,
                      [&](const Question& asked) { return asked.key == key; });
  if (q == nullptr) return 0;
  if (!q->used) {
    ++questions_met_;
    *q = Question{true, key};
  }
  return static_cast<uint32_t>(q - questions_.data()) + 1;
}

void RoundDemands::AskQuestions(const SchedJob& job, Job& demands) const {
  if (overflow_) return;  // a server of no class: its demands read the matrix
  for (const bool fallback : {false, true}) {
    QuestionKey key{static_cast<uint64_t>(job.gpus) << 1 | (fallback ? 1 : 0), 0, 0, 0};
    if (uniform_) {
      const AuxDemand& d = fallback ? demands.fallback : demands.ideal;
      key[1] = std::bit_cast<uint64_t>(d.cpus);
      key[2] = std::bit_cast<uint64_t>(d.memory_gb);
    } else {
      key[1] = std::bit_cast<uint64_t>(job.ideal_cpus_per_gpu);
      key[2] = std::bit_cast<uint64_t>(job.ideal_memory_gb_per_gpu);
      key[3] = demands.ideal_ok;
    }
    (fallback ? demands.fallback_question : demands.ideal_question) = QuestionId(key);
  }
}

RoundDemands::Job RoundDemands::Work(const SchedJob& job) const {
  Job out;
  out.gpus = job.gpus;
  for (size_t c = 0; c < class_model_.size(); ++c) {
    const int32_t model = class_model_[c];
    const AuxDemand share = ProportionalDemand(ledger_, model, job.gpus);
    const AuxDemand capped = CappedIdeal(job, ledger_.shape(model), share, job.gpus);
    const bool pays = IdealPays(job, capped, share, job.gpus);
    if (pays) out.ideal_ok |= uint64_t{1} << c;
    if (pays && AboveShare(capped, share)) out.above = true;
    if (uniform_) {  // IdealOn and Fallback on the one shape, from what is at hand
      out.ideal = pays ? capped : share;
      out.fallback = FallbackOf(out.ideal, share);
    }
  }
  if (overflow_) out.above = true;  // servers beyond the classes: not known, so try
  return out;
}

AuxDemand RoundDemands::IdealOn(const Job& job, int32_t server, int32_t gpus) const {
  const int32_t c = class_of_[server];
  if (gpus != job.gpus || c < 0) return IdealDemand(*job.job, ledger_, server, gpus);
  const AuxDemand share = Proportional(server, gpus);
  if ((job.ideal_ok >> c & 1) == 0) return share;
  return CappedIdeal(*job.job, ledger_.shape(server), share, gpus);
}

AuxDemand RoundDemands::FallbackOn(const Job& job, int32_t server, int32_t gpus) const {
  return FallbackOf(Ideal(job, server, gpus), Proportional(server, gpus));
}

AuxDemand RoundDemands::IdealBoundOverShapes(const Job& job) const {
  if (overflow_ || class_model_.empty()) return AuxDemand{0, 0};
  AuxDemand bound = Ideal(job, class_model_[0], job.gpus);
  for (size_t c = 1; c < class_model_.size(); ++c) {
    const AuxDemand d = Ideal(job, class_model_[c], job.gpus);
    bound = AuxDemand{std::min(bound.cpus, d.cpus), std::min(bound.memory_gb, d.memory_gb)};
  }
  return bound;
}

AuxDemand RoundDemands::FallbackBoundOverShapes(const Job& job) const {
  if (overflow_ || class_model_.empty()) return AuxDemand{0, 0};
  AuxDemand bound = Fallback(job, class_model_[0], job.gpus);
  for (size_t c = 1; c < class_model_.size(); ++c) {
    const AuxDemand d = Fallback(job, class_model_[c], job.gpus);
    bound = AuxDemand{std::min(bound.cpus, d.cpus), std::min(bound.memory_gb, d.memory_gb)};
  }
  return bound;
}

}  // namespace troupe::scheduling
