"""A sweep folder (`troupe sweep --out DIR`): its runs, and the spread of each figure over seeds.

DIR/sweep.csv has one row a run: the swept fields (one column each, named by their --over path),
`seed`, the run's figures (the columns the sweep's table compares, in the units of summary.json)
and `run_dir`, the run's folder inside DIR. Runs with the same swept values differ only in their
seed; each figure is summarised over them as n, mean, sample standard deviation, min, max and a
95% confidence interval of the mean (Student's t with n - 1 degrees of freedom), cut to the values
the figure can take: no time, count or rate below 0, no share (a utilisation, a hit rate, AUC)
above 1. With few seeds mean ± t sd / sqrt(n) would otherwise reach past them (t = 12.7 for 2).
"""

import csv
import io
import math
import os
from dataclasses import dataclass

from .errors import InputError

SWEEP_TABLE = "sweep.csv"

# How a figure is shown: (title, unit, scale from sweep.csv's units). Others: the column's name.
KNOWN_FIGURES = {
    "jct_mean_s": ("JCT mean", "h", 1 / 3600), "jct_median_s": ("JCT median", "h", 1 / 3600),
    "jct_p95_s": ("JCT p95", "h", 1 / 3600), "jct_p99_s": ("JCT p99", "h", 1 / 3600),
    "makespan_s": ("makespan", "h", 1 / 3600), "batch_time_s": ("batch time", "ms", 1000),
    "gpu_utilisation": ("GPU utilisation", "%", 100),
    "cpu_utilisation": ("CPU utilisation", "%", 100),
    "memory_utilisation": ("memory utilisation", "%", 100),
    "hbm_hit_rate": ("HBM-PS hit rate", "%", 100), "mem_hit_rate": ("MEM-PS hit rate", "%", 100),
    "mean_gpu_use": ("GPU use", "%", 100), "wall_s": ("wall time", "s", 1),
    "examples_per_s": ("examples per wall second", "", 1), "auc": ("AUC", "", 1),
    "total_utility": ("total utility", "", 1),
}

# Figures that are shares, in [0, 1]; every figure troupe sweep writes is at least 0 (times,
# counts, rates, utilities, a loss), and so is any other column named *_s (seconds).
SHARES = {"gpu_utilisation", "cpu_utilisation", "memory_utilisation", "hbm_hit_rate",
          "mem_hit_rate", "mean_gpu_use", "auc"}
NONNEGATIVE = set(KNOWN_FIGURES) | {"final_loss", "emulated_s", "admitted", "rejected",
                                    "finished", "late", "jobs_measured_finished", "rounds"}


def value_range(metric):
    """(lowest, highest) value the figure can take; a confidence interval is cut to it."""
    if metric in SHARES:
        return 0.0, 1.0
    if metric in NONNEGATIVE or metric.endswith("_s"):
        return 0.0, math.inf
    return -math.inf, math.inf


@dataclass
class Spread:
    n: int
    mean: float
    sd: float  # sample standard deviation (n - 1); nan when n < 2
    low: float  # min
    high: float  # max
    ci_low: float  # the 95% confidence interval of the mean, within value_range; nan when n < 2
    ci_high: float


@dataclass
class Sweep:
    path: str
    name: str  # the folder's name, made unique among the report's sweeps
    axes: list  # swept fields, in --over order
    metrics: list  # figure columns, in sweep.csv's order
    rows: list  # per run: {"values": tuple, "seed": str, "figures": {metric: float}, "run_dir"}

    def groups(self):
        """[(swept values, [row, ...])] in the sweep's order: runs that differ only in seed."""
        order, members = [], {}
        for row in self.rows:
            if row["values"] not in members:
                order.append(row["values"])
                members[row["values"]] = []
            members[row["values"]].append(row)
        return [(values, members[values]) for values in order]

    def spreads(self):
        """[(swept values, {metric: Spread})] in the sweep's order."""
        return [(values, {m: spread_of([r["figures"][m] for r in rows], value_range(m))
                          for m in self.metrics})
                for values, rows in self.groups()]


def shown_as(metric):
    """(title, unit, scale) of a figure column: hours, percent and ms where they read better."""
    if metric in KNOWN_FIGURES:
        return KNOWN_FIGURES[metric]
    if metric.endswith("_s"):
        return metric[:-2].replace("_", " "), "s", 1
    return metric.replace("_", " "), "", 1


def leaf(field):
    """An axis's name as the table shows it: the last part of its --over path."""
    return field.rsplit(".", 1)[-1]


def is_sweep(path):
    """A sweep folder holds sweep.csv and, unlike a run folder, no summary.json."""
    return (os.path.isfile(os.path.join(path, SWEEP_TABLE))
            and not os.path.isfile(os.path.join(path, "summary.json")))


def expand(paths):
    """(run paths, sweeps): a sweep folder stands for its runs, in the sweep's order (sweep.csv's
    run_dir column, row by row); other paths are runs as given."""
    run_paths, sweeps, seen = [], [], {}
    for path in paths:
        if not is_sweep(path):
            run_paths.append(path)
            continue
        base = os.path.basename(os.path.normpath(os.path.abspath(path))) or "sweep"
        seen[base] = seen.get(base, 0) + 1
        sweep = read_sweep(path, base if seen[base] == 1 else f"{base}-{seen[base]}")
        sweeps.append(sweep)
        run_paths += [os.path.join(path, row["run_dir"]) for row in sweep.rows]
    return run_paths, sweeps


def read_sweep(path, name):
    table = os.path.join(path, SWEEP_TABLE)
    # csv, not split(","): swept values are quoted where they hold a comma, a quote or a line break.
    with open(table, encoding="utf-8", newline="") as file:
        reader = csv.reader(file)
        try:
            header = next(reader, [])
            if "run_dir" not in header:
                raise InputError(table, 1, "has no run_dir column (an older troupe wrote it): "
                                 "pass the sweep's run folders instead")
            if "seed" not in header or header[-1] != "run_dir":
                raise InputError(table, 1,
                                 "expected the swept fields, seed, the figures and run_dir")
            seed = header.index("seed")
            axes, metrics = header[:seed], header[seed + 1:-1]
            rows = [read_row(table, reader.line_num, fields, header, seed) for fields in reader]
        except csv.Error as error:
            raise InputError(table, reader.line_num, f"not CSV: {error}") from None
    if not rows:
        raise InputError(table, 2, "holds no run")
    return Sweep(path, name, axes, metrics, rows)


def read_row(table, number, fields, header, seed):
    if len(fields) != len(header) or not fields[-1]:
        raise InputError(table, number, f"expected {len(header)} fields with a run_dir")
    if not fields[seed].isdigit():
        raise InputError(table, number, f'column "seed": "{fields[seed]}" is not a whole number')
    figures = {}
    for column, text in zip(header[seed + 1:-1], fields[seed + 1:-1]):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise InputError(table, number, f'column "{column}": "{text}" is not a number')
        figures[column] = value
    return {"values": tuple(fields[:seed]), "seed": fields[seed], "figures": figures,
            "run_dir": fields[-1]}


def spread_of(values, bounds=(-math.inf, math.inf)):
    """n, mean, sd, min, max and the 95% t interval of the mean, cut to bounds (lowest, highest
    value the figure can take): the interval of a time never goes below 0."""
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return Spread(n, mean, math.nan, min(values), max(values), math.nan, math.nan)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    low, high = bounds
    return Spread(n, mean, sd, min(values), max(values), max(low, mean - half),
                  min(high, mean + half))


def t_within(t, df):
    """P(|T| <= t) for Student's t with a whole number df of degrees of freedom, in closed form
    (Abramowitz and Stegun 26.7.3 and 26.7.4), so that no statistics package is needed."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2 == 0:  # sin(theta) * (1 + 1/2 c2 + 1*3/(2*4) c2^2 + ...), (df - 2) / 2 terms
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return math.sin(theta) * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = 1.0, 1.0  # 2/pi (theta + sin cos (1 + 2/3 c2 + 2*4/(3*5) c2^2 + ...))
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)


def t_quantile_975(df):
    """The t with P(|T| <= t) = 0.95: a 95% interval of the mean is mean ± t sd / sqrt(n)."""
    low, high = 1.959, 12.71  # the normal's 1.95996 and df = 1's 12.7062 bound it
    for _ in range(60):
        middle = (low + high) / 2
        if t_within(middle, df) < 0.95:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def spread_csv(sweep, spreads):
    """One row a combination and figure, in sweep.csv's units: the swept fields, figure, n, mean,
    sd, min, max, ci95_low, ci95_high (sd and the interval empty for a single seed)."""
    out = io.StringIO()
    # Quoted where a swept value holds a comma, a quote or a line break, as sweep.csv is.
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(sweep.axes + ["figure", "n", "mean", "sd", "min", "max", "ci95_low",
                                  "ci95_high"])
    for values, by_metric in spreads:
        for metric in sweep.metrics:
            s = by_metric[metric]
            numbers = [s.mean, s.sd, s.low, s.high, s.ci_low, s.ci_high]
            writer.writerow(list(values) + [metric, str(s.n)] + [
                "" if math.isnan(v) else f"{v:.10g}" for v in numbers])
    return out.getvalue()


def significant(value, reference, digits=4):
    """value with the decimals that give `reference` (the mean) `digits` significant digits."""
    if reference == 0 or not math.isfinite(reference):
        decimals = 2
    else:
        decimals = min(6, max(0, digits - 1 - math.floor(math.log10(abs(reference)))))
    return f"{value:.{decimals}f}"
