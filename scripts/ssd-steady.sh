#!/usr/bin/env bash
# Does the SSD stage of the hierarchical parameter server settle (docs/paramserver.md)? Runs
# configs/hps_ctr.textproto for --batches global steps on --nodes nodes and prints, at checkpoints,
# the SSD stage's mean time per batch over a window of batches, with what it did in that window:
# rows read from SSD-PS and created, bytes read per row read, compaction bytes, and the SSD-PS
# files and disk bytes of node 0 at the end.
#
#   scripts/ssd-steady.sh [--batches 2000] [--nodes 1] [--window 50] [--out DIR] [-- --set ...]
set -euo pipefail
cd "$(dirname "$0")/.."
batches=2000
nodes=1
window=50
out=runs/ssd-steady
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --batches) batches="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --window) window="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "ssd-steady.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
troupe=${TROUPE:-build/apps/troupe}
[[ -x "$troupe" ]] || { echo "ssd-steady.sh: build first (make build), or set TROUPE" >&2; exit 2; }

dir="$out/n$nodes-b$batches"
rm -rf "$dir"
mkdir -p "$out"
"$troupe" run configs/hps_ctr.textproto --set "paramserver.nodes=$nodes" \
  --set "paramserver.batches=$batches" --set "run.out_dir=$dir" "${extra[@]}" > "$dir.log"
grep -E '^(stages|batch time|hit rates|bytes moved)' "$dir.log"
python3 - "$dir/batches.csv" "$window" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
window = int(sys.argv[2])
n = len(rows)
marks = sorted({m for m in (window, 100, 250, 500, 1000, 1500, 2000, 3000, 5000, n)
                if window <= m <= n})
print(f"{'batches':>13} {'ssd ms/batch':>12} {'max ms':>7} {'rows read':>9} {'created':>8} "
      f"{'B read/row':>10} {'compaction MB':>13}")
for m in marks:
    w = rows[m - window:m]
    ssd = [float(r['ssd_s']) * 1e3 for r in w]
    read = sum(int(r['ssd_rows_read']) for r in w)
    made = sum(int(r['rows_created']) for r in w)
    bytes_read = sum(int(r['ssd_bytes_read']) for r in w)
    comp = sum(int(r['compaction_bytes']) for r in w)
    print(f"{m - window:>6}-{m - 1:<6} {sum(ssd) / len(ssd):>12.3f} {max(ssd):>7.3f} "
          f"{read / len(w):>9.0f} {made / len(w):>8.0f} {bytes_read / max(read, 1):>10.0f} "
          f"{comp / 1e6:>13.2f}")
s = __import__('json').load(open(sys.argv[1].replace('batches.csv', 'summary.json')))
print(f"end: {s['parameters']} parameters, SSD-PS {s['ssd_files']} files, "
      f"{s['ssd_disk_bytes'] / 1e6:.1f} MB on disk, {s['compactions']} compactions")
EOF
