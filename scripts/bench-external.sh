#!/usr/bin/env bash
# What the external scheduler costs per round (docs/performance.md, "External scheduler"): the
# default experiment (9,370 rounds) with the built-in FIFO + proportional, then with
# scripts/external_fifo_proportional.py over loopback, REPS times each; prints each run's wall
# seconds, the medians, the overhead per round in microseconds (wall, and CPU of both processes:
# less sensitive to other load on the machine), and checks that both runs wrote the same jobs.csv
# and rounds.csv.
#   scripts/bench-external.sh [CONFIG] [REPS]     (BUILD=build by default)
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-configs/default.textproto}
reps=${2:-3}
troupe=${BUILD:-build}/apps/troupe
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "bench-external secret" > "$work/secret"

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
now() { date +%s.%N; }

for i in $(seq "$reps"); do
  start=$(now)
  /usr/bin/time -f "%U + %S" -a -o "$work/builtin.cpu" \
    "$troupe" run "$config" --quiet --out "$work/builtin-$i" > /dev/null
  echo "$(now) - $start" | bc >> "$work/builtin.s"
done
for i in $(seq "$reps"); do
  rm -f "$work/port"
  start=$(now)
  /usr/bin/time -f "%U + %S" -a -o "$work/troupe.cpu" \
    "$troupe" run "$config" --quiet --out "$work/external-$i" \
    --set scheduler.mechanism_name=external \
    --set external_scheduler.secret_file="$work/secret" \
    --set external_scheduler.port_file="$work/port" > /dev/null &
  run=$!
  /usr/bin/time -f "%U + %S" -a -o "$work/python.cpu" \
    /usr/bin/python3 scripts/external_fifo_proportional.py --port-file "$work/port" \
    --secret-file "$work/secret" >> "$work/python.json"
  wait "$run"
  echo "$(now) - $start" | bc >> "$work/external.s"
  for f in jobs.csv rounds.csv; do
    cmp -s "$work/builtin-1/$f" "$work/external-$i/$f" || { echo "$f differs" >&2; exit 1; }
  done
done
rounds=$(($(wc -l < "$work/builtin-1/rounds.csv") - 1))
b=$(median < "$work/builtin.s")
e=$(median < "$work/external.s")
echo "built-in wall s: $(tr '\n' ' ' < "$work/builtin.s")(median $b)"
echo "external wall s: $(tr '\n' ' ' < "$work/external.s")(median $e)"
echo "python: $(tail -1 "$work/python.json")"
echo "rounds: $rounds; jobs.csv and rounds.csv identical"
cpu() { bc < "$1" | median; }
bc_cpu=$(cpu "$work/builtin.cpu")
tc=$(cpu "$work/troupe.cpu")
pc=$(cpu "$work/python.cpu")
echo "CPU s (median): built-in $bc_cpu; external: troupe $tc + python $pc"
echo "overhead per round: $(echo "($e - $b) * 1000000 / $rounds" | bc) us wall," \
  "$(echo "($tc + $pc - $bc_cpu) * 1000000 / $rounds" | bc) us CPU"
echo "external rounds/s: $(echo "$rounds / $e" | bc); built-in rounds/s: $(echo "$rounds / $b" | bc)"
