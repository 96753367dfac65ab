"""Figures of runs on a fabric: each link's utilisation over time (one run), and the CDF of
per-job contention slowdown (every run on one axis).

Each function draws one figure, saves it as a PNG at `path` and returns a caption (None when there
was nothing to draw).
"""

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.transforms import blended_transform_factory

from . import fabric_runs, series
from .figures import LINE_STYLES, RUN_COLOURS, fixed_margins, plain_log_ticks, save

MAX_LINK_LABELS = 40


def time_bins(run):
    """Equal bins from 0 to the run's end: as many as its rounds, at most series.MAX_BINS."""
    ends = [run.summary["makespan_s"], run.links["end_s"].to_numpy().max(initial=0.0),
            run.rounds["end_s"].to_numpy().max(initial=0.0)]
    end = max(float(value) for value in ends)
    bins = max(1, min(series.MAX_BINS, len(run.rounds)))
    return np.linspace(0.0, end if end > 0 else 1.0, bins + 1)


def binned_utilisation(run, rows, count, edges):
    """[link, bin] time-weighted mean utilisation (0-1) of each of `count` links over each bin;
    `rows` gives each links.csv row's link's place on the figure. A round straddling bins is split
    between them; a link absent from a round carried nothing in it."""
    bins = len(edges) - 1
    start = run.links["start_s"].to_numpy()
    end = run.links["end_s"].to_numpy()
    utilisation = run.links["utilisation"].to_numpy()
    first = np.clip(np.searchsorted(edges, start, side="right") - 1, 0, bins - 1)
    last = np.clip(np.searchsorted(edges, end, side="left") - 1, first, bins - 1)
    # Most rounds lie inside one bin: their whole time counts there.
    inside = first == last
    total = np.bincount(rows[inside] * bins + first[inside],
                        weights=utilisation[inside] * (end[inside] - start[inside]),
                        minlength=count * bins)
    split = np.flatnonzero(~inside)
    spans = last[split] - first[split] + 1
    row = np.repeat(split, spans)  # one entry per (straddling row, bin it meets)
    offset = np.arange(len(row)) - np.repeat(np.cumsum(spans) - spans, spans)
    column = first[row] + offset
    overlap = np.minimum(end[row], edges[column + 1]) - np.maximum(start[row], edges[column])
    total += np.bincount(rows[row] * bins + column,
                         weights=utilisation[row] * np.maximum(overlap, 0.0),
                         minlength=count * bins)
    return total.reshape(count, bins) / np.diff(edges)


def link_heatmap(run, path):
    """Each link that ever carried traffic (rows: by level, then name) over time bins."""
    links = fabric_runs.ordered_links(run)
    if not links:
        return None
    place = {name: i for i, (name, _) in enumerate(links)}
    categories = run.links["link"].cat.categories.astype(str)
    code_place = np.array([place.get(name, -1) for name in categories], dtype=np.int64)
    rows = code_place[run.links["link"].cat.codes.to_numpy()]
    edges = time_bins(run)
    means = 100 * binned_utilisation(run, rows, len(links), edges)
    figure, axis = plt.subplots(figsize=(12, min(14.0, max(4.5, 2.0 + 0.11 * len(links)))))
    # Fixed margins (room for the links' names, and the colour bar on the right): a constrained
    # layout would measure every label, a third of the figure's drawing time.
    fixed_margins(figure, left=1.45, right=1.25)
    axis.grid(False)  # before pcolormesh, which would remove it with a deprecation warning
    over = int((means > 100.0 + 1e-6).sum())
    # Idle cells are left white, apart from the lightest colour of a link barely used.
    mesh = axis.pcolormesh(edges / 3600, np.arange(len(links) + 1) - 0.5,
                           np.ma.masked_equal(means, 0.0), cmap="YlOrRd", vmin=0, vmax=100,
                           rasterized=True)
    colour_scale(figure, axis, mesh.get_cmap())
    label_links(axis, links)
    axis.set_xlabel("virtual time (hours)")
    width = edges[1] - edges[0]
    axis.set_title(f"{run.label}: link utilisation (mean over {series.hours_label(width)} bins)")
    save(figure, path)
    return (f"Link utilisation heat-map from links.csv: the {len(links)} links that carried "
            f"traffic (of each physical link, its two directions), servers' NICs, then racks' and "
            f"spines' uplinks; colour: the time-weighted mean utilisation over "
            f"{series.hours_label(width)} bins, gaps between rounds and rounds without traffic "
            "counting as idle; white: idle throughout the bin."
            + (f" {over} cells are over 100% (links.csv's utilisation above 1) and take the "
               "darkest colour." if over else ""))


def colour_scale(figure, axis, cmap):
    """The 0-100% colour scale right of the axis, drawn as an image: matplotlib's colour bar
    module alone takes a tenth of a second to import."""
    box = axis.get_position()
    bar = figure.add_axes([box.x1 + 0.012, box.y0, 0.015, box.height])
    bar.imshow(np.linspace(0, 1, 256)[:, None], aspect="auto", cmap=cmap, origin="lower",
               extent=(0, 1, 0, 100))
    bar.set_xticks([])
    bar.yaxis.tick_right()
    bar.yaxis.set_label_position("right")
    bar.set_ylabel("utilisation (% of the link's capacity)")
    bar.grid(False)


def label_links(axis, links):
    """Link names on the y axis (every k-th when there are many), a line between levels and each
    level's name at its band's middle, right of the axis."""
    count = len(links)
    step = max(1, math.ceil(count / MAX_LINK_LABELS))
    axis.set_ylim(count - 0.5, -0.5)
    axis.set_yticks([])
    transform = blended_transform_factory(axis.transAxes, axis.transData)
    # Names as plain text, not tick labels: matplotlib's ticks cost 4 ms each to build.
    for i in range(0, count, step):
        axis.text(-0.006, i, links[i][0], transform=transform, ha="right", va="center",
                  fontsize=8 if count > 24 else 10)
    levels = [level for _, level in links]
    for level in sorted(set(levels)):
        first, last = levels.index(level), count - 1 - levels[::-1].index(level)
        if first > 0:
            axis.axhline(first - 0.5, color="#444444", linewidth=0.8)
        axis.text(0.005, (first + last) / 2, fabric_runs.LEVELS[level], transform=transform,
                  ha="left", va="center", fontsize=9, color="#222222",
                  bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1})
    axis.set_ylabel("link", labelpad=70)


def contention_cdf(lines, path):
    """One ECDF line per (label, sorted slowdowns); a log axis when they span two decades."""
    lines = [(label, values) for label, values in lines if len(values)]
    if not lines:
        return None
    legend_in = 0.25 * len(lines)
    figure, axis = plt.subplots(figsize=(10, 5.0 + legend_in))
    fixed_margins(figure, left=0.9, right=0.3, top=0.45, bottom=0.85 + legend_in)
    for index, (label, values) in enumerate(lines):
        fraction = np.arange(1, len(values) + 1) / len(values)
        p99 = float(np.quantile(values, 0.99))
        axis.step(np.concatenate([[values[0]], values]), np.concatenate([[0.0], fraction]),
                  where="post", linewidth=2, color=RUN_COLOURS[index % len(RUN_COLOURS)],
                  linestyle=LINE_STYLES[index // len(RUN_COLOURS) % len(LINE_STYLES)],
                  label=f"{label}: {len(values)} jobs, mean {np.mean(values):.3f}x, "
                        f"p99 {p99:.3f}x")
    high = max(float(values[-1]) for _, values in lines)
    logarithmic = high > 100
    if logarithmic:
        axis.set_xscale("log")
        plain_log_ticks(axis.xaxis)
    else:
        axis.set_xlim(0.995, max(1.05, 1 + 1.03 * (high - 1)))
    axis.set_xlabel("contention slowdown (leased time / leased time without contention"
                    + (", log scale)" if logarithmic else ")"))
    axis.set_ylabel("fraction of jobs that crossed the fabric")
    axis.set_ylim(0, 1.02)
    axis.set_title("Contention slowdown CDF: how much sharing links slowed each job")
    # Under the axes (3.7 inches tall), 0.55 inches down: below the x label.
    axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.55 / 3.7), frameon=False)
    save(figure, path)
    return ("Per measured job that crossed the fabric (jobs.csv's comm_s > 0): its leased time "
            "(gpu_seconds / gpus) over that time less contention_s, what sharing links with other "
            "jobs cost it (1: nothing). A sweep's runs that differ only in their seed make one "
            "line, their jobs pooled.")
