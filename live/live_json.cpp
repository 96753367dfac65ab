#include "live/live_json.hpp"

#include <cmath>
#include <cstdio>

namespace troupe {
namespace {

// Appends JSON text. Numbers are written with enough digits to read back what the run reports;
// a number JSON cannot hold (inf, nan) is written as null.
class JsonOut {
 public:
  std::string& text() { return out_; }
  JsonOut& Key(const char* key) {
    Comma();
    out_ += '"';
    out_ += key;
    out_ += "\":";
    fresh_ = true;
    return *this;
  }
  JsonOut& Num(double v) {
    Comma();
    if (!std::isfinite(v)) {
      out_ += "null";
      return *this;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    out_ += buf;
    return *this;
  }
  JsonOut& Int(int64_t v) {
    Comma();
    out_ += std::to_string(v);
    return *this;
  }
  JsonOut& Bool(bool v) {
    Comma();
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonOut& Str(const std::string& v) {
    Comma();
    out_ += '"';
    for (unsigned char c : v) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      } else {
        out_ += static_cast<char>(c);
      }
    }
    out_ += '"';
    return *this;
  }
  JsonOut& Open(char bracket) {
    Comma();
    out_ += bracket;
    fresh_ = true;
    return *this;
  }
  JsonOut& Close(char bracket) {
    out_ += bracket;
    fresh_ = false;
    return *this;
  }

 private:
  void Comma() {
    if (!fresh_) out_ += ',';
    fresh_ = false;
  }
  std::string out_;
  bool fresh_ = true;
};

void WriteRound(JsonOut& j, const LiveRoundPoint& p) {
  j.Open('{');
  j.Key("t").Num(p.start_s).Key("gpus").Int(p.gpus).Key("cpus").Num(p.cpus);
  j.Key("mem").Num(p.memory_gb).Key("running").Int(p.running).Key("queued").Int(p.queued);
  j.Close('}');
}

void WriteServers(JsonOut& j, const std::vector<LiveServer>& servers) {
  j.Key("servers").Open('[');
  for (const LiveServer& s : servers) {
    j.Open('{');
    j.Key("name").Str(s.name).Key("gpus").Int(s.gpus).Key("used").Int(s.gpus_used);
    j.Key("cpus").Num(s.cpus).Key("cpus_used").Num(s.cpus_used);
    j.Key("mem").Num(s.memory_gb).Key("mem_used").Num(s.memory_gb_used);
    j.Close('}');
  }
  j.Close(']');
}

void WriteFaults(JsonOut& j, const std::vector<FaultRecord>& faults) {
  j.Key("faults_total").Int(static_cast<int64_t>(faults.size()));
  j.Key("faults").Open('[');
  const size_t first = faults.size() > kLiveFaultsShown ? faults.size() - kLiveFaultsShown : 0;
  for (size_t i = first; i < faults.size(); ++i) {
    const FaultRecord& f = faults[i];
    j.Open('{');
    j.Key("at_s").Num(f.at_s).Key("fault").Str(f.fault).Key("effect").Str(f.effect);
    j.Key("recovered_s").Num(f.recovered_s);
    j.Close('}');
  }
  j.Close(']');
}

// Mean modelled seconds of one report (a node's or shard's step) of a stage.
double PerReport(double total_s, int64_t reports) { return reports > 0 ? total_s / reports : 0; }

void WritePs(JsonOut& j, const LivePs& ps) {
  j.Key("ps").Open('{');
  j.Key("steps_total").Int(ps.steps_total).Key("steps_done").Int(ps.steps_done);
  j.Key("loss").Num(ps.loss);
  j.Key("stage_s").Open('{');
  j.Key("read").Num(PerReport(ps.read_s, ps.reader_reports));
  j.Key("partition").Num(PerReport(ps.partition_s, ps.partitioner_reports));
  j.Key("ssd").Num(PerReport(ps.ssd_s, ps.shard_reports));
  j.Key("pull").Num(PerReport(ps.pull_s, ps.trainer_reports));
  j.Key("gpu").Num(PerReport(ps.gpu_s, ps.trainer_reports));
  j.Key("push").Num(PerReport(ps.push_s, ps.trainer_reports));
  j.Key("allreduce").Num(PerReport(ps.allreduce_s, ps.trainer_reports));
  j.Close('}');
  const TierCounts& t = ps.tiers;
  j.Key("tiers").Open('{');
  j.Key("keys").Int(t.keys).Key("hbm_hit_rate").Num(t.hbm_hit_rate());
  j.Key("mem_hit_rate").Num(t.mem_hit_rate()).Key("ssd_hit_rate").Num(t.ssd_hit_rate());
  j.Key("memory_hit_rate").Num(t.memory_hit_rate()).Key("rows_created").Int(t.rows_created);
  j.Key("ssd_bytes_read").Int(t.ssd_bytes_read).Key("ssd_bytes_written").Int(t.ssd_bytes_written);
  j.Close('}');
  j.Close('}');
}

void WriteFabric(JsonOut& j, const LiveFabric& fabric) {
  j.Key("fabric").Open('{');
  j.Key("links").Int(fabric.links).Key("busy").Int(fabric.busy);
  j.Key("hot").Open('[');
  for (const LiveLinkLoad& l : fabric.hot) {
    j.Open('{').Key("name").Str(l.name).Key("util").Num(l.utilisation);
    j.Key("flows").Int(l.flows).Close('}');
  }
  j.Close(']').Close('}');
}

void WriteSweep(JsonOut& j, const std::vector<LiveSweepRun>& runs) {
  int64_t done = 0, failed = 0;
  for (const LiveSweepRun& r : runs) {
    done += r.state == "done";
    failed += r.state == "failed";
  }
  j.Key("sweep").Open('{');
  j.Key("total").Int(static_cast<int64_t>(runs.size())).Key("done").Int(done);
  j.Key("failed").Int(failed);
  j.Key("runs").Open('[');
  for (const LiveSweepRun& r : runs) {
    j.Open('{').Key("name").Str(r.name).Key("state").Str(r.state).Key("wall_s").Num(r.wall_s);
    j.Key("figures").Open('[');
    for (const auto& [label, value] : r.figures) j.Open('[').Str(label).Num(value).Close(']');
    j.Close(']').Close('}');
  }
  j.Close(']').Close('}');
}

}  // namespace

std::string SnapshotJson(const LiveSnapshot& s, int64_t version) {
  JsonOut j;
  j.Open('{');
  j.Key("version").Int(version).Key("kind").Str(s.kind).Key("name").Str(s.name);
  j.Key("done").Bool(s.done).Key("wall_s").Num(s.wall_s).Key("virtual_s").Num(s.virtual_s);
  j.Key("rounds").Int(s.rounds);
  j.Key("jobs").Open('{');
  j.Key("arrived").Int(s.jobs_arrived).Key("queued").Int(s.jobs_queued);
  j.Key("running").Int(s.jobs_running).Key("finished").Int(s.jobs_finished);
  j.Key("failed").Int(s.jobs_failed).Key("measured_finished").Int(s.measured_finished);
  j.Close('}');
  j.Key("capacity").Open('{');
  j.Key("gpus").Int(s.gpus_total).Key("cpus").Num(s.cpus_total).Key("mem").Num(s.memory_gb_total);
  j.Close('}');
  j.Key("latest");
  WriteRound(j, s.latest);
  j.Key("timeline").Open('[');
  for (const LiveRoundPoint& p : s.timeline) WriteRound(j, p);
  j.Close(']');
  WriteServers(j, s.servers);
  j.Key("jct_cdf").Open('[');
  for (const auto& [jct_s, fraction] : s.jct_cdf) {
    j.Open('[').Num(jct_s).Num(fraction).Close(']');
  }
  j.Close(']');
  WriteFaults(j, s.faults);
  if (s.has_fabric) WriteFabric(j, s.fabric);
  if (s.has_ps) WritePs(j, s.ps);
  if (s.kind == "sweep") WriteSweep(j, s.sweep);
  j.Close('}');
  return std::move(j.text());
}

}  // namespace troupe
