// FormatSweepTable: the one-screen comparison `troupe sweep` prints.
#include <algorithm>
#include <cstdio>
#include <map>

#include "apps/sweep.hpp"

namespace troupe {
namespace {

constexpr int kValueWidth = 14;

std::string Cell(const std::string& text, int width) {
  std::string out = text.size() >= static_cast<size_t>(width) ? text + " " : text;
  out.resize(std::max<size_t>(out.size(), width), ' ');
  return out;
}

std::string Num(double value, int decimals, int width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%*.*f", width, decimals, value);
  return buf;
}

std::string Header(const std::vector<SweepAxis>& axes, const char* seed_column) {
  std::string h;
  for (const SweepAxis& axis : axes)
    h += Cell(axis.field.substr(axis.field.rfind('.') + 1), kValueWidth);
  h += Cell(seed_column, 7);
  h += "   JCT mean h    p99 h  makespan h   GPU %   CPU %   mem %   wall s\n";
  return h;
}

std::string Line(const std::vector<std::string>& values, const std::string& seed,
                 const RunSummary& s) {
  std::string line;
  for (const std::string& v : values) line += Cell(v, kValueWidth);
  line += Cell(seed, 7);
  line += Num(s.jct_mean_s / 3600, 2, 13) + Num(s.jct_p99_s / 3600, 2, 9) +
          Num(s.makespan_s / 3600, 1, 12) + Num(s.gpu_utilisation * 100, 1, 8) +
          Num(s.cpu_utilisation * 100, 1, 8) + Num(s.memory_utilisation * 100, 1, 8) +
          Num(s.wall_s, 2, 9) + "\n";
  return line;
}

}  // namespace

std::string FormatSweepTable(const std::vector<SweepAxis>& axes,
                             const std::vector<SweepRow>& rows) {
  std::string out = Header(axes, "seed");
  for (const SweepRow& r : rows) out += Line(r.values, std::to_string(r.seed), r.summary);
  // With several seeds per combination, the mean over seeds (the workload's heavy tail moves
  // single seeds; comparisons are made on means).
  std::map<std::vector<std::string>, std::pair<RunSummary, int>> means;
  std::vector<std::vector<std::string>> order;
  for (const SweepRow& r : rows) {
    auto [it, inserted] = means.try_emplace(r.values, RunSummary{}, 0);
    if (inserted) order.push_back(r.values);
    RunSummary& m = it->second.first;
    m.jct_mean_s += r.summary.jct_mean_s;
    m.jct_p99_s += r.summary.jct_p99_s;
    m.makespan_s += r.summary.makespan_s;
    m.gpu_utilisation += r.summary.gpu_utilisation;
    m.cpu_utilisation += r.summary.cpu_utilisation;
    m.memory_utilisation += r.summary.memory_utilisation;
    m.wall_s += r.summary.wall_s;
    ++it->second.second;
  }
  if (rows.size() == order.size()) return out;
  out += "\nmean over seeds\n" + Header(axes, "seeds");
  for (const auto& values : order) {
    auto& [m, n] = means[values];
    for (double* f : {&m.jct_mean_s, &m.jct_p99_s, &m.makespan_s, &m.gpu_utilisation,
                      &m.cpu_utilisation, &m.memory_utilisation}) {
      *f /= n;
    }
    out += Line(values, std::to_string(n), m);
  }
  return out;
}

}  // namespace troupe
