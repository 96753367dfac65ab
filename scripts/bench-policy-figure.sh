#!/usr/bin/env bash
# Synergy's policy figure on troupe's default experiment (128 GPUs, 9 jobs/h, jobs 4000-4999
# measured): every policy x mechanism cell over the seeds, each run timed on its own. Prints a
# Markdown table per cell: mean JCT over the seeds (hours) with the lowest and highest seed, the
# largest CPU time (user + system) and maximum RSS of any seed's run, and each mechanism's gain
# over GPU-proportional under the same policy (ratio of the means, with the range of the per-seed
# ratios). CPU time is reported because wall time on a shared machine moves with the load.
#
# Usage: scripts/bench-policy-figure.sh [OUT]      (OUT default runs/policy-figure; must not exist)
# Environment:
#   POLICIES    default "srtf las ftf"; ftf:synergy is FTF with scheduler.ftf_order=synergy
#   MECHANISMS  default "proportional greedy tune" (proportional, if present, is the baseline)
#   SEEDS       default "1 2 3 4 5"
#   CPU_LIMIT   CPU seconds a run may use before it is stopped (ulimit -t), default 300
#   JOBS        runs in parallel, default 1 (CPU time per run does not depend on it)
#   BUILD, TROUPE  the build folder (default build) and binary (default $BUILD/apps/troupe)
# Needs GNU time (/usr/bin/time). A run stopped at CPU_LIMIT shows in its cell as "stopped", one
# that exits with an error as "failed" (its OUT/<run>.log says why).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export TROUPE=${TROUPE:-$BUILD/apps/troupe}
export CPU_LIMIT=${CPU_LIMIT:-300}
POLICIES=${POLICIES:-srtf las ftf}
MECHANISMS=${MECHANISMS:-proportional greedy tune}
SEEDS=${SEEDS:-1 2 3 4 5}
JOBS=${JOBS:-1}
OUT=${1:-runs/policy-figure}
if [ ! -x "$TROUPE" ] || [ ! -x /usr/bin/time ]; then
  echo "bench-policy-figure.sh: needs $TROUPE and /usr/bin/time" >&2
  exit 2
fi
if [ -e "$OUT" ]; then
  echo "bench-policy-figure.sh: $OUT exists" >&2
  exit 2
fi
mkdir -p "$OUT"
export OUT

# One run: policy[:ftf_order] mechanism seed -> OUT/<cell>-s<seed>/ and one line of OUT/runs.csv.
run_one() {
  local policy=${1%%:*} order=${1#*:} mechanism=$2 seed=$3
  local sets=(--set "scheduler.policy=$policy" --set "scheduler.mechanism=$mechanism")
  [ "$order" != "$1" ] && sets+=(--set "scheduler.ftf_order=$order")
  local dir="$OUT/${1/:/-}-$mechanism-s$seed" status=ok jct=
  if ! (ulimit -t "$CPU_LIMIT" && /usr/bin/time -f "%U %S %M" -o "$dir.time" "$TROUPE" run \
      configs/default.textproto --quiet --seed "$seed" --out "$dir" "${sets[@]}" \
      >"$dir.log" 2>&1); then
    status=failed
    # ulimit -t sets the hard limit too: the kernel sends SIGKILL (9) there, SIGXCPU (24) below.
    grep -qE 'terminated by signal (9|24)$' "$dir.time" && status=stopped
  fi
  local user sys kb
  read -r user sys kb < <(grep -E '^[0-9.]+ [0-9.]+ [0-9]+$' "$dir.time")
  [ "$status" = ok ] && jct=$(sed -n 's/.*"jct_mean_s": \([0-9.]*\).*/\1/p' "$dir/summary.json")
  echo "$1,$mechanism,$seed,$status,$jct,$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }'),$kb" \
    >>"$OUT/runs.csv"
}
export -f run_one

for p in $POLICIES; do for m in $MECHANISMS; do for s in $SEEDS; do echo "$p $m $s"; done; done; done |
  xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _

# runs.csv: policy,mechanism,seed,status,jct_s,cpu_s,rss_kb
echo "| policy | mechanism | mean JCT h (min-max over seeds) | gain over proportional | max CPU s | max RSS MB |"
echo "|---|---|---|---|---:|---:|"
sort -t, -k1,1 -k2,2 -k3,3n "$OUT/runs.csv" | awk -F, -v policies="$POLICIES" -v mechs="$MECHANISMS" '
  { c = $1 SUBSEP $2; n[c]++; if ($6 > cpu[c]) cpu[c] = $6; if ($7 > rss[c]) rss[c] = $7
    if ($4 != "ok") { stopped[c]++; why[c] = $4; next }
    j = $5 / 3600; sum[c] += j; ok[c]++; jct[c, $3] = j
    if (!(c in lo) || j < lo[c]) lo[c] = j; if (!(c in hi) || j > hi[c]) hi[c] = j }
  END {
    np = split(policies, P, " "); nm = split(mechs, M, " ")
    for (i = 1; i <= np; i++) for (k = 1; k <= nm; k++) {
      c = P[i] SUBSEP M[k]; b = P[i] SUBSEP "proportional"
      if (stopped[c]) cell = sprintf("%s (%d of %d seeds)", why[c] == "stopped" ? \
          "stopped at the CPU limit" : "failed", stopped[c], n[c])
      else cell = sprintf("%.1f (%.1f-%.1f)", sum[c] / ok[c], lo[c], hi[c])
      gain = "-"
      if (M[k] != "proportional" && !stopped[c] && ok[b] && !stopped[b]) {
        rlo = ""; rhi = ""
        for (key in jct) { split(key, f, SUBSEP); if (f[1] SUBSEP f[2] != c) continue
          r = jct[b, f[3]] / jct[key]; if (rlo == "" || r < rlo) rlo = r; if (rhi == "" || r > rhi) rhi = r }
        gain = sprintf("%.2fx (%.2f-%.2f)", (sum[b] / ok[b]) / (sum[c] / ok[c]), rlo, rhi)
      }
      printf "| %s | %s | %s | %s | %.2f | %.0f |\n", P[i], M[k], cell, gain, cpu[c], rss[c] / 1024
    }
  }'
echo "Per run: $OUT/runs.csv"
