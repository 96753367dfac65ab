#!/usr/bin/env bash
# Gavel's LAS comparison (Narayanan et al., OSDI 2020): heterogeneity-aware against
# heterogeneity-agnostic max-min fairness on 36 K80 + 36 P100 + 36 V100 GPUs fed a continuous
# stream of single-GPU jobs, average JCT against the input job rate (docs/heterogeneity.md).
#
# Usage: scripts/reproduce-gavel.sh [OUT_DIR] [RATES] [SEEDS]
#   OUT_DIR  where the runs and the table go (default runs/gavel; must not hold earlier runs)
#   RATES    jobs per hour, space-separated (default "1 2 3 4")
#   SEEDS    space-separated (default "1")
# Environment: TROUPE (the binary; default build/apps/troupe).
# Prints one line per run as it ends and, last, the table (also OUT_DIR/gavel.csv).
set -euo pipefail

cd "$(dirname "$0")/.."
OUT=${1:-runs/gavel}
RATES=${2:-"1 2 3 4"}
SEEDS=${3:-"1"}
TROUPE=${TROUPE:-build/apps/troupe}
CONFIG=configs/gavel-hetero.textproto
MECHANISMS="gavel_las gavel_las_agnostic"

if [ -e "$OUT" ]; then
  echo "reproduce-gavel.sh: $OUT exists; give a new folder" >&2
  exit 2
fi
mkdir -p "$OUT"
csv="$OUT/gavel.csv"
echo "jobs_per_hour,mechanism,seed,jct_mean_h,jct_median_h,gpu_utilisation,wall_s" >"$csv"
for rate in $RATES; do
  for mechanism in $MECHANISMS; do
    for seed in $SEEDS; do
      run="$OUT/rate-$rate-$mechanism-seed-$seed"
      "$TROUPE" run "$CONFIG" --quiet --out "$run" \
        --set "workload.generator.jobs_per_hour=$rate" \
        --set "scheduler.mechanism_name=$mechanism" --set "run.seed=$seed" >/dev/null
      python3 - "$run/summary.json" "$rate" "$mechanism" "$seed" >>"$csv" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(",".join([sys.argv[2], sys.argv[3], sys.argv[4], "%.2f" % (s["jct_mean_s"] / 3600),
                "%.2f" % (s["jct_median_s"] / 3600), "%.3f" % s["gpu_utilisation"],
                "%.1f" % s["wall_s"]]))
PY
      echo "done: $(tail -n 1 "$csv")"
    done
  done
done
python3 - "$csv" <<'PY'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
jct = defaultdict(list)
for r in rows:
    jct[(float(r["jobs_per_hour"]), r["mechanism"])].append(float(r["jct_mean_h"]))
rates = sorted({k[0] for k in jct})
print("| jobs/h | LAS, agnostic (h) | LAS, heterogeneity-aware (h) | agnostic / aware |")
print("|---|---|---|---|")
for rate in rates:
    a = sum(jct[(rate, "gavel_las_agnostic")]) / len(jct[(rate, "gavel_las_agnostic")])
    h = sum(jct[(rate, "gavel_las")]) / len(jct[(rate, "gavel_las")])
    print("| %g | %.1f | %.1f | %.2fx |" % (rate, a, h, a / h))
PY
