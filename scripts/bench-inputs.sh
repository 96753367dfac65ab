#!/usr/bin/env bash
# How the trace readers scale with a trace's width: a CSV trace whose header has COLUMNS columns,
# and an Alibaba PAI trace of TASKS tasks naming TYPES distinct GPU types. Prints one table of
# wall seconds per input (`troupe run`, 100 jobs of each, --quiet), so that a reader that grows
# quadratically in columns or types shows at once.
#
# Usage: scripts/bench-inputs.sh      Environment: TROUPE (default build/apps/troupe),
#   COLUMNS_WIDE (default 100000: a header under the 1 MiB line limit), TASKS (default 1000000), TYPES (default 5000).
# Writes only a temporary folder, removed at exit. Exit status 2 on a missing binary.
set -euo pipefail
cd "$(dirname "$0")/.."
troupe=${TROUPE:-build/apps/troupe}
columns=${COLUMNS_WIDE:-100000}
tasks=${TASKS:-1000000}
types=${TYPES:-5000}
if [ ! -x "$troupe" ]; then
  echo "bench-inputs.sh: $troupe not built (make build)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$columns" "$tasks" "$types" <<'PY'
import sys
work, columns, tasks, types = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with open(f"{work}/wide.csv", "w") as f:
    extra = [f"c{i}" for i in range(columns - 5)]
    f.write(",".join(["job_id", "model", "arrival_s", "duration_s", "gpus"] + extra) + "\n")
    blanks = "," * len(extra)
    for j in range(100):
        f.write(f"{j},res18,{j * 60},3600,1{blanks}\n")
with open(f"{work}/pai.csv", "w") as f:
    f.write("job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,"
            "gpu_type\n")
    for j in range(tasks):
        f.write(f"j{j},worker,1.0,Terminated,{1000 + j}.0,{2000 + j}.0,600.0,29.3,100.0,"
                f"T{j % types}\n")
PY
cluster='cluster { servers { name: "s" count: 8 gpus: 8 cpus: 24 memory_gb: 500 } }'
printf '%s\nworkload { trace_file: "%s/wide.csv" max_jobs: 100 }\n' "$cluster" "$work" \
  > "$work/wide.textproto"
printf '%s\nworkload { trace_file: "%s/pai.csv" trace_format: alibaba_pai max_jobs: 100 }\n' \
  "$cluster" "$work" > "$work/pai.textproto"

printf '%-46s %8s\n' "input" "wall s"
for input in wide pai; do
  case $input in
    wide) what="CSV trace, $columns-column header" ;;
    pai) what="PAI trace, $tasks tasks, $types GPU types" ;;
  esac
  start=$EPOCHREALTIME
  "$troupe" run "$work/$input.textproto" --out "$work/out-$input" --quiet > /dev/null
  end=$EPOCHREALTIME
  printf '%-46s %8s\n' "$what" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')"
done
