// Every number of the config schema, at the edges of its type and of its range, on the real
// troupe binary: a run either works (exit 0) or is refused before it starts (exit 2, one line),
// within a bounded time, never a crash, a signal or a hang. The fields come from the schema by
// reflection, so a field added later is covered without touching this file.
//
// Each value is first given to ValidateConfig in this process (microseconds). The range's ends, a
// value inside it and a sample of the other values (drawn with a fixed seed) then go to the
// binary: accepted ones to `troupe run`, refused ones to `troupe validate` (exit 2, one line
// naming the field). Fields of oasis {}
// and paramserver {} run on their own small base configs (tests/data/edges/).
#include <fcntl.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <thread>
#include <type_traits>

#include "base/status_macros.hpp"
#include "config/config_loader.hpp"
#include "config/config_ranges.hpp"
#include "config/config_validation.hpp"
#include "runner/cluster/run_setup.hpp"
#include "runner/oasis/oasis_run.hpp"
#include "runner/ps/ps_run.hpp"
#include "tests/integration/run_fixture.hpp"

extern char** environ;

namespace troupe::testing {
namespace {

namespace pb = google::protobuf;
using Type = pb::FieldDescriptor::CppType;

// Far above any run of the small base configs (a tenth of a second each in Release), and enough
// for a sanitizer build; a process still running then counts as a hang.
constexpr auto kProcessLimit = std::chrono::seconds(60);

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

struct Outcome {
  bool started = false;
  int exit_code = -1;  // -1: killed at the time limit
  int signal = 0;
  std::string err;
};

// Runs troupe with `args`, killing it at kProcessLimit.
Outcome RunBounded(const std::vector<std::string>& args, const std::string& dir) {
  const std::string err_path = dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> strings = {TROUPE_BINARY};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  Outcome outcome;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, TROUPE_BINARY, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return outcome;
  outcome.started = true;
  const auto deadline = std::chrono::steady_clock::now() + kProcessLimit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      outcome.err = ReadFile(err_path);
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  outcome.err = ReadFile(err_path);
  return outcome;
}

// The edges of the field's type, then its own range's ends and one value drawn inside it.
std::vector<double> FloatEdges(const FieldRange& r, std::mt19937_64& rng) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0,
                           -0.0,
                           std::numeric_limits<double>::denorm_min(),
                           -1,
                           1,
                           1e300,
                           -1e300,
                           std::numeric_limits<double>::max(),
                           inf,
                           -inf,
                           std::numeric_limits<double>::quiet_NaN()};
  if (r.field->cpp_type() == Type::CPPTYPE_FLOAT) {
    v.push_back(std::numeric_limits<float>::denorm_min());
    v.push_back(std::numeric_limits<float>::max());
  }
  v.push_back(*r.min);
  v.push_back(*r.max);
  v.push_back(std::uniform_real_distribution<double>(*r.min, *r.max)(rng));
  return v;
}

template <class T>
std::vector<T> IntEdges(const FieldRange& r, std::mt19937_64& rng) {
  std::vector<T> v = {0, 1, std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
  if (std::numeric_limits<T>::is_signed) v.push_back(T(-1));
  if (std::is_same_v<T, int32_t>) v.push_back(T(1 << 30));
  const T lo = static_cast<T>(*r.min);
  const T hi = *r.max >= static_cast<double>(std::numeric_limits<T>::max())
                   ? std::numeric_limits<T>::max()
                   : static_cast<T>(*r.max);
  v.push_back(lo);
  v.push_back(hi);
  v.push_back(std::uniform_int_distribution<T>(lo, hi)(rng));
  return v;
}

// The message and field that `path` ("cluster.servers[].count") names in `root`, creating
// sub-messages and a first entry of repeated fields on the way. Returns the leaf's index in its
// repeated field, or -1 for a singular leaf.
int Reach(pb::Message* root, const std::string& path, pb::Message** message,
          const pb::FieldDescriptor** leaf) {
  pb::Message* m = root;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const bool repeated = part.ends_with("[]");
    if (repeated) part.resize(part.size() - 2);
    const pb::FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(part);
    const pb::Reflection* r = m->GetReflection();
    if (dot == std::string::npos) {
      *message = m;
      *leaf = f;
      return repeated ? 0 : -1;
    }
    if (repeated) {
      m = r->FieldSize(*m, f) > 0 ? r->MutableRepeatedMessage(m, f, 0) : r->AddMessage(m, f);
    } else {
      m = r->MutableMessage(m, f);
    }
    start = dot + 1;
  }
}

template <class T>
void SetNumber(pb::Message* m, const pb::FieldDescriptor* f, int index, T value) {
  const pb::Reflection* r = m->GetReflection();
  if (index >= 0 && r->FieldSize(*m, f) == 0) {
    switch (f->cpp_type()) {
      case Type::CPPTYPE_INT32:
        r->AddInt32(m, f, 0);
        break;
      case Type::CPPTYPE_INT64:
        r->AddInt64(m, f, 0);
        break;
      case Type::CPPTYPE_FLOAT:
        r->AddFloat(m, f, 0);
        break;
      default:
        r->AddDouble(m, f, 0);
    }
  }
  switch (f->cpp_type()) {
    case Type::CPPTYPE_INT32:
      index < 0 ? r->SetInt32(m, f, value) : r->SetRepeatedInt32(m, f, index, value);
      break;
    case Type::CPPTYPE_INT64:
      index < 0 ? r->SetInt64(m, f, value) : r->SetRepeatedInt64(m, f, index, value);
      break;
    case Type::CPPTYPE_UINT32:
      r->SetUInt32(m, f, value);
      break;
    case Type::CPPTYPE_UINT64:
      r->SetUInt64(m, f, value);
      break;
    case Type::CPPTYPE_FLOAT:
      index < 0 ? r->SetFloat(m, f, static_cast<float>(value))
                : r->SetRepeatedFloat(m, f, index, static_cast<float>(value));
      break;
    default:
      index < 0 ? r->SetDouble(m, f, value) : r->SetRepeatedDouble(m, f, index, value);
  }
}

// Copies of `base` with the field `r` set to each of its edge values.
std::vector<config::RunConfig> Variants(const config::RunConfig& base, const FieldRange& r,
                                        std::mt19937_64& rng) {
  std::vector<config::RunConfig> out;
  auto add = [&](auto value) {
    config::RunConfig cfg = base;
    pb::Message* m = nullptr;
    const pb::FieldDescriptor* f = nullptr;
    const int index = Reach(&cfg, r.path, &m, &f);
    SetNumber(m, f, index, value);
    out.push_back(std::move(cfg));
  };
  switch (r.field->cpp_type()) {
    case Type::CPPTYPE_INT32:
      for (int32_t v : IntEdges<int32_t>(r, rng)) add(v);
      break;
    case Type::CPPTYPE_INT64:
      for (int64_t v : IntEdges<int64_t>(r, rng)) add(v);
      break;
    case Type::CPPTYPE_UINT32:
      for (uint32_t v : IntEdges<uint32_t>(r, rng)) add(v);
      break;
    case Type::CPPTYPE_UINT64:
      for (uint64_t v : IntEdges<uint64_t>(r, rng)) add(v);
      break;
    default:
      for (double v : FloatEdges(r, rng)) add(v);
  }
  return out;
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// What `troupe validate` does, in this process: the rules, then the plan of the run's kind.
Status ValidateAndPlan(const config::RunConfig& cfg) {
  RETURN_IF_ERROR(ValidateConfig(cfg, "edge.textproto"));
  if (cfg.has_paramserver()) {
    PsPlan plan;
    return PlanPsRun(cfg, "edge.textproto", &plan);
  }
  if (cfg.has_oasis()) {
    OasisPlan plan;
    return PlanOasisRun(cfg, "edge.textproto", &plan);
  }
  RunPlan plan;
  return PlanRun(cfg, "edge.textproto", &plan);
}

struct Case {
  config::RunConfig cfg;
  bool accepted = false;
};

// Which cases go to the binary as well: the range's maximum (the second to last case), one other
// accepted value and one refused value, drawn with the test's seed. Every case was checked and
// planned in this process already; a process costs a tenth of a second or more, and three a field
// keep the whole schema near a minute (in a sanitizer build, one a field).
std::vector<size_t> Chosen(const std::vector<Case>& cases, std::mt19937_64& rng) {
  std::vector<size_t> chosen = {cases.size() - 2}, accepted, refused;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i != chosen.front()) (cases[i].accepted ? accepted : refused).push_back(i);
  }
  for (const std::vector<size_t>* pool : {&accepted, &refused}) {
    if (pool->empty()) continue;
    chosen.push_back((*pool)[std::uniform_int_distribution<size_t>(0, pool->size() - 1)(rng)]);
  }
  if (kSanitized) {  // a process costs several times more: one of the three, drawn
    return {chosen[std::uniform_int_distribution<size_t>(0, chosen.size() - 1)(rng)]};
  }
  return chosen;
}

// Tries every numeric field whose path starts with one of `prefixes` (or, with none given, with
// none of `excluded`) on the base config `base_file`.
void CheckFields(const std::string& base_file, const std::vector<std::string>& prefixes,
                 const std::vector<std::string>& excluded) {
  config::RunConfig base;
  ASSERT_TRUE(LoadConfigFile(SourcePath(base_file), &base).ok()) << base_file;
  const std::string dir = FreshDir("edges");
  const std::string config = dir + "/edge.textproto";
  const std::string out = dir + "/run";
  std::mt19937_64 rng(20261201);
  int runs = 0, refusals = 0;
  for (const FieldRange& r : SchemaRanges(config::RunConfig::descriptor())) {
    if (!IsNumericField(r.field) || (r.field->is_repeated() && !r.path.ends_with("[]"))) continue;
    auto starts = [&](const std::string& p) { return r.path.rfind(p, 0) == 0; };
    const bool mine = prefixes.empty() ? std::none_of(excluded.begin(), excluded.end(), starts)
                                       : std::any_of(prefixes.begin(), prefixes.end(), starts);
    if (!mine) continue;
    std::vector<Case> cases;
    for (config::RunConfig& cfg : Variants(base, r, rng)) {
      const Status s = ValidateAndPlan(cfg);
      // A plan may still refuse a value (exit 2), but not fail otherwise.
      EXPECT_TRUE(s.ok() || s.code() == Status::Code::kInvalidInput)
          << r.path << ": " << s.message();
      cases.push_back(Case{std::move(cfg), s.ok()});
    }
    for (size_t i : Chosen(cases, rng)) {
      std::string text;
      pb::TextFormat::PrintToString(cases[i].cfg, &text);
      const std::string where = r.path + " in\n" + text;
      WriteFile(config, text);
      const Outcome o = cases[i].accepted
                            ? RunBounded({"run", config, "--quiet", "--out", out}, dir)
                            : RunBounded({"validate", config}, dir);
      std::filesystem::remove_all(out);
      ASSERT_TRUE(o.started) << "cannot start " << TROUPE_BINARY;
      ASSERT_NE(o.exit_code, -1) << "timed out: " << where << o.err;
      ASSERT_EQ(o.signal, 0) << "signal " << o.signal << ": " << where << o.err;
      if (cases[i].accepted) {
        ++runs;
        // A run may still find a value unworkable once it starts (exit 2, one line).
        EXPECT_TRUE(o.exit_code == 0 || (o.exit_code == 2 && Lines(o.err) == 1))
            << "exit " << o.exit_code << ": " << where << o.err;
      } else {
        ++refusals;
        EXPECT_EQ(o.exit_code, 2) << where << o.err;
        EXPECT_EQ(Lines(o.err), 1) << where << o.err;
        // The field itself, or the block whose rule refused it ("agents: ... run.mode").
        EXPECT_NE(o.err.find(r.path.substr(0, r.path.find_first_of(".["))), std::string::npos)
            << "the error does not name the field: " << o.err;
      }
    }
  }
  EXPECT_GT(runs, 0);
  EXPECT_GT(refusals, 0);
}

TEST(ConfigEdges, ClusterRunFields) {
  CheckFields("tests/data/edges/cluster.textproto", {}, {"oasis.", "paramserver."});
}

TEST(ConfigEdges, OasisFields) { CheckFields("tests/data/edges/oasis.textproto", {"oasis."}, {}); }

TEST(ConfigEdges, ParamServerFields) {
  CheckFields("tests/data/edges/ps.textproto", {"paramserver."}, {});
}

// Every list one entry past its (max_count): refused by the rules, naming the list. Entries are
// copies of the base config's first one (or defaults), so only the count is wrong.
TEST(ConfigEdges, ListsPastTheirCountAreRefused) {
  config::RunConfig cluster, ps;
  ASSERT_TRUE(LoadConfigFile(SourcePath("tests/data/edges/cluster.textproto"), &cluster).ok());
  ASSERT_TRUE(LoadConfigFile(SourcePath("tests/data/edges/ps.textproto"), &ps).ok());
  int lists = 0;
  for (const FieldRange& r : SchemaRanges(config::RunConfig::descriptor())) {
    if (!r.field->is_repeated() || r.path.ends_with("[]")) continue;
    ++lists;
    config::RunConfig cfg = r.path.rfind("paramserver.", 0) == 0 ? ps : cluster;
    pb::Message* m = nullptr;
    const pb::FieldDescriptor* f = nullptr;
    Reach(&cfg, r.path, &m, &f);
    const pb::Reflection* refl = m->GetReflection();
    while (refl->FieldSize(*m, f) <= *r.max_count) {
      if (f->cpp_type() == Type::CPPTYPE_MESSAGE) {
        pb::Message* added = refl->AddMessage(m, f);
        if (refl->FieldSize(*m, f) > 1) added->CopyFrom(refl->GetRepeatedMessage(*m, f, 0));
      } else if (f->cpp_type() == Type::CPPTYPE_ENUM) {
        refl->AddEnumValue(m, f, 0);
      } else if (f->cpp_type() == Type::CPPTYPE_STRING) {
        refl->AddString(m, f, "127.0.0.1:1");
      } else {
        refl->AddInt32(m, f, 1);
      }
    }
    const Status s = ValidateConfig(cfg, "edge.textproto");
    EXPECT_EQ(s.code(), Status::Code::kInvalidInput) << r.path;
    // A list inside a list's entry is named with the entry's index: host[].devices,
    // host[0].devices.
    std::string named = r.path;
    if (const size_t at = named.find("[]"); at != std::string::npos) named.replace(at, 2, "[0]");
    EXPECT_NE(s.message().find(named + ": must have at most"), std::string::npos) << s.message();
    if (r.path != "cluster.servers") continue;
    // One of them through the binary: a config of a thousand and one server groups.
    const std::string dir = FreshDir("edges-lists");
    std::string text;
    pb::TextFormat::PrintToString(cfg, &text);
    WriteFile(dir + "/edge.textproto", text);
    const Outcome o = RunBounded({"validate", dir + "/edge.textproto"}, dir);
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_EQ(Lines(o.err), 1) << o.err;
    EXPECT_NE(o.err.find("cluster.servers: must have at most 1000 entries"), std::string::npos)
        << o.err;
  }
  EXPECT_GE(lists, 5);
}

}  // namespace
}  // namespace troupe::testing
