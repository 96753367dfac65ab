"""A sweep's figures: each figure of its runs against the swept value, mean over seeds with the
95% confidence interval as error bars, one line per combination of the other swept fields.

The x axis is the first swept field with more than one value whose values are all numbers (a
load, a count), else the first with more than one value (a mechanism, a policy: one position
each). Lines are set slightly apart so that error bars at the same value do not hide each other.
"""

import math
import os

import matplotlib.pyplot as plt

from . import sweeps
from .figures import RUN_COLOURS, save

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
    return (f"mean over {which} seeds; error bars: 95% confidence interval of the mean "
            "(Student's t, n - 1 degrees of freedom)")


def draw(sweep, metric, spreads, x, path):
    """One figure of `metric` against the swept field `x`; returns its caption."""
    title, unit, scale = sweeps.shown_as(metric)
    by_line = lines(sweep, spreads, x)
    numeric = all(is_number(value) for points in by_line.values() for value, _ in points)
    categories = list(dict.fromkeys(v for points in by_line.values() for v, _ in points))
    figure, axis = plt.subplots(figsize=(8, 4.8), layout="constrained")
    span = 1.0
    if numeric:
        numbers = [float(value) for value in categories]
        span = (max(numbers) - min(numbers)) or 1.0
    for index, (label, points) in enumerate(by_line.items()):
        # Lines set slightly apart (by 1.5% of the axis, or 0.08 of a category) so that error
        # bars at the same swept value do not hide each other.
        shift = (0.015 * span if numeric else 0.08) * (index - (len(by_line) - 1) / 2)
        if numeric:
            points = sorted(points, key=lambda point: float(point[0]))
            xs = [float(value) + shift for value, _ in points]
        else:
            xs = [categories.index(value) + shift for value, _ in points]
        cells = [by_metric[metric] for _, by_metric in points]
        means = [scale * s.mean for s in cells]
        errors = [[scale * (s.mean - s.ci_low) if s.n > 1 else 0 for s in cells],
                  [scale * (s.ci_high - s.mean) if s.n > 1 else 0 for s in cells]]
        # Lines join numbers (a trend between them means something), not categories.
        axis.errorbar(xs, means, yerr=errors, capsize=4, linewidth=1.8, markersize=6,
                      linestyle="-" if numeric else "none",
                      marker=MARKERS[index % len(MARKERS)],
                      color=RUN_COLOURS[index % len(RUN_COLOURS)], label=label or None)
    if not numeric:
        axis.set_xticks(range(len(categories)), categories)
        axis.set_xlim(-0.5, len(categories) - 0.5)
    elif len(categories) <= 12:
        axis.set_xticks([float(value) for value in categories], categories)
    field = sweeps.leaf(sweep.axes[x])
    axis.set_xlabel(sweep.axes[x])
    axis.set_ylabel(f"{title} ({unit})" if unit else title)
    axis.set_title(f"{sweep.name}: {title} by {field}")
    if len(by_line) > 1:
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False,
                    ncols=min(3, len(by_line)))
    save(figure, path)
    return f"{title} by {field}: {seeds_text(spreads)}."


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
