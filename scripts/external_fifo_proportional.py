#!/usr/bin/python3
"""FIFO + GPU-proportional placement, written outside troupe (docs/external-scheduler.md).

Places every round of a `troupe run` whose scheduler.mechanism is `external`, exactly as troupe's
built-in `policy: fifo, mechanism: proportional` does: jobs in arrival order, each consolidated
on the best-fit server (the fewest free GPUs that hold it, lowest index first) or else spread
over the fewest servers (most free GPUs first), with CPUs and memory in proportion to its GPUs;
a job that does not fit is skipped and the next one tried. On a cluster of several GPU types a
job tries its fastest type first. The run's jobs.csv is byte for byte the built-in one's. Prints
one JSON line at the end.

    scripts/external_fifo_proportional.py --port-file run.port --secret-file secret.txt
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import troupe_requires  # noqa: E402

troupe_requires.require(modules=("google.protobuf",), programs=("protoc",))
import troupe_external  # noqa: E402


def fifo(jobs):
    """Arrival order, ties by id. troupe marks no job starving under FIFO (its FIFO leaves the
    starvation guard's mark unread), so the mark is not read here either."""
    return sorted(jobs, key=lambda j: (j.arrival_s, j.id))


def place_gpus(ledger, gpus, gpu_type=None):
    """The parts of a job of `gpus` GPUs at the proportional share (on servers of `gpu_type`, or
    any), or [] where it does not fit."""
    if gpus <= 0 or gpus > ledger.free_gpus:
        return []

    def servers(free):  # in index order
        if gpu_type is None:
            return ledger.servers(free)
        return [server for server in ledger.servers(free) if ledger.gpu_type[server] == gpu_type]

    if gpus <= ledger.max_server_gpus:
        for free in range(gpus, ledger.max_server_gpus + 1):  # best fit: fewest free GPUs
            for server in servers(free):
                cpus, memory_gb = ledger.proportional(server, gpus)
                if ledger.fits(server, gpus, cpus, memory_gb):
                    return [(server, gpus, cpus, memory_gb)]
    parts, left = [], gpus
    for free in range(ledger.max_server_gpus, 0, -1):  # spread: most free GPUs first
        for server in servers(free):
            for take in range(min(free, left), 0, -1):
                cpus, memory_gb = ledger.proportional(server, take)
                if ledger.fits(server, take, cpus, memory_gb):
                    parts.append((server, take, cpus, memory_gb))
                    left -= take
                    break
            if left == 0:
                return parts
    return []


def place_job(ledger, state, job):
    """On a cluster of several GPU types, the job's fastest type that holds it first (ties: the
    lower type index), then any servers; otherwise just place_gpus."""
    if len(ledger.gpus_of_type) <= 1:
        return place_gpus(ledger, job.gpus)
    types = [t for t, gpus in enumerate(ledger.gpus_of_type) if gpus > 0]
    types.sort(key=lambda t: -state.type_speed(job.id, t))  # stable: ties keep index order
    for gpu_type in types:
        parts = place_gpus(ledger, job.gpus, gpu_type)
        if parts:
            return parts
    return place_gpus(ledger, job.gpus)


def schedule(state):
    ledger = state.ledger()
    placements = []
    for job in fifo(state.jobs):
        if ledger.free_gpus == 0:
            break
        parts = place_job(ledger, state, job)
        if not parts:
            continue  # not this round; the next job may still fit
        for part in parts:
            ledger.take(*part)
        placements.append((job.id, parts))
    return placements


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int)
    p.add_argument("--port-file", help="the run's external_scheduler.port_file (waited for)")
    p.add_argument("--secret")
    p.add_argument("--secret-file")
    args = p.parse_args()
    if (args.port is None) == (args.port_file is None):
        p.error("give --port or --port-file")
    if (args.secret is None) == (args.secret_file is None):
        p.error("give --secret or --secret-file")
    return args


def main():
    args = parse_args()
    port = args.port if args.port is not None else troupe_external.wait_for_port(args.port_file)
    secret = args.secret if args.secret is not None else troupe_external.read_secret(
        args.secret_file)
    client = troupe_external.ExternalScheduler(args.host, port, secret,
                                               name="fifo+proportional (Python)")
    client.connect()
    start = time.perf_counter()
    client.serve(schedule)
    wall_s = time.perf_counter() - start
    client.close()
    print(json.dumps({"asks": client.asks, "jobs_offered": client.jobs_offered,
                      "refusals": len(client.refusals),
                      "goodbye": client.goodbye, "wall_s": round(wall_s, 3),
                      "scheduling_s": round(client.seconds_scheduling, 3)}))


if __name__ == "__main__":
    main()
