"""Server failures of a scheduler run (docs/failures.md, "What failures cost"): interruptions.csv,
one row per server that went down, drawn as a timeline of failures by cause over the run.

attach() reads interruptions.csv of every scheduler run that has one into run.interruptions
before anything is drawn; a run without it keeps None and gets no timeline.
"""

import os

import matplotlib.pyplot as plt
import numpy as np

from . import rundir
from .errors import InputError
from .figures import RUN_COLOURS, fixed_margins, save

FILE = "interruptions.csv"
COLUMNS = {"at_s": "float", "server": "int", "gpus": "int", "cause": "str", "repaired_s": "float",
           "jobs_hit": "int", "job_gpus_hit": "int"}


def attach(runs):
    for run in runs:
        path = os.path.join(run.path, FILE)
        if run.kind != rundir.SCHEDULER or not os.path.exists(path):
            continue
        frame = rundir.read_csv(path, COLUMNS)
        bad = (frame["at_s"] < 0).to_numpy() | (frame["jobs_hit"] < 0).to_numpy()
        if bad.any():
            raise InputError(path, int(np.flatnonzero(bad)[0]) + 2,
                             "a failure before the run's start, or a negative count of jobs hit")
        run.interruptions = frame


def causes_by_count(frame):
    """The causes, most servers down first (ties by name), as the summary's by_cause orders them."""
    counts = frame["cause"].value_counts()
    return sorted(counts.index, key=lambda cause: (-counts[cause], cause))


def timeline(run, path):
    """One row per cause: each failed server a mark at its failure, its repair a bar to its return
    (or to the run's end), the mark filled when it interrupted a running job; below, the
    interruptions so far over time."""
    frame = run.interruptions
    causes = causes_by_count(frame)
    end_h = max(float(run.summary.get("makespan_s", 0)), float(frame["at_s"].max())) / 3600
    height = 1.6 + 0.32 * len(causes) + 1.6
    figure, (rows, total) = plt.subplots(2, 1, figsize=(9, height), sharex=True,
                                         gridspec_kw={"height_ratios": [max(1, len(causes)), 3]})
    fixed_margins(figure, left=1.6, top=0.45, bottom=0.55, gap=0.3)
    for row, cause in enumerate(causes):
        mine = frame[frame["cause"] == cause]
        start = mine["at_s"].to_numpy() / 3600
        back = mine["repaired_s"].to_numpy() / 3600
        back = np.where(back < 0, end_h, np.minimum(back, end_h))
        colour = RUN_COLOURS[row % len(RUN_COLOURS)]
        rows.hlines(np.full(len(start), row), start, back, color=colour, linewidth=5, alpha=0.35)
        hit = mine["jobs_hit"].to_numpy() > 0
        rows.plot(start[hit], np.full(hit.sum(), row), "o", color=colour, markersize=4)
        rows.plot(start[~hit], np.full((~hit).sum(), row), "o", markerfacecolor="none",
                  color=colour, markersize=4)
    rows.set_yticks(range(len(causes)), [f"{c} ({(frame['cause'] == c).sum()})" for c in causes])
    rows.set_ylim(len(causes) - 0.5, -0.5)
    rows.set_title(f"{run.name}: servers down by cause (bar: under repair; filled: a job was hit)")
    order = np.argsort(frame["at_s"].to_numpy(), kind="stable")
    times = frame["at_s"].to_numpy()[order] / 3600
    hits = np.cumsum(frame["jobs_hit"].to_numpy()[order])
    total.step(np.concatenate([[0.0], times, [end_h]]), np.concatenate([[0], hits, hits[-1:]]),
               where="post", color="black", linewidth=1.2)
    total.set_ylabel("interruptions\nso far")
    total.set_xlabel("time (h)")
    total.set_xlim(0, end_h if end_h > 0 else 1)
    save(figure, path)
    repair = run.summary.get("failures", {}).get("repair_gpu_hours", 0)
    return (f"{len(frame)} servers went down ({len(causes)} causes); their failures interrupted "
            f"jobs {int(hits[-1]) if len(hits) else 0} times; {repair:,.1f} GPU-hours of capacity "
            "waited for repair.")
