#!/usr/bin/env bash
# Replays one job sequence in Synergy's own simulator and in troupe, and compares them job for job.
#
#   scripts/compare-synergy.sh [options] SYNERGY_SIMULATOR_DIR
#   SYNERGY_SIM=... scripts/compare-synergy.sh [options]
#
# SYNERGY_SIMULATOR_DIR is the simulator/ folder of a checkout of
# https://github.com/msr-fiddle/synergy (not a package, so not part of CI). Options:
#   --policies "fifo srtf las ftf"   policies to run (default: all four)
#   --mechanisms "proportional greedy tune"   (default: all three; OPT needs a solver Synergy's
#                                    code gets from cvxpy, which is not run here)
#   --seed N        seed of Synergy's generator (default 7)
#   --jobs N        jobs in the sequence (default 300)
#   --servers N     servers of 8 GPUs, 24 CPUs, 500 GB (default 2: a small cluster that queues)
#   --first A --last B   measured jobs (default: all)
#   --jobs-per-hour X    (default 9)
#   --multi-gpu     Synergy's multi-GPU job mix (its generator as it is) instead of single-GPU jobs;
#                   troupe then reads the jobs as Synergy's simulator states them: the catalogue
#                   configs/models/synergy-simulator/ (scripts/synergy_sim_models.py says why)
#   --troupe PATH   the troupe binary (default build/apps/troupe)
#   --out DIR       where the trace, both results and the table go (default runs/compare-synergy)
#   --test-data DIR also write the sequence and Synergy's JCTs as test data: DIR/trace.csv and
#                   DIR/expected.csv (job_id, then one jct_s column per policy/mechanism run)
#
# For each policy x mechanism it prints: jobs agreeing (same JCT to 1 ms) out of the measured,
# the first job that differs, both mean JCTs (hours) and both wall times. FTF runs twice in
# troupe: in its default order (largest rho first, as Themis defines it) and with
# scheduler.ftf_order=synergy (smallest first, as Synergy's simulator sorts). GREEDY and TUNE run
# twice too: troupe's mechanism (the paper's rules) and as Synergy's simulator codes them
# (scheduler.mechanism_name greedy_synergy_sim / tune_synergy_sim, under LAS the _las ones).
#
# Synergy's simulator needs Debian's Python packages (no pip):
#   apt-get install python3-numpy python3-pandas python3-matplotlib python3-grpcio \
#                   python3-grpc-tools python3-psutil
# and runs on /usr/bin/python3 (3.11); scripts/synergy_driver.py supplies the rest.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY=${PYTHON:-/usr/bin/python3}
POLICIES="fifo srtf las ftf"
MECHANISMS="proportional greedy tune"
SEED=7 JOBS=300 SERVERS=2 FIRST=-1 LAST=-1 RATE=9
TROUPE="$ROOT/build/apps/troupe"
OUT="$ROOT/runs/compare-synergy"
SIM="${SYNERGY_SIM:-}"
TEST_DATA=""
MULTI=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --policies) POLICIES="$2"; shift 2 ;;
    --mechanisms) MECHANISMS="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --servers) SERVERS="$2"; shift 2 ;;
    --first) FIRST="$2"; shift 2 ;;
    --last) LAST="$2"; shift 2 ;;
    --jobs-per-hour) RATE="$2"; shift 2 ;;
    --troupe) TROUPE="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --test-data) TEST_DATA="$2"; shift 2 ;;
    --multi-gpu) MULTI=(--multi-gpu); shift ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    -*) echo "compare-synergy.sh: unknown option $1" >&2; exit 2 ;;
    *) SIM="$1"; shift ;;
  esac
done
if [[ -z "$SIM" || ! -f "$SIM/runner.py" ]]; then
  echo "compare-synergy.sh: give Synergy's simulator/ folder (argument or SYNERGY_SIM)" >&2
  exit 2
fi
[[ -x "$TROUPE" ]] || { echo "compare-synergy.sh: no troupe binary at $TROUPE" >&2; exit 2; }
if [[ "$FIRST" -lt 0 ]]; then FIRST=0; LAST=$((JOBS - 1)); fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
TRACE="$OUT/trace.csv"

"$PY" "$ROOT/scripts/synergy_driver.py" "$SIM" generate --seed "$SEED" --jobs "$JOBS" \
  --jobs-per-hour "$RATE" "${MULTI[@]}" "$TRACE" 2>/dev/null
TROUPE_TRACE="$TRACE" MODELS=""
if [[ ${#MULTI[@]} -gt 0 ]]; then
  TROUPE_TRACE="$OUT/trace-troupe.csv"
  "$PY" "$ROOT/scripts/synergy_sim_models.py" trace "$TRACE" "$TROUPE_TRACE"
  MODELS="models_dir: \"$ROOT/configs/models/synergy-simulator\""
fi
cat > "$OUT/config.textproto" <<EOF
# Replay of $TRACE: Synergy's cluster shape, $SERVERS servers.
cluster { servers { name: "synergy" count: $SERVERS gpus: 8 cpus: 24 memory_gb: 500 } }
workload { trace_file: "$TROUPE_TRACE" $MODELS }
scheduler { round_s: 300 }
run { mode: emulated seed: 1 measure_first_job: $FIRST measure_last_job: $LAST }
EOF

now() { date +%s.%N; }
TABLE="$OUT/table.md"
echo "| policy | mechanism | jobs agreeing | first differing job | Synergy mean JCT, h | troupe mean JCT, h | Synergy wall, s | troupe wall, s | wall ratio |" > "$TABLE"
echo "|---|---|---|---|---|---|---|---|---|" >> "$TABLE"
for policy in $POLICIES; do
  for mech in $MECHANISMS; do
    expect="$OUT/synergy-$policy-$mech.csv"
    t0=$(now)
    "$PY" "$ROOT/scripts/synergy_driver.py" "$SIM" run --policy "$policy" --mechanism "$mech" \
      --first "$FIRST" --last "$LAST" --servers "$SERVERS" "$TRACE" "$expect" 2>/dev/null
    synergy_s=$(echo "$(now) - $t0" | bc)
    orders=("")
    [[ "$policy" == ftf ]] && orders=(themis synergy)
    variants=("$mech")
    if [[ "$mech" == greedy || "$mech" == tune ]]; then
      if [[ "$policy" == las ]]; then variants+=("${mech}_synergy_sim_las")
      else variants+=("${mech}_synergy_sim"); fi
    fi
    for variant in "${variants[@]}"; do
    for order in "${orders[@]}"; do
      name="$policy" sets=(--set "scheduler.policy=$policy" --set "scheduler.mechanism_name=$variant")
      if [[ -n "$order" ]]; then name="$policy($order)"; sets+=(--set "scheduler.ftf_order=$order"); fi
      run="$OUT/troupe-$policy${order:+-$order}-$variant"
      t0=$(now)
      "$TROUPE" run --quiet --out "$run" "$OUT/config.textproto" "${sets[@]}" >/dev/null
      troupe_s=$(echo "$(now) - $t0" | bc)
      "$PY" - "$expect" "$run/jobs.csv" "$FIRST" "$LAST" "$name" "$variant" "$synergy_s" \
        "$troupe_s" >> "$TABLE" <<'PYEOF'
import csv, sys
expect, got, first, last, name, mech, ss, ts = sys.argv[1:]
first, last, ss, ts = int(first), int(last), float(ss), float(ts)
want = {int(r["job_id"]): float(r["jct_s"]) for r in csv.DictReader(open(expect))}
have = {int(r["job_id"]): float(r["jct_s"]) for r in csv.DictReader(open(got)) if r["jct_s"]}
ids = [j for j in range(first, last + 1)]
agree = [j for j in ids if j in want and j in have and abs(want[j] - have[j]) < 1e-3]
differ = [j for j in ids if j not in agree]
mean = lambda d: sum(d[j] for j in ids if j in d) / max(1, sum(1 for j in ids if j in d)) / 3600
first_diff = "—" if not differ else "%d (%s s / %s s)" % (
    differ[0], want.get(differ[0], "none"), have.get(differ[0], "none"))
print("| %s | %s | %d / %d | %s | %.2f | %.2f | %.1f | %.2f | %.0f× |" % (
    name, mech, len(agree), len(ids), first_diff, mean(want), mean(have), ss, ts, ss / ts))
PYEOF
      tail -1 "$TABLE"
    done
    done
  done
done
echo "table: $TABLE"

if [[ -n "$TEST_DATA" ]]; then
  mkdir -p "$TEST_DATA"
  { echo "# Synergy's generator, seed $SEED, $JOBS jobs at $RATE jobs/h${MULTI:+ (multi-GPU; models as configs/models/synergy-simulator names them)}, replayed on $SERVERS servers"
    grep -v '^#' "$TROUPE_TRACE"; } > "$TEST_DATA/trace.csv"
  "$PY" - "$OUT" "$TEST_DATA/expected.csv" $POLICIES -- $MECHANISMS <<'PYEOF'
import csv, sys
out, dest, *rest = sys.argv[1:]
cut = rest.index("--")
policies, mechanisms = rest[:cut], rest[cut + 1:]
cols, table = [], {}
for p in policies:
    for m in mechanisms:
        cols.append(p + "/" + m)
        for r in csv.DictReader(open("%s/synergy-%s-%s.csv" % (out, p, m))):
            table.setdefault(int(r["job_id"]), {})[cols[-1]] = r["jct_s"]
with open(dest, "w") as f:
    f.write(",".join(["job_id"] + cols) + "\n")
    for j in sorted(table):
        f.write(",".join([str(j)] + [table[j].get(c, "") for c in cols]) + "\n")
PYEOF
  echo "test data: $TEST_DATA"
fi
