#!/usr/bin/env bash
# Builds the troupe program with profile-guided optimisation (GCC): a build that counts what its
# runs execute, a set of training runs, then the same build folder compiled by those counts. The
# program computes exactly what the plain build does (same records) with 0.91-0.92x its CPU over
# the million-job stream (docs/performance.md, "Profile-guided build"). Takes about twice as long
# as a plain build (16 minutes on 2 cores), a minute of it training. It builds the troupe program
# alone, for emulated and CPU runs: the CUDA backends come with the plain build.
#
# Usage: scripts/build-pgo.sh        (then build-pgo/apps/troupe)
# Environment: BUILD (default build-pgo), JOBS (default nproc), CMAKE_FLAGS (added to both
# configurations).
#
# Training: the cells of scripts/check-policy-hashes.sh for every policy (FIFO, SRTF, LAS, FTF) and
# mechanism (proportional, GREEDY, TUNE) with jobs 1000-1199 measured, the default experiment and
# the Philly replay when data/philly.csv exists; and an overloaded multi-GPU stream on 4,096 GPUs under TUNE, whose
# queue grows deep. The million-job stream of scripts/bench-queues.sh is not among them (that deep
# stream is a tenth of its jobs on a quarter of its GPUs); the default experiment and the Philly
# replay, two of its other rows, are.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-pgo}
JOBS=${JOBS:-$(nproc)}
read -r -a extra <<<"${CMAKE_FLAGS:-}"
mkdir -p "$BUILD"
profile="$(cd "$BUILD" && pwd)/pgo-profile"  # absolute: the compiler runs in other folders

# With link-time optimisation too: the counts then guide inlining across files (0.97x the CPU
# without it, 0.91-0.92x with it). The program only, without the CUDA backends.
configure() {
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTROUPE_BENCHMARKS=OFF \
    -DTROUPE_CUDA=OFF -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON -DTROUPE_PGO="$1" \
    -DTROUPE_PGO_DIR="$profile" "${extra[@]}" >/dev/null
}

echo "build-pgo: counting build in $BUILD/"
configure GENERATE
# Counts from an earlier training would be added to: only this build's folder holds them.
find "$profile" -name '*.gcda' -delete 2>/dev/null || true
cmake --build "$BUILD" -j "$JOBS" --target troupe

echo "build-pgo: training runs"
# The cells of the byte-identity check (it also checks the counting build's records).
cells='^(fifo|srtf|las|ftf)-(proportional|greedy|tune)$|^default$|^philly$'
if ! TROUPE="$BUILD/apps/troupe" scripts/check-policy-hashes.sh "$cells" >"$BUILD/training.log"; then
  echo "build-pgo: a training run failed or differs ($BUILD/training.log)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! "$BUILD/apps/troupe" run configs/default.textproto --quiet --out "$work/deep-tune" \
    --set 'cluster.servers[0].count=512' --set workload.generator.jobs_per_hour=275 \
    --set workload.generator.num_jobs=100000 --set workload.generator.multi_gpu=true \
    --set scheduler.mechanism=tune --set run.measure_first_job=0 \
    --set run.measure_last_job=99999 --set run.deadline_s=3600000 >"$work/log" 2>&1; then
  echo "build-pgo: training run deep-tune failed:" >&2
  tail -3 "$work/log" >&2
  exit 1
fi

echo "build-pgo: optimised build in $BUILD/"
configure USE
cmake --build "$BUILD" -j "$JOBS" --target troupe
echo "build-pgo: $BUILD/apps/troupe"
