// FormatSweepTable: the one-screen comparison `troupe sweep` prints.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "apps/sweep.hpp"
#include "runner/seed_spread.hpp"

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

// "15.92 ± 0.29": the mean and standard deviation over seeds, in the table's units.
std::string MeanAndSd(const SeedSpread& spread, const RunMetric& m) {
  return Num(spread.mean * m.table_scale, m.table_decimals, 0) + " ± " +
         Num(spread.sd * m.table_scale, m.table_decimals, 0);
}

// Characters a terminal shows: UTF-8 continuation bytes take no column of their own.
size_t Columns(const std::string& text) {
  size_t columns = 0;
  for (char c : text) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return columns;
}

std::string RightAligned(const std::string& text, size_t width) {
  return std::string(width - std::min(width, Columns(text)), ' ') + text;
}

// Each combination's figures over its seeds: "mean ± sd" per column, and the number of seeds.
std::string SpreadTable(const std::vector<SweepAxis>& axes, const std::vector<SweepRow>& rows) {
  std::vector<std::vector<std::string>> order;
  std::map<std::vector<std::string>, std::vector<const SweepRow*>> runs;
  for (const SweepRow& r : rows) {
    auto& group = runs[r.values];
    if (group.empty()) order.push_back(r.values);
    group.push_back(&r);
  }
  const std::vector<RunMetric>& columns = rows.front().metrics;
  std::vector<std::vector<std::string>> cells;  // per combination, per shown column
  std::vector<size_t> widths;
  for (const RunMetric& m : columns) {
    if (!m.table_label.empty()) widths.push_back(m.table_label.size() + 3);
  }
  for (const auto& values : order) {
    cells.emplace_back();
    for (size_t i = 0, shown = 0; i < columns.size(); ++i) {
      if (columns[i].table_label.empty()) continue;
      std::vector<double> over_seeds;
      for (const SweepRow* r : runs[values]) over_seeds.push_back(r->metrics.at(i).value);
      cells.back().push_back(MeanAndSd(SpreadOf(over_seeds), columns[i]));
      widths[shown] = std::max(widths[shown], Columns(cells.back().back()) + 2);
      ++shown;
    }
  }
  std::string out = "\nmean over seeds ± standard deviation\n";
  for (const SweepAxis& axis : axes)
    out += Cell(axis.field.substr(axis.field.rfind('.') + 1), kValueWidth);
  out += Cell("seeds", 7);
  for (size_t i = 0, shown = 0; i < columns.size(); ++i) {
    if (!columns[i].table_label.empty())
      out += RightAligned(columns[i].table_label, widths[shown++]);
  }
  out += "\n";
  for (size_t g = 0; g < order.size(); ++g) {
    for (const std::string& v : order[g]) out += Cell(v, kValueWidth);
    out += Cell(std::to_string(runs[order[g]].size()), 7);
    for (size_t c = 0; c < cells[g].size(); ++c) out += RightAligned(cells[g][c], widths[c]);
    out += "\n";
  }
  return out;
}

}  // namespace

std::string FormatSweepTable(const std::vector<SweepAxis>& axes,
                             const std::vector<SweepRow>& rows) {
  if (rows.empty()) return "";
  std::string out = Header(axes, "seed", rows.front().metrics);
  for (const SweepRow& r : rows) out += Line(r.values, std::to_string(r.seed), r.metrics);
  // With several seeds per combination, the mean over seeds of every figure and how far single
  // seeds stray from it (the workload's heavy tail moves single seeds; comparisons are made on
  // means, and a difference smaller than the spread is not one).
  std::set<std::vector<std::string>> combinations;
  for (const SweepRow& r : rows) combinations.insert(r.values);
  if (rows.size() == combinations.size()) return out;
  return out + SpreadTable(axes, rows);
}

}  // namespace troupe
