#!/usr/bin/env bash
# What each fault costs under each placement mechanism (docs/faults.md): one emulated run per
# (mechanism, fault) of Synergy's 128-GPU cluster with 1,000 multi-GPU jobs, every job measured,
# and a table of mean JCT, its change against the same mechanism without faults, wasted GPU-hours
# (leases lost to dead servers or jobs), failed jobs and the messages the network dropped.
#
#   scripts/fault-costs.sh [--jobs N] [--mechanisms proportional,greedy,tune,opt] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=1000
mechanisms=proportional,greedy,tune,opt
out=runs/fault-costs
while [[ $# -gt 0 ]]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --mechanisms) mechanisms="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "fault-costs.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
troupe=${TROUPE:-build/apps/troupe}
[[ -x "$troupe" ]] || { echo "fault-costs.sh: build first (make build), or set TROUPE" >&2; exit 2; }

# name|--fault flags (times in the busy middle of the run: 1,000 jobs at 9/h arrive over ~111 h)
faults=(
  "none|"
  "1 server down 6 h|--fault crash:server:3@200000+21600"
  "4 servers down for good|--fault crash:server:0-3@200000"
  "20 jobs crash, back in 1 h|--fault crash:job:310-329@172950+3600"
  "scheduler down 1 h|--fault crash:scheduler@200000+3600"
  "4 servers cut off 6 h|--fault partition:server:4-7@200000+21600,peer=scheduler"
  "10% of messages lost|--fault drop:*@0,p=0.1"
  "4 stragglers x0.5|--fault slow:server:8-11@0,x=0.5"
)

mkdir -p "$out"
printf '%-13s %-28s %10s %8s %12s %7s %9s\n' mechanism fault "JCT mean h" "dJCT" "wasted GPU-h" failed dropped
IFS=, read -ra mechs <<< "$mechanisms"
for mech in "${mechs[@]}"; do
  base=""
  for entry in "${faults[@]}"; do
    name="${entry%%|*}"
    flags="${entry#*|}"
    dir="$out/$mech-$(echo "$name" | tr -c 'a-zA-Z0-9' '-')"
    # shellcheck disable=SC2086
    "$troupe" run configs/synergy-128-multigpu.textproto --quiet --out "$dir" \
      --set scheduler.mechanism="$mech" --set workload.generator.num_jobs="$jobs" \
      --set run.measure_first_job=-1 --set run.measure_last_job=-1 $flags > /dev/null 2> "$dir.log"
    read -r jct wasted failed dropped < <(/usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["jct_mean_s"] / 3600, s["wasted_gpu_hours"], s["jobs_failed"], s["messages_dropped"])
' "$dir/summary.json")
    [[ -z "$base" ]] && base="$jct"
    delta=$(/usr/bin/python3 -c "print(f'{100 * ($jct / $base - 1):+.1f}%')")
    printf '%-13s %-28s %10.2f %8s %12.2f %7d %9d\n' "$mech" "$name" "$jct" "$delta" "$wasted" \
      "$failed" "$dropped"
  done
done
