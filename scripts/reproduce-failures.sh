#!/usr/bin/env bash
# Failures at scale (docs/failures.md): one 16,384-GPU job for 54 days under the llama3 failure
# preset (configs/llama3-54-days.textproto). Prints, per seed, the interruptions that hit the job
# (against Llama 3's 419 and the Poisson interval around it) and the effective training time under
# Young/Daly's checkpoint interval; then a sweep of fixed checkpoint intervals beside Young/Daly's.
#
#   scripts/reproduce-failures.sh [--seeds 1-5] [--intervals 300,450,650,900,1300] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=1-5
intervals=300,450,650,900,1300
out=runs/failures
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --intervals) intervals="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "reproduce-failures.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
troupe=${TROUPE:-build/apps/troupe}
[[ -x "$troupe" ]] || { echo "reproduce-failures.sh: build first, or set TROUPE" >&2; exit 2; }
config=configs/llama3-54-days.textproto
mkdir -p "$out"

# The runs' logs (a line per failure) go to files beside them.
"$troupe" sweep "$config" --seeds "$seeds" --quiet --out "$out/young-daly" \
  > "$out/young-daly.log" 2>&1
"$troupe" sweep "$config" --set faults.recovery.checkpoint=fixed_interval --seeds 1 --quiet \
  --over "faults.recovery.checkpoint_interval_s=$intervals" --out "$out/fixed" > "$out/fixed.log" 2>&1

python3 - "$out" <<'PY'
import csv, glob, json, math, os, sys
out = sys.argv[1]

def runs(folder):
    for d in sorted(glob.glob(os.path.join(folder, "*"))):
        if os.path.isfile(os.path.join(d, "summary.json")):
            yield d, json.load(open(os.path.join(d, "summary.json")))

def job(d):
    return next(csv.DictReader(open(os.path.join(d, "jobs.csv"))))

def row(name, d, s):
    r, j = s["recovery"], job(d)
    wall_h = 1296.0  # the job's 54 days: its productive time over them
    productive_h = float(j["held_s"]) * float(j["effective_ratio"]) / 3600
    print(f"{name:<26} {r['interruptions']:>13} {100 * r['effective_training_ratio']:>8.2f}% "
          f"{100 * productive_h / wall_h:>8.2f}% {r['lost_work_gpu_hours'] / 1e3:>8.1f} "
          f"{r['restart_gpu_hours'] / 1e3:>8.1f} {r['checkpoint_gpu_hours'] / 1e3:>8.1f} "
          f"{r['checkpoints']:>7}")

header = (f"{'run':<26} {'interruptions':>13} {'of held':>9} {'of 54 d':>9} {'lost k':>8} "
          f"{'restart k':>8} {'ckpt k':>8} {'ckpts':>7}")
lo, hi = 419 - 1.96 * math.sqrt(419), 419 + 1.96 * math.sqrt(419)
print(f"Young/Daly, by seed (Llama 3: 419; 95% Poisson interval {lo:.0f}-{hi:.0f}); GPU-hours in thousands")
print(header)
counts = []
for d, s in runs(os.path.join(out, "young-daly")):
    row(os.path.basename(d), d, s)
    counts.append(s["recovery"]["interruptions"])
if counts:
    print(f"mean interruptions {sum(counts) / len(counts):.1f} over {len(counts)} seeds")
print("\nFixed intervals (seed 1) beside Young/Daly's (seed 1 above)")
print(header)
for d, s in runs(os.path.join(out, "fixed")):
    row(os.path.basename(d).split("_seed")[0], d, s)
PY
