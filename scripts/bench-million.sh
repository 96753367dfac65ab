#!/usr/bin/env bash
# The million-job stream: Synergy's generator with the multi-GPU mix, a million jobs at 1,100 an
# hour on 2,048 servers of 8 GPUs (16,384 GPUs), FIFO and TUNE, every job measured: the default
# experiment's config with four values changed. The stream is overloaded about 2.1x, so its
# backlog grows to about 400,000 waiting jobs before it drains (docs/performance.md, "The
# million-job stream, again"). Prints a Markdown table: wall and CPU seconds, max RSS (MiB), jobs,
# rounds, and the first 8 hex digits of the SHA-256 of jobs.csv and rounds.csv, so that two
# builds can be checked to write the same records. Target: 60 s and 1 GB.
#
# Usage: scripts/bench-million.sh
# Environment: BUILD (default build/), TROUPE (the binary; default $BUILD/apps/troupe), REPEAT
# (runs, default 1), TIMEOUT (seconds a run, default 600). Needs GNU time (/usr/bin/time).
set -uo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
troupe=${TROUPE:-$BUILD/apps/troupe}
REPEAT=${REPEAT:-1}
TIMEOUT=${TIMEOUT:-600}
if [ ! -x "$troupe" ] || [ ! -x /usr/bin/time ]; then
  echo "bench-million.sh: needs $troupe and /usr/bin/time" >&2
  exit 2
fi
if ! [[ "$REPEAT" =~ ^[1-9][0-9]?$ ]] || ! [[ "$TIMEOUT" =~ ^[1-9][0-9]{0,4}$ ]]; then
  echo "bench-million.sh: REPEAT must be 1-99 and TIMEOUT 1-99999 seconds" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
config="$work/million.textproto"
sed 's/count: 16/count: 2048/; s/jobs_per_hour: 9/jobs_per_hour: 1100/;
     s/num_jobs: 0/num_jobs: 1000000/; s/multi_gpu: false/multi_gpu: true/' \
  configs/default.textproto >"$config"
for want in "count: 2048" "jobs_per_hour: 1100" "num_jobs: 1000000" "multi_gpu: true"; do
  if ! grep -q "$want" "$config"; then
    echo "bench-million.sh: configs/default.textproto no longer has the field for '$want'" >&2
    exit 2
  fi
done

echo "| run | wall s | CPU s (user + sys) | max RSS MiB | jobs | rounds | jobs.csv | rounds.csv |"
echo "|---|---:|---:|---:|---:|---:|---|---|"
for run in $(seq "$REPEAT"); do
  rm -rf "$work/out"
  /usr/bin/time -f "%e %M %U %S" -o "$work/time" timeout "$TIMEOUT" "$troupe" run \
    "$config" --quiet --out "$work/out" --set scheduler.mechanism=tune \
    --set run.measure_first_job=0 --set run.measure_last_job=999999 >"$work/log" 2>&1
  status=$?
  if [ "$status" -eq 124 ]; then
    echo "| $run | did not finish in ${TIMEOUT} s | | | | | | |"
    continue
  elif [ "$status" -ne 0 ]; then
    echo "bench-million.sh: troupe exited with status $status:" >&2
    tail -5 "$work/log" >&2
    exit 1
  fi
  read -r wall kb user sys <"$work/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  mb=$(awk -v k="$kb" 'BEGIN { printf "%.0f", k / 1024 }')
  jobs=$(($(wc -l <"$work/out/jobs.csv") - 1))
  rounds=$(($(wc -l <"$work/out/rounds.csv") - 1))
  jobs_sha=$(sha256sum "$work/out/jobs.csv" | cut -c1-8)
  rounds_sha=$(sha256sum "$work/out/rounds.csv" | cut -c1-8)
  echo "| $run | $wall | $cpu | $mb | $jobs | $rounds | $jobs_sha | $rounds_sha |"
done
