// libFuzzer target: the agent gateway's frame decoder and the per-job protocol state machine
// (agent/), fed whatever bytes a hostile agent could send after registering.
//
// Input: byte 0 picks how the stream is split into reads (1-64 bytes each, as a socket might
// deliver it); the rest is the stream. Every decoded envelope goes to an AgentJobMachine that
// holds a lease, with the cluster's events (lease end, lost lease, progress query, next grant)
// interleaved as the envelopes' own bytes choose. Neither may crash, hang, leak or read out of
// bounds; a decode error must stop the decoder for good. Built by scripts/fuzz.sh (clang).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "agent/agent_job_machine.hpp"
#include "agent/frame_codec.hpp"

namespace {

using troupe::LeaseGrant;
using troupe::agent_wire::AgentJobMachine;

LeaseGrant Grant(int64_t round) {
  LeaseGrant g;
  g.round = round;
  g.start_s = 300.0 * round;
  g.end_s = g.start_s + 300;
  g.gpu_ids = {0, 1};
  g.cpus = 8;
  g.memory_gb = 100;
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  troupe::agent_wire::FrameDecoder decoder(4096);
  troupe::agent_wire::AgentJobFacts facts;
  facts.job_id = 1;
  facts.gpus = 2;
  facts.iterations = 1000;
  facts.sensitivity = troupe::SensitivityMatrix{{1, 4}, {10, 50}, {0.5, 0.6, 1.0, 1.2}};
  AgentJobMachine machine(facts);
  int64_t round = 0;
  machine.OnGrant(Grant(round));
  std::vector<troupe::agent::Envelope> frames;
  bool failed = false;
  for (size_t at = 0; at < stream.size(); at += chunk) {
    frames.clear();
    const bool ok = decoder.Feed(stream.substr(at, chunk), &frames).ok();
    if (failed && !frames.empty()) std::abort();  // a failed decoder must yield nothing more
    failed = failed || !ok;
    for (const troupe::agent::Envelope& frame : frames) {
      troupe::agent_wire::MachineOutput out = machine.OnAgentFrame(frame);
      if (out.report && out.report->iterations_left < 0) std::abort();
      // The cluster's side, chosen by the frame itself.
      const uint64_t pick = frame.ByteSizeLong() % 5;
      if (pick == 0) machine.OnLeaseTimer(round, 300.0 * round);
      if (pick == 1)
        machine.OnLeaseLost(troupe::LeaseLost{round, 300.0 * round, 0}, 300.0 * round + 7);
      if (pick == 2) machine.OnQuery(troupe::ProgressQuery{round, 300.0 * round});
      if (pick == 3) machine.OnGrant(Grant(++round));
    }
    if (machine.iterations_left() < 0 || machine.iterations_left() > facts.iterations) std::abort();
  }
  return 0;
}
