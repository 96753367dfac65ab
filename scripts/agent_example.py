#!/usr/bin/python3
"""A training process that leases its GPUs from troupe (docs/agent.md).

Trains a small linear-regression model with numpy by mini-batch SGD, but only while troupe leases
the job GPUs: scripts/troupe_agent.py wraps the batch iterator, saves a checkpoint (the weights,
to --checkpoint) when a lease ends and restores it when a lease was lost. Prints one JSON line at
the end: job id, leases, checkpoints, iterations, and the loss before and after.

    scripts/agent_example.py --port-file runs/x/agents.port --secret-file secret.txt \
        --model ResNet18 --iterations 400
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import troupe_requires  # noqa: E402

troupe_requires.require(modules=("numpy", "google.protobuf"), programs=("protoc",))
import numpy as np  # noqa: E402
import troupe_agent  # noqa: E402
import troupe_wire  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int)
    p.add_argument("--port-file", help="the gateway's agents.port_file (waited for)")
    p.add_argument("--secret")
    p.add_argument("--secret-file")
    p.add_argument("--model", help="a model of troupe's catalogue (default: a measured profile)")
    p.add_argument("--gpus", type=int, default=1)
    p.add_argument("--iterations", type=int, default=400)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--step-s", type=float, default=0.0, help="extra wall seconds per batch")
    p.add_argument("--checkpoint", help="checkpoint file (default: a temporary one)")
    p.add_argument("--name", default="numpy-linreg")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def wait_for_port(path, timeout_s=30):
    port = troupe_wire.wait_for_port(path, timeout_s, poll_s=0.05)
    if port is None:
        sys.exit("agent_example: no port in %s after %d s" % (path, timeout_s))
    return port


def batches(x, y, batch_size, rng):
    while True:
        order = rng.permutation(len(x))
        for i in range(0, len(x) - batch_size + 1, batch_size):
            idx = order[i:i + batch_size]
            yield x[idx], y[idx]


def main():
    args = parse_args()
    port = args.port if args.port is not None else wait_for_port(args.port_file)
    if args.secret is not None:
        secret = args.secret
    elif args.secret_file:
        secret = troupe_agent.read_secret(args.secret_file)
    else:
        sys.exit("agent_example: give --secret or --secret-file")

    rng = np.random.default_rng(args.seed)
    true_w = rng.normal(size=8)
    x = rng.normal(size=(4096, 8))
    y = x @ true_w + 0.01 * rng.normal(size=len(x))
    w = np.zeros(8)
    checkpoint = args.checkpoint or os.path.join(tempfile.mkdtemp(prefix="troupe-agent-"),
                                                 "weights.npy")
    np.save(checkpoint, w)

    def loss():
        return float(np.mean((x @ w - y) ** 2))

    def save():
        np.save(checkpoint, w)

    def restore():
        w[:] = np.load(checkpoint)

    job = dict(iterations=args.iterations, gpus=args.gpus, name=args.name)
    if args.model:
        job["model"] = args.model
    else:  # as if measured: insensitive to memory, a little faster with more CPUs
        job["sensitivity"] = dict(cpu_grid=[1, 3, 6], memory_grid=[10, 60],
                                  values=[0.6, 0.6, 1.0, 1.0, 1.2, 1.2],
                                  ideal_cpus_per_gpu=6, ideal_memory_gb_per_gpu=10)
        job["iter_time_s"] = 1.0
    agent = troupe_agent.TroupeAgent(args.host, port, secret, **job)
    job_id = agent.connect()
    loss_before = loss()
    for xb, yb in agent.iterate(batches(x, y, args.batch_size, rng), save=save, restore=restore):
        grad = 2 * xb.T @ (xb @ w - yb) / len(xb)
        w -= 0.05 * grad
        if args.step_s:
            time.sleep(args.step_s)
    agent.close()
    print(json.dumps(dict(job_id=job_id, leases=agent.leases, checkpoints=agent.checkpoints,
                          lost_leases=agent.lost_leases, iterations=agent.iterations_done,
                          loss_before=loss_before, loss_after=loss(), goodbye=agent.goodbye)))
    return 0 if agent.iterations_done == args.iterations else 1


if __name__ == "__main__":
    sys.exit(main())
