#include "runner/cluster/fabric_records.hpp"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <charconv>
#include <system_error>
#include <utility>

#include "runner/cluster/run_summary.hpp"

namespace troupe {
namespace {

constexpr double kBitsPerByte = 8;
constexpr size_t kBusiestLinks = 5;

double Gbps(double bytes_per_s) { return bytes_per_s * kBitsPerByte / 1e9; }

// A link's utilisation over `seconds` at `capacity` bytes per second.
double Utilisation(double capacity, double bytes, double seconds) {
  return seconds > 0 && capacity > 0 ? bytes / (capacity * seconds) : 0;
}

// The link's capacity in the record's round.
double RoundCapacity(const FabricOutput& fabric, const LinkRecord& r) {
  if (fabric.slowdowns == nullptr) return fabric.topology->link(r.link).capacity_bytes_per_s;
  return fabric.slowdowns->CapacityAt(*fabric.topology, r.link, r.start_s);
}

// `value` in fixed notation with `decimals` decimals. std::to_chars ignores the locale ("1.5" is
// never "1,5") and rounds exactly, as fmt's "{:.Nf}" does, but without fmt's slow exact path for
// large values: a Philly run's byte counts of 10^12 and more took a third of its time in it.
void AppendFixed(double value, int decimals, std::string* out) {
  char buf[400];  // the longest double in fixed notation has 309 integer digits
  const auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, decimals);
  if (ec != std::errc()) {
    *out += "nan";
    return;
  }
  out->append(buf, static_cast<size_t>(end - buf));
}

void AppendInt(int64_t value, std::string* out) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out->append(buf, static_cast<size_t>(end - buf));
}

}  // namespace

void AppendLinkRow(const FabricOutput& fabric, const LinkRecord& r, std::string* out) {
  const double capacity = RoundCapacity(fabric, r);
  AppendInt(r.round, out);
  *out += ',';
  *out += fabric.topology->LinkName(r.link);
  for (const auto& [value, decimals] :
       {std::pair{r.start_s, 3}, std::pair{r.end_s, 3}, std::pair{Gbps(capacity), 3},
        std::pair{r.bytes, 0}, std::pair{Utilisation(capacity, r.bytes, r.end_s - r.start_s), 6}}) {
    *out += ',';
    AppendFixed(value, decimals, out);
  }
  *out += ',';
  AppendInt(r.flows, out);
  *out += ',';
  AppendFixed(Gbps(r.rate_bytes_per_s), 3, out);
  *out += '\n';
}

void SummarizeNetwork(const FabricOutput& fabric, const std::vector<JobRecord>& jobs,
                      double makespan_s, summaries::ClusterRunSummary* summary) {
  summaries::NetworkSummary& network = *summary->mutable_network();
  absl::flat_hash_map<int64_t, const JobRecord*> by_id;
  for (const JobRecord& j : jobs) by_id[j.job_id] = &j;
  std::vector<double> slowdowns;
  double comm_s = 0, contention_s = 0;
  for (const JobNetworkRecord& n : *fabric.jobs) {
    const auto it = by_id.find(n.job_id);
    if (it == by_id.end() || !it->second->measured || n.comm_s <= 0) continue;
    const JobRecord& j = *it->second;
    comm_s += n.comm_s;
    contention_s += n.contention_s;
    const double leased_s = j.gpus > 0 ? j.gpu_seconds / j.gpus : 0;
    if (leased_s > n.contention_s) slowdowns.push_back(leased_s / (leased_s - n.contention_s));
  }
  std::sort(slowdowns.begin(), slowdowns.end());
  network.set_jobs_crossing(static_cast<int32_t>(slowdowns.size()));
  network.set_comm_hours(comm_s / 3600);
  network.set_contention_hours(contention_s / 3600);
  double sum = 0;
  for (double s : slowdowns) sum += s;
  network.set_contention_slowdown_mean(slowdowns.empty() ? 0 : sum / slowdowns.size());
  network.set_contention_slowdown_p99(Quantile(slowdowns, 0.99));

  const fabric::Topology& topology = *fabric.topology;
  std::vector<double> bytes(topology.links(), 0), peak(topology.links(), 0);
  for (const LinkRecord& r : *fabric.links) {
    bytes[r.link] += r.bytes;
    peak[r.link] =
        std::max(peak[r.link], Utilisation(RoundCapacity(fabric, r), r.bytes, r.end_s - r.start_s));
  }
  std::vector<std::pair<double, int32_t>> by_load;  // (mean utilisation, link)
  for (size_t l = 0; l < bytes.size(); ++l) {
    const int32_t link = static_cast<int32_t>(l);
    if (bytes[l] > 0) {
      by_load.push_back(
          {Utilisation(topology.link(link).capacity_bytes_per_s, bytes[l], makespan_s), link});
    }
  }
  // Highest first; equal loads by link index, so the order never depends on the sort.
  std::sort(by_load.begin(), by_load.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t k = 0; k < by_load.size() && k < kBusiestLinks; ++k) {
    const int32_t link = by_load[k].second;
    summaries::LinkLoad* load = network.add_busiest_links();
    load->set_link(topology.LinkName(link));
    load->set_capacity_gbps(Gbps(topology.link(link).capacity_bytes_per_s));
    load->set_bytes(bytes[link]);
    load->set_utilisation_mean(by_load[k].first);
    load->set_utilisation_peak(peak[link]);
  }
}

}  // namespace troupe
