"""Who ran where, from leases.csv: a GPU timeline for small runs, a heat-map for large ones.

The layout (servers x GPUs a server) comes from the leases: GPUs a server = the highest GPU index
seen + 1, servers = the highest server index seen + 1, or more when the derived GPU capacity says
so (servers that never ran a lease still get their rows).
"""

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.collections import PolyCollection

from . import series
from .figures import fixed_margins, save

TIMELINE_MAX_JOBS = 2000  # at and above this many jobs, a heat-map instead of a timeline
JOB_COLOURS = plt.get_cmap("tab20").colors
MAX_SERVER_LABELS = 24
MAX_JOB_LABELS = 400      # job ids written on the widest bars, at most this many
LABEL_MIN_WIDTH = 0.025   # a bar takes a label from this share of the time axis up
LABEL_MAX_ROWS = 64       # rows taller than 1/64 of the figure: room for text


def layout(run, gpu_capacity):
    per_server = int(run.leases["gpu"].max()) + 1
    servers = int(run.leases["server"].max()) + 1
    if gpu_capacity and gpu_capacity % per_server == 0:
        servers = max(servers, int(gpu_capacity) // per_server)
    return servers, per_server


def figure_kind(run):
    """"timeline", "heatmap", or None when leases.csv is absent or holds no GPU."""
    if run.leases is None or run.leases.empty:
        return None
    return "timeline" if len(run.jobs) < TIMELINE_MAX_JOBS else "heatmap"


def missing_note(run):
    if run.leases is None:
        return ("No GPU timeline: leases.csv is absent (the run was made without run.lease_log; "
                "rerun it with --set run.lease_log=true).")
    return "No GPU timeline: leases.csv holds no GPU lease."


def gpu_figure(run, kind, capacity, path):
    """Draws the timeline or the heat-map (kind from figure_kind); returns its caption."""
    servers, per_server = layout(run, capacity["GPUs"])
    draw = timeline if kind == "timeline" else heatmap
    return draw(run, servers, per_server, path)


def segments(run, per_server):
    """Leases merged over consecutive rounds: arrays row, job, start_s, end_s."""
    rounds = run.rounds.set_index("round")
    frame = run.leases.assign(
        row=run.leases["server"] * per_server + run.leases["gpu"],
        start=rounds["start_s"].reindex(run.leases["round"]).to_numpy(),
        end=rounds["end_s"].reindex(run.leases["round"]).to_numpy(),
    ).sort_values(["row", "start"], kind="stable")
    row, job = frame["row"].to_numpy(), frame["job_id"].to_numpy()
    start, end = frame["start"].to_numpy(), frame["end"].to_numpy()
    new = np.ones(len(frame), dtype=bool)
    new[1:] = (row[1:] != row[:-1]) | (job[1:] != job[:-1]) | (start[1:] != end[:-1])
    first = np.flatnonzero(new)
    last = np.concatenate([first[1:], [len(frame)]]) - 1
    return row[first], job[first], start[first], end[last]


def server_axis(axis, servers, per_server):
    """Server labels at the middle of each server's rows, lines between servers, server 0 on top."""
    step = max(1, math.ceil(servers / MAX_SERVER_LABELS))
    shown = range(0, servers, step)
    axis.set_yticks([s * per_server + per_server / 2 - 0.5 for s in shown])
    axis.set_yticklabels([f"server {s}" for s in shown])
    axis.tick_params(axis="y", length=0)
    for boundary in range(1, servers):
        axis.axhline(boundary * per_server - 0.5, color="#bbbbbb", linewidth=0.6)
    axis.set_ylim(servers * per_server - 0.5, -0.5)
    axis.grid(False)
    axis.set_ylabel(f"server (rows: its {per_server} GPUs)")


def figure_height(servers, per_server):
    return min(14.0, max(4.5, 1.6 + 0.05 * servers * per_server))


def timeline(run, servers, per_server, path):
    row, job, start, end = segments(run, per_server)
    figure, axis = plt.subplots(figsize=(12, figure_height(servers, per_server)))
    fixed_margins(figure, left=1.35)
    left, right = start / 3600, end / 3600
    low, high = row - 0.42, row + 0.42
    boxes = np.stack([np.stack([left, low], 1), np.stack([right, low], 1),
                      np.stack([right, high], 1), np.stack([left, high], 1)], 1)
    colours = [JOB_COLOURS[j % len(JOB_COLOURS)] for j in job]
    axis.add_collection(PolyCollection(boxes, facecolors=colours, edgecolors="none"))
    span_h = max(run.summary["makespan_s"], float(end.max())) / 3600
    axis.set_xlim(0, span_h)
    labelled = label_jobs(axis, row, job, left, right, span_h, servers * per_server)
    server_axis(axis, servers, per_server)
    axis.set_xlabel("virtual time (hours)")
    axis.set_title(f"{run.label}: GPU timeline ({len(np.unique(job))} jobs; colour = job)")
    save(figure, path)
    named = (f"; the {labelled} widest bars carry their job id" if labelled else "")
    return ("GPU timeline from leases.csv: one row per GPU, one bar per job holding it over "
            f"consecutive rounds; colours repeat every 20 job ids{named}.")


def label_jobs(axis, row, job, left, right, span_h, rows):
    """Writes the job id on the widest bars where rows leave room for text; returns how many."""
    if rows > LABEL_MAX_ROWS or span_h <= 0:
        return 0
    width = right - left
    wide = np.flatnonzero(width >= LABEL_MIN_WIDTH * span_h)
    chosen = wide[np.argsort(-width[wide], kind="stable")][:MAX_JOB_LABELS]
    size = 7 if rows > 32 else 8
    for i in sorted(chosen):
        axis.text((left[i] + right[i]) / 2, row[i], str(job[i]), ha="center", va="center",
                  fontsize=size, color="black", clip_on=True)
    return len(chosen)


def heatmap(run, servers, per_server, path):
    busy = np.zeros((servers, len(run.rounds)))
    column = pd.Index(run.rounds["round"]).get_indexer(run.leases["round"])
    np.add.at(busy, (run.leases["server"].to_numpy(), column), 1)
    edges, values = series.gapped(run.rounds, 100 * busy / per_server)
    bin_edges, means = series.bin_means(edges, values, series.MAX_BINS)
    figure, axis = plt.subplots(figsize=(12, min(10.0, max(4.5, 1.8 + 0.3 * servers))),
                                layout="constrained")
    low = colour_floor(means)
    axis.grid(False)  # before pcolormesh, which would remove it with a deprecation warning
    mesh = axis.pcolormesh(bin_edges / 3600, np.arange(servers + 1) - 0.5, means,
                           cmap="viridis", vmin=low, vmax=100, rasterized=True)
    label = "GPUs busy (% of the server's)" + (f"; scale from {low:g}%" if low else "")
    figure.colorbar(mesh, ax=axis, label=label, pad=0.01, extend="min" if low else "neither")
    step = max(1, math.ceil(servers / MAX_SERVER_LABELS))
    axis.set_yticks(list(range(0, servers, step)))
    axis.set_yticklabels([f"server {s}" for s in range(0, servers, step)])
    axis.set_ylim(servers - 0.5, -0.5)
    axis.set_xlabel("virtual time (hours)")
    axis.set_ylabel("server")
    width = series.hours_label(bin_edges[1] - bin_edges[0])
    axis.set_title(f"{run.label}: GPU occupancy per server (mean over {width} bins)")
    save(figure, path)
    floor = (f" The colour scale starts at {low:g}% (the 2nd percentile, rounded down): on a "
             f"cluster this busy a scale from 0 would show one colour." if low else "")
    return (f"GPU occupancy heat-map from leases.csv ({len(run.jobs)} jobs: too many for a "
            f"timeline): share of each server's {per_server} GPUs leased, mean over {width} "
            f"bins.{floor}")


def colour_floor(means):
    """Where the colour scale starts: 0, or for an overloaded cluster (almost every cell above
    50% busy) the 2nd percentile rounded down to 10%, so that differences keep their contrast."""
    cells = means[np.isfinite(means)]
    if cells.size == 0:
        return 0
    floor = 10 * math.floor(float(np.percentile(cells, 2)) / 10)
    return floor if floor >= 50 else 0
