#!/usr/bin/env bash
# Network-aware scheduling on an emulated fabric (docs/network.md, "Placement" and "Link
# priority"): each part runs troupe on a shipped config under the choices it compares and prints
# a table.
#
# Usage: scripts/reproduce-network.sh PART [OUT_DIR]
#   PART     consolidation: oblivious placement against consolidation (and Tiresias's wait or
#              spread) on Philly's 512 GPUs at 4:1, and on the 128-GPU multi-GPU mix at 4:1 over
#              seeds 1-5 under TUNE
#            crux: Crux's GPT-beside-BERT co-location (configs/crux-colocation.textproto) under
#              fair sharing and under GPU-intensity priority, beside the paper's figures
#            crux-utilisation: Crux's GPU-utilisation gains: a 96-GPU cluster like its testbed
#              (configs/crux-96.textproto) filled by a random mix of GPT-, BERT- and ResNet-like
#              jobs (and one of the catalogue's models) per seed, and the Philly replay on 512
#              GPUs with 10 Gb/s NICs at 16:1, under fair sharing and GPU-intensity priority with
#              fluid and phased traffic, beside the paper's 8.3-14.8% and up to 23%
#            cassini: CASSINI's 24-server mix of every catalogue model (configs/cassini-24.textproto,
#              phased traffic) under oblivious, consolidate and interleave placement, beside the
#              paper's JCT gains
#            all: every part
#   OUT_DIR  where the runs and tables go (default runs/network; must not hold earlier runs)
# Environment: TROUPE (the binary; default build/apps/troupe), SEEDS (default "1 2 3 4 5"),
#   MIX_SEEDS (crux-utilisation's job mixes; default "1 2 ... 10").
set -euo pipefail

cd "$(dirname "$0")/.."
PART=${1:-}
OUT=${2:-runs/network}
TROUPE=${TROUPE:-build/apps/troupe}
SEEDS=${SEEDS:-"1 2 3 4 5"}
MIX_SEEDS=${MIX_SEEDS:-"1 2 3 4 5 6 7 8 9 10"}

usage() {
  echo "usage: scripts/reproduce-network.sh consolidation|crux|crux-utilisation|cassini|all" \
    "[OUT_DIR]" >&2
  exit 2
}
case "$PART" in consolidation | crux | crux-utilisation | cassini | all) ;; *) usage ;; esac
if [ -e "$OUT" ]; then
  echo "reproduce-network.sh: $OUT exists; give a new folder" >&2
  exit 2
fi
mkdir -p "$OUT"

# One line of figures from a run's summary.json and jobs.csv.
figures() {
  python3 - "$@" <<'PY'
import csv, json, sys
run, label, seed = sys.argv[1:4]
s = json.load(open(run + "/summary.json"))
net = s.get("network", {})
print(",".join([label, seed, "%.3f" % (s["jct_mean_s"] / 3600), "%.3f" % (s["jct_p99_s"] / 3600),
                "%.4f" % s["gpu_utilisation"], "%.2f" % net.get("comm_hours", 0),
                "%.2f" % net.get("contention_hours", 0), str(net.get("jobs_crossing", 0))]))
PY
}

HEADER="placement,seed,jct_mean_h,jct_p99_h,gpu_utilisation,comm_h,contention_h,jobs_crossing"
PLACEMENTS=("oblivious:--set fabric.placement.rule=oblivious"
  "consolidate:--set fabric.placement.rule=consolidate"
  "consolidate-wait-30m:--set fabric.placement.rule=consolidate --set fabric.placement.max_wait_s=1800")

# Mean and sample deviation of each placement's figures over the seeds (or weeks), as a table.
table() {
  python3 - "$1" "$2" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
over = sys.argv[2]
cols = ["jct_mean_h", "jct_p99_h", "gpu_utilisation", "contention_h", "jobs_crossing"]
by = {}
for r in rows:
    by.setdefault(r["placement"], []).append(r)
print("| placement | %s | " % over + " | ".join(cols) + " |")
print("|---" * (len(cols) + 2) + "|")
base = statistics.mean(float(r["jct_mean_h"]) for r in by["oblivious"])
for name, rs in by.items():
    cells = []
    for c in cols:
        v = [float(r[c]) for r in rs]
        sd = statistics.stdev(v) if len(v) > 1 else 0
        cells.append("%.3f ± %.3f" % (statistics.mean(v), sd) if len(v) > 1 else "%.3f" % v[0])
    jct = statistics.mean(float(r["jct_mean_h"]) for r in rs)
    print("| %s | %d (JCT %.3fx) | " % (name, len(rs), jct / base) + " | ".join(cells) + " |")
PY
}

# Per arrival week of the Philly runs in $1 on fabric $2: each placement's mean JCT over
# oblivious's.
weekly() {
  python3 - "$1" "$2" "${PLACEMENTS[@]%%:*}" <<'PY'
import csv, statistics, sys
folder, fabric, names = sys.argv[1], sys.argv[2], sys.argv[3:]
week_s = 7 * 86400
def by_week(name):
    weeks = {}
    for r in csv.DictReader(open("%s/philly-%s-%s/jobs.csv" % (folder, fabric, name))):
        if r["measured"] != "1" or r["jct_s"] == "":
            continue
        weeks.setdefault(int(float(r["arrival_s"]) // week_s), []).append(float(r["jct_s"]))
    return {w: statistics.mean(v) for w, v in weeks.items() if len(v) >= 100}
base = by_week("oblivious")
print("| placement | weeks | JCT / oblivious's, mean ± sd | best week | worst week |")
print("|---|---|---|---|---|")
for name in names[1:]:
    other = by_week(name)
    ratios = [other[w] / base[w] for w in sorted(base) if w in other]
    print("| %s | %d | %.3f ± %.3f | %.3f | %.3f |" % (
        name, len(ratios), statistics.mean(ratios), statistics.stdev(ratios), min(ratios),
        max(ratios)))
PY
}

# Philly's replay on the fabric named $1 with the flags $2, under each placement.
philly_runs() {
  local dir=$1 fabric=$2 fabric_flags=$3 csv="$1/philly-$2.csv"
  echo "$HEADER" >"$csv"
  for entry in "${PLACEMENTS[@]}"; do
    local name=${entry%%:*} flags=${entry#*:}
    # shellcheck disable=SC2086
    "$TROUPE" run configs/philly-512-fabric.textproto --quiet --out "$dir/philly-$fabric-$name" \
      $fabric_flags $flags >/dev/null
    figures "$dir/philly-$fabric-$name" "$name" 1 >>"$csv"
    echo "done: philly $fabric $name"
  done
}

consolidation() {
  local dir="$OUT/consolidation"
  mkdir -p "$dir"
  # Philly: a replay with no randomness, so one run per placement and fabric: the shipped 4:1
  # tree of 100 Gb/s NICs, and a slow one (10 Gb/s NICs, 16:1) where the traffic matters.
  philly_runs "$dir" 100g-4to1 ""
  philly_runs "$dir" 10g-16to1 "--set fabric.server_nic_gbps=10 --set fabric.tor_oversubscription=16"
  # The 128-GPU multi-GPU mix at 4:1 under TUNE (whose jobs spread when no server holds them).
  local mix="$dir/mix-128.csv"
  echo "$HEADER" >"$mix"
  for entry in "${PLACEMENTS[@]}"; do
    local name=${entry%%:*} flags=${entry#*:}
    for seed in $SEEDS; do
      # shellcheck disable=SC2086
      "$TROUPE" run configs/fabric-128-4to1.textproto --quiet --out "$dir/mix-$name-$seed" \
        --set scheduler.mechanism=tune --set run.seed="$seed" $flags >/dev/null
      figures "$dir/mix-$name-$seed" "$name" "$seed" >>"$mix"
    done
    echo "done: mix-128 $name"
  done
  for fabric in 100g-4to1 10g-16to1; do
    echo
    echo "Philly, 512 GPUs, 8 racks of 8 servers, $fabric, FIFO + proportional:"
    table "$dir/philly-$fabric.csv" runs
    echo
    echo "The same week by week (jobs by arrival week; the replay has no seed, so the spread is"
    echo "over the trace's weeks): each placement's mean JCT over oblivious placement's:"
    weekly "$dir" "$fabric"
  done
  echo
  echo "128 GPUs, multi-GPU mix, 4 racks of 4 servers at 4:1, FIFO + TUNE, seeds $SEEDS ($mix):"
  table "$mix" seeds
}

# Iteration seconds of the GPT and BERT jobs of each crux run: the catalogue's compute plus the
# exposed communication per iteration (comm_s over iterations: the job that finishes first spends
# its whole life beside the other), and the same alone (comm_s less contention_s).
crux_table() {
  python3 - "$1" "${@:2}" <<'PY'
import csv, sys
folder, settings = sys.argv[1], sys.argv[2:]
compute = {r["model"]: float(r["iter_time_s_at_proportional"])
           for r in csv.DictReader(open("configs/crux/synergy_models.csv"))}
def iteration(run, model):
    row = next(r for r in csv.DictReader(open(run + "/jobs.csv")) if r["model"] == model)
    n = float(row["iterations"])
    comm, contention = float(row["comm_s"]), float(row["contention_s"])
    return compute[model] + comm / n, compute[model] + (comm - contention) / n
# The share of the 24 GPUs' time spent computing (both jobs hold 12).
def busy(g, b):
    return (compute["gpt"] / g + compute["bert"] / b) / 2
print("| setting | GPT iteration (s) | GPT slowdown | GPT's loss won back | BERT iteration (s) |"
      " BERT slowdown | GPUs computing |")
print("|---|---|---|---|---|---|---|")
print("| paper: alone | 1.53 | | | | | |")
print("| paper: beside each other (no priority) | 1.70 | +11.0% | | | +8.3% (throughput -7.7%) |"
      " -9.5% |")
fair_loss = {}
for s in settings:
    name, traffic = s.split(":")[0], s.split("-")[-1]
    g, g_alone = iteration("%s/%s-gpt" % (folder, name), "gpt")
    b, b_alone = iteration("%s/%s-bert" % (folder, name), "bert")
    if name.startswith("fair"):
        fair_loss[traffic] = g - g_alone
        won = ""
    else:
        won = "%.0f%%" % (100 * (1 - (g - g_alone) / fair_loss[traffic]))
    if name == settings[0].split(":")[0]:
        alone = busy(g_alone, b_alone)
        print("| troupe: alone | %.3f | | | %.3f | | %.1f%% |" % (g_alone, b_alone, 100 * alone))
    print("| troupe: %s | %.3f | %+.1f%% | %s | %.3f | %+.1f%% | %.1f%% (%+.1f%%) |" % (
        name, g, 100 * (g / g_alone - 1), won, b, 100 * (b / b_alone - 1), 100 * busy(g, b),
        100 * (busy(g, b) / alone - 1)))
PY
}

# Crux's co-location case: each setting run twice, once with GPT finishing first (its figures are
# all beside BERT), once with BERT first (crux/trace-bert-view.csv).
crux() {
  local dir="$OUT/crux" settings=()
  mkdir -p "$dir"
  local runs=("fair-fluid:--set fabric.link_priority=fair --set fabric.traffic=fluid"
    "gpu_intensity-16-fluid:--set fabric.traffic=fluid"
    "gpu_intensity-1000-fluid:--set fabric.traffic=fluid --set fabric.max_priority_ratio=1000"
    "fair-phased:--set fabric.link_priority=fair --set fabric.traffic=phased"
    "gpu_intensity-16-phased:--set fabric.traffic=phased"
    "gpu_intensity-1000-phased:--set fabric.traffic=phased --set fabric.max_priority_ratio=1000")
  for entry in "${runs[@]}"; do
    local name=${entry%%:*} flags=${entry#*:}
    # shellcheck disable=SC2086
    "$TROUPE" run configs/crux-colocation.textproto --quiet --out "$dir/$name-gpt" $flags >/dev/null
    # shellcheck disable=SC2086
    "$TROUPE" run configs/crux-colocation.textproto --quiet --out "$dir/$name-bert" $flags \
      --set workload.trace_file=configs/crux/trace-bert-view.csv >/dev/null
    settings+=("$name")
  done
  echo
  echo "Crux's co-location: GPT-like and BERT-like jobs of 12 GPUs meeting on one 25 Gb/s NIC"
  echo "(configs/crux-colocation.textproto; setting = priority-max_priority_ratio-traffic):"
  crux_table "$dir" "${settings[@]}"
}

# A job mix that fills the 96 GPUs of configs/crux-96.textproto, drawn from seed $1 into $3: each
# job a model of $2 (comma-separated) and 8, 12, 16 or 24 GPUs (whole servers, or a server and a
# half, so that some jobs share a server's NIC; the last one takes the 4 left when none fits), all
# arriving at once in random order, with more iterations than the window holds.
crux_mix() {
  python3 - "$@" <<'PY'
import random, sys
seed, models, out = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
rng = random.Random(seed)
left, jobs = 96, []
while left > 0:
    gpus = rng.choice([g for g in (8, 12, 16, 24) if g <= left] or [left])
    jobs.append((rng.choice(models), gpus))
    left -= gpus
with open(out, "w") as f:
    f.write("job_id,model,arrival_s,iterations,gpus\n")
    for i, (model, gpus) in enumerate(jobs):
        f.write("%d,%s,0,100000000,%d\n" % (i, model, gpus))
PY
}

# Crux's GPU utilisation of each run of the sweeps under $1: the GPU-seconds spent computing (a
# job's leased seconds less its exposed communication, times its GPUs) over the GPU-seconds
# leased; every job holds its GPUs the whole window, so this is Crux's U_T over 96 GPUs x T.
# One table per mix and fabric: mean and sd over the seeds, and the gain over fair sharing.
crux_util_table() {
  python3 - "$1" <<'PY'
import csv, glob, os, statistics, sys
root = sys.argv[1]
# The share computing, and what it would be were no job slowed by another's traffic (its
# contention taken off its communication): the most any sharing of the links could reach.
def computing(run):
    held = busy = unslowed = 0.0
    for r in csv.DictReader(open(os.path.join(run, "jobs.csv"))):
        gpus = float(r["gpus"])
        lease = float(r["gpu_seconds"]) / gpus
        comm, contention = float(r["comm_s"] or 0), float(r["contention_s"] or 0)
        held += gpus * lease
        busy += gpus * (lease - comm)
        # the same compute in less time: computing over computing plus the communication alone
        unslowed += gpus * (lease - comm) / (lease - contention) * lease
    return busy / held, unslowed / held
cells = {}  # (mix, fabric) -> setting -> seed -> ((share, unslowed share), contention hours)
for sweep in sorted(glob.glob(os.path.join(root, "*", "sweep.csv"))):
    mix, fabric, seed = os.path.basename(os.path.dirname(sweep)).split("_")
    for r in csv.DictReader(open(sweep)):
        prio, traffic = r["fabric.link_priority"], r["fabric.traffic"]
        ratio = "%g" % float(r["fabric.max_priority_ratio"])
        if prio == "fair" and ratio != "16":
            continue  # fair ignores the ratio: the same run
        name = "%s, %s" % ("fair" if prio == "fair" else "gpu_intensity %s" % ratio, traffic)
        run = os.path.join(os.path.dirname(sweep), r["run_dir"])
        cells.setdefault((mix, fabric), {}).setdefault(name, {})[int(seed[4:])] = (
            computing(run), float(r["contention_hours"]))
def pct(v):
    return "%+.1f%%" % (100 * v)
for (mix, fabric), settings in sorted(cells.items()):
    print()
    print("%s mix, %s:" % (mix, fabric))
    print("| setting | seeds | GPUs computing | gain over fair: mean | min | max |"
          " contention (h) | with no contention |")
    print("|---|---|---|---|---|---|---|---|")
    order = sorted(settings, key=lambda n: (n.split(", ")[1], n != "fair, " + n.split(", ")[1], n))
    for name in order:
        by_seed = settings[name]
        fair = settings["fair, " + name.split(", ")[1]]
        seeds = sorted(by_seed)
        shares = [by_seed[s][0][0] for s in seeds]
        gains = [by_seed[s][0][0] / fair[s][0][0] - 1 for s in seeds]
        bound = [by_seed[s][0][1] / fair[s][0][0] - 1 for s in seeds]
        cells_ = ["", "", ""] if name.startswith("fair") else [
            pct(statistics.mean(gains)), pct(min(gains)), pct(max(gains))]
        print("| %s | %d | %.1f%% ± %.1f | %s | %.2f | %s |" % (
            name, len(seeds), 100 * statistics.mean(shares), 100 * statistics.stdev(shares),
            " | ".join(cells_), statistics.mean(by_seed[s][1] for s in seeds),
            "" if not name.startswith("fair") else "%s (max %s)" % (
                pct(statistics.mean(bound)), pct(max(bound)))))
print()
print("Crux (paper), 96-GPU testbed: +8.3% to +14.8%.")
PY
}

# Philly runs $2... under $1: GPU-seconds computing over GPU-seconds held (every job finishes in
# every run, so the compute is the same; what differs is the time held waiting on the network),
# over all jobs and over those that crossed servers, and each's gain over fair sharing.
philly_util_table() {
  python3 - "$@" <<'PY'
import csv, json, sys
root, names = sys.argv[1], sys.argv[2:]
print("| setting | mean JCT (h) | contention (h) | GPUs computing: all jobs | gain |"
      " jobs crossing servers | gain | crossing, with no contention |")
print("|---|---|---|---|---|---|---|---|")
base = {}
for name in names:
    run = "%s/philly-%s" % (root, name)
    s = json.load(open(run + "/summary.json"))
    held = busy = xheld = xbusy = xunslowed = 0.0
    for r in csv.DictReader(open(run + "/jobs.csv")):
        if r["measured"] != "1":
            continue
        h = float(r["gpu_seconds"])
        b = float(r["gpus"]) * float(r["ideal_duration_s"])
        held, busy = held + h, busy + b
        if float(r["comm_s"] or 0) > 0:
            xheld, xbusy = xheld + h, xbusy + b
            xunslowed += h - float(r["gpus"]) * float(r["contention_s"] or 0)
    share, cross = busy / held, xbusy / xheld
    fair = base.setdefault(name.split("-")[-1], (share, cross))
    gain = lambda v, b: "" if name.startswith("fair") else "%+.2f%%" % (100 * (v / b - 1))
    print("| %s | %.2f | %.1f | %.2f%% | %s | %.2f%% | %s | %s |" % (
        name, s["jct_mean_s"] / 3600, s["network"]["contention_hours"], 100 * share,
        gain(share, fair[0]), 100 * cross, gain(cross, fair[1]),
        "%.2f%%" % (100 * xbusy / xunslowed) if name.startswith("fair") else ""))
print()
print("Crux (paper), production-trace simulation: up to +23%.")
PY
}

crux_utilisation() {
  local dir="$OUT/crux-utilisation"
  mkdir -p "$dir"
  # Two mixes: Crux's testbed models (configs/crux-96/: the GPT-like and BERT-like jobs of the
  # co-location case, and ResNet-50) and the catalogue's ten models; two fabrics: non-blocking
  # (a Clos without collisions) and racks at 4:1.
  local mixes=("crux:gpt,bert,res50:"
    "catalogue:alexnet,res18,res50,mobilenet,shufflenet,gnmt,transformer,lstm,m5,deepspeech:--set workload.models_dir=")
  local fabrics=("1to1:--set fabric.tor_oversubscription=1"
    "4to1:--set fabric.tor_oversubscription=4")
  for mix in "${mixes[@]}"; do
    local name=${mix%%:*} rest=${mix#*:}
    local models=${rest%%:*} mix_flags=${rest#*:}
    for seed in $MIX_SEEDS; do
      crux_mix "$seed" "$models" "$dir/trace-$name-$seed.csv"
      for fabric in "${fabrics[@]}"; do
        # shellcheck disable=SC2086
        "$TROUPE" sweep configs/crux-96.textproto --quiet --jobs 1 \
          --out "$dir/${name}_${fabric%%:*}_seed$seed" \
          --set workload.trace_file="$dir/trace-$name-$seed.csv" $mix_flags ${fabric#*:} \
          --over fabric.link_priority=fair,gpu_intensity --over fabric.traffic=fluid,phased \
          --over fabric.max_priority_ratio=16,1000 >/dev/null
      done
    done
    echo "done: crux-utilisation $name mix"
  done
  echo
  echo "Crux's 96-GPU testbed: 12 servers of 8 GPUs in 3 racks of 4, 25 Gb/s NICs"
  echo "(configs/crux-96.textproto), a random mix filling it per seed ($MIX_SEEDS), FIFO +"
  echo "proportional; GPU-seconds computing over GPU-seconds leased in a 2-hour window in which"
  echo "every job runs:"
  crux_util_table "$dir"
  # Philly on 512 GPUs with scarce links (as the consolidation part), fair against priority.
  local settings=("fair-fluid:--set fabric.link_priority=fair --set fabric.traffic=fluid"
    "gpu_intensity-16-fluid:--set fabric.traffic=fluid"
    "gpu_intensity-1000-fluid:--set fabric.traffic=fluid --set fabric.max_priority_ratio=1000"
    "fair-phased:--set fabric.link_priority=fair --set fabric.traffic=phased"
    "gpu_intensity-16-phased:--set fabric.traffic=phased"
    "gpu_intensity-1000-phased:--set fabric.traffic=phased --set fabric.max_priority_ratio=1000")
  local names=()
  for entry in "${settings[@]}"; do
    local name=${entry%%:*} flags=${entry#*:}
    # shellcheck disable=SC2086
    "$TROUPE" run configs/philly-512-fabric.textproto --quiet --out "$dir/philly-$name" \
      --set fabric.server_nic_gbps=10 --set fabric.tor_oversubscription=16 \
      --set fabric.link_priority=gpu_intensity $flags >/dev/null
    names+=("$name")
  done
  echo
  echo "Philly, 512 GPUs, 8 racks of 8 servers, 10 Gb/s NICs at 16:1, FIFO + proportional"
  echo "(GPU-seconds computing over GPU-seconds held):"
  philly_util_table "$dir" "${names[@]}"
}

# CASSINI's mix under each rule on the fabric $2 (a fixed trace, no randomness: one run each):
# mean and p99 JCT over interleave's, as the paper reports its gains.
cassini_table() {
  python3 - "$@" <<'PY'
import json, sys
dir_, fabric = sys.argv[1:3]
rules = ["oblivious", "consolidate", "interleave"]
figs = {}
for r in rules:
    s = json.load(open("%s/%s-%s/summary.json" % (dir_, fabric, r)))
    net = s.get("network", {})
    figs[r] = (s["jct_mean_s"] / 3600, s["jct_p99_s"] / 3600, net.get("contention_hours", 0),
               net.get("comm_hours", 0))
print("| placement | mean JCT (h) | p99 JCT (h) | comm (h) | contention (h) |"
      " mean JCT / interleave's | p99 JCT / interleave's |")
print("|---|---|---|---|---|---|---|")
im, ip = figs["interleave"][0], figs["interleave"][1]
for r in rules:
    m, p, c, comm = figs[r]
    print("| %s | %.2f | %.2f | %.1f | %.2f | %.3fx | %.3fx |" % (r, m, p, comm, c, m / im, p / ip))
print("| CASSINI (paper: Themis or Pollux placement over CASSINI's) | | | | | up to 1.6x | up to 2.5x |")
PY
}

cassini() {
  local dir="$OUT/cassini"
  mkdir -p "$dir"
  # The shipped fabric (50 Gb/s NICs, as the paper's testbed) and one with 10 Gb/s NICs.
  local fabrics=("50g:" "10g:--set fabric.server_nic_gbps=10")
  for entry in "${fabrics[@]}"; do
    local fabric=${entry%%:*} flags=${entry#*:}
    for rule in oblivious consolidate interleave; do
      # shellcheck disable=SC2086
      "$TROUPE" run configs/cassini-24.textproto --quiet --out "$dir/$fabric-$rule" \
        --set fabric.placement.rule=$rule $flags >/dev/null
    done
    echo "done: cassini $fabric"
  done
  for entry in "${fabrics[@]}"; do
    local fabric=${entry%%:*}
    echo
    echo "CASSINI's mix, $fabric NICs: 24 one-GPU servers, 6 racks at 4:1, phased traffic, FIFO +"
    echo "proportional, 160 jobs of every catalogue model (configs/cassini-24.textproto):"
    cassini_table "$dir" "$fabric"
  done
}

case "$PART" in
  consolidation) consolidation ;;
  crux) crux ;;
  crux-utilisation) crux_utilisation ;;
  cassini) cassini ;;
  all)
    consolidation
    crux
    crux_utilisation
    cassini
    ;;
esac
