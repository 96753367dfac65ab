#!/usr/bin/env bash
# Parameter-server examples/s with the shards in 1, 2 and 4 `troupe node` processes on loopback
# against the same number of nodes in one process (docs/performance.md, docs/paramserver.md
# "Across processes"). Every run is real mode at run.time_scale 1000, so the modelled stage times
# (about 2 ms a batch) pace almost nothing and the wall clock measures the arithmetic, SSD-PS I/O
# and the messages; the AUC is printed too (it must not depend on where the shards live). A
# shard in another process always writes its updates through to SSD-PS (a process may die), so
# a third variant runs one process with write-through too (a crash planned after the run's end).
# The fastest of REPEAT runs of each is kept (the machine may be shared).
#
# Usage: scripts/bench-ps-processes.sh [CONFIG] [--set ...]   (default configs/hps_ctr.textproto)
# Environment: BUILD (default build/), TROUPE (the binary), NODES (default "1 2 4"), REPEAT
# (default 1).
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
troupe=${TROUPE:-$BUILD/apps/troupe}
NODES=${NODES:-"1 2 4"}
REPEAT=${REPEAT:-1}
config=${1:-configs/hps_ctr.textproto}
shift || true
if [ ! -x "$troupe" ]; then
  echo "bench-ps-processes.sh: needs $troupe (build it first)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/troupe-ps-processes.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

max_nodes=0
for n in $NODES; do [ "$n" -gt "$max_nodes" ] && max_nodes=$n; done
addresses=()
for ((i = 0; i < max_nodes; i++)); do
  "$troupe" node --listen 127.0.0.1:0 >"$work/node-$i.out" 2>"$work/node-$i.err" &
  pids+=($!)
  for _ in $(seq 200); do
    grep -q "listening on" "$work/node-$i.out" 2>/dev/null && break
    sleep 0.05
  done
  addresses+=("$(sed -n 's/^troupe node listening on //p' "$work/node-$i.out" | head -1)")
done

# run NAME CONFIG_FILE ARGS...: the fastest of REPEAT runs; prints "wall_s examples/s auc".
run() {
  local name=$1 file=$2
  shift 2
  local best=""
  for ((r = 0; r < REPEAT; r++)); do
    local out="$work/out-$name-$r"
    "$troupe" run "$file" --quiet --set run.mode=real --set run.time_scale=1000 \
      --set run.out_dir="$out" "$@" >/dev/null
    local line
    line=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(s["wall_s"], s["examples_per_s_wall"], s["auc"])' "$out/summary.json")
    if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN{exit !(a<b)}'; then
      best=$line
    fi
  done
  echo "$best"
}

echo "| nodes | shards live in | wall s | examples/s (wall) | vs one process | AUC |"
echo "|---|---|---|---|---|---|"
for n in $NODES; do
  local_line=$(run "local-$n" "$config" --set paramserver.nodes="$n" "$@")
  durable="$work/durable-$n.textproto"
  { cat "$config"; echo 'faults { fault { kind: crash target: "ps:0" at_s: 1e9 duration_s: 1 } }'; } \
    >"$durable"
  durable_line=$(run "durable-$n" "$durable" --set paramserver.nodes="$n" "$@")
  remote="$work/remote-$n.textproto"
  hosts=""
  for ((i = 0; i < n; i++)); do hosts+=" hosts: \"${addresses[$i]}\""; done
  python3 - "$config" "$remote" "$hosts" "$work/ssd-$n" <<'PY'
import sys
text = open(sys.argv[1]).read()
at = text.index("paramserver {") + len("paramserver {")
open(sys.argv[2], "w").write(text[:at] + "\n " + sys.argv[3] + ' ssd_dir: "' + sys.argv[4] + '"\n' + text[at:])
PY
  remote_line=$(run "remote-$n" "$remote" --set paramserver.nodes="$n" "$@")
  base=$(echo "$local_line" | cut -d' ' -f2)
  for pair in "one process:$local_line" "one process, write-through:$durable_line" \
    "$n node processes:$remote_line"; do
    label=${pair%%:*}
    read -r wall rate auc <<<"${pair#*:}"
    printf "| %s | %s | %.2f | %.0f | %.2fx | %.6f |\n" "$n" "$label" "$wall" "$rate" \
      "$(awk -v a="$rate" -v b="$base" 'BEGIN{print a/b}')" "$auc"
  done
done
