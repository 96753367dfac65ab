#include "faults/failure_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "base/rng.hpp"
#include "base/status_macros.hpp"

namespace troupe {
namespace {

// More drawn failures than this is a model that would crash the cluster continuously.
constexpr size_t kMaxFailures = 1000000;

int FailureComponentIndex(const std::string& name) {
  for (size_t i = 0; i < kFailureComponents.size(); ++i) {
    if (name == kFailureComponents[i]) return static_cast<int>(i);
  }
  return -1;
}

bool PerGpu(const std::string& name) { return name == "gpu" || name == "hbm"; }

config::FailureModel Llama3() {
  std::map<std::string, int> counts;
  for (const PresetCause& c : Llama3Causes()) counts[c.component] += c.count;
  config::FailureModel model;
  for (const char* name : kFailureComponents) {
    config::FailureComponent* c = model.add_component();
    c->set_component(name);
    c->set_per_gpu_hour(counts[name] / (kLlama3Gpus * kLlama3Hours));
  }
  return model;
}

int RatesGiven(const config::FailureComponent& c) {
  return c.has_per_gpu_hour() + c.has_per_server_hour() + c.has_per_switch_hour() + c.has_mtbf_h();
}

Status CheckRepair(const config::RepairTime& r, const std::string& where) {
  if (r.distribution() != "exponential" && r.distribution() != "lognormal") {
    return InvalidField(
        where + ".distribution",
        fmt::format("unknown distribution '{}' (exponential, lognormal)", r.distribution()));
  }
  return Status::Ok();
}

Status CheckComponent(const config::FailureComponent& c, const std::string& where) {
  if (FailureComponentIndex(c.component()) < 0) {
    return InvalidField(
        where + ".component",
        fmt::format("unknown component '{}' (gpu, hbm, host, nic, switch)", c.component()));
  }
  const int rates = RatesGiven(c);
  if (rates == 0) {
    return InvalidField(where, fmt::format("{} needs a rate: per_gpu_hour, per_server_hour, "
                                           "per_switch_hour or mtbf_h",
                                           c.component()));
  }
  if (rates > 1)
    return InvalidField(where, fmt::format("{} has {} rates; give one", c.component(), rates));
  if (c.has_per_switch_hour() && c.component() != "switch") {
    return InvalidField(where + ".per_switch_hour", "only a switch fails per switch-hour");
  }
  if (c.has_mtbf_h() && !(c.mtbf_h() > 0)) return InvalidField(where + ".mtbf_h", "must be > 0");
  if (c.has_repair()) RETURN_IF_ERROR(CheckRepair(c.repair(), where + ".repair"));
  return Status::Ok();
}

double DrawRepairS(Rng& rng, const config::RepairTime& r) {
  // Both uniforms are drawn whatever the distribution, so the stream never depends on it.
  const double u1 = rng.Uniform01();
  const double u2 = rng.Uniform01();
  if (r.distribution() == "lognormal") {
    const double sigma = r.sigma();
    const double normal = std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * M_PI * u2);
    return std::exp(std::log(r.mean_s()) - sigma * sigma / 2 + sigma * normal);
  }
  return -std::log(1 - u1) * r.mean_s();
}

// The groups of servers one failure of `component` takes out: one server each, or, for a switch
// in a fabric, each rack's servers.
std::vector<std::vector<int64_t>> Groups(const std::string& component, const FaultUniverse& u) {
  std::vector<std::vector<int64_t>> groups;
  if (component == "switch" && !u.rack_of_server.empty()) {
    for (int64_t s = 0; s < u.servers; ++s) {
      const size_t rack = static_cast<size_t>(u.rack_of_server[static_cast<size_t>(s)]);
      if (groups.size() <= rack) groups.resize(rack + 1);
      groups[rack].push_back(s);
    }
    return groups;
  }
  for (int64_t s = 0; s < u.servers; ++s) groups.push_back({s});
  return groups;
}

double GpusOf(const std::vector<int64_t>& servers, const FaultUniverse& u) {
  double gpus = 0;
  for (int64_t s : servers) {
    gpus += u.gpus_of_server.empty() ? 8 : u.gpus_of_server[static_cast<size_t>(s)];
  }
  return gpus;
}

}  // namespace

const std::vector<PresetCause>& Llama3Causes() {
  // The Llama 3 Herd of Models (2024), Table 5: root causes of the 419 unexpected interruptions.
  static const std::vector<PresetCause> kCauses = {
      {"Faulty GPU", 148, "gpu"},
      {"GPU HBM3 memory", 72, "hbm"},
      {"Software bug", 54, "host"},
      {"Network switch/cable", 35, "switch"},
      {"Host maintenance", 32, "host"},
      {"GPU SRAM memory", 19, "gpu"},
      {"GPU system processor", 17, "gpu"},
      {"NIC", 7, "nic"},
      {"NCCL watchdog timeouts", 7, "nic"},
      {"Silent data corruption", 6, "gpu"},
      {"GPU thermal interface and sensor", 6, "gpu"},
      {"SSD", 3, "host"},
      {"Power supply", 3, "host"},
      {"Server chassis", 2, "host"},
      {"IO expansion board", 2, "host"},
      {"Dependency", 2, "host"},
      {"CPU", 2, "host"},
      {"System memory", 2, "host"},
  };
  return kCauses;
}

config::FailureModel ResolveFailureModel(const config::FailureModel& model) {
  config::FailureModel resolved = model;
  resolved.clear_component();
  if (model.preset() == "llama3") *resolved.mutable_component() = Llama3().component();
  for (const config::FailureComponent& c : model.component()) {
    auto same = std::find_if(
        resolved.mutable_component()->begin(), resolved.mutable_component()->end(),
        [&](const config::FailureComponent& r) { return r.component() == c.component(); });
    if (same != resolved.mutable_component()->end()) {
      *same = c;
    } else {
      *resolved.add_component() = c;
    }
  }
  return resolved;
}

double FailuresPerHour(const config::FailureComponent& c, double gpus, double servers) {
  if (c.has_per_gpu_hour()) return c.per_gpu_hour() * gpus;
  if (c.has_per_server_hour()) return c.per_server_hour() * servers;
  if (c.has_per_switch_hour()) return c.per_switch_hour();
  if (!c.has_mtbf_h() || c.mtbf_h() <= 0) return 0;
  if (PerGpu(c.component())) return gpus / c.mtbf_h();
  if (c.component() == "switch") return 1 / c.mtbf_h();
  return servers / c.mtbf_h();
}

Status CheckFailureModel(const config::FailureModel& model, const std::string& where) {
  if (!model.preset().empty() && model.preset() != "llama3") {
    return InvalidField(where + ".preset",
                        fmt::format("unknown preset '{}' (llama3)", model.preset()));
  }
  std::vector<std::string> seen;
  for (int i = 0; i < model.component_size(); ++i) {
    const config::FailureComponent& c = model.component(i);
    const std::string at = fmt::format("{}.component[{}]", where, i);
    RETURN_IF_ERROR(CheckComponent(c, at));
    if (std::find(seen.begin(), seen.end(), c.component()) != seen.end()) {
      return InvalidField(at + ".component", fmt::format("{} is listed twice", c.component()));
    }
    seen.push_back(c.component());
  }
  RETURN_IF_ERROR(CheckRepair(model.repair(), where + ".repair"));
  if (!(model.end_s() > model.start_s()))
    return InvalidField(where + ".end_s", "must be after start_s");
  return Status::Ok();
}

Status DrawFailures(const config::FailureModel& model, uint64_t run_seed,
                    const FaultUniverse& universe, std::vector<FaultEvent>* out) {
  const config::FailureModel resolved = ResolveFailureModel(model);
  const uint64_t seed = (model.seed() != 0 ? model.seed() : run_seed) ^ 0x6661696c75726573ull;
  size_t drawn = 0;
  for (const config::FailureComponent& c : resolved.component()) {
    const auto kind = static_cast<uint64_t>(FailureComponentIndex(c.component()));
    Rng rng(seed + (kind + 1) * 0x9e3779b97f4a7c15ull);
    const config::RepairTime& repair = c.has_repair() ? c.repair() : resolved.repair();
    for (const std::vector<int64_t>& group : Groups(c.component(), universe)) {
      const double per_s =
          FailuresPerHour(c, GpusOf(group, universe), static_cast<double>(group.size())) / 3600;
      if (!(per_s > 0)) continue;
      for (double t = model.start_s() + rng.Exponential(per_s); t < model.end_s();
           t += rng.Exponential(per_s)) {
        if (++drawn > kMaxFailures) {
          return InvalidField("faults.failure_model",
                              fmt::format("draws more than {} failures in [start_s, end_s); lower "
                                          "the rates or shorten the window",
                                          kMaxFailures));
        }
        FaultEvent e;
        e.kind = FaultKind::kCrash;
        e.at_s = std::round(t);
        e.duration_s = std::max(1.0, std::round(DrawRepairS(rng, repair)));
        e.cause = fmt::format("failure:{}", c.component());
        for (int64_t s : group) {
          e.target = ActorSet{EndpointKind::kServer, s, s, ""};
          out->push_back(e);
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace troupe
