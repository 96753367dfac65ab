#!/usr/bin/env bash
# gpu-check.sh: the GPU backends checked on a GPU, in one go (docs/gpu.md).
#
# Builds troupe with CUDA for sm_90 in its own folder (default build-gpu-check), runs the gpu/
# unit tests (CUDA and NCCL against their CPU references) and the micro-benchmarks (hash-table
# insert/find, embedding bandwidth, step-time stability across leases, one-rank NCCL all-reduce),
# and prints one table with the targets of issue 7. Sized to finish within 8 minutes on one H200.
#
#   scripts/gpu-check.sh [--cpu-only] [--build DIR]      JOBS=N sets the build's parallelism
#
# Without a GPU (or with --cpu-only) it still builds the CUDA sources, runs the CPU references'
# tests and benchmarks, and says plainly that the GPU parts did not run. Exit status: 0 when
# everything that ran passed, 1 when a build, a test or a benchmark failed (a missed performance
# target is reported in the table, not an error).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=build-gpu-check
CPU_ONLY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu-only) CPU_ONLY=1 ;;
    --build) BUILD="$2"; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
JOBS=${JOBS:-$(nproc)}

if [[ $CPU_ONLY == 0 ]]; then
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "gpu-check: no GPU visible (nvidia-smi lists none): building the CUDA sources and" \
         "running the CPU references only; the GPU tests and benchmarks are NOT run."
    CPU_ONLY=1
  else
    nvidia-smi -L
  fi
fi

LAUNCHERS=()
if command -v ccache >/dev/null; then
  LAUNCHERS=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
echo "== build ($BUILD, CUDA sm_90, -j$JOBS)"
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTROUPE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTROUPE_BENCHMARKS=ON "${LAUNCHERS[@]}" >"$BUILD/gpu-check-configure.log" \
  || { cat "$BUILD/gpu-check-configure.log"; echo "gpu-check: FAILED to configure"; exit 1; }
ninja -C "$BUILD" -j "$JOBS" troupe_unit_tests troupe_gpu_bench \
  || { echo "gpu-check: FAILED to build"; exit 1; }

echo "== tests (gpu/: CPU references; CUDA/NCCL against them where a GPU answers)"
TEST_LOG="$BUILD/gpu-tests.log"
if ! "$BUILD/tests/troupe_unit_tests" --gtest_filter='Gpu*' 2>&1 | tee "$TEST_LOG" \
    | grep -E '^\[  (PASSED|FAILED|SKIPPED) |Skipped|^\[==='; then
  :
fi
if grep -q '^\[  FAILED  \]' "$TEST_LOG" || ! grep -q '^\[  PASSED  \]' "$TEST_LOG"; then
  echo "gpu-check: tests FAILED (log: $TEST_LOG)"
  exit 1
fi

echo "== benchmarks"
FILTER='BM_Cpu.*'
[[ $CPU_ONLY == 0 ]] && FILTER='.*'
BENCH_JSON="$BUILD/gpu-bench.json"
"$BUILD/bench/troupe_gpu_bench" --benchmark_filter="$FILTER" --benchmark_format=console \
  --benchmark_out="$BENCH_JSON" --benchmark_out_format=json \
  || { echo "gpu-check: benchmarks FAILED"; exit 1; }

python3 - "$BENCH_JSON" "$CPU_ONLY" <<'PY'
import json, sys
runs = {b["name"].split("/")[0] + ("/bwd" if "backward:1" in b["name"] else ""): b
        for b in json.load(open(sys.argv[1]))["benchmarks"]}
cpu_only = sys.argv[2] == "1"
failed = [n for n, b in runs.items() if b.get("error_occurred")]
rows = []  # (check, value, unit, target, verdict)
def add(check, value, unit, target=None, ok=None):
    verdict = "" if ok is None else ("meets" if ok else "BELOW TARGET")
    rows.append((check, f"{value:.3f}", unit, target or "", verdict))
def get(name, key):
    b = runs.get(name)
    return None if b is None or b.get("error_occurred") else b.get(key)
v = get("BM_CpuHbmInsert", "items_per_second")
if v: add("CPU HBM table insert, 2 M keys", v / 1e9, "G keys/s")
v = get("BM_CpuHbmFind", "items_per_second")
if v: add("CPU HBM table find, 2 M keys", v / 1e9, "G keys/s")
v = get("BM_CpuEmbedding", "bytes_per_second")
if v: add("CPU embedding forward", v / 1e9, "GB/s")
v = get("BM_CpuEmbedding/bwd", "bytes_per_second")
if v: add("CPU embedding backward", v / 1e9, "GB/s")
v = get("BM_CpuComputeLeases", "step_ms")
if v:
    add("CPU res50 step (scale 1e-5, w 256)", v, "ms")
    add("CPU step spread over 5 leases", get("BM_CpuComputeLeases", "spread_pct"), "%")
v = get("BM_CpuAllReduce", "bytes_per_second")
if v: add("CPU all-reduce, 4 ranks x 16 MiB", v / 1e9, "GB/s")
if not cpu_only:
    v = get("BM_CudaHash", "insert_Gkeys_s")
    if v is not None:
        add("GPU hash insert, 2 M keys -> 50% load", v, "G keys/s", ">= 1 (cuCo ~8-10)", v >= 1)
        f = get("BM_CudaHash", "find_Gkeys_s")
        add("GPU hash find, 2 M keys at 50% load", f, "G keys/s", ">= 2", f >= 2)
    v = get("BM_CudaEmbedding", "fwd_pct_peak")
    if v is not None:
        add("GPU embedding forward", v, "% of peak BW", ">= 60", v >= 60)
        b = get("BM_CudaEmbedding", "bwd_pct_peak")
        add("GPU embedding backward", b, "% of peak BW", ">= 60", b >= 60)
        add("  (peak from memory clock x bus)", get("BM_CudaEmbedding", "peak_GB_s"), "GB/s")
    v = get("BM_CudaComputeLeases", "spread_pct")
    if v is not None:
        add("GPU res50 step (scale 1e-3, w 1024)", get("BM_CudaComputeLeases", "step_ms"), "ms")
        add("GPU step spread over 10 leases", v, "%", "<= 5", v <= 5)
    v = get("BM_NcclAllReduce", "allreduce_ms")
    if v is not None:
        add("NCCL one-rank all-reduce, 256 MiB", v, "ms")
        add("  bus bandwidth", get("BM_NcclAllReduce", "bus_GB_s"), "GB/s")
print()
print(f"{'check':42} {'value':>10} {'unit':14} {'target':18} verdict")
for r in rows:
    print(f"{r[0]:42} {r[1]:>10} {r[2]:14} {r[3]:18} {r[4]}")
if cpu_only:
    print("\nGPU rows absent: no GPU was used (CPU references only).")
if failed:
    print("\ngpu-check: benchmarks FAILED: " + ", ".join(failed))
    sys.exit(1)
PY
echo "gpu-check: done"
