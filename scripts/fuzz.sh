#!/usr/bin/env bash
# Builds the agent protocol's libFuzzer target with clang (build-fuzz/) and runs it for a bounded
# time over the committed seed corpus (tests/fuzz/corpus/agent). New inputs go to a scratch folder,
# never into the committed corpus. A crash leaves its input in build-fuzz/ and fails the script.
#   scripts/fuzz.sh [SECONDS]    (default 30; CI runs it through `make fuzz`)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
build="${FUZZ_BUILD:-build-fuzz}"
cc="$(command -v clang-14 || command -v clang || true)"
cxx="$(command -v clang++-14 || command -v clang++ || true)"
if [ -z "$cxx" ]; then
  echo "fuzz: clang is not installed (scripts/install-deps.sh installs clang-14)" >&2
  exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_CXX_COMPILER="$cxx" -DTROUPE_FUZZ=ON -DTROUPE_BENCHMARKS=OFF -DTROUPE_CUDA=OFF \
    ${FUZZ_CMAKE_FLAGS:-} >/dev/null
fi
cmake --build "$build" --target troupe_agent_fuzzer -j "${JOBS:-$(nproc)}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cd "$build"
./tests/fuzz/troupe_agent_fuzzer "$scratch" ../tests/fuzz/corpus/agent -max_total_time="$seconds" \
  -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
