#!/usr/bin/env bash
# Reproduces Synergy's published simulation results with troupe and prints them next to
# the paper's figures (docs/synergy.md). Writes one CSV per figure under OUT (default
# runs/reproduce-synergy). Usage: scripts/reproduce-synergy.sh [--quick] [--policies]
#   --quick: 2 seeds and a coarser load sweep (a few minutes); default 5 seeds.
#   --policies: also FIFO/SRTF/LAS/FTF at 9 jobs/h, proportional, GREEDY and TUNE (12 cells x the
#   seeds, 1-4 s of CPU a run; scripts/bench-policy-figure.sh times each cell and prints the gains).
# Each figure's sweep shows its own progress line (done/total, rate, time left) on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-runs/reproduce-synergy}
TROUPE="$BUILD/apps/troupe"
SEEDS=1-5
LOADS=1,2,3,4,5,6,7,8,9
# The multi-GPU mix holds 1.9 GPUs a job: 128 GPUs saturate near 4 jobs/h.
LOADS_MULTI=1,2,3,4,5
MECHANISMS=${MECHANISMS:-proportional,greedy,tune,opt}
POLICIES=no
for arg in "$@"; do
  case $arg in
    --quick) SEEDS=1-2; LOADS=3,6,9; LOADS_MULTI=2,4 ;;
    --policies) POLICIES=yes ;;
    *) echo "usage: $0 [--quick] [--policies]" >&2; exit 2 ;;
  esac
done
FIGURES=3
[ "$POLICIES" = yes ] && FIGURES=4
[ -x "$TROUPE" ] || make build BUILD="$BUILD"
mkdir -p "$OUT"

# mean of column `col` of sweep.csv per value of column 1 (the first swept field)
mean_by_first() {
  awk -F, -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    { sum[$1] += $c; n[$1]++; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
    END { for (i = 1; i <= k; i++) printf "%s %.3f\n", order[i], sum[order[i]] / n[order[i]] / 3600 }' "$1"
}

echo "== [1/$FIGURES] Figure: FIFO, 9 jobs/h, 128 GPUs, single-GPU, split (20,70,10): mechanisms, seeds $SEEDS"
"$TROUPE" sweep configs/default.textproto --over "scheduler.mechanism=$MECHANISMS" \
  --seeds "$SEEDS" --out "$OUT/mechanisms" > "$OUT/mechanisms.txt"
cat "$OUT/mechanisms.txt"
echo
printf '%-14s %12s %12s %12s %10s\n' mechanism "troupe h" "paper h" "Synergy sim h" "troupe/ref"
mean_by_first "$OUT/mechanisms/sweep.csv" jct_mean_s | while read -r mech mean; do
  case $mech in
    proportional) paper=81; sim=81.09 ;;
    greedy) paper=-; sim=24.98 ;;
    tune) paper=22; sim=21.88 ;;
    opt) paper=20; sim=- ;;
    *) paper=-; sim=- ;;
  esac
  ref=$sim; [ "$ref" = "-" ] && ref=$paper
  ratio=$(awk -v a="$mean" -v b="$ref" 'BEGIN { if (b == "-") print "-"; else printf "%.3f", a / b }')
  printf '%-14s %12.2f %12s %12s %10s\n' "$mech" "$mean" "$paper" "$sim" "$ratio"
done
cp "$OUT/mechanisms/sweep.csv" "$OUT/fig-mechanisms.csv"

echo
echo "== [2/$FIGURES] Figure: load 1-9 jobs/h, FIFO, proportional vs TUNE, 128 GPUs, single-GPU"
"$TROUPE" sweep configs/default.textproto --over "workload.generator.jobs_per_hour=$LOADS" \
  --over scheduler.mechanism=proportional,tune --seeds "$SEEDS" --out "$OUT/load-single" \
  | sed -n '/mean over seeds/,$p'
cp "$OUT/load-single/sweep.csv" "$OUT/fig-load-single-gpu.csv"

echo
echo "== [3/$FIGURES] Figure: load 1-5 jobs/h, FIFO, proportional vs TUNE, 128 GPUs, multi-GPU mix"
"$TROUPE" sweep configs/synergy-128-multigpu.textproto \
  --over "workload.generator.jobs_per_hour=$LOADS_MULTI" --over scheduler.mechanism=proportional,tune \
  --seeds "$SEEDS" --out "$OUT/load-multi" | sed -n '/mean over seeds/,$p'
cp "$OUT/load-multi/sweep.csv" "$OUT/fig-load-multi-gpu.csv"

if [ "$POLICIES" = yes ]; then
echo
echo "== [4/$FIGURES] Figure: policies at 9 jobs/h, 128 GPUs, proportional, GREEDY and TUNE"
"$TROUPE" sweep configs/default.textproto --over scheduler.policy=fifo,srtf,las,ftf \
  --over scheduler.mechanism=proportional,greedy,tune --seeds "$SEEDS" --out "$OUT/policies" \
  | sed -n '/mean over seeds/,$p'
cp "$OUT/policies/sweep.csv" "$OUT/fig-policies.csv"
fi
echo
echo "CSVs: $OUT/fig-*.csv"
