#!/usr/bin/env bash
# What the live view (`troupe run --serve`) costs an emulated run: the same config run REPEAT
# times without and with --serve (no browser attached, and with one following /events), the
# fastest of each kept (the machine may be shared). Checks that jobs.csv and rounds.csv are
# byte-identical across all of them (a parameter-server run: batches.csv). Prints a Markdown table: variant, the run's wall seconds
# (summary.json, min), CPU seconds of troupe and its view (user + system, min), overhead.
#
# Usage: scripts/bench-live.sh [CONFIG] [--set ...]
# Environment: BUILD (default build/), TROUPE (the binary; default $BUILD/apps/troupe),
# REPEAT (default 3). Needs GNU time (/usr/bin/time); the "watched" variant needs curl.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
troupe=${TROUPE:-$BUILD/apps/troupe}
REPEAT=${REPEAT:-3}
config=${1:-configs/default.textproto}
shift || true
if [ ! -x "$troupe" ] || [ ! -x /usr/bin/time ]; then
  echo "bench-live.sh: needs $troupe (build it first) and /usr/bin/time" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

wall_of() { sed -n 's/^ *"wall_s": \([0-9.e+-]*\),*$/\1/p' "$1/summary.json"; }

# run VARIANT INDEX [--set ...]: one run; prints its wall seconds and CPU seconds.
run() {
  local variant=$1 out="$work/$1-$2" serve=()
  shift 2
  case "$variant" in
    plain) ;;
    serve) serve=(--serve 127.0.0.1:0 --serve-linger 0) ;;
    watched) serve=(--serve 127.0.0.1:0 --serve-linger 0) ;;
  esac
  if [ "$variant" = watched ]; then
    /usr/bin/time -o "$work/cpu" -f "%U %S" \
      "$troupe" run "$config" "$@" --out "$out" --quiet "${serve[@]}" 2>"$work/err" >/dev/null &
    local pid=$! port=""
    for _ in $(seq 200); do
      port=$(sed -n 's|^live view: http://127.0.0.1:\([0-9]*\)/$|\1|p' "$work/err")
      [ -n "$port" ] && break
      sleep 0.01
    done
    # A viewer following the event stream until the run ends.
    [ -n "$port" ] && curl -sN --max-time 600 "http://127.0.0.1:$port/events" >/dev/null || true
    wait "$pid"
  else
    /usr/bin/time -o "$work/cpu" -f "%U %S" \
      "$troupe" run "$config" "$@" --out "$out" --quiet "${serve[@]}" >/dev/null 2>&1
  fi
  echo "$(wall_of "$out") $(awk '{print $1 + $2}' "$work/cpu")"
}

variants=(plain serve)
command -v curl >/dev/null && variants+=(watched)
declare -A best cpu
for i in $(seq "$REPEAT"); do
  for v in "${variants[@]}"; do  # interleaved, so a busy moment hits every variant alike
    read -r w c < <(run "$v" "$i" "$@")
    if [ -z "${best[$v]:-}" ] || awk "BEGIN{exit !($w < ${best[$v]})}"; then best[$v]=$w; fi
    if [ -z "${cpu[$v]:-}" ] || awk "BEGIN{exit !($c < ${cpu[$v]})}"; then cpu[$v]=$c; fi
  done
done

reference="$work/plain-1"
records=$(cd "$reference" && ls *.csv)  # jobs.csv and rounds.csv, or a parameter server's batches.csv
for d in "$work"/*-*; do
  for f in $records; do
    cmp -s "$reference/$f" "$d/$f" || { echo "bench-live.sh: $d/$f differs" >&2; exit 1; }
  done
done

echo "| variant | wall s (min of $REPEAT) | vs plain | CPU s (min) | vs plain |"
echo "|---|---:|---:|---:|---:|"
for v in "${variants[@]}"; do
  awk -v v="$v" -v w="${best[$v]}" -v p="${best[plain]}" -v c="${cpu[$v]}" -v q="${cpu[plain]}" \
    'BEGIN{printf "| %s | %.3f | %+.1f%% | %.2f | %+.1f%% |\n", v, w, 100 * (w - p) / p, c,
           100 * (c - q) / q}'
done
for f in $records; do echo -n "$f $(sha256sum "$reference/$f" | cut -c1-16)…, "; done
echo "in every run"
