"""troupe_agent: lets a training loop lease GPUs from a `troupe run` (docs/agent.md).

A training loop wraps its data iterator:

    agent = TroupeAgent("127.0.0.1", port, secret, model="ResNet18", gpus=1, iterations=500)
    agent.connect()
    for batch in agent.iterate(data, save=save_checkpoint, restore=load_checkpoint):
        train_step(batch)          # runs only while troupe leases the job its GPUs
    agent.close()

`iterate` registers nothing itself: connect() does (Hello, then Register with
HMAC-SHA256(secret, nonce), then Registered). It blocks until a lease arrives, yields batches
while the lease lasts (each batch is one iteration), and when troupe ends the lease (LeaseEnd)
calls save() and answers CheckpointDone with the iterations trained in that lease. A lease lost
to a dead server calls restore() instead: its work is gone. After the last iteration it calls
save(), sends Finished and ends once troupe says Goodbye. A background thread sends a Heartbeat
every Hello.heartbeat_s so that a long batch does not look like a dead agent; Progress goes out
about twice a heartbeat.

The protocol's Python classes are generated from messages/agent.proto (see troupe_wire);
$TROUPE_AGENT_PROTO names another agent.proto.
"""

import os
import queue
import socket
import sys
import threading
import time

import troupe_wire

MAX_FRAME_BYTES = 1 << 20
PROTOCOL_VERSION = 1


def _proto_path():
    return os.environ.get("TROUPE_AGENT_PROTO") or os.path.join(troupe_wire.messages_dir(),
                                                                 "agent.proto")


pb = troupe_wire.load_proto(_proto_path())


class AgentError(Exception):
    """troupe refused the agent, or the connection broke."""


class Lease:
    def __init__(self, grant):
        self.round = grant.round
        self.start_s = grant.start_s
        self.valid_until_s = grant.valid_until_s
        self.duration_wall_s = grant.duration_wall_s
        self.speedup = grant.speedup
        self.parts = [(p.server, list(p.gpu_ids), p.cpus, p.memory_gb) for p in grant.parts]

    def __repr__(self):
        return "Lease(round=%d, %.1f-%.1f s, parts=%s)" % (self.round, self.start_s,
                                                           self.valid_until_s, self.parts)


class TroupeAgent:
    def __init__(self, host, port, secret, *, iterations, gpus=1, model=None, sensitivity=None,
                 iter_time_s=None, name=None, connect_timeout_s=10.0):
        """model: a model of troupe's catalogue; or sensitivity (dict with cpu_grid, memory_grid,
        values, ideal_cpus_per_gpu, ideal_memory_gb_per_gpu) and iter_time_s, as measured."""
        self.host, self.port = host, int(port)
        self.secret = secret.encode() if isinstance(secret, str) else secret
        self.iterations, self.gpus = int(iterations), int(gpus)
        self.model, self.sensitivity, self.iter_time_s = model, sensitivity, iter_time_s
        self.name, self.connect_timeout_s = name, connect_timeout_s
        self.job_id = None
        self.iterations_done = 0
        self.leases = 0
        self.checkpoints = 0
        self.lost_leases = 0
        self.goodbye = None
        self._sock = None
        self._send_lock = threading.Lock()
        self._frames = queue.Queue()
        self._closed = threading.Event()
        self._heartbeat_s = 1.0

    # --- wire ---
    def _send(self, **body):
        with self._send_lock:
            self._wire.send(pb.Envelope(**body))

    def _read_frame(self):
        return self._wire.read()

    def _reader(self):
        try:
            while True:
                self._frames.put(self._read_frame())
        except (AgentError, OSError) as e:
            self._frames.put(e)
        finally:
            self._closed.set()

    def _heartbeats(self):
        sequence = 0
        while not self._closed.wait(self._heartbeat_s):
            sequence += 1
            try:
                self._send(heartbeat=pb.Heartbeat(sequence=sequence))
            except OSError:
                return

    # --- session ---
    def connect(self):
        """Connects, authenticates and registers the job; returns troupe's job id."""
        self._sock = socket.create_connection((self.host, self.port), self.connect_timeout_s)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._wire = troupe_wire.FramedSocket(self._sock, pb.Envelope, MAX_FRAME_BYTES, AgentError)
        hello = self._read_frame()
        if hello.WhichOneof("body") != "hello":
            raise AgentError("expected hello, got %s" % self._describe(hello))
        self._heartbeat_s = hello.hello.heartbeat_s or 1.0
        token = troupe_wire.hmac_token(self.secret, hello.hello.nonce)
        job = pb.JobRequest(gpus=self.gpus, iterations=self.iterations)
        if self.name:
            job.name = self.name
        if self.model:
            job.model = self.model
        else:
            s = self.sensitivity
            job.sensitivity.CopyFrom(pb.Sensitivity(
                cpu_grid=s["cpu_grid"], memory_grid=s["memory_grid"], values=s["values"],
                ideal_cpus_per_gpu=s["ideal_cpus_per_gpu"],
                ideal_memory_gb_per_gpu=s["ideal_memory_gb_per_gpu"]))
            job.iter_time_s = self.iter_time_s
        self._send(register=pb.Register(job=job, token=token, protocol_version=PROTOCOL_VERSION))
        reply = self._read_frame()
        if reply.WhichOneof("body") != "registered":
            raise AgentError("troupe refused the job: %s" % self._describe(reply))
        self.job_id = reply.registered.job_id
        self._sock.settimeout(None)
        threading.Thread(target=self._reader, daemon=True).start()
        threading.Thread(target=self._heartbeats, daemon=True).start()
        return self.job_id

    @staticmethod
    def _describe(envelope):
        kind = envelope.WhichOneof("body")
        if kind == "error":
            return "error: " + envelope.error.message
        return kind or "an empty frame"

    def _next_frame(self, block):
        try:
            frame = self._frames.get(block=block)
        except queue.Empty:
            return None
        if isinstance(frame, Exception):
            raise AgentError(str(frame))
        if frame.WhichOneof("body") == "error":
            raise AgentError("troupe: " + frame.error.message)
        return frame

    def _wait_for_lease(self):
        """The next lease, or None once troupe said Goodbye."""
        while True:
            frame = self._next_frame(block=True)
            kind = frame.WhichOneof("body")
            if kind == "lease_grant":
                return Lease(frame.lease_grant)
            if kind == "goodbye":
                self.goodbye = frame.goodbye.reason
                return None
            # A late lease_end (a lease lost after its checkpoint) needs nothing.

    def iterate(self, data, save=None, restore=None):
        """Yields batches of `data` (restarted when exhausted) while troupe leases the job GPUs."""
        source = iter(data)
        while self.iterations_done < self.iterations:
            lease = self._wait_for_lease()
            if lease is None:
                return
            self.leases += 1
            in_lease, ended, lost = 0, False, False
            last_progress = time.monotonic()
            while self.iterations_done < self.iterations:
                frame = self._next_frame(block=False)
                if frame is not None and frame.WhichOneof("body") == "lease_end":
                    ended, lost = True, frame.lease_end.lost
                    break
                if frame is not None and frame.WhichOneof("body") == "goodbye":
                    self.goodbye = frame.goodbye.reason
                    return
                try:
                    batch = next(source)
                except StopIteration:
                    source = iter(data)
                    batch = next(source)
                yield batch
                in_lease += 1
                self.iterations_done += 1
                now = time.monotonic()
                if now - last_progress >= self._heartbeat_s / 2:
                    self._send(progress=pb.Progress(iterations_done=in_lease))
                    last_progress = now
            if lost:
                self.lost_leases += 1
                self.iterations_done -= in_lease
                if restore:
                    restore()
                self._send(checkpoint_done=pb.CheckpointDone(round=lease.round,
                                                             iterations_done=0))
                continue
            if save:
                save()
            self.checkpoints += 1
            if ended:
                self._send(checkpoint_done=pb.CheckpointDone(round=lease.round,
                                                             iterations_done=in_lease))
            else:
                self._send(finished=pb.Finished(iterations_done=in_lease))
        # Every iteration is done: wait for troupe to record it and say Goodbye.
        while self.goodbye is None:
            frame = self._next_frame(block=True)
            if frame.WhichOneof("body") == "goodbye":
                self.goodbye = frame.goodbye.reason

    def close(self):
        self._closed.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()


read_secret = troupe_wire.read_secret


if __name__ == "__main__":
    sys.exit("troupe_agent is a library; see scripts/agent_example.py")
