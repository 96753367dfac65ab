"""A sweep's figures: each figure of its runs against the swept value, mean over seeds with the
95% confidence interval as error bars (cut to the figure's range: never below 0).

The x axis is the first swept field with more than one value whose values are all numbers (a
load, a count): one line per combination of the other swept fields, the lines set slightly apart
so that error bars at the same value do not hide each other. Without one, the first swept field
with more than one value (a mechanism, a policy): one bar per value, side by side for the other
fields' combinations, with the mean written on top.
"""

import math
import os

import matplotlib.pyplot as plt

from . import sweeps
from .figures import RUN_COLOURS, fixed_margins, save

MARKERS = "osD^v<>ph*"


def is_number(text):
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def x_axis(sweep):
    """The index of the swept field drawn along x, or None when no field has two values."""
    varied = [i for i in range(len(sweep.axes))
              if len({row["values"][i] for row in sweep.rows}) > 1]
    numeric = [i for i in varied if all(is_number(row["values"][i]) for row in sweep.rows)]
    return (numeric or varied or [None])[0]


def constant_figures(sweep):
    """{metric: value} of the figures that are the same in every run (nothing to draw)."""
    return {m: sweep.rows[0]["figures"][m] for m in sweep.metrics
            if len({row["figures"][m] for row in sweep.rows}) == 1}


def lines(sweep, spreads, x):
    """{label of the other fields' values: [(x value, Spread of each metric)]}, in sweep order."""
    out = {}
    for values, by_metric in spreads:
        others = ", ".join(f"{sweeps.leaf(sweep.axes[i])}={v}" for i, v in enumerate(values)
                           if i != x)
        out.setdefault(others, []).append((values[x], by_metric))
    return out


def seeds_text(spreads):
    counts = sorted({s.n for _, by_metric in spreads for s in by_metric.values()})
    if counts[-1] == 1:
        return "one seed each: no spread to show"
    which = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    return f"mean over {which} seeds, error bars the 95% interval (never below 0)"


def error_bars(cells, scale):
    """[below, above] the mean, in display units; 0 where a single seed gives no interval."""
    return [[scale * (s.mean - s.ci_low) if s.n > 1 else 0 for s in cells],
            [scale * (s.ci_high - s.mean) if s.n > 1 else 0 for s in cells]]


def draw(sweep, metric, spreads, x, path):
    """One figure of `metric` against the swept field `x`; returns its caption."""
    title, unit, scale = sweeps.shown_as(metric)
    by_line = lines(sweep, spreads, x)
    numeric = all(is_number(value) for points in by_line.values() for value, _ in points)
    legend_rows = math.ceil(len(by_line) / 3) if len(by_line) > 1 else 0
    figure, axis = plt.subplots(figsize=(8, 4.8 + 0.3 * legend_rows))
    # The legend, a row per three lines, goes under the x axis's label.
    fixed_margins(figure, left=0.95, bottom=0.65 + (0.3 * legend_rows + 0.2 if legend_rows else 0))
    (line_chart if numeric else bar_chart)(axis, by_line, metric, scale)
    field = sweeps.leaf(sweep.axes[x])
    axis.set_xlabel(sweep.axes[x])
    axis.set_ylabel(f"{title} ({unit})" if unit else title)
    axis.set_title(f"{sweep.name}: {title} by {field}")
    if len(by_line) > 1:
        height = figure.get_size_inches()[1]
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, (0.3 * legend_rows + 0.15) / height),
                    bbox_transform=figure.transFigure, frameon=False, ncols=min(3, len(by_line)))
    save(figure, path)
    shape = "lines over its values" if numeric else "one bar per value"
    return f"{title} by {field}, {shape}: {seeds_text(spreads)}."


def line_chart(axis, by_line, metric, scale):
    """Numbers along x: a trend between them means something, so points are joined."""
    numbers = [float(value) for points in by_line.values() for value, _ in points]
    span = (max(numbers) - min(numbers)) or 1.0
    for index, (label, points) in enumerate(by_line.items()):
        # Lines set 1.5% of the axis apart so that error bars at one value do not hide each other.
        shift = 0.015 * span * (index - (len(by_line) - 1) / 2)
        points = sorted(points, key=lambda point: float(point[0]))
        cells = [by_metric[metric] for _, by_metric in points]
        axis.errorbar([float(value) + shift for value, _ in points],
                      [scale * s.mean for s in cells], yerr=error_bars(cells, scale), capsize=4,
                      linewidth=1.8, markersize=6, marker=MARKERS[index % len(MARKERS)],
                      color=RUN_COLOURS[index % len(RUN_COLOURS)], label=label or None)
    values = list(dict.fromkeys(v for points in by_line.values() for v, _ in points))
    if len(values) <= 12:
        axis.set_xticks([float(value) for value in values], values)


def bar_chart(axis, by_line, metric, scale):
    """Categories along x (a mechanism, a policy): bars, side by side for the other fields."""
    categories = list(dict.fromkeys(v for points in by_line.values() for v, _ in points))
    width = 0.8 / len(by_line)
    bars = sum(len(points) for points in by_line.values())
    for index, (label, points) in enumerate(by_line.items()):
        offset = width * (index - (len(by_line) - 1) / 2)
        cells = [by_metric[metric] for _, by_metric in points]
        xs = [categories.index(value) + offset for value, _ in points]
        means = [scale * s.mean for s in cells]
        errors = error_bars(cells, scale)
        axis.bar(xs, means, width=width * 0.92, yerr=errors, capsize=4,
                 color=RUN_COLOURS[index % len(RUN_COLOURS)], label=label or None,
                 error_kw={"elinewidth": 1.2, "ecolor": "#333333"})
        if bars <= 16:  # the mean above each bar and its error bar, where there is room
            for x, mean, above in zip(xs, means, errors[1]):
                axis.annotate(sweeps.significant(mean, mean, 3), (x, mean + above),
                              xytext=(0, 3), textcoords="offset points", ha="center",
                              va="bottom", fontsize=9)
    axis.set_xticks(range(len(categories)), categories)
    axis.set_xlim(-0.5, len(categories) - 0.5)
    axis.margins(y=0.12)
    axis.grid(axis="x", visible=False)


def draw_all(sweep, spreads, folder, stem):
    """Every figure that varies; returns [{"file", "alt", "caption"}] and notes."""
    x = x_axis(sweep)
    if x is None:
        return [], ["No sweep figures: no swept field has two values."]
    same = constant_figures(sweep)
    drawn = []
    for metric in sweep.metrics:
        if metric in same:
            continue
        name = f"{stem}-sweep-{metric}.png"
        caption = draw(sweep, metric, spreads, x, os.path.join(folder, name))
        drawn.append({"file": name, "alt": f"{sweep.name}: {metric}", "caption": caption})
    notes = []
    if same:
        notes.append("Not shown, the same in every run: " + ", ".join(
            f"{metric} = {value:g}" for metric, value in same.items()) + ".")
    return drawn, notes
