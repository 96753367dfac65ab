#!/usr/bin/env bash
# Reproduces the OASiS comparison of docs/oasis.md ("Results"): total utility of OASiS vs FIFO,
# DRF, RRH and Dorm on 50 worker servers + 50 PS machines over T = 300 one-hour slots with
# diurnal arrivals, 5 seeds; OASiS under L and U misestimated by 0.5x and 2x; OASiS vs the exact
# offline optimum (GLPK) on 20 tiny and 10 medium instances.
# Usage: scripts/reproduce-oasis.sh [--quick]
#   --quick: 2 seeds, 5 tiny and 2 medium instances, no actor runs (under a minute).
#   OASIS_JOBS_PER_SLOT=1.5 (environment): another mean arrival rate (default 2.5).
# The tables come from the slot simulator (runner/oasis/oasis_experiment.hpp, run through the unit
# test binary's disabled OasisReproduce test); then every policy and seed is run again as an
# emulated actor run (`troupe run configs/oasis.textproto`), whose total utility must be the same.
# Writes OUT (default runs/reproduce-oasis): report.md, actor-runs.csv and one run folder a run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-runs/reproduce-oasis}
SEEDS=5
TINY=20
MEDIUM=10
ACTORS=1
if [ "${1:-}" = "--quick" ]; then SEEDS=2; TINY=5; MEDIUM=2; ACTORS=0; fi
if [ ! -x "$BUILD/apps/troupe" ] || [ ! -x "$BUILD/tests/troupe_unit_tests" ]; then
  cmake --build "$BUILD" --target troupe troupe_unit_tests
fi
mkdir -p "$OUT"

# A progress line on stderr after each actor run: done/total, time spent, time left.
progress() {  # DONE TOTAL START_S
  local spent=$(( $(date +%s) - $3 ))
  local left=$(( $1 > 0 ? spent * ($2 - $1) / $1 : 0 ))
  printf '[reproduce-oasis] %d/%d actor runs, %d s, about %d s left\n' "$1" "$2" "$spent" "$left" >&2
}

echo "== simulator: 5 policies x $SEEDS seeds, misestimation, $TINY tiny + $MEDIUM medium instances vs OPT"
OASIS_SEEDS=$SEEDS OASIS_TINY=$TINY OASIS_MEDIUM=$MEDIUM OASIS_REPORT="$OUT/report.md" \
  "$BUILD/tests/troupe_unit_tests" --gtest_also_run_disabled_tests \
  --gtest_filter='OasisReproduce.*' > "$OUT/simulator.log"
grep -v '^csv,' "$OUT/report.md"
[ "$ACTORS" = 1 ] || exit 0

echo
echo "== emulated actor runs (configs/oasis.textproto), total utility per policy and seed"
echo "policy,seed,total_utility,admitted,finished,late,messages,violations" > "$OUT/actor-runs.csv"
started=$(date +%s)
done_runs=0
for policy in oasis fifo drf rrh dorm; do
  for seed in $(seq 1 "$SEEDS"); do
    dir="$OUT/runs/$policy-$seed"
    "$BUILD/apps/troupe" run configs/oasis.textproto --quiet --seed "$seed" --out "$dir" \
      --set "oasis.policy=$policy" \
      --set "oasis.jobs_per_slot=${OASIS_JOBS_PER_SLOT:-2.5}" > /dev/null
    awk -v p="$policy" -v s="$seed" -F': ' '
      /"total_utility"/ { gsub(",", "", $2); u = $2 } /"admitted"/ { gsub(",", "", $2); a = $2 }
      /"finished"/ { gsub(",", "", $2); f = $2 } /"late"/ { gsub(",", "", $2); l = $2 }
      /"messages"/ { gsub(",", "", $2); m = $2 }
      /"violations"/ { gsub(",", "", $2); v = ($2 == "[]") ? 0 : 1 }
      END { printf "%s,%s,%s,%s,%s,%s,%s,%s\n", p, s, u, a, f, l, m, v }' "$dir/summary.json" \
      >> "$OUT/actor-runs.csv"
    done_runs=$((done_runs + 1))
    progress "$done_runs" $((5 * SEEDS)) "$started"
  done
done
awk -F, 'NR > 1 { sum[$1] += $3; n[$1]++; late[$1] += $6; bad[$1] += $8
    if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
  END { printf "%-10s %14s %6s %10s\n", "policy", "mean utility", "late", "violations"
    for (i = 1; i <= k; i++) printf "%-10s %14.1f %6d %10d\n", order[i], sum[order[i]] / n[order[i]],
      late[order[i]], bad[order[i]] }' "$OUT/actor-runs.csv"
