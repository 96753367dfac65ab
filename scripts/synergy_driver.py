#!/usr/bin/env python3
"""Drives Synergy's own simulator (msr-fiddle/synergy, simulator/) for scripts/compare-synergy.sh.

  synergy_driver.py SIM_DIR generate --seed S --jobs N [--jobs-per-hour 9] [--multi-gpu] OUT
      Draws N jobs from Synergy's synthetic generator (its random module seeded with S) and
      writes them as a troupe trace (job_id,model,arrival_s,iterations,gpus).
  synergy_driver.py SIM_DIR run --policy P --mechanism M --first A --last B TRACE OUT
      Replays TRACE in Synergy's simulator (--servers x (8 GPUs, 24 CPUs, 500 GB), default 16;
      rounds of 300 s),
      measuring jobs A..B, and writes job_id,jct_s for every job that finished, plus the wall
      time on stderr.

The simulator is Python 3.6-era code: this file supplies what it needs on Python 3.11
(collections.Mapping, stand-ins for cvxpy and numa, which only OPT and deployment use) without editing it.
"""
import argparse
import collections
import collections.abc
import logging
import os
import sys
import time
import types

collections.Mapping = collections.abc.Mapping  # removed in Python 3.10; job.py still uses it

POLICIES = {"fifo": "FIFO", "srtf": "SRTF", "las": "LAS", "ftf": "FTF"}
# Synergy's master.py: 'fair' in the name = GPU-proportional, neither = GREEDY, 'tune' = TUNE.
MECHANISMS = {"proportional": (True, False), "greedy": (False, False), "tune": (False, True)}


def load_simulator(sim_dir):
    sim_dir = os.path.abspath(sim_dir)
    for name in ("cvxpy", "numa"):  # OPT's solver and the deployment's NUMA binding: unused
        sys.modules.setdefault(name, types.ModuleType(name))
    # The RPC stubs its deployment code imports (generated, as deployment/Makefile does, into a
    # folder of our own so that the checkout is left as it is).
    stubs = os.path.join(os.environ.get("TMPDIR", "/tmp"), "synergy-rpc-stubs")
    protos = os.path.join(sim_dir, "deployment/runtime/protobuf")
    if not os.path.exists(os.path.join(stubs, "common_pb2.py")):
        os.makedirs(stubs, exist_ok=True)
        from grpc_tools import protoc
        files = sorted(f for f in os.listdir(protos) if f.endswith(".proto"))
        if protoc.main(["protoc", "-I" + protos, "--python_out=" + stubs,
                        "--grpc_python_out=" + stubs] + files) != 0:
            sys.exit("synergy_driver: protoc failed on " + protos)
    for path in (stubs, os.path.join(sim_dir, "deployment"), sim_dir):
        sys.path.insert(0, path)
    os.chdir(sim_dir)  # the model zoo reads ./models/
    logging.basicConfig(level=logging.ERROR)
    import runner  # noqa: E402  (Synergy's)
    skip_unread_copy()
    return runner


def skip_unread_copy():
    """Each round, Synergy's FIFO, SRTF, LAS and FTF schedulers keep a deep copy of the jobs of
    the round before (prev_round_jobs: `copy.deepcopy(self.running_jobs)`, their only use of
    `copy`). Only the deployment reads it (events/allocation_event.py, deploy_event.py,
    schedulers/callbacks.py); the simulation never does, and deep-copying every running job took
    most of a simulation's time (without it a run is about 2.6x faster). The copy is made
    shallow: every job's completion time is the same. SYNERGY_AS_IS=1 in the environment runs the
    simulator as it is."""
    if os.environ.get("SYNERGY_AS_IS"):
        return
    import importlib
    shallow = types.SimpleNamespace(deepcopy=list)
    for name in ("fifo_synergy_new", "srtf_synergy_new", "las_synergy_new", "ftf_synergy_new"):
        importlib.import_module("schedulers." + name).copy = shallow


def generate(args):
    runner = load_simulator(args.sim_dir)
    import random
    from jobs import workload as wl
    if not args.multi_gpu:
        wl.get_job_gpu_demand = lambda: 1  # the paper's single-GPU trace
    random.seed(args.seed)
    w = wl.Workload(cluster_job_log=None, jobs_per_hour=args.jobs_per_hour,
                    model_class_split=(20, 70, 10), per_server_size=[8, 24, 500, 500, 0],
                    num_jobs_default=0)
    del runner
    rows, arrival = [], 0
    for _ in range(args.jobs):
        job = w.generate_next_job(arrival)
        arrival = job.job_arrival_time
        rows.append("%d,%s,%r,%d,%d" % (job.job_id, job.job_model.model_name,
                                         float(job.job_arrival_time), job.job_total_iteration,
                                         job.job_gpu_demand))
    with open(args.out, "w") as f:
        f.write("# Synergy's synthetic generator, seed %d, %g jobs/h, %d jobs\n" %
                (args.seed, args.jobs_per_hour, args.jobs))
        f.write("job_id,model,arrival_s,iterations,gpus\n")
        f.write("\n".join(rows) + "\n")


def run(args):
    trace = os.path.abspath(args.trace)
    out = os.path.abspath(args.out)
    runner = load_simulator(args.sim_dir)
    # Synergy's replay format is the troupe columns without the header.
    plain = out + ".synergy-trace"
    with open(trace) as f, open(plain, "w") as g:
        for line in f:
            if line.strip() and not line.startswith("#") and not line.startswith("job_id"):
                g.write(line)
    jcts = {}
    finish = runner.Runner.finish_job

    def record(self, job):
        jcts[job.job_id] = self.time - job.job_arrival_time
        finish(self, job)

    runner.Runner.finish_job = record
    fair, tune = MECHANISMS[args.mechanism]
    config = plain + ".ini"
    with open(config, "w") as f:
        f.write("[CLUSTER]\nracks = 1\nservers_per_rack = %d\ngpus_per_server = 8\n"
                "cpus_per_server = 24\ndram_per_server = 500\nsspeed_per_server = 500\n"
                "[SCHEDULER]\npolicy = FIFO\nlease_time = 5\n" % args.servers)
    start = time.time()
    r = runner.Runner(cluster_job_log=None, scheduler=POLICIES[args.policy], jobs_per_hour=9,
                      series_id_filter=(args.first, args.last + 1),
                      model_class_split=(20, 70, 10), placement=args.placement, fair=fair,
                      tune=tune, simulate=True, config_file=config,
                      trace=plain)
    r.run_simulation()
    wall = time.time() - start
    os.remove(plain)
    os.remove(config)
    with open(out, "w") as f:
        f.write("job_id,jct_s\n")
        for job_id in sorted(jcts):
            f.write("%d,%r\n" % (job_id, float(jcts[job_id])))
    print("synergy wall_s %.2f" % wall, file=sys.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sim_dir")
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--jobs", type=int, required=True)
    g.add_argument("--jobs-per-hour", type=float, default=9)
    g.add_argument("--multi-gpu", action="store_true")
    g.add_argument("out")
    r = sub.add_parser("run")
    r.add_argument("--policy", choices=sorted(POLICIES), required=True)
    r.add_argument("--mechanism", choices=sorted(MECHANISMS), required=True)
    r.add_argument("--first", type=int, required=True)
    r.add_argument("--last", type=int, required=True)
    r.add_argument("--servers", type=int, default=16)
    r.add_argument("--no-placement", dest="placement", action="store_false")
    r.add_argument("trace")
    r.add_argument("out")
    args = p.parse_args()
    generate(args) if args.cmd == "generate" else run(args)


if __name__ == "__main__":
    main()
