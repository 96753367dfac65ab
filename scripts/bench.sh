#!/usr/bin/env bash
# Performance check: builds troupe_engine_bench and troupe, runs the engine micro-benchmarks and
# two whole experiments, and prints one table against published reference figures:
#   - virtual-clock timed events/s against plain CAF sends on the same coordinator (target >= 50%);
#   - the default experiment's wall time and memory against Synergy's own simulator (244 s,
#     595 MB on this project's machine);
#   - the 512-GPU Philly replay (target < 30 s), when data/philly.csv exists.
# Run from anywhere; works in the repository root. Assumes $BUILD (default build/) was configured
# by the Makefile. Environment: BUILD, JOBS (build parallelism, default 2), MIN_TIME (seconds per
# micro-benchmark, default 0.5). Results go to stdout only; docs/performance.md records them.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}
MIN_TIME=${MIN_TIME:-0.5}

if [ ! -f "$BUILD/build.ninja" ] && [ ! -f "$BUILD/Makefile" ]; then
  echo "bench.sh: $BUILD is not configured; run 'make configure' (or set BUILD)" >&2
  exit 2
fi
cmake --build "$BUILD" -j "$JOBS" --target troupe_engine_bench troupe

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- micro-benchmarks ----
"$BUILD/bench/troupe_engine_bench" --benchmark_min_time="$MIN_TIME" \
  --benchmark_out="$work/bench.json" --benchmark_out_format=json

# Prints field `key` of benchmark `name` from Google Benchmark's JSON, which writes one
# "key": value pair a line (its CSV writer refuses counters that differ between benchmarks).
bench_field() {
  awk -v name="$1" -v key="$2" '
    { line = $0; gsub(/^[ \t]+|,$/, "", line) }
    line ~ /^"name": / { v = substr(line, 9); gsub(/"/, "", v); current = v }
    current == name && index(line, "\"" key "\": ") == 1 {
      print substr(line, length(key) + 5); exit
    }
  ' "$work/bench.json"
}

# ---- whole experiments ----
# Runs `troupe run CONFIG` into OUT; sets wall_s and rss_mb (max resident set size).
timed_run() {
  local config=$1 out=$2
  rm -rf "$out"
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$work/time.txt" "$BUILD/apps/troupe" run "$config" --quiet --out "$out"
    wall_s=$(awk -F': ' '/Elapsed \(wall clock\)/ {
      n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' \
      "$work/time.txt")
    rss_mb=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$work/time.txt")
  else
    # No GNU time (Debian package `time`): wall time from the shell, memory unknown.
    local start end
    start=$(date +%s.%N)
    "$BUILD/apps/troupe" run "$config" --quiet --out "$out"
    end=$(date +%s.%N)
    wall_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    rss_mb=n/a
  fi
}

timed_run configs/default.textproto /tmp/troupe-bench-default
default_wall=$wall_s default_rss=$rss_mb
philly_wall="" philly_rss=""
if [ -f data/philly.csv ]; then
  timed_run configs/philly-512.textproto /tmp/troupe-bench-philly
  philly_wall=$wall_s philly_rss=$rss_mb
fi

# ---- the table ----
emulated=$(bench_field BM_EmulatedTimedEvents items_per_second)
ceiling=$(bench_field BM_PlainCafSend items_per_second)
threaded=$(bench_field BM_PlainCafSendThreaded/real_time items_per_second)
round() { bench_field "BM_ProportionalRound/gpus:$1/multi:$2" real_time | awk '{ printf "%.1f", $1 }'; }

row() { printf '%-40s %-16s %-34s %s\n' "$@"; }
mps() { awk -v x="$1" 'BEGIN { printf "%.2f M/s", x / 1e6 }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / b }'; }
times() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0fx", a / b }'; }

echo
row "benchmark" "value" "reference" "ratio"
row "emulated timed events (TellAt)" "$(mps "$emulated")" "ceiling below; target >= 50%" \
  "$(pct "$emulated" "$ceiling") of ceiling"
row "plain CAF send, test coordinator" "$(mps "$ceiling")" "the ceiling" "100%"
row "plain CAF send, work-stealing" "$(mps "$threaded")" "-" "$(pct "$threaded" "$ceiling")"
row "emulated vs CAF test coord. (published)" "$(mps "$emulated")" "1.80 M/s (-O2)" \
  "$(pct "$emulated" 1800000)"
for gpus in 128 512 4096 16384; do
  row "proportional round, $gpus GPUs, 1-GPU" "$(round "$gpus" 0) us" "-" "-"
  row "proportional round, $gpus GPUs, mix" "$(round "$gpus" 1) us" "-" "-"
done
row "default experiment wall" "${default_wall} s" "Synergy simulator 244 s" \
  "$(times 244 "$default_wall") faster"
row "default experiment max RSS" "${default_rss} MB" "Synergy simulator 595 MB" \
  "$(if [ "$default_rss" = n/a ]; then echo -; else pct "$default_rss" 595; fi)"
if [ -n "$philly_wall" ]; then
  row "Philly 512-GPU replay wall" "${philly_wall} s" "target < 30 s" \
    "$(pct "$philly_wall" 30) of budget"
  row "Philly 512-GPU replay max RSS" "${philly_rss} MB" "-" "-"
else
  row "Philly 512-GPU replay" "skipped" "needs data/philly.csv" "-"
fi
