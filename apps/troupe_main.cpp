// The `troupe` command line: run, sweep, report, validate, node, chaos, --version.
//
//   troupe run [CONFIG] [--out DIR] [--seed N] [--set field=value ...] [--serve [HOST:]PORT]
//   troupe sweep [CONFIG] --over field=v1,v2 [--seeds 1-5] [--set ...] [--out DIR] [--jobs N]
//   troupe report RUN_DIR... [--out DIR]
//   troupe validate CONFIG [--set ...]
//   troupe list [policies|mechanisms]
//   troupe node --listen HOST:PORT [--credentials DIR] [--devices 0,1,...]
//   troupe node --config FILE --host NAME [--credentials DIR]
//   troupe chaos CONFIG --runs N --seed S [--faults K] [--kinds crash,slow,...] [--set ...]
//                [--keep DIR [--keep-all]]
// run, sweep and chaos show a progress line on stderr; --quiet leaves it out.
// Bad input prints one line naming where it is and exits with status 2, writing nothing.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <limits>
#include <thread>

#include "actors/node_actor.hpp"
#include "apps/chaos_command.hpp"
#include "apps/command_line.hpp"
#include "apps/list_command.hpp"
#include "apps/live_serve.hpp"
#include "apps/out_of_memory.hpp"
#include "apps/report_command.hpp"
#include "apps/shared_files.hpp"
#include "apps/sweep.hpp"
#include "base/parse.hpp"
#include "base/quoted.hpp"
#include "base/status_macros.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "faults/fault_plan.hpp"
#include "network/network_plugin.hpp"
#include "runner/output_folder.hpp"
#include "runner/progress.hpp"
#include "runner/run_kind.hpp"
#include "runtime/deployment_credentials.hpp"
#include "runtime/remote_node.hpp"

namespace troupe {
namespace {

// Without CONFIG: configs/default.textproto here, else the one shipped with troupe.
// How often `troupe node` sends heartbeats: well under the smallest silence a run waits before
// taking a node for dead (3 x faults.heartbeat_s; docs/faults.md).
constexpr double kNodeHeartbeatS = 0.05;

// `troupe node`'s flags.
struct NodeArgs {
  std::string listen;
  std::string credentials_dir;
  std::string config;  // with host: the deployment's hosts
  std::string host;
  std::vector<int32_t> devices;
};

int Fail(const Status& status) {
  std::cerr << "troupe: " << status.message() << "\n";
  return status.exit_code();
}

// For --seed: a seed in [0, 2^63 - 1], rewritten in plain decimal before CLI11 converts it.
CLI::Validator SeedValidator(uint64_t min) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        uint64_t value = 0;
        if (!ParseWholeNumber(text, kMax, &value) || value < min) {
          return "must be a whole number in [" + std::to_string(min) + ", 2^63 - 1], got '" + text +
                 "'";
        }
        text = std::to_string(value);
        return "";
      },
      "SEED");
}

struct RunArgs {
  std::string config = DefaultConfigPath();
  std::string out;
  int64_t seed = -1;
  std::vector<std::string> sets;
  std::vector<std::string> faults;  // --fault KIND:TARGET@AT[...] (faults/fault_plan.hpp)
  bool quiet = false;
  // Who ran it, for config.textproto's header (runner/run_record.hpp).
  RunProvenance provenance;
  std::string serve;           // --serve [HOST:]PORT: the live web view ("": none)
  double serve_linger_s = 30;  // --serve-linger: how long the view outlives the run
};

// A fault added by --fault sits after the config's own in faults.fault; an error about it names
// the flag the user typed, not the config file and an index they never wrote.
Status NameFaultFlags(Status status, const RunArgs& args, int first_flag) {
  if (status.ok()) return status;
  const std::string& text = status.message();
  for (size_t i = 0; i < args.faults.size(); ++i) {
    const std::string field =
        args.config + ": faults.fault[" + std::to_string(first_flag + static_cast<int>(i)) + "]";
    if (text.rfind(field, 0) != 0) continue;
    std::string rest = text.substr(field.size());  // ".target: why" or ": why"
    if (!rest.empty() && rest[0] == '.') rest.erase(0, rest.find(':'));
    return Status::InvalidInput("--fault " + Quoted(args.faults[i]) + rest);
  }
  return status;
}

// A planning error "CONFIG: fault 'DESCRIPTION': why" about a fault the flags added: the first
// flag whose addition makes planning fail in the same words is named instead.
Status NameFaultFlagsInPlan(Status status, const RunArgs& args, const config::RunConfig& cfg,
                            int first_flag) {
  const std::string prefix = args.config + ": fault '";
  if (status.ok() || args.faults.empty() || status.message().rfind(prefix, 0) != 0) {
    return NameFaultFlags(status, args, first_flag);
  }
  const size_t why = status.message().find("': ", prefix.size());
  for (size_t k = 0; k < args.faults.size() && why != std::string::npos; ++k) {
    config::RunConfig upto = cfg;
    auto* faults = upto.mutable_faults()->mutable_fault();
    const int keep = first_flag + static_cast<int>(k) + 1;
    faults->DeleteSubrange(keep, faults->size() - keep);
    std::unique_ptr<PlannedRun> run;
    const Status s = PlanAnyRun(upto, args.config, &run);
    if (!s.ok() && s.message() == status.message()) {
      return Status::InvalidInput("--fault " + Quoted(args.faults[k]) +
                                  status.message().substr(why + 1));
    }
  }
  return status;
}

Status LoadChecked(const RunArgs& args, config::RunConfig* cfg, int* first_flag) {
  RETURN_IF_ERROR(LoadConfigFile(args.config, cfg));
  for (const std::string& assignment : args.sets) {
    RETURN_IF_ERROR(ApplyOverride(assignment, cfg));
  }
  *first_flag = cfg->faults().fault_size();
  for (const std::string& flag : args.faults) {
    RETURN_IF_ERROR(ParseFaultFlag(flag, cfg->mutable_faults()->add_fault()));
  }
  if (args.seed >= 0) cfg->mutable_run()->set_seed(static_cast<uint64_t>(args.seed));
  if (!args.out.empty()) cfg->mutable_run()->set_out_dir(args.out);
  return LocateConfigError(NameFaultFlags(ValidateConfig(*cfg, args.config), args, *first_flag),
                           args.config, args.sets);
}

// --serve: checked before anything runs; listens once the run is planned.
Status ServeRun(const RunArgs& args, const PlannedRun& run,
                std::unique_ptr<LiveViewProcess>* view) {
  const std::string kind = run.kind();
  if (kind != "cluster" && kind != "parameter server") {
    return Status::InvalidInput("--serve: the live view shows cluster and parameter-server runs; " +
                                args.config + " is an " + kind + " run");
  }
  return StartLiveView(args.serve, args.serve_linger_s, view);
}

int Run(const RunArgs& args) {
  if (!args.serve.empty()) {
    std::string host;
    uint16_t port = 0;
    if (Status s = ParseServeAddress(args.serve, &host, &port); !s.ok()) return Fail(s);
  }
  config::RunConfig cfg;
  int first_flag = 0;
  SetPhase("loading the config");
  if (Status s = LoadChecked(args, &cfg, &first_flag); !s.ok()) return Fail(s);
  // Checked before anything runs, naming where the folder came from.
  const std::string out_from = args.out.empty() ? args.config + ": run.out_dir" : "--out";
  if (Status s = CheckOutputFolder(cfg.run().out_dir(), out_from); !s.ok()) return Fail(s);
  std::unique_ptr<PlannedRun> run;
  SetPhase("planning the run (reading its workload)");
  if (Status s = PlanAnyRun(cfg, args.config, &run); !s.ok()) {
    return Fail(NameFaultFlagsInPlan(s, args, cfg, first_flag));
  }
  const std::string out_dir = run->out_dir();  // Execute hands the plan over
  ExecuteOptions options;
  options.progress = ChooseProgressMode(args.quiet);
  options.provenance = args.provenance;
  std::unique_ptr<LiveViewProcess> view;
  if (!args.serve.empty()) {
    if (Status s = ServeRun(args, *run, &view); !s.ok()) return Fail(s);
    options.live = view.get();
  }
  SetPhase("running");
  if (Status s = run->Execute(options); !s.ok()) return Fail(s);
  if (view) view->EndRun();  // a Ctrl-C after the lines below ends the linger, cleanly
  // Also under --quiet, which drops the progress line only (README).
  std::cout << run->SummaryTable();
  std::cout << "run directory: " << out_dir << std::endl;
  if (view) LingerLiveView(*view, args.serve_linger_s);
  return 0;
}

struct SweepArgs {
  std::string config = DefaultConfigPath();
  std::vector<std::string> over;
  std::string seeds;
  std::vector<std::string> sets;
  std::string out;
  int jobs = 0;
  bool quiet = false;
  RunProvenance provenance;
  std::string serve;           // --serve [HOST:]PORT: the runs' progress in the web view
  double serve_linger_s = 30;  // --serve-linger
};

int Sweep(const SweepArgs& args) {
  if (!args.serve.empty()) {
    std::string host;
    uint16_t port = 0;
    if (Status s = ParseServeAddress(args.serve, &host, &port); !s.ok()) return Fail(s);
  }
  SweepSpec spec;
  spec.config = args.config;
  spec.sets = args.sets;
  spec.out_dir = args.out;
  spec.progress = ChooseProgressMode(args.quiet);
  spec.provenance = args.provenance;
  spec.parallel = args.jobs > 0 ? args.jobs : std::max(1u, std::thread::hardware_concurrency());
  for (const std::string& over : args.over) {
    SweepAxis axis;
    if (Status s = ParseSweepAxis(over, &axis); !s.ok()) return Fail(s);
    spec.axes.push_back(std::move(axis));
  }
  if (!args.seeds.empty()) {
    if (Status s = ParseSeeds(args.seeds, &spec.seeds); !s.ok()) return Fail(s);
  }
  std::unique_ptr<LiveViewProcess> view;
  if (!args.serve.empty()) {
    if (Status s = StartLiveView(args.serve, args.serve_linger_s, &view); !s.ok()) return Fail(s);
    spec.live = view.get();
  }
  std::vector<SweepRow> rows;
  if (Status s = RunSweep(spec, &rows); !s.ok()) return Fail(s);
  if (view) view->EndRun();
  std::cout << FormatSweepTable(spec.axes, rows);
  if (!spec.out_dir.empty()) std::cout << "sweep: " << spec.out_dir << "/sweep.csv\n";
  if (view) LingerLiveView(*view, args.serve_linger_s);
  return 0;
}

int Validate(const RunArgs& args) {
  const std::string& path = args.config;
  config::RunConfig cfg;
  int first_flag = 0;
  SetPhase("loading the config");
  if (Status s = LoadChecked(args, &cfg, &first_flag); !s.ok()) return Fail(s);
  std::unique_ptr<PlannedRun> run;
  SetPhase("planning the run (reading its workload)");
  if (Status s = PlanAnyRun(cfg, path, &run); !s.ok()) {
    return Fail(NameFaultFlagsInPlan(s, args, cfg, first_flag));
  }
  std::cout << path << ": ok (" << run->kind() << ", " << run->Describe() << ")\n";
  return 0;
}

// --credentials DIR: mutual TLS with the deployment's certificates; without, plaintext and only
// on a loopback address (anyone who reaches the port could have servers spawned).
Status NodeCredentials(const std::string& listen, const std::string& host, const std::string& dir,
                       DeploymentCredentials* credentials) {
  if (!dir.empty()) return LoadDeploymentCredentials(dir, "--credentials", credentials);
  if (IsLoopbackHost(host)) return Status::Ok();
  return Status::InvalidInput("--listen " + listen + ": a non-loopback address needs " +
                              "--credentials DIR (scripts/make-deployment-credentials.sh)");
}

// `troupe node --config FILE --host NAME`: the listen address and devices of the deployment
// host NAME in FILE's deployment.host list, unless given by --listen and --devices.
Status NodeFromHosts(const NodeArgs& args, std::string* listen, std::vector<int32_t>* devices) {
  if (args.host.empty()) {
    if (!args.config.empty()) return Status::InvalidInput("--config: needs --host NAME");
    if (args.listen.empty()) return Status::InvalidInput("node: needs --listen HOST:PORT");
    return Status::Ok();
  }
  if (args.config.empty()) return Status::InvalidInput("--host " + args.host + ": needs --config");
  config::RunConfig cfg;
  RETURN_IF_ERROR(LoadConfigFile(args.config, &cfg));
  for (const config::Host& h : cfg.deployment().host()) {
    if (h.name() != args.host) continue;
    if (listen->empty()) *listen = h.address();
    if (devices->empty()) devices->assign(h.devices().begin(), h.devices().end());
    return Status::Ok();
  }
  return Status::InvalidInput("--host " + args.host + ": " + args.config +
                              " has no deployment.host of that name");
}

int Node(NodeArgs args) {
  if (Status s = NodeFromHosts(args, &args.listen, &args.devices); !s.ok()) return Fail(s);
  const std::string& listen = args.listen;
  const std::string& credentials_dir = args.credentials_dir;
  const std::vector<int32_t>& devices = args.devices;
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Fail(Status::InvalidInput("--listen " + listen + ": expected HOST:PORT"));
  }
  std::string host;
  uint16_t port = 0;  // 0: an ephemeral port, printed below
  if (!SplitHostPort(listen, 0, &host, &port)) {
    return Fail(Status::InvalidInput("--listen " + listen + ": the port must be a whole number " +
                                     "in [0, 65535]"));
  }
  // A node is all network: without the plugin there is nothing to serve.
  const NetworkTable* network = nullptr;
  if (Status s = LoadNetwork(&network); !s.ok()) return Fail(s);
  DeploymentCredentials credentials;
  if (Status s = NodeCredentials(listen, host, credentials_dir, &credentials); !s.ok()) {
    return Fail(s);
  }
  // Block the signals before CAF starts its threads so that only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  RuntimeOptions options;
  options.emulated = false;
  options.middleman = true;
  // Heartbeats to the runs connected here, so that a run with faults (which closes a connection
  // silent for 3 x faults.heartbeat_s) does not take an idle node for a dead one. The node never
  // times a run out itself: a run may be idle for long.
  options.heartbeat_s = kNodeHeartbeatS;
  options.credentials = credentials;
  ActorRuntime runtime(options);
  auto node = runtime.system().spawn(NodeActor, runtime.telemetry(), devices);
  uint16_t bound = 0;
  if (Status s = PublishNode(runtime.system(), node, host, port, &bound); !s.ok()) {
    caf::anon_send_exit(node, caf::exit_reason::kill);
    return Fail(s);
  }
  std::cout << "troupe node listening on " << host << ":" << bound << std::endl;
  if (credentials.enabled()) {
    std::cout << "troupe node: mutual TLS; peers need a certificate signed by "
              << credentials.ca_file << std::endl;
  }
  int signal = 0;
  sigwait(&stop_signals, &signal);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
  return 0;
}

// The subcommands and their flags. Each returns its CLI::App, set once parsing succeeds.
CLI::App* AddRun(CLI::App& app, RunArgs* args) {
  CLI::App* run = app.add_subcommand("run", "run an experiment and write its run directory");
  run->add_option("config", args->config, "config file (protobuf text format)");
  run->add_option("--out", args->out, "run directory (default: run.out_dir)");
  run->add_option("--seed", args->seed, "seed of every random draw (overrides run.seed)")
      ->check(SeedValidator(0));
  run->add_option("--set", args->sets, "field.path=value, applied after the file")->take_all();
  run->add_option("--fault", args->faults, "a fault, KIND:TARGET@AT[+DURATION][,OPTION...]")
      ->take_all();
  run->add_flag("--quiet", args->quiet, "no progress line");
  run->add_option("--serve", args->serve, "[HOST:]PORT: a live web view of the run");
  run->add_option("--serve-linger", args->serve_linger_s,
                  "seconds the live view stays up after the run (default 30; Ctrl-C ends it)")
      ->check(CLI::Range(0.0, 86400.0));
  return run;
}

CLI::App* AddSweep(CLI::App& app, SweepArgs* args) {
  CLI::App* sweep = app.add_subcommand("sweep", "run a config over a grid of values and seeds");
  sweep->add_option("config", args->config, "config file (protobuf text format)");
  sweep->add_option("--over", args->over, "field.path=value1,value2,... (repeatable)")->take_all();
  sweep->add_option("--seeds", args->seeds, "seeds: A-B or A,B,C (overrides run.seed)");
  sweep->add_option("--set", args->sets, "field.path=value, applied to every run")->take_all();
  sweep->add_option("--out", args->out, "folder for sweep.csv and every run's directory");
  sweep->add_option("--jobs", args->jobs, "runs in parallel (default: one per core)")
      ->check(CLI::Range(1, 1024));
  sweep->add_flag("--quiet", args->quiet, "no progress line");
  sweep->add_option("--serve", args->serve, "[HOST:]PORT: the runs' progress in a web view");
  sweep
      ->add_option("--serve-linger", args->serve_linger_s,
                   "seconds the live view stays up after the sweep (default 30; Ctrl-C ends it)")
      ->check(CLI::Range(0.0, 86400.0));
  return sweep;
}

CLI::App* AddChaos(CLI::App& app, ChaosSpec* spec) {
  CLI::App* chaos =
      app.add_subcommand("chaos", "runs under random fault schedules, checked for invariants");
  chaos->add_option("config", spec->config, "config file")->required();
  chaos->add_option("--runs", spec->runs, "runs with faults (after one without)")
      ->check(CLI::Range(1, 10000));
  chaos->add_option("--seed", spec->seed, "fault seed of the first run (run i: seed + i - 1)")
      ->check(SeedValidator(1));
  chaos->add_option("--faults", spec->faults_per_run, "faults per run")
      ->check(CLI::Range(1, 10000));
  chaos->add_option("--kinds", spec->kinds, "fault kinds drawn (default: all)")->delimiter(',');
  chaos->add_option("--set", spec->sets, "field.path=value, applied to every run")->take_all();
  CLI::Option* keep = chaos->add_option("--keep", spec->keep_dir,
                                        "folder for the failing runs' directories (DIR/run-N)");
  chaos->add_flag("--keep-all", spec->keep_all, "with --keep: every run's directory")->needs(keep);
  chaos->add_flag("--quiet", spec->quiet, "no progress line");
  return chaos;
}

}  // namespace
}  // namespace troupe

int main(int argc, char** argv) {
  CLI::App app{"troupe: an actor-based emulator of deep-learning clusters"};
  // Bad flags get one line, like every other bad input.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("troupe: ") + e.what() + "\n";
  });
  app.set_version_flag("--version", std::string("troupe ") + TROUPE_VERSION);
  app.require_subcommand(1);

  troupe::RunArgs run_args;
  CLI::App* run = troupe::AddRun(app, &run_args);
  run_args.provenance = troupe::Provenance(TROUPE_VERSION, argc, argv);
  troupe::SweepArgs sweep_args;
  CLI::App* sweep = troupe::AddSweep(app, &sweep_args);
  sweep_args.provenance = run_args.provenance;

  std::vector<std::string> report_dirs;
  std::string report_out;
  CLI::App* report =
      app.add_subcommand("report", "draw figures and report.html from run directories");
  report->add_option("run_dirs", report_dirs, "run (or sweep) directories, drawn in this order")
      ->required();
  report->add_option("--out", report_out, "report folder (default: <first run dir>/report)");

  troupe::RunArgs validate_args;
  CLI::App* validate = app.add_subcommand("validate", "check a config and its workload");
  validate->add_option("config", validate_args.config, "config file")->required();
  validate->add_option("--set", validate_args.sets, "field.path=value, applied after the file")
      ->take_all();

  troupe::NodeArgs node_args;
  CLI::App* node = app.add_subcommand("node", "host server actors for runs on other processes");
  node->add_option("--listen", node_args.listen, "HOST:PORT to listen on");
  node->add_option("--credentials", node_args.credentials_dir,
                   "folder with ca.pem, cert.pem, key.pem: mutual TLS with the deployment");
  node->add_option("--config", node_args.config, "a config whose deployment.host lists this host");
  node->add_option("--host", node_args.host,
                   "this host's name in --config: its address and devices");
  node->add_option("--devices", node_args.devices,
                   "this host's devices (GPU ids) lent to the servers it hosts, e.g. 0,1,2,3")
      ->delimiter(',')
      ->check(CLI::Range(0, 65535));

  std::string list_what;
  CLI::App* list = app.add_subcommand("list", "the registered policies and mechanisms, by name");
  list->add_option("what", list_what, "policies or mechanisms (default: both)");

  troupe::ChaosSpec chaos_spec;
  CLI::App* chaos = troupe::AddChaos(app, &chaos_spec);
  chaos_spec.provenance = run_args.provenance;

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  // Out of memory is one line and its own exit status, on every thread (apps/out_of_memory.hpp).
  troupe::InstallOutOfMemoryHandler();
  try {
    // Outlives every read of the phase: the handler may run until the process ends.
    static const std::string command =
        "running troupe " + app.get_subcommands().front()->get_name();
    troupe::SetPhase(command.c_str());
    if (*run) return troupe::Run(run_args);
    if (*sweep) return troupe::Sweep(sweep_args);
    if (*report) return troupe::RunReport(report_dirs, report_out);
    if (*validate) return troupe::Validate(validate_args);
    if (*chaos) return troupe::RunChaos(chaos_spec);
    if (*list) return troupe::RunList(list_what, std::cout);
    return troupe::Node(std::move(node_args));
  } catch (const std::bad_alloc&) {
    return troupe::OutOfMemory();
  } catch (const std::length_error&) {
    return troupe::OutOfMemory();
  }
}
