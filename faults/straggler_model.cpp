#include "faults/straggler_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "base/rng.hpp"
#include "base/status_macros.hpp"
#include "faults/straggler_trace.hpp"

namespace troupe {
namespace {

// More episodes than this is a model that keeps every server slow all the time.
constexpr size_t kMaxEpisodes = 1000000;

int StragglerComponentIndex(const std::string& name) {
  for (size_t i = 0; i < kStragglerComponents.size(); ++i) {
    if (name == kStragglerComponents[i]) return static_cast<int>(i);
  }
  return -1;
}

Status CheckComponent(const config::StragglerComponent& c, const std::string& where) {
  if (StragglerComponentIndex(c.component()) < 0) {
    return InvalidField(where + ".component",
                        fmt::format("unknown component '{}' (gpu, host, link)", c.component()));
  }
  const int rates = c.has_per_gpu_hour() + c.has_per_server_hour() + c.has_mtbf_h();
  if (rates == 0) {
    return InvalidField(
        where,
        fmt::format("{} needs a rate: per_gpu_hour, per_server_hour or mtbf_h", c.component()));
  }
  if (rates > 1)
    return InvalidField(where, fmt::format("{} has {} rates; give one", c.component(), rates));
  if (c.component() == "link" && !c.has_mtbf_h()) {
    return InvalidField(where,
                        "a link's rate is mtbf_h (hours between slow episodes of one rack's "
                        "uplink); per_gpu_hour and per_server_hour are for gpu and host");
  }
  if (c.has_mtbf_h() && !(c.mtbf_h() > 0)) return InvalidField(where + ".mtbf_h", "must be > 0");
  if (c.factor_min() > c.factor_max()) {
    return InvalidField(where + ".factor_min", fmt::format("{:g} is above factor_max {:g}",
                                                           c.factor_min(), c.factor_max()));
  }
  return Status::Ok();
}

// The run-wide rules of one component: `link` needs the emulated fabric.
Status CheckComponentRun(const config::RunConfig& cfg, const std::string& where,
                         const std::string& component) {
  if (component != "link") return Status::Ok();
  if (!cfg.has_fabric()) {
    return InvalidField(where, "a link straggler slows a rack's uplink, and the run has no fabric");
  }
  if (cfg.run().mode() == config::real) {
    return InvalidField(where,
                        "a link straggler slows the emulated fabric; a real run's links keep "
                        "their capacity (slow a gpu or host instead)");
  }
  return Status::Ok();
}

// Every server's episodes of one component (every rack's, for links), drawn on the component's
// own stream.
Status DrawComponent(const config::StragglerComponent& c, const config::Stragglers& block,
                     uint64_t seed, const FaultUniverse& u, size_t* drawn,
                     std::vector<StragglerEpisode>* out) {
  const int kind = StragglerComponentIndex(c.component());
  Rng rng(seed + static_cast<uint64_t>(kind + 1) * 0x9e3779b97f4a7c15ull);
  const int64_t owners = kind == kLinkComponent ? RacksOf(u) : u.servers;
  for (int64_t s = 0; s < owners; ++s) {
    const double gpus = kind == kLinkComponent || u.gpus_of_server.empty()
                            ? 8
                            : u.gpus_of_server[static_cast<size_t>(s)];
    const double per_s = EpisodesPerHour(c, gpus) / 3600;
    if (!(per_s > 0)) continue;
    for (double t = block.start_s() + rng.Exponential(per_s); t < block.end_s();
         t += rng.Exponential(per_s)) {
      if (++*drawn > kMaxEpisodes) {
        return InvalidField(
            "faults.stragglers",
            fmt::format("draws more than {} slow episodes in [start_s, end_s); lower "
                        "the rates or shorten the window",
                        kMaxEpisodes));
      }
      // Both drawn for every episode, so that the stream never depends on the values.
      const double duration_s = rng.Exponential(1 / c.mean_duration_s());
      const double factor = rng.Uniform(c.factor_min(), c.factor_max());
      out->push_back({.component = kind,
                      .server = s,
                      .start_s = std::round(t),
                      .duration_s = std::max(1.0, std::round(duration_s)),
                      .factor = factor});
    }
  }
  return Status::Ok();
}

FaultEvent SlowFault(int64_t server, double from_s, double to_s, const StragglerEpisode& slowest) {
  FaultEvent e;
  e.kind = FaultKind::kSlow;
  e.target = ActorSet{EndpointKind::kServer, server, server, ""};
  e.at_s = from_s;
  e.duration_s = to_s - from_s;
  e.factor = slowest.factor;
  e.cause =
      fmt::format("straggler:{}", kStragglerComponents[static_cast<size_t>(slowest.component)]);
  return e;
}

// One server's episodes (sorted by start) as slow faults that do not overlap: between two
// consecutive starts or ends, the slowest episode running holds; equal neighbours join.
void AppendServerFaults(const StragglerEpisode* first, const StragglerEpisode* last,
                        std::vector<FaultEvent>* out) {
  std::vector<double> bounds;
  for (const StragglerEpisode* e = first; e != last; ++e) {
    bounds.push_back(e->start_s);
    bounds.push_back(e->start_s + e->duration_s);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  std::vector<const StragglerEpisode*> running;
  const StragglerEpisode* next = first;
  const size_t from = out->size();
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const double a = bounds[i], b = bounds[i + 1];
    for (; next != last && next->start_s <= a; ++next) running.push_back(next);
    std::erase_if(running,
                  [a](const StragglerEpisode* e) { return e->start_s + e->duration_s <= a; });
    if (running.empty()) continue;
    const StragglerEpisode* slowest = *std::min_element(
        running.begin(), running.end(), [](const StragglerEpisode* x, const StragglerEpisode* y) {
          return std::tie(x->factor, x->component) < std::tie(y->factor, y->component);
        });
    FaultEvent e = SlowFault(first->server, a, b, *slowest);
    FaultEvent* previous = out->size() > from ? &out->back() : nullptr;
    if (previous && previous->EndS() == a && previous->factor == e.factor &&
        previous->cause == e.cause) {
      previous->duration_s = b - previous->at_s;
    } else {
      out->push_back(std::move(e));
    }
  }
}

// The drawn and traced episodes of every component.
Status EpisodesOf(const config::Stragglers& stragglers, uint64_t run_seed,
                  const FaultUniverse& universe, std::vector<StragglerEpisode>* episodes) {
  RETURN_IF_ERROR(DrawStragglers(stragglers, run_seed, universe, episodes));
  if (stragglers.trace().empty()) return Status::Ok();
  if (Status s = ReadStragglerTrace(stragglers.trace(), universe, episodes); !s.ok()) {
    return Status::InvalidInput("faults.stragglers.trace: " + s.message());
  }
  return Status::Ok();
}

}  // namespace

int64_t RacksOf(const FaultUniverse& universe) {
  int64_t racks = 0;
  for (int32_t rack : universe.rack_of_server) racks = std::max<int64_t>(racks, rack + 1);
  return racks;
}

Status CheckStragglers(const config::Stragglers& stragglers, const std::string& where) {
  if (stragglers.component_size() == 0 && stragglers.trace().empty()) {
    return InvalidField(where, "needs a component to draw slow episodes from, or a trace");
  }
  std::vector<std::string> seen;
  for (int i = 0; i < stragglers.component_size(); ++i) {
    const config::StragglerComponent& c = stragglers.component(i);
    const std::string at = fmt::format("{}.component[{}]", where, i);
    RETURN_IF_ERROR(CheckComponent(c, at));
    if (std::find(seen.begin(), seen.end(), c.component()) != seen.end()) {
      return InvalidField(at + ".component", fmt::format("{} is listed twice", c.component()));
    }
    seen.push_back(c.component());
  }
  if (stragglers.component_size() > 0 && !(stragglers.end_s() > stragglers.start_s())) {
    return InvalidField(where + ".end_s", "must be after start_s");
  }
  return Status::Ok();
}

Status CheckStragglerRun(const config::RunConfig& cfg, const std::string& name) {
  if (!cfg.has_faults() || !cfg.faults().has_stragglers()) return Status::Ok();
  const config::Stragglers& s = cfg.faults().stragglers();
  const std::string where = name + ": faults.stragglers";
  if (cfg.has_paramserver() || cfg.has_oasis()) {
    return InvalidField(where, "only a cluster run has GPU servers to slow");
  }
  for (int i = 0; i < s.component_size(); ++i) {
    RETURN_IF_ERROR(CheckComponentRun(cfg, fmt::format("{}.component[{}]", where, i),
                                      s.component(i).component()));
  }
  if (s.what_if() &&
      (cfg.run().mode() == config::real || cfg.has_agents() || cfg.has_external_scheduler())) {
    return InvalidField(where + ".what_if",
                        "the run without stragglers must replay this one exactly: only an emulated "
                        "run without agents or an external scheduler does");
  }
  return Status::Ok();
}

double EpisodesPerHour(const config::StragglerComponent& c, double gpus) {
  const bool per_gpu = c.component() == "gpu";
  if (c.has_per_gpu_hour()) return c.per_gpu_hour() * gpus;
  if (c.has_per_server_hour()) return c.per_server_hour();
  if (!c.has_mtbf_h() || c.mtbf_h() <= 0) return 0;
  return (per_gpu ? gpus : 1) / c.mtbf_h();
}

Status DrawStragglers(const config::Stragglers& stragglers, uint64_t run_seed,
                      const FaultUniverse& universe, std::vector<StragglerEpisode>* out) {
  const uint64_t seed =
      (stragglers.seed() != 0 ? stragglers.seed() : run_seed) ^ 0x737472616767ull;  // "stragg"
  size_t drawn = 0;
  for (const config::StragglerComponent& c : stragglers.component()) {
    RETURN_IF_ERROR(DrawComponent(c, stragglers, seed, universe, &drawn, out));
  }
  return Status::Ok();
}

std::vector<FaultEvent> SlowFaultsOf(std::vector<StragglerEpisode> episodes) {
  std::sort(episodes.begin(), episodes.end(),
            [](const StragglerEpisode& a, const StragglerEpisode& b) {
              return std::tie(a.server, a.start_s, a.duration_s, a.factor, a.component) <
                     std::tie(b.server, b.start_s, b.duration_s, b.factor, b.component);
            });
  std::vector<FaultEvent> faults;
  for (size_t i = 0; i < episodes.size();) {
    size_t j = i;
    while (j < episodes.size() && episodes[j].server == episodes[i].server) ++j;
    AppendServerFaults(episodes.data() + i, episodes.data() + j, &faults);
    i = j;
  }
  return faults;
}

Status PlanStragglers(const config::Stragglers& stragglers, uint64_t run_seed,
                      const FaultUniverse& universe, std::vector<FaultEvent>* server_faults,
                      std::vector<LinkStretch>* link_stretches) {
  std::vector<StragglerEpisode> episodes;
  RETURN_IF_ERROR(EpisodesOf(stragglers, run_seed, universe, &episodes));
  const auto links = std::stable_partition(
      episodes.begin(), episodes.end(),
      [](const StragglerEpisode& e) { return e.component != kLinkComponent; });
  std::vector<StragglerEpisode> link_episodes(links, episodes.end());
  episodes.erase(links, episodes.end());
  for (FaultEvent& e : SlowFaultsOf(std::move(episodes))) server_faults->push_back(std::move(e));
  // The same merge as a server's: a rack's uplink stands where the server would.
  for (const FaultEvent& e : SlowFaultsOf(std::move(link_episodes))) {
    link_stretches->push_back({.rack = static_cast<int32_t>(e.target.first),
                               .from_s = e.at_s,
                               .to_s = e.EndS(),
                               .factor = e.factor});
  }
  return Status::Ok();
}

}  // namespace troupe
