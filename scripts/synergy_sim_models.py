#!/usr/bin/env python3
"""The model catalogue that states jobs as Synergy's simulator does, for job-for-job replays.

  synergy_sim_models.py catalogue [OUT_DIR]   (default configs/models/synergy-simulator/)
  synergy_sim_models.py trace IN OUT           a trace's models renamed for that catalogue

Synergy's simulator (msr-fiddle/synergy, simulator/jobs/workload.py, add_synergy_profile) does not
read a job's speed-up from a sensitivity matrix: a job runs at its speed-up at the ideal demand, or
at 1 on the proportional share. Where a multi-GPU job's ideal (GPUs x the model's ideal per GPU)
exceeds a server (24 CPUs, 500 GB), the ideal is capped at the server and the speed-up at the capped
ideal is read on the straight line from (the share's CPUs, 1) to (the uncapped CPUs, the model's
speed-up). troupe's own catalogue reads such a job's speed-up from its matrix at the capped ideal,
and its expected speed-up (SRTF, FTF) at the uncapped one. This catalogue holds, for each model
and job size whose ideal Synergy caps, a model `NAME-xG` whose ideal per GPU is the capped ideal and
whose speed-up there is Synergy's (computed with Synergy's arithmetic, to the last bit); `trace`
renames a g-GPU job of such a model to it. Every matrix is that straight line along the CPU axis
and flat along memory (a job leases only its ideal or the share under GREEDY and TUNE). Synergy's
server: 8 GPUs, 24 CPUs, 500 GB.
"""
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "configs/models/synergy_models.csv")
CPU_GRID = [1, 2, 3, 4, 5, 6, 9, 12, 24]
MEMORY_GRID = ["20.83", "62.5", "125", "187.5", "250"]
GPUS, CPUS, MEMORY = 8, 24, 500
SIZES = [1, 2, 4, 8]


def synergy_demand(cpus_per_gpu, memory_per_gpu, speedup, gpus):
    """add_synergy_profile's capped (CPUs, memory, speed-up) of a job of `gpus` GPUs."""
    cpus, memory, update = gpus * cpus_per_gpu, gpus * memory_per_gpu, False
    if cpus > CPUS:
        cpus, update = CPUS, True
        if gpus > GPUS:
            cpus, speedup, update = gpus * (CPUS / GPUS), 1, False
    if memory > MEMORY:
        memory, update = MEMORY, True
        if gpus > GPUS:
            memory, speedup, update = gpus * (MEMORY / GPUS), 1, False
    if update:
        ideal_cpu, fair_cpu = gpus * cpus_per_gpu, gpus * (CPUS / GPUS)
        speedup = 1 + (speedup - 1) / (ideal_cpu - fair_cpu) * (cpus - fair_cpu)
    return cpus, memory, speedup


def read_models():
    return list(csv.DictReader(open(MODELS)))


def derived(models):
    """(model, gpus) -> the catalogue row of its capped variant, for those Synergy caps."""
    out = {}
    for m in models:
        c, mem, s = float(m["ideal_cpus_per_gpu"]), float(m["ideal_mem_gb_per_gpu"]), float(
            m["speedup_at_ideal"])
        for g in SIZES:
            cpus, memory, speedup = synergy_demand(c, mem, s, g)
            if (cpus, memory, speedup) != (g * c, g * mem, s):
                row = dict(m)
                row["model"] = "%s-x%d" % (m["model"], g)
                row["ideal_cpus_per_gpu"] = repr(cpus / g)
                row["ideal_mem_gb_per_gpu"] = repr(memory / g)
                row["speedup_at_ideal"] = repr(speedup)
                out[(m["model"], g)] = row
    return out


def line(cpus_per_gpu, ideal, at_ideal):
    fair = CPUS / GPUS
    if cpus_per_gpu >= ideal:
        return at_ideal
    if ideal <= fair:
        return 1.0
    return max(0.1, 1 + (at_ideal - 1) * (cpus_per_gpu - fair) / (ideal - fair))


def catalogue(out_dir):
    models = read_models()
    rows = models + list(derived(models).values())
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "synergy_models.csv"), "w") as f:
        w = csv.DictWriter(f, fieldnames=list(models[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out_dir, "synergy_sensitivity.csv"), "w") as f:
        f.write("model,cpus_per_gpu,mem_gb_per_gpu,throughput_vs_proportional\n")
        for m in rows:
            ideal, at_ideal = float(m["ideal_cpus_per_gpu"]), float(m["speedup_at_ideal"])
            for c in CPU_GRID:
                for mem in MEMORY_GRID:
                    f.write("%s,%d,%s,%r\n" % (m["model"], c, mem, line(c, ideal, at_ideal)))


def trace(src, dest):
    names = derived(read_models())
    with open(src) as f, open(dest, "w") as g:
        for text in f:
            cols = text.rstrip("\n").split(",")
            if not text.startswith("#") and len(cols) == 5 and cols[0] != "job_id":
                key = (cols[1], int(cols[4]))
                if key in names:
                    cols[1] = names[key]["model"]
            g.write(",".join(cols) + "\n")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "catalogue":
        catalogue(sys.argv[2] if len(sys.argv) > 2 else
                  os.path.join(ROOT, "configs/models/synergy-simulator"))
    elif len(sys.argv) == 4 and sys.argv[1] == "trace":
        trace(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
