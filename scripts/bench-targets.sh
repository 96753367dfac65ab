#!/usr/bin/env bash
# The emulated runs' speed and memory targets (docs/performance.md, "Where the targets stand"),
# each run on its own under GNU time: prints one Markdown table of wall seconds, CPU seconds
# (user + system) and maximum RSS (MB: 10^6 bytes) against each target, and whether it is met.
# The policy-figure row is the largest CPU time and RSS of any cell's run (SRTF, LAS, FTF x
# proportional, GREEDY, TUNE over the seeds). On a shared or virtual machine a run's time moves
# with the load: pin the runs to one core (CORE) and repeat the script rather than read one table.
#
# Usage: scripts/bench-targets.sh        (about two minutes with the million-job stream)
# Environment: BUILD (default build/), TROUPE (the binary; default $BUILD/apps/troupe),
# CORE (a CPU to pin every run to with taskset; default none), SEEDS (policy-figure seeds,
# default "1 2 3 4 5"), MILLION=0 to leave out the million-job stream (~40-60 s).
# Needs GNU time (/usr/bin/time) and data/philly.csv (the Philly row is left out without it).
# Writes nothing but a temporary folder, removed on exit. Exit status 1 when a target is missed.
set -uo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
troupe=${TROUPE:-$BUILD/apps/troupe}
SEEDS=${SEEDS:-1 2 3 4 5}
MILLION=${MILLION:-1}
if [ ! -x "$troupe" ] || [ ! -x /usr/bin/time ]; then
  echo "bench-targets.sh: needs $troupe (make build) and /usr/bin/time (Debian package time)" >&2
  exit 2
fi
pin=()
if [ -n "${CORE:-}" ]; then
  if ! [[ "$CORE" =~ ^[0-9]+$ ]] || [ "$CORE" -ge "$(nproc)" ]; then
    echo "bench-targets.sh: CORE=$CORE is not a CPU of this machine (0-$(($(nproc) - 1)))" >&2
    exit 2
  fi
  pin=(taskset -c "$CORE")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# timed CONFIG SETS...: runs troupe; sets wall, cpu (user + system) and rss_mb, or returns 1.
timed() {
  local config=$1
  shift
  local args=()
  for s in "$@"; do args+=(--set "$s"); done
  rm -rf "$work/out"
  if ! "${pin[@]}" /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$troupe" run \
    "configs/$config.textproto" --quiet --out "$work/out" "${args[@]}" >"$work/log" 2>&1; then
    echo "bench-targets.sh: troupe run configs/$config.textproto $* failed:" >&2
    tail -3 "$work/log" >&2
    return 1
  fi
  local user sys kb
  read -r wall user sys kb < <(tail -1 "$work/time")
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  rss_mb=$(awk -v k="$kb" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')  # GNU time: KiB
}

missed=0
# row NAME WALL_TARGET CPU_TARGET RSS_TARGET_MB: the last timed run against its targets ("-": none).
row() {
  local met=yes
  [ "$2" != - ] && awk -v x="$wall" -v t="$2" 'BEGIN { exit !(x > t) }' && met=no
  [ "$3" != - ] && awk -v x="$cpu" -v t="$3" 'BEGIN { exit !(x > t) }' && met=no
  [ "$4" != - ] && awk -v x="$rss_mb" -v t="$4" 'BEGIN { exit !(x > t) }' && met=no
  [ "$met" = no ] && missed=1
  local target=()
  [ "$2" != - ] && target+=("$2 s wall")
  [ "$3" != - ] && target+=("$3 s CPU")
  [ "$4" != - ] && target+=("$4 MB")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$wall" "$cpu" "$rss_mb" \
    "$(IFS=,; sed 's/,/, /g' <<<"${target[*]}")" "$met"
}

# failed NAME: a row for a run that did not finish (its error went to stderr).
failed() {
  printf '| %s | failed | | | | no |\n' "$1"
  missed=1
}

echo "| run | wall s | CPU s | max RSS MB | target | met |"
echo "|---|---:|---:|---:|---|---|"
name="default experiment (FIFO, proportional)"
if timed default; then row "$name" 0.25 0.25 20; else failed "$name"; fi
name="Philly, 82,247 jobs on 512 GPUs"
if [ -f data/philly.csv ]; then
  if timed philly-512; then row "$name" - 1.5 100; else failed "$name"; fi
fi
name="LAS + TUNE, seed 1"
if timed default scheduler.policy=las scheduler.mechanism=tune run.seed=1; then
  row "$name" - 30 -
else
  failed "$name"
fi

# The policy figure: the slowest and largest of its runs.
larger() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a) ? b : a }'; }
most_wall=0 most_cpu=0 most_rss=0 cells=0
for policy in srtf las ftf; do
  for mechanism in proportional greedy tune; do
    for seed in $SEEDS; do
      timed default "scheduler.policy=$policy" "scheduler.mechanism=$mechanism" \
        "run.seed=$seed" || break 3
      cells=$((cells + 1))
      most_wall=$(larger "$most_wall" "$wall")
      most_cpu=$(larger "$most_cpu" "$cpu")
      most_rss=$(larger "$most_rss" "$rss_mb")
    done
  done
done
name="policy figure, slowest of $((9 * $(wc -w <<<"$SEEDS"))) runs"
if [ "$cells" -eq $((9 * $(wc -w <<<"$SEEDS"))) ]; then
  wall=$most_wall cpu=$most_cpu rss_mb=$most_rss
  row "$name" - 5 -
else
  failed "$name"
fi

name="a million jobs on 16,384 GPUs, TUNE"
if [ "$MILLION" != 0 ]; then
  if timed default "cluster.servers[0].count=2048" workload.generator.jobs_per_hour=1100 \
    workload.generator.num_jobs=1000000 workload.generator.multi_gpu=true \
    scheduler.mechanism=tune run.measure_first_job=0 run.measure_last_job=999999; then
    row "$name" 60 - 1000
  else
    failed "$name"
  fi
fi
exit "$missed"
