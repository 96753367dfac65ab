// The all-reduce among actors across processes (actors/allreduce_rank_actor.hpp) over loopback:
// one rank here and one in each of two `troupe node` processes sum buffers of 1 MiB to 256 MiB;
// printed beside this machine's memcpy of the same bytes (the ceiling of any copy). Bus bandwidth
// is NCCL's definition, 2 (N - 1) / N x bytes / time. The time runs from handing the ranks their
// buffers to holding every sum, so it includes carrying the two remote ranks' buffers to their
// processes and their sums back; the "delivery" column is that alone (a one-rank group in each
// node process answers its buffer as its sum), and the last column the bus bandwidth of what is
// left, the collective among the ranks. The best of three rounds per size. Its own main; run as
//   build/bench/troupe_allreduce_bench [MAX_MIB [SEGMENT_KIB]]
// (defaults 256 and 1024, the segment the job actor uses; docs/performance.md)
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "actors/allreduce_rank_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/message_types.hpp"
#include "runtime/remote_node.hpp"
#include "tests/integration/node_process.hpp"

namespace troupe {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTimeout = std::chrono::minutes(10);
constexpr int kRanks = 3;
constexpr int kTries = 3;  // the best of three rounds per size

// NCCL's bus bytes of an all-reduce of `bytes`: what each rank sends (and receives).
double BusBytes(size_t bytes) { return 2.0 * (kRanks - 1) / kRanks * static_cast<double>(bytes); }

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// The best of three memcpy's of `bytes`: the copy ceiling.
double MemcpySeconds(size_t bytes) {
  std::vector<char> from(bytes, 1), to(bytes, 0);
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    const auto start = Clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    best = std::min(best, Seconds(start));
  }
  return best;
}

// Every rank's request, then every answer: the seconds until the last, or -1 on an error.
double AllReduceSeconds(caf::actor_system& sys, const std::vector<caf::actor>& ranks, int64_t round,
                        size_t floats) {
  caf::scoped_actor self{sys};
  const FloatBlob buffer = FloatBlob::Of(std::vector<float>(floats, 1.0f));
  const auto start = Clock::now();
  std::vector<caf::response_handle<caf::blocking_actor, caf::message, true>> pending;
  for (const caf::actor& rank : ranks) {
    pending.push_back(self->request(rank, kTimeout, AllReduceStart{round, buffer}));
  }
  bool ok = true;
  for (auto& handle : pending) {
    handle.receive([](AllReduceResult&) {}, [&](caf::error&) { ok = false; });
  }
  return ok ? Seconds(start) : -1;
}

// A rank of a node process, spawned there.
caf::actor SpawnRank(caf::actor_system& sys, const caf::actor& node) {
  caf::scoped_actor self{sys};
  caf::actor rank;
  self->request(node, kTimeout, spawn_rank_atom::value)
      .receive([&](caf::actor& spawned) { rank = spawned; }, [](caf::error&) {});
  return rank;
}

int Main(int max_mib, int64_t segment_floats) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "troupe-allreduce-bench").string();
  std::vector<std::unique_ptr<testing::NodeProcess>> nodes;
  for (int i = 0; i + 1 < kRanks; ++i) {
    std::filesystem::create_directories(dir + "/node" + std::to_string(i));
    nodes.push_back(std::make_unique<testing::NodeProcess>(dir + "/node" + std::to_string(i)));
  }
  caf::actor_system_config cfg;
  RegisterMessageTypes(cfg);
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  Telemetry telemetry;
  std::vector<caf::actor> ranks = {sys.spawn(AllReduceRankActor, &telemetry)};
  std::vector<caf::actor> echoes;  // one-rank groups: their sum is their buffer
  for (auto& node : nodes) {
    caf::actor remote;
    if (Status s = ConnectNode(sys, node->WaitForAddress(), &remote); !s.ok()) {
      std::fprintf(stderr, "allreduce_bench: %s\n", s.message().c_str());
      return 1;
    }
    ranks.push_back(SpawnRank(sys, remote));
    echoes.push_back(SpawnRank(sys, remote));
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    caf::anon_send(ranks[r],
                   AllReduceGroup{static_cast<int32_t>(r), ranks, segment_floats, {}, {}});
  }
  for (const caf::actor& echo : echoes) {
    caf::anon_send(echo, AllReduceGroup{0, {echo}, segment_floats, {}, {}});
  }
  std::printf(
      "| buffer | all-reduce | bus bandwidth | memcpy | ratio | delivery | bus bandwidth "
      "without delivery |\n|---|---|---|---|---|---|---|\n");
  int64_t round = 0;
  for (int mib = 1; mib <= max_mib; mib *= 4) {
    const size_t bytes = static_cast<size_t>(mib) << 20;
    double best = 1e9, delivery = 1e9;
    for (int i = 0; i < kTries; ++i) {
      const double all = AllReduceSeconds(sys, ranks, round, bytes / 4);
      const double echo = AllReduceSeconds(sys, echoes, round++, bytes / 4);
      if (all < 0 || echo < 0) {
        std::fprintf(stderr, "allreduce_bench: a rank answered no sum (%d MiB)\n", mib);
        return 1;
      }
      best = std::min(best, all);
      delivery = std::min(delivery, echo);
    }
    const double bus = BusBytes(bytes) / best;
    const double copy = static_cast<double>(bytes) / MemcpySeconds(bytes);
    std::printf("| %d MiB | %.3f s | %.2f GB/s | %.2f GB/s | %.3f | %.3f s | ", mib, best,
                bus / 1e9, copy / 1e9, bus / copy, delivery);
    if (best > delivery) {
      std::printf("%.2f GB/s |\n", BusBytes(bytes) / (best - delivery) / 1e9);
    } else {
      std::printf("- |\n");  // within the noise of the two times
    }
    std::fflush(stdout);
  }
  for (const caf::actor& rank : ranks) caf::anon_send_exit(rank, caf::exit_reason::kill);
  for (const caf::actor& echo : echoes) caf::anon_send_exit(echo, caf::exit_reason::kill);
  return 0;
}

}  // namespace
}  // namespace troupe

int main(int argc, char** argv) {
  const int max_mib = argc > 1 ? std::atoi(argv[1]) : 256;
  const int64_t segment_kib = argc > 2 ? std::atoll(argv[2]) : 1024;
  if (max_mib < 1 || segment_kib < 1) {
    std::fprintf(stderr, "usage: troupe_allreduce_bench [MAX_MIB [SEGMENT_KIB]], both >= 1\n");
    return 2;
  }
  return troupe::Main(max_mib, segment_kib * 1024 / 4);
}
