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

int Width(const RunMetric& m) {
  return std::max<int>(8, static_cast<int>(m.table_label.size()) + 3);
}

std::string Header(const std::vector<SweepAxis>& axes, const char* seed_column,
                   const std::vector<RunMetric>& metrics) {
  std::string h;
  for (const SweepAxis& axis : axes)
    h += Cell(axis.field.substr(axis.field.rfind('.') + 1), kValueWidth);
  h += Cell(seed_column, 7);
  for (const RunMetric& m : metrics) {
    if (m.table_label.empty()) continue;
    h += std::string(Width(m) - m.table_label.size(), ' ') + m.table_label;
  }
  return h + "\n";
}

std::string Line(const std::vector<std::string>& values, const std::string& seed,
                 const std::vector<RunMetric>& metrics) {
  std::string line;
  for (const std::string& v : values) line += Cell(v, kValueWidth);
  line += Cell(seed, 7);
  for (const RunMetric& m : metrics) {
    if (!m.table_label.empty()) line += Num(m.value * m.table_scale, m.table_decimals, Width(m));
  }
  return line + "\n";
}

}  // namespace

std::string FormatSweepTable(const std::vector<SweepAxis>& axes,
                             const std::vector<SweepRow>& rows) {
  if (rows.empty()) return "";
  const std::vector<RunMetric>& columns = rows.front().metrics;
  std::string out = Header(axes, "seed", columns);
  for (const SweepRow& r : rows) out += Line(r.values, std::to_string(r.seed), r.metrics);
  // With several seeds per combination, the mean over seeds of every figure (the workload's
  // heavy tail moves single seeds; comparisons are made on means).
  std::map<std::vector<std::string>, std::pair<std::vector<RunMetric>, int>> means;
  std::vector<std::vector<std::string>> order;
  for (const SweepRow& r : rows) {
    auto [it, inserted] = means.try_emplace(r.values, r.metrics, 0);
    if (inserted) {
      order.push_back(r.values);
      for (RunMetric& m : it->second.first) m.value = 0;
    }
    std::vector<RunMetric>& sum = it->second.first;
    for (size_t i = 0; i < sum.size() && i < r.metrics.size(); ++i)
      sum[i].value += r.metrics[i].value;
    ++it->second.second;
  }
  if (rows.size() == order.size()) return out;
  out += "\nmean over seeds\n" + Header(axes, "seeds", columns);
  for (const auto& values : order) {
    auto& [sum, n] = means[values];
    for (RunMetric& m : sum) m.value /= n;
    out += Line(values, std::to_string(n), sum);
  }
  return out;
}

}  // namespace troupe
