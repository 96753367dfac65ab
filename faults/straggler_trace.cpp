#include "faults/straggler_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "base/input_file.hpp"
#include "base/status_macros.hpp"
#include "faults/failure_trace.hpp"
#include "workload/csv_input.hpp"

namespace troupe {
namespace {

constexpr std::array<const char*, 5> kStragglerColumns = {"time_s", "component", "server",
                                                          "duration_s", "factor"};
enum class StragglerColumn { kTime, kComponent, kServer, kDuration, kFactor };

// Times and durations may not exceed this (about 31 years); more rows than kMaxRows is not a
// trace of a cluster's stragglers.
constexpr double kMaxSeconds = 1e9;
constexpr size_t kMaxRows = 1000000;

Status ReadHeader(const CsvLine& line, std::string_view name, std::array<int, 5>* columns) {
  CsvHeader header;
  RETURN_IF_ERROR(header.Parse(line, name));
  for (size_t i = 0; i < kStragglerColumns.size(); ++i) {
    RETURN_IF_ERROR(header.Require(kStragglerColumns[i], name, &(*columns)[i]));
  }
  if (header.size() == kStragglerColumns.size()) return Status::Ok();
  return Status::InvalidInput(fmt::format(
      "{}:{}: header has {} columns; a straggler trace has exactly time_s,component,server,"
      "duration_s,factor (found: {})",
      name, line.number, header.size(), header.Joined()));
}

Status ParseComponent(std::string_view text, std::string_view name, int64_t line, int* out) {
  auto known = std::find(kStragglerComponents.begin(), kStragglerComponents.end(), text);
  if (known == kStragglerComponents.end()) {
    return FieldError(name, line, "component",
                      fmt::format("unknown component '{}' (gpu, host, link)", text));
  }
  *out = static_cast<int>(known - kStragglerComponents.begin());
  return Status::Ok();
}

// A link row's `server` column names the rack whose uplink slows, by index.
Status ParseTraceRack(std::string_view text, std::string_view name, int64_t line,
                      const FaultUniverse& u, int64_t* rack) {
  RETURN_IF_ERROR(ParseInt64Field(text, name, line, "server", rack));
  const int64_t racks = RacksOf(u);
  if (*rack >= 0 && *rack < racks) return Status::Ok();
  const std::string why =
      racks == 0 ? "a link row slows a rack's uplink (server: the rack), and the run has no fabric"
                 : fmt::format("rack {} is not in the fabric (racks 0..{})", *rack, racks - 1);
  return FieldError(name, line, "server", why);
}

Status ParseRow(const CsvLine& line, const std::array<int, 5>& columns, std::string_view name,
                const FaultUniverse& u, StragglerEpisode* row) {
  using enum StragglerColumn;
  auto field = [&](StragglerColumn c) {
    return line.fields[static_cast<size_t>(columns[static_cast<size_t>(c)])];
  };
  const int64_t n = line.number;
  RETURN_IF_ERROR(ParseDoubleField(field(kTime), name, n, "time_s", &row->start_s));
  RETURN_IF_ERROR(CheckFieldRange(row->start_s, 0, kMaxSeconds, field(kTime), name, n, "time_s"));
  RETURN_IF_ERROR(ParseComponent(field(kComponent), name, n, &row->component));
  if (row->component == kLinkComponent) {
    RETURN_IF_ERROR(ParseTraceRack(field(kServer), name, n, u, &row->server));
  } else {
    RETURN_IF_ERROR(ParseTraceServer(field(kServer), name, n, u, "slow", &row->server));
  }
  RETURN_IF_ERROR(ParseDoubleField(field(kDuration), name, n, "duration_s", &row->duration_s));
  RETURN_IF_ERROR(
      CheckFieldRange(row->duration_s, 0, kMaxSeconds, field(kDuration), name, n, "duration_s"));
  if (!(row->duration_s > 0)) return FieldError(name, n, "duration_s", "must be > 0, got 0");
  RETURN_IF_ERROR(ParseDoubleField(field(kFactor), name, n, "factor", &row->factor));
  return CheckFieldRange(row->factor, 0.001, 1, field(kFactor), name, n, "factor");
}

Status ParseFromCursor(CsvCursor* cursor, std::string_view name, const FaultUniverse& u,
                       std::vector<StragglerEpisode>* out) {
  CsvLine line;
  if (!cursor->Next(&line)) {
    RETURN_IF_ERROR(cursor->status());
    return Status::InvalidInput(
        fmt::format("{}: empty straggler trace; its first line is the header "
                    "time_s,component,server,duration_s,factor",
                    name));
  }
  std::array<int, 5> columns{};
  RETURN_IF_ERROR(ReadHeader(line, name, &columns));
  std::vector<StragglerEpisode> rows;
  while (cursor->Next(&line)) {
    if (line.fields.size() != kStragglerColumns.size()) {
      return Status::InvalidInput(fmt::format("{}:{}: expected {} columns, found {}", name,
                                              line.number, kStragglerColumns.size(),
                                              line.fields.size()));
    }
    if (rows.size() == kMaxRows) {
      return Status::InvalidInput(
          fmt::format("{}:{}: more than {} slow episodes", name, line.number, kMaxRows));
    }
    StragglerEpisode row;
    RETURN_IF_ERROR(ParseRow(line, columns, name, u, &row));
    rows.push_back(row);
  }
  RETURN_IF_ERROR(cursor->status());
  out->insert(out->end(), rows.begin(), rows.end());
  return Status::Ok();
}

}  // namespace

Status ParseStragglerTrace(std::string_view text, std::string_view name,
                           const FaultUniverse& universe, std::vector<StragglerEpisode>* out) {
  CsvCursor cursor(text);
  return ParseFromCursor(&cursor, name, universe, out);
}

Status ReadStragglerTrace(const std::string& path, const FaultUniverse& universe,
                          std::vector<StragglerEpisode>* out) {
  InputFile file;
  RETURN_IF_ERROR(OpenInputFile(path, "faults.stragglers.trace", &file));
  CsvCursor cursor(file.get(), path);
  return ParseFromCursor(&cursor, path, universe, out);
}

}  // namespace troupe
