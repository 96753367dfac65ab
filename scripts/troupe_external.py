"""troupe_external: place the rounds of a `troupe run` from Python (docs/external-scheduler.md).

A run whose scheduler.mechanism is `external` listens on loopback and waits for one scheduler:

    client = ExternalScheduler("127.0.0.1", port, secret, name="my-fifo")
    client.connect()                # Hello, Register(HMAC-SHA256(secret, nonce)), Registered
    client.serve(schedule)          # until troupe says Goodbye

`schedule(state)` is called once per RoundState and returns the round's placements: a list of
(job_id, [(server, gpus, cpus, memory_gb), ...]). `state` has `round`, `now_s`, `ask`, `jobs`
(the runnable queue, or its head, in the policy's order: protobuf Job messages with id, gpus,
arrival_s, iterations_left, ideal_cpus_per_gpu, ...), `sensitivity(job_id)` (cpu_grid,
memory_grid, values; empty lists for an insensitive job), and `ledger()`: a Ledger of the free
resources to plan on. troupe checks every answer: one that overcommits a server, names a job it
did not offer or splits a job's GPUs wrongly is refused (a Refusal with the reason arrives,
counted in `refusals`) and the round is placed by the run's built-in fallback.

The protocol's Python classes are generated from messages/external_scheduler.proto (see
troupe_wire).
"""

import bisect
import os
import socket
import sys
import time

import troupe_wire

MAX_FRAME_BYTES = 64 << 20
PROTOCOL_VERSION = 1
# The slack troupe's ledger allows when a demand is compared with what is free (floating point).
SLACK = 1e-9


pb = troupe_wire.load_proto(os.path.join(troupe_wire.messages_dir(), "external_scheduler.proto"))


class ExternalError(Exception):
    """troupe refused the scheduler, or the connection broke."""


class Ledger:
    """What each server has free during one round, with troupe's own fit test and best-fit
    buckets: servers() yields the servers with exactly n GPUs free, in index order."""

    def __init__(self, shapes, free_gpus, free_cpus, free_memory_gb, gpu_types=None):
        self.shapes = shapes  # [(gpus, cpus, memory_gb)] capacities, by server
        self.gpu_type = list(gpu_types) if gpu_types else [0] * len(shapes)  # by server
        self.gpus_of_type = [0] * (max(self.gpu_type, default=0) + 1)  # capacity of each type
        for (gpus, _, _), t in zip(shapes, self.gpu_type):
            self.gpus_of_type[t] += gpus
        self.gpus = list(free_gpus)
        self.cpus = list(free_cpus)
        self.memory_gb = list(free_memory_gb)
        self.max_server_gpus = max((s[0] for s in shapes), default=0)
        self.free_gpus = sum(self.gpus)
        self._buckets = [[] for _ in range(self.max_server_gpus + 1)]
        for server, gpus in enumerate(self.gpus):
            self._buckets[gpus].append(server)

    def servers(self, free_gpus):
        return self._buckets[free_gpus]

    def proportional(self, server, gpus):
        """CPUs and memory in proportion to `gpus` on this server (capacity / GPUs per GPU)."""
        shape_gpus, cpus, memory_gb = self.shapes[server]
        return cpus / shape_gpus * gpus, memory_gb / shape_gpus * gpus

    def fits(self, server, gpus, cpus, memory_gb):
        return (gpus <= self.gpus[server] and cpus <= self.cpus[server] + SLACK
                and memory_gb <= self.memory_gb[server] + SLACK)

    def take(self, server, gpus, cpus, memory_gb):
        self._buckets[self.gpus[server]].remove(server)
        self.gpus[server] -= gpus
        self.cpus[server] -= cpus
        self.memory_gb[server] -= memory_gb
        self.free_gpus -= gpus
        bisect.insort(self._buckets[self.gpus[server]], server)


class RoundState:
    """One RoundState as `schedule` sees it."""

    def __init__(self, message, shapes, sensitivities, gpu_types, type_speeds):
        self.message = message
        self.ask = message.ask
        self.round = message.round
        self.now_s = message.now_s
        self.jobs = message.jobs
        self._shapes = shapes
        self._sensitivities = sensitivities
        self._gpu_types = gpu_types
        self._type_speeds = type_speeds

    def sensitivity(self, job_id):
        return self._sensitivities[job_id]

    def type_speed(self, job_id, gpu_type):
        """The job's throughput on that GPU type relative to the reference type (1 without types)."""
        speeds = self._type_speeds.get(job_id)
        return speeds[gpu_type] if speeds and gpu_type < len(speeds) else 1.0

    def ledger(self):
        m = self.message
        return Ledger(self._shapes, m.free_gpus, m.free_cpus, m.free_memory_gb, self._gpu_types)


class ExternalScheduler:
    def __init__(self, host, port, secret, name="python", connect_timeout_s=10.0):
        self.host, self.port = host, int(port)
        self.secret = secret.encode() if isinstance(secret, str) else secret
        self.name, self.connect_timeout_s = name, connect_timeout_s
        self.hello = None
        self.shapes = []
        self.asks = 0
        self.jobs_offered = 0  # summed over every RoundState
        self.refusals = []  # (ask, reason, fallback)
        self.goodbye = None
        self.seconds_scheduling = 0.0  # wall time spent in schedule()
        self._sensitivities = {}
        self._type_speeds = {}
        self.gpu_types = []
        self._sock = None

    # --- wire ---
    def _send(self, **body):
        self._wire.send(pb.Envelope(**body))

    def _read_frame(self):
        envelope = self._wire.read()
        if envelope.WhichOneof("body") == "error":
            raise ExternalError("troupe: " + envelope.error.message)
        return envelope

    # --- session ---
    def connect(self):
        """Connects and registers; returns troupe's Hello (servers, round_s, fallback, policy)."""
        self._sock = socket.create_connection((self.host, self.port), self.connect_timeout_s)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._wire = troupe_wire.FramedSocket(self._sock, pb.Envelope, MAX_FRAME_BYTES,
                                              ExternalError)
        hello = self._read_frame()
        if hello.WhichOneof("body") != "hello":
            raise ExternalError("expected hello, got %s" % hello.WhichOneof("body"))
        self.hello = hello.hello
        self.shapes = [(s.gpus, s.cpus, s.memory_gb) for s in self.hello.servers]
        self.gpu_types = [s.gpu_type for s in self.hello.servers]
        token = troupe_wire.hmac_token(self.secret, self.hello.nonce)
        self._send(register=pb.Register(token=token, protocol_version=PROTOCOL_VERSION,
                                        name=self.name))
        reply = self._read_frame()
        if reply.WhichOneof("body") != "registered":
            raise ExternalError("troupe refused the scheduler: %s" % reply.WhichOneof("body"))
        self._sock.settimeout(None)
        return self.hello

    def _state(self, message):
        known, speeds = self._sensitivities, self._type_speeds
        for s in message.sensitivities:
            m = s.matrix
            known[s.job_id] = (list(m.cpu_grid), list(m.memory_grid), list(m.values))
            speeds[s.job_id] = list(s.type_speed)
        if len(known) > 2 * len(message.jobs) + 4096:  # forget jobs that left the queue
            self._sensitivities = known = {j.id: known[j.id] for j in message.jobs}
            self._type_speeds = speeds = {j.id: speeds[j.id] for j in message.jobs}
        return RoundState(message, self.shapes, known, self.gpu_types, speeds)

    def serve(self, schedule):
        """Answers every RoundState with schedule(state) until troupe says Goodbye."""
        while True:
            frame = self._read_frame()
            kind = frame.WhichOneof("body")
            if kind == "round_state":
                state = self._state(frame.round_state)
                start = time.perf_counter()
                placements = schedule(state)
                self.seconds_scheduling += time.perf_counter() - start
                self.asks += 1
                self.jobs_offered += len(state.jobs)
                self._send(allocation=_allocation(state.ask, placements))
            elif kind == "refusal":
                r = frame.refusal
                self.refusals.append((r.ask, r.reason, r.fallback))
                print("troupe_external: ask %d refused (%s placed it): %s"
                      % (r.ask, r.fallback, r.reason), file=sys.stderr)
            elif kind == "goodbye":
                self.goodbye = frame.goodbye.reason
                return
            else:
                raise ExternalError("unexpected %s from troupe" % kind)

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _allocation(ask, placements):
    allocation = pb.Allocation(ask=ask)
    for job_id, parts in placements:
        placement = allocation.placements.add(job_id=job_id)
        for server, gpus, cpus, memory_gb in parts:
            placement.parts.add(server=server, gpus=gpus, cpus=cpus, memory_gb=memory_gb)
    return allocation


def wait_for_port(path, timeout_s=60):
    """The port troupe wrote to external_scheduler.port_file, waiting for the file."""
    port = troupe_wire.wait_for_port(path, timeout_s)
    if port is None:
        raise ExternalError("no port in %s after %d s" % (path, timeout_s))
    return port


read_secret = troupe_wire.read_secret
