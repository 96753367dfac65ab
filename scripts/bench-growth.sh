#!/usr/bin/env bash
# Growth curves of an emulated run: wall time, CPU time and peak memory against the number of jobs
# and against the number of GPUs, for GPU-proportional and TUNE placement (FIFO), with the fitted
# exponent of each curve (least squares on log-log: cost ~ size^k).
#
# The workload is Synergy's generator with the multi-GPU mix (70/10/15/5% of 1/2/4/8 GPUs) at
# GPUS/40 jobs an hour: a load of about 0.8 (a job asks for 31.9 GPU-hours on average), so the
# queue stays bounded and a curve shows what the engine costs, not a backlog growing without end.
# Every job is measured; a run ends when the last one finishes.
#   jobs axis: 512 GPUs (64 servers x 8), 10 K to 1 M jobs
#   GPUs axis: 30 K jobs, 128 to 16,384 GPUs
# A point that uses more than LIMIT seconds of CPU is stopped and the larger points of its curve
# are skipped (they would take longer still); the table says so. The limit is on CPU time, not
# wall time, so that a busy machine slows the script down but does not change where it stops.
#
# Usage: scripts/bench-growth.sh [jobs|gpus|both]   (default both)
# Environment: BUILD (default build/), TROUPE (the binary; default $BUILD/apps/troupe),
#   LIMIT (CPU seconds per point, default 300), MECHANISMS (default "proportional tune"),
#   JOBS_POINTS, GPU_POINTS (override the sizes), AXIS_GPUS (512), AXIS_JOBS (30000).
# Prints one line per point as it goes, then the tables. Needs GNU time (/usr/bin/time).
set -uo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
troupe=${TROUPE:-$BUILD/apps/troupe}
LIMIT=${LIMIT:-300}
MECHANISMS=${MECHANISMS:-"proportional tune"}
JOBS_POINTS=${JOBS_POINTS:-"10000 30000 100000 300000 1000000"}
GPU_POINTS=${GPU_POINTS:-"128 512 2048 8192 16384"}
AXIS_GPUS=${AXIS_GPUS:-512}
AXIS_JOBS=${AXIS_JOBS:-30000}
axes=${1:-both}
case "$axes" in
  jobs | gpus | both) ;;
  *) echo "bench-growth.sh: unknown axis '$axes' (jobs, gpus or both)" >&2; exit 2 ;;
esac
if [ ! -x "$troupe" ]; then echo "bench-growth.sh: $troupe not built" >&2; exit 2; fi
if [ ! -x /usr/bin/time ]; then echo "bench-growth.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results="$work/results.txt"  # axis mechanism size wall_s cpu_s rss_mb status
: >"$results"

# Runs one point; appends its line to $results. Returns 1 if it was stopped at LIMIT.
run_point() {
  local axis=$1 mechanism=$2 gpus=$3 jobs=$4 size=$5
  local servers=$((gpus / 8)) rate
  rate=$(awk -v g="$gpus" 'BEGIN { printf "%.4f", g / 40 }')
  sed "s/count: 16/count: $servers/" configs/default.textproto >"$work/config.textproto"
  rm -rf "$work/out"
  (
    ulimit -t "$LIMIT"
    exec /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "$troupe" run "$work/config.textproto" --quiet --out "$work/out" \
    --set scheduler.mechanism="$mechanism" --set workload.generator.multi_gpu=true \
    --set workload.generator.jobs_per_hour="$rate" --set workload.generator.num_jobs="$jobs" \
    --set run.measure_first_job=0 --set run.measure_last_job=$((jobs - 1)) >/dev/null 2>"$work/err"
  )
  local rc=$? status=ok
  # GNU time reports a killed command as "Command terminated by signal N" on a line of its own.
  if grep -q "terminated by signal" "$work/time.txt"; then
    status="stopped at ${LIMIT} s CPU"
  elif [ $rc -ne 0 ]; then
    status="failed ($(tail -1 "$work/err"))"
  fi
  read -r wall user sys rss_kb < <(tail -1 "$work/time.txt")
  local cpu rss_mb
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  rss_mb=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')
  echo "$axis $mechanism $size $wall $cpu $rss_mb $status" >>"$results"
  printf '%-5s %-13s %8s GPUs %8s jobs  wall %8s s  cpu %8s s  rss %8s MB  %s\n' \
    "$axis" "$mechanism" "$gpus" "$jobs" "$wall" "$cpu" "$rss_mb" "$status"
  [ "$status" = ok ]
}

for mechanism in $MECHANISMS; do
  if [ "$axes" != gpus ]; then
    for jobs in $JOBS_POINTS; do
      run_point jobs "$mechanism" "$AXIS_GPUS" "$jobs" "$jobs" || break
    done
  fi
  if [ "$axes" != jobs ]; then
    for gpus in $GPU_POINTS; do
      run_point gpus "$mechanism" "$gpus" "$AXIS_JOBS" "$gpus" || break
    done
  fi
done

# Least-squares slope of log(y) on log(x) over the finished points of one curve.
exponent() {
  awk -v axis="$1" -v mech="$2" -v col="$3" '
    $1 == axis && $2 == mech && $7 == "ok" { x = log($3); y = log($col); n++; sx += x; sy += y;
      sxx += x * x; sxy += x * y }
    END { if (n < 2) { print "-"; exit } d = n * sxx - sx * sx
          printf "%.2f", (n * sxy - sx * sy) / d }' "$results"
}

echo
for axis in jobs gpus; do
  [ "$axes" != both ] && [ "$axes" != "$axis" ] && continue
  if [ "$axis" = jobs ]; then
    echo "Jobs axis: $AXIS_GPUS GPUs, GPUS/40 jobs/h, multi-GPU mix, FIFO"
    echo "| mechanism | jobs | wall s | CPU s | max RSS MB | |"
  else
    echo "GPUs axis: $AXIS_JOBS jobs, GPUS/40 jobs/h, multi-GPU mix, FIFO"
    echo "| mechanism | GPUs | wall s | CPU s | max RSS MB | |"
  fi
  echo "|---|---:|---:|---:|---:|---|"
  awk -v axis="$axis" '$1 == axis { status = $7; for (i = 8; i <= NF; i++) status = status " " $i
    printf "| %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6, status == "ok" ? "" : status }' \
    "$results"
  for mechanism in $MECHANISMS; do
    echo "exponent ($mechanism): wall $(exponent "$axis" "$mechanism" 4)," \
      "CPU $(exponent "$axis" "$mechanism" 5), RSS $(exponent "$axis" "$mechanism" 6)"
  done
  echo
done
