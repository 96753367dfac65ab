"""The JCT CDF (every run on one axis) and the allocation-over-time figure (one per run).

Each function draws one figure, saves it as a PNG at `path` and returns a caption (or None when
there was nothing to draw, with the reason in the caption instead).
"""

import os
from collections import namedtuple

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from . import output_folder, series

DPI = 100
RUN_COLOURS = plt.get_cmap("tab10").colors
LINE_STYLES = ("-", "--", ":", "-.")
RESOURCE_COLOURS = {"GPUs": "#1f77b4", "CPUs": "#ff7f0e", "memory": "#2ca02c"}

plt.rcParams.update({
    "font.size": 11, "axes.titlesize": 13, "axes.labelsize": 11, "legend.fontsize": 10,
    "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
    "path.simplify": True,
})


def save(figure, path):
    output_folder.name_entry(os.path.dirname(path) or ".", os.path.basename(path))
    # No "Software" tag: the bytes depend on the inputs only, not on the matplotlib version.
    figure.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(figure)


def fixed_margins(figure, left=1.1, right=0.25, top=0.5, bottom=0.6, gap=0.12):
    """Margins in inches, for figures whose labels are known in advance: a fixed layout costs
    nothing, where matplotlib's constrained layout measures every label (a third of a figure's
    drawing time)."""
    width, height = figure.get_size_inches()
    figure.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height,
                           bottom=bottom / height, hspace=gap / (height / len(figure.axes)))


def steps_area(axis, steps_edges, values, colour, alpha, line=True):
    """A piecewise-constant series (values[i] on [edges[i], edges[i+1])) as a filled area and its
    outline: fill_between and a steps line draw in a fraction of the time stairs patches take."""
    heights = np.append(values, values[-1] if len(values) else 0.0)
    axis.fill_between(steps_edges, heights, step="post", color=colour, alpha=alpha, linewidth=0)
    if line:
        axis.plot(steps_edges, heights, drawstyle="steps-post", color=colour, linewidth=1)


def measured_jct_hours(run):
    """JCTs of the measured jobs that finished (the jobs summary.json's statistics are over)."""
    jobs = run.jobs
    done = jobs[(jobs["measured"] == 1) & (jobs["end_s"] >= 0)]
    return np.sort(done["jct_s"].to_numpy(dtype=float)) / 3600


def plain_number(value, _position):
    return f"{value:g}"


def plain_log_ticks(axis):
    """Ticks of a log-scaled axis at 1, 2 and 5 per decade, written as plain numbers ("0.05",
    "200"): matplotlib's default 10^k labels go through its mathtext parser, which is slower and
    warns on Debian's matplotlib and pyparsing."""
    axis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    axis.set_major_formatter(FuncFormatter(plain_number))
    axis.set_minor_formatter(NullFormatter())


def jct_cdf(lines, path):
    """One ECDF line per (label, sorted JCT hours); log-scaled hours when JCTs span more than two
    decades."""
    lines = [(label, hours) for label, hours in lines if len(hours)]
    if not lines:
        return None
    figure, axis = plt.subplots(figsize=(10, 5.6 + 0.25 * len(lines)), layout="constrained")
    spans = []
    for index, (label, hours) in enumerate(lines):
        fraction = np.arange(1, len(hours) + 1) / len(hours)
        # Colours repeat after ten lines; the line style tells those apart.
        axis.step(np.concatenate([[hours[0]], hours]), np.concatenate([[0.0], fraction]),
                  where="post", linewidth=2, color=RUN_COLOURS[index % len(RUN_COLOURS)],
                  linestyle=LINE_STYLES[index // len(RUN_COLOURS) % len(LINE_STYLES)],
                  label=f"{label}: {len(hours)} jobs, median {np.median(hours):.1f} h")
        spans.append((hours[0], hours[-1]))
    low, high = min(s[0] for s in spans), max(s[1] for s in spans)
    logarithmic = low > 0 and high / low > 100
    if logarithmic:
        axis.set_xscale("log")
        plain_log_ticks(axis.xaxis)
    axis.set_xlabel("job completion time (hours" + (", log scale)" if logarithmic else ")"))
    axis.set_ylabel("fraction of measured jobs")
    axis.set_ylim(0, 1.02)
    axis.set_title("JCT CDF: fraction of jobs finished within a given time")
    # Under the axes, not on them: CDFs of long runs fill every corner of the plot.
    axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    save(figure, path)
    return ("JCT CDF of the measured jobs that finished (the jobs of summary.json's JCT figures); "
            "a sweep's runs that differ only in their seed make one line, their jobs pooled.")


# One resource's allocation over time: values in percent of capacity when `percent`.
Share = namedtuple("Share", "name steps values ylabel top percent")


def resource_shares(run, capacity):
    """A Share for GPUs, CPUs and memory."""
    shares = []
    for name, column, _, unit in series.RESOURCES:
        steps = series.rebinned(series.round_steps(run.rounds, column))
        if capacity[name]:
            shares.append(Share(name, steps, 100 * steps.values / capacity[name],
                                f"{name} allocated\n(% of capacity)", 105, True))
        else:
            shares.append(Share(name, steps, steps.values, f"{unit} allocated",
                                1.05 * max(1.0, float(steps.values.max(initial=0))), False))
    return shares


def follows_gpus(shares):
    """Whether CPUs and memory were allocated in the same share as GPUs throughout (a
    GPU-proportional run), so that their panels would repeat the GPU panel."""
    gpu = shares[0]
    return gpu.percent and all(
        other.percent and len(other.values) == len(gpu.values)
        and np.allclose(other.values, gpu.values, atol=0.05) for other in shares[1:])


def allocation(run, capacity, path):
    """GPUs, CPUs and memory allocated (percent of capacity) and jobs queued over virtual time;
    one resource panel when CPUs and memory only follow GPUs."""
    shares = resource_shares(run, capacity)
    lockstep = follows_gpus(shares)
    if lockstep:
        shares = shares[:1]
    panels = len(shares) + 1
    figure, axes = plt.subplots(panels, 1, figsize=(11, 2.2 * panels), sharex=True)
    fixed_margins(figure)
    bin_s = 0.0
    for axis, share in zip(axes, shares):
        name, steps, values = share.name, share.steps, share.values
        bin_s = steps.bin_s
        ylabel = "GPUs, CPUs, memory\nallocated (% of capacity)" if lockstep else share.ylabel
        axis.set_ylim(0, share.top)
        steps_area(axis, steps.edges / 3600, values, RESOURCE_COLOURS[name], 0.35)
        axis.set_ylabel(ylabel)
    queued = series.rebinned(series.round_steps(run.rounds, "jobs_queued"))
    last = axes[-1]
    steps_area(last, queued.edges / 3600, queued.values, "#7f7f7f", 0.5, line=False)
    last.set_ylabel("jobs queued\n(waiting for GPUs)")
    last.set_ylim(0, max(1.0, 1.05 * float(queued.values.max(initial=0))))
    last.yaxis.set_major_locator(MaxNLocator(integer=True))
    last.set_xlabel("virtual time (hours)")
    last.set_xlim(0, max(run.summary["makespan_s"], queued.edges[-1]) / 3600)
    how = f"mean over {series.hours_label(bin_s)} bins" if bin_s else "per round"
    figure.suptitle(f"{run.label}: allocation and queue over time ({how})")
    for axis in axes:
        axis.label_outer()
    save(figure, path)
    known = ", ".join(f"{value:g} {unit}" for (name, _, _, unit), value in
                      ((r, capacity[r[0]]) for r in series.RESOURCES) if value)
    same = (" CPUs and memory were allocated in the same share as GPUs throughout (GPU-"
            "proportional), so one panel shows all three." if lockstep else "")
    return (f"Resources allocated ({how}); capacity derived from utilisation x makespan in "
            f"summary.json: {known or 'unknown (nothing allocated)'}.{same}")
