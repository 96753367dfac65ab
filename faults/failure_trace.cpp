#include "faults/failure_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>

#include "base/input_file.hpp"
#include "base/status_macros.hpp"
#include "faults/failure_model.hpp"
#include "workload/csv_input.hpp"

namespace troupe {
namespace {

constexpr std::array<const char*, 4> kColumns = {"time_s", "component", "server", "repair_s"};
enum Column { kTime, kComponent, kServer, kRepair };

struct Row {
  double time_s = 0;
  int component = 0;  // index into kFailureComponents
  int64_t server = 0;
  double repair_s = 0;
};

std::string ComponentNames() {
  std::string names;
  for (const char* c : kFailureComponents) names += (names.empty() ? "" : ", ") + std::string(c);
  return names;
}

Status ReadHeader(const CsvLine& line, std::string_view name, std::array<int, 4>* columns) {
  CsvHeader header;
  RETURN_IF_ERROR(header.Parse(line, name));
  for (size_t i = 0; i < kColumns.size(); ++i) {
    RETURN_IF_ERROR(header.Require(kColumns[i], name, &(*columns)[i]));
  }
  if (header.size() == kColumns.size()) return Status::Ok();
  return Status::InvalidInput(fmt::format(
      "{}:{}: header has {} columns; a failure trace has exactly time_s,component,server,"
      "repair_s (found: {})",
      name, line.number, header.size(), header.Joined()));
}

Status ParseRow(const CsvLine& line, const std::array<int, 4>& columns, std::string_view name,
                const FaultUniverse& u, Row* row) {
  auto field = [&](Column c) { return line.fields[static_cast<size_t>(columns[c])]; };
  const int64_t n = line.number;
  RETURN_IF_ERROR(ParseDoubleField(field(kTime), name, n, "time_s", &row->time_s));
  RETURN_IF_ERROR(
      CheckFieldRange(row->time_s, 0, kMaxFailureTraceSeconds, field(kTime), name, n, "time_s"));
  const std::string_view component = field(kComponent);
  auto known = std::find(kFailureComponents.begin(), kFailureComponents.end(), component);
  if (known == kFailureComponents.end()) {
    return FieldError(name, n, "component",
                      fmt::format("unknown component '{}' ({})", component, ComponentNames()));
  }
  row->component = static_cast<int>(known - kFailureComponents.begin());
  RETURN_IF_ERROR(ParseTraceServer(field(kServer), name, n, u, "fail", &row->server));
  RETURN_IF_ERROR(ParseDoubleField(field(kRepair), name, n, "repair_s", &row->repair_s));
  return CheckFieldRange(row->repair_s, 0, kMaxFailureTraceSeconds, field(kRepair), name, n,
                         "repair_s");
}

Status ParseRows(CsvCursor* cursor, std::string_view name, const FaultUniverse& u,
                 std::vector<Row>* rows) {
  CsvLine line;
  if (!cursor->Next(&line)) {
    RETURN_IF_ERROR(cursor->status());
    return Status::InvalidInput(fmt::format(
        "{}: empty failure trace; its first line is the header time_s,component,server,repair_s",
        name));
  }
  std::array<int, 4> columns{};
  RETURN_IF_ERROR(ReadHeader(line, name, &columns));
  while (cursor->Next(&line)) {
    if (line.fields.size() != kColumns.size()) {
      return Status::InvalidInput(fmt::format("{}:{}: expected {} columns, found {}", name,
                                              line.number, kColumns.size(), line.fields.size()));
    }
    if (rows->size() == kMaxFailureTraceRows) {
      return Status::InvalidInput(
          fmt::format("{}:{}: more than {} failures", name, line.number, kMaxFailureTraceRows));
    }
    Row row;
    RETURN_IF_ERROR(ParseRow(line, columns, name, u, &row));
    rows->push_back(row);
  }
  return cursor->status();
}

// The servers a failure of `row` takes out: its own, or for a switch in a fabric its rack's.
std::vector<int64_t> ServersHit(const Row& row, const FaultUniverse& u) {
  const bool racks = u.rack_of_server.size() == static_cast<size_t>(u.servers);
  if (std::string_view(kFailureComponents[static_cast<size_t>(row.component)]) != "switch" ||
      !racks) {
    return {row.server};
  }
  const int32_t rack = u.rack_of_server[static_cast<size_t>(row.server)];
  std::vector<int64_t> servers;
  for (int64_t s = 0; s < u.servers; ++s) {
    if (u.rack_of_server[static_cast<size_t>(s)] == rack) servers.push_back(s);
  }
  return servers;
}

void AppendCrashes(std::vector<Row> rows, const FaultUniverse& u, std::vector<FaultEvent>* out) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.time_s, a.server, a.component, a.repair_s) <
           std::tie(b.time_s, b.server, b.component, b.repair_s);
  });
  for (const Row& row : rows) {
    FaultEvent e;
    e.kind = FaultKind::kCrash;
    e.at_s = row.time_s;
    e.duration_s = row.repair_s;
    e.cause = fmt::format("failure:{}", kFailureComponents[static_cast<size_t>(row.component)]);
    for (int64_t s : ServersHit(row, u)) {
      e.target = ActorSet{EndpointKind::kServer, s, s, ""};
      out->push_back(e);
    }
  }
}

Status ParseFromCursor(CsvCursor* cursor, std::string_view name, const FaultUniverse& u,
                       std::vector<FaultEvent>* out) {
  std::vector<Row> rows;
  RETURN_IF_ERROR(ParseRows(cursor, name, u, &rows));
  AppendCrashes(std::move(rows), u, out);
  return Status::Ok();
}

}  // namespace

Status ParseFailureTrace(std::string_view text, std::string_view name,
                         const FaultUniverse& universe, std::vector<FaultEvent>* out) {
  CsvCursor cursor(text);
  return ParseFromCursor(&cursor, name, universe, out);
}

Status ReadFailureTrace(const std::string& path, const FaultUniverse& universe,
                        std::vector<FaultEvent>* out) {
  InputFile file;
  RETURN_IF_ERROR(OpenInputFile(path, "faults.failure_trace", &file));
  CsvCursor cursor(file.get(), path);
  return ParseFromCursor(&cursor, path, universe, out);
}

Status ParseTraceServer(std::string_view text, std::string_view name, int64_t line,
                        const FaultUniverse& u, std::string_view verb, int64_t* server) {
  RETURN_IF_ERROR(ParseInt64Field(text, name, line, "server", server));
  if (*server >= 0 && *server < u.servers) return Status::Ok();
  const std::string why =
      u.servers == 0
          ? fmt::format("server {}: the run has no GPU servers to {}", *server, verb)
          : fmt::format("server {} is not in the cluster (servers 0..{})", *server, u.servers - 1);
  return FieldError(name, line, "server", why);
}

}  // namespace troupe
