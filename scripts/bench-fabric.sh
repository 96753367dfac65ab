#!/usr/bin/env bash
# What a fabric costs a run: each experiment without and with its fabric, side by side, REPS times
# each (the two alternating), and the medians of summary.json's wall_s (the run itself), GNU
# time's elapsed seconds and CPU seconds (user + system: the process, records written included)
# and maximum resident set size, with the ratios fabric / no fabric. The pairs: the default experiment with the multi-GPU job mix
# (configs/synergy-128-multigpu.textproto) against it on a 4:1 fabric
# (configs/fabric-128-4to1.textproto); Philly on 512 GPUs (configs/philly-512.textproto) against
# it on its 4:1 fabric (configs/philly-512-fabric.textproto), in both traffic models. Under
# proportional placement the multi-GPU mix's jobs (1-8 GPUs) never leave an 8-GPU server, so its
# fabric carries nothing; the last pair runs the same mix on 32 servers of 4 GPUs (8 a rack, still
# four racks at 4:1), where every 8-GPU job spans two servers.
#
# Usage: scripts/bench-fabric.sh      Environment: TROUPE (default build/apps/troupe), REPS
#   (default 3). Writes only a temporary folder, removed at exit. Exit status 2 on a missing
#   binary or GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
troupe=${TROUPE:-build/apps/troupe}
reps=${REPS:-3}
if [ ! -x "$troupe" ]; then
  echo "bench-fabric.sh: $troupe not built (make build)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench-fabric.sh: needs GNU time (/usr/bin/time)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run: appends "wall_s elapsed_s cpu_s rss_kib crossing" to $work/$1.txt.
run_once() {
  local name=$1 config=$2
  shift 2
  rm -rf "$work/out"
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" \
    "$troupe" run "configs/$config.textproto" --out "$work/out" --quiet "$@" > /dev/null
  python3 - "$work/out/summary.json" "$work/time" >> "$work/$name.txt" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
elapsed, user, system, rss = open(sys.argv[2]).read().split()[-4:]
crossing = summary.get("network", {}).get("jobs_crossing", "-")
print(summary["wall_s"], elapsed, float(user) + float(system), rss, crossing)
PY
}

four_gpu_servers="--set cluster.servers[0].count=32 --set cluster.servers[0].gpus=4"
four_gpu_servers+=" --set cluster.servers[0].cpus=12 --set cluster.servers[0].memory_gb=250"
# name | baseline config | fabric config | arguments of both runs | of the fabric run only
pairs=(
  "multigpu-128|synergy-128-multigpu|fabric-128-4to1||"
  "philly-512-fluid|philly-512|philly-512-fabric||"
  "philly-512-phased|philly-512|philly-512-fabric||--set fabric.traffic=phased"
  "multigpu-128-4gpu|synergy-128-multigpu|fabric-128-4to1|$four_gpu_servers|--set fabric.servers_per_rack=8"
)
for ((rep = 0; rep < reps; ++rep)); do
  for pair in "${pairs[@]}"; do
    IFS='|' read -r name base fabric both extra <<< "$pair"
    # shellcheck disable=SC2086 # both and extra are lists of arguments
    run_once "$name-base" "$base" $both
    # shellcheck disable=SC2086
    run_once "$name-fabric" "$fabric" $both $extra
  done
done

python3 - "$work" "$reps" "${pairs[@]}" <<'PY'
import statistics, sys
work, reps, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
def medians(name):
    rows = [line.split() for line in open(f"{work}/{name}.txt")]
    return [statistics.median(float(r[i]) for r in rows) for i in range(4)], rows[0][4]
print(f"medians of {reps} runs each; wall = summary.json's wall_s; elapsed, CPU (user + system)"
      " and RSS = GNU time's")
cols = ("wall s", "elapsed s", "CPU s", "RSS MiB")
print("%-18s | %-33s | %-42s | %s" % ("", "without a fabric", "with the fabric", "ratios"))
print("%-18s | %7s %9s %6s %8s | %8s %7s %9s %6s %8s | %6s %9s %6s %6s" %
      (("run",) + cols + ("crossing",) + cols + ("wall", "elapsed", "CPU", "RSS")))
for pair in pairs:
    name = pair.split("|")[0]
    base, _ = medians(name + "-base")
    fabric, crossing = medians(name + "-fabric")
    ratios = [f / b for f, b in zip(fabric, base)]
    print("%-18s | %7.3f %9.2f %6.2f %8.1f | %8s %7.3f %9.2f %6.2f %8.1f | %6.2f %9.2f %6.2f %6.2f"
          % ((name, base[0], base[1], base[2], base[3] / 1024, crossing) +
             (fabric[0], fabric[1], fabric[2], fabric[3] / 1024) + tuple(ratios)))
PY
