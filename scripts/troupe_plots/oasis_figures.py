"""Figures of an OASiS run (slots.csv, jobs.csv): prices, utilisation, admitted vs rejected jobs.

Each function draws one figure, saves it as a PNG at `path` and returns its caption.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from .figures import save

COLOURS = plt.get_cmap("tab10").colors
MACHINES = [("worker", "worker servers"), ("ps", "PS machines")]


def used(run, machine, resource):
    """A PS resource that is never used (PS machines have no GPUs) is left out of the figures."""
    return machine == "worker" or run.slots[f"{machine}_use_{resource}"].to_numpy().any()


def left_out(run):
    return [f"{resource} on {title}" for machine, title in MACHINES for resource in run.resources
            if not used(run, machine, resource)]


# Prices span hundreds of decades (1e-300 and less in a cell that is not nearly full), so the
# figure shows the top ones: what a job's utility (1 to 100 by default) can notice.
PRICE_DECADES = 6


def prices(run, path):
    """Each resource's price per slot (mean over machines) as a heat-map, one row per resource and
    machine kind, the colour on a log scale over the top PRICE_DECADES decades of the prices."""
    slots = run.slots
    x = slots["slot"].to_numpy()
    rows = [(machine, title, resource) for machine, title in MACHINES
            for resource in run.resources if used(run, machine, resource)]
    values = np.array([slots[f"{machine}_price_{resource}"].to_numpy(dtype=float)
                       for machine, _, resource in rows])
    highest = float(values.max(initial=0.0))
    top = highest if highest > 0 else 1.0
    floor = top * 10.0 ** -PRICE_DECADES
    kinds = [[i for i, row in enumerate(rows) if row[0] == machine] for machine, _ in MACHINES]
    kinds = [(title, indices) for (_, title), indices in zip(MACHINES, kinds) if indices]
    figure, axes = plt.subplots(len(kinds), 1, figsize=(11, 1.6 + 0.42 * len(rows)),
                                sharex=True, layout="constrained", squeeze=False,
                                height_ratios=[len(indices) for _, indices in kinds])
    edges = np.append(x, x[-1] + 1) - 0.5 if len(x) else np.array([-0.5, 0.5])
    norm = LogNorm(vmin=floor, vmax=top)
    for axis, (title, indices) in zip(axes[:, 0], kinds):
        shown = np.clip(values[indices], floor, top)  # 0 and anything below the floor: the floor
        axis.grid(False)
        mesh = axis.pcolormesh(edges, np.arange(len(indices) + 1) - 0.5, shown, cmap="magma",
                               norm=norm, rasterized=True)
        axis.set_yticks(range(len(indices)), [rows[i][2] for i in indices])
        axis.set_ylim(len(indices) - 0.5, -0.5)
        axis.set_ylabel(title)
    bar = figure.colorbar(mesh, ax=axes[:, 0].tolist(), extend="min", pad=0.01,
                          label="price per unit (mean over machines)")
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.0e}"))
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    axes[-1, 0].set_xlabel("slot")
    axes[-1, 0].xaxis.set_major_locator(MaxNLocator(integer=True))
    figure.suptitle(f"{run.label}: resource prices per slot")
    save(figure, path)
    skipped = left_out(run)
    return (f"Price of each resource per slot, the mean over machines of each kind, on a log "
            f"scale from {floor:.0e} to the highest price, {highest:.3g}: darker is cheaper, "
            f"and every price below {floor:.0e} (as good as free next to a job's utility) has "
            "the darkest colour" +
            (f"; never used, so not shown: {', '.join(skipped)}." if skipped else "."))


def utilisation(run, path):
    """Each resource's use per slot, percent of the machines' capacity."""
    slots = run.slots
    x = slots["slot"].to_numpy()
    figure, axes = plt.subplots(2, 1, figsize=(11, 7.6), sharex=True, layout="constrained")
    for axis, (machine, title) in zip(axes, MACHINES):
        for index, resource in enumerate(run.resources):
            if not used(run, machine, resource):
                continue
            axis.plot(x, 100 * slots[f"{machine}_use_{resource}"].to_numpy(dtype=float),
                      color=COLOURS[index % len(COLOURS)], linewidth=1.3, label=resource)
        axis.set_ylim(0, 105)
        axis.set_ylabel(f"used on {title}\n(% of capacity)")
        axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=True, title="resource")
    axes[1].set_xlabel("slot")
    axes[1].xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[1].set_xlim(x.min(), max(x.max(), x.min() + 1))
    figure.suptitle(f"{run.label}: utilisation per slot")
    save(figure, path)
    skipped = left_out(run)
    return ("Share of each resource's capacity in use per slot" +
            (f"; never used, so not shown: {', '.join(skipped)}." if skipped else "."))


def admissions(run, path):
    """Jobs admitted and rejected per arrival slot (stacked), and both cumulative."""
    jobs, slots = run.jobs, run.slots
    arrivals = jobs["arrival"].to_numpy()
    first = int(min(slots["slot"].min(), arrivals.min(initial=0)))
    last = int(max(slots["slot"].max(), arrivals.max(initial=0)))
    x = np.arange(first, last + 1)
    admitted_mask = jobs["admitted"].to_numpy() != 0
    arrival = jobs["arrival"].to_numpy()
    admitted = np.bincount(arrival[admitted_mask] - first, minlength=len(x))
    rejected = np.bincount(arrival[~admitted_mask] - first, minlength=len(x))
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7.6), sharex=True,
                                         layout="constrained")
    top.bar(x, admitted, width=1.0, color="#2ca02c", label="admitted")
    top.bar(x, rejected, width=1.0, bottom=admitted, color="#d62728", alpha=0.8, label="rejected")
    top.set_ylabel("jobs arriving\nper slot")
    top.yaxis.set_major_locator(MaxNLocator(integer=True))
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=True)
    bottom.plot(x, np.cumsum(admitted), color="#2ca02c", linewidth=2,
                label=f"admitted ({int(admitted.sum())})")
    bottom.plot(x, np.cumsum(rejected), color="#d62728", linewidth=2,
                label=f"rejected ({int(rejected.sum())})")
    bottom.set_ylabel("jobs so far\n(cumulative)")
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel("arrival slot")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.set_xlim(first - 0.5, last + 0.5)
    bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=True)
    utility = run.summary.get("total_utility")
    figure.suptitle(f"{run.label}: admitted vs rejected jobs"
                    + (f" (total utility {utility:,.1f})" if utility is not None else ""))
    save(figure, path)
    return "Jobs by arrival slot, admitted or rejected at arrival; below, the running totals."
