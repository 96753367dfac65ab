#!/usr/bin/env bash
# What a remote lease costs a job's steps: the same one-job real-mode run with the cpu compute
# backend, its single 1-GPU server in the run's process ("local") or on a `troupe node` on
# loopback ("remote"), REPS times each. Prints, per run, the rounds the job needed, the wall
# seconds per round, and the steps a lease's worker ran in its 40 ms (nodes.csv).
#   scripts/bench-remote-lease.sh [REPS] [TROUPE]
set -euo pipefail
reps=${1:-3}
troupe=${2:-build/apps/troupe}
work=$(mktemp -d)
trap 'kill "${node_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
printf 'job_id,model,arrival_s,iterations,gpus\n0,res50,0,2500000,1\n' > "$work/trace.csv"
cat > "$work/local.textproto" <<CFG
cluster { servers { count: 1 gpus: 1 cpus: 3 memory_gb: 62.5 } }
workload { trace_file: "$work/trace.csv" }
scheduler { round_s: 10000000 }
run { mode: real time_scale: 250000000 }
backends { compute: "cpu" scale: 1e-7 width: 64 gemms: 2 }
CFG
"$troupe" node --listen 127.0.0.1:0 > "$work/node.out" 2> "$work/node.err" &
node_pid=$!
for _ in $(seq 100); do grep -q listening "$work/node.out" && break; sleep 0.1; done
address=$(sed -n 's/troupe node listening on //p' "$work/node.out")
{ cat "$work/local.textproto"
  echo "placement { node: \"$address\" first_server: 0 last_server: 0 }"; } > "$work/remote.textproto"
for i in $(seq "$reps"); do
  for kind in local remote; do
    "$troupe" run "$work/$kind.textproto" --quiet --out "$work/$kind-$i" > /dev/null 2>&1
    python3 - "$kind" "$work/$kind-$i" <<'PY'
import csv, json, sys
kind, run = sys.argv[1], sys.argv[2]
s = json.load(open(run + "/summary.json"))
rows = list(csv.DictReader(open(run + "/nodes.csv")))
parts = sum(int(r["parts"]) for r in rows)
steps = sum(int(r["steps"]) for r in rows)
print(f"{kind:6} rounds {s['rounds']:4}  wall/round {1000 * s['wall_s'] / s['rounds']:.2f} ms"
      f"  steps/lease {steps / parts:.0f}  ran on {rows[0]['node']}")
PY
  done
done
