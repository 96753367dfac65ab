#!/usr/bin/env bash
# Deep-queue benchmark of the cluster scheduler: times whole experiments whose queues grow long
# (the policies of Synergy's policy figure, multi-GPU overload, no starvation guard, a million
# jobs on 16,384 GPUs) beside the default experiment and the Philly replay. Each run is repeated
# and the fastest kept (the machine may be shared: CPU time, user + system, moves less than wall
# time under other load); memory is the largest maximum resident set size of the repeats. Prints a
# Markdown table: run, wall seconds and CPU seconds (each the minimum), max RSS (MB), rounds,
# longest queue.
#
# Usage: scripts/bench-queues.sh [NAME_FILTER]    (e.g. `million`: that stream alone, ~1 min a run)
# Environment: BUILD (default build/), TROUPE (the binary; default $BUILD/apps/troupe),
# REPEAT (default 3), TIMEOUT (seconds per run, default 900). Needs GNU time (/usr/bin/time).
# The Philly replay needs data/philly.csv and is skipped without it.
set -uo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
troupe=${TROUPE:-$BUILD/apps/troupe}
REPEAT=${REPEAT:-3}
TIMEOUT=${TIMEOUT:-900}
filter=${1:-}
if [ ! -x "$troupe" ] || [ ! -x /usr/bin/time ]; then
  echo "bench-queues.sh: needs $troupe and /usr/bin/time" >&2
  exit 2
fi

MG="workload.generator.multi_gpu=true run.measure_first_job=1000 run.measure_last_job=1199"
# Synergy's generator with the multi-GPU mix, a million jobs at 1,100 an hour on 2,048 servers of 8
# GPUs, TUNE, every job measured: overloaded about 2.1x, its backlog grows to about 400,000 waiting
# jobs before it drains (docs/performance.md, "The million-job stream"). Target: 60 s, 1 GB.
MILLION="cluster.servers[0].count=2048 workload.generator.jobs_per_hour=1100"
MILLION+=" workload.generator.num_jobs=1000000 workload.generator.multi_gpu=true"
MILLION+=" scheduler.mechanism=tune run.measure_first_job=0 run.measure_last_job=999999"
# name | config | --set fields
read -r -d '' RUNS <<EOF
default|default|
las-tune|default|scheduler.policy=las scheduler.mechanism=tune
srtf-proportional|default|scheduler.policy=srtf scheduler.mechanism=proportional
las-greedy|default|scheduler.policy=las scheduler.mechanism=greedy
ftf-tune|default|scheduler.policy=ftf scheduler.mechanism=tune
multi-las-proportional-8e6s|default|$MG scheduler.policy=las run.deadline_s=8000000
no-guard-las-tune-2e7s|default|scheduler.policy=las scheduler.mechanism=tune scheduler.starvation_s=0 run.deadline_s=20000000
philly|philly-512|
million-tune|default|$MILLION
EOF

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| run | wall s (min of $REPEAT) | CPU s (min of $REPEAT) | max RSS MB | rounds | longest queue |"
echo "|---|---:|---:|---:|---:|---:|"
while IFS='|' read -r name config sets; do
  [ -z "$name" ] && continue
  if [ -n "$filter" ] && ! grep -qE "$filter" <<<"$name"; then continue; fi
  if [ "$config" = philly-512 ] && [ ! -f data/philly.csv ]; then continue; fi
  args=()
  read -r -a fields <<<"$sets"  # split on blanks, no glob: a field may name an entry, [0]
  for s in "${fields[@]}"; do args+=(--set "$s"); done
  best="" cpu="" rss=0 status=ok
  for _ in $(seq "$REPEAT"); do
    rm -rf "$work/out"
    /usr/bin/time -f "%e %M %U %S" -o "$work/time" timeout "$TIMEOUT" "$troupe" run \
      "configs/$config.textproto" --quiet --out "$work/out" "${args[@]}" >/dev/null 2>&1
    code=$?
    if [ "$code" -ne 0 ]; then
      status="did not finish in ${TIMEOUT} s"
      [ "$code" -ne 124 ] && status="failed (exit status $code)"
      break
    fi
    read -r wall kb user sys <"$work/time"
    best=$(awk -v a="$best" -v b="$wall" 'BEGIN { print (a == "" || b < a) ? b : a }')
    cpu=$(awk -v a="$cpu" -v b="$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
      'BEGIN { print (a == "" || b < a) ? b : a }')
    rss=$(awk -v a="$rss" -v b="$kb" 'BEGIN { print (b > a) ? b : a }')
  done
  if [ "$status" != ok ]; then
    echo "| $name | $status | | | | |"
    continue
  fi
  rounds=$(($(wc -l <"$work/out/rounds.csv") - 1))
  longest=$(awk -F, 'NR > 1 && $8 > m { m = $8 } END { print m + 0 }' "$work/out/rounds.csv")
  echo "| $name | $best | $cpu | $(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }') | $rounds | $longest |"
done <<<"$RUNS"
