"""Time series over a run's rounds, and the cluster's capacity derived from the summary.

Rounds are back to back while anything is queued; when nothing is, the scheduler sleeps until the
next arrival, so the gaps between rounds have nothing allocated and nothing queued.
"""

from dataclasses import dataclass

import numpy as np

# Above this many steps a series is shown as time-weighted means over MAX_BINS equal bins.
MAX_STEPS = 1500
MAX_BINS = 500

RESOURCES = (  # (name, rounds.csv column, summary.json utilisation, unit)
    ("GPUs", "gpus_allocated", "gpu_utilisation", "GPUs"),
    ("CPUs", "cpus_allocated", "cpu_utilisation", "CPUs"),
    ("memory", "memory_gb_allocated", "memory_utilisation", "GB"),
)


@dataclass
class Steps:
    """A piecewise-constant function: values[i] holds on [edges[i], edges[i+1])."""
    edges: np.ndarray  # seconds, non-decreasing
    values: np.ndarray
    bin_s: float = 0.0  # > 0: the values are means over bins of this width


def round_steps(rounds, column):
    """The column as a step function of virtual time from 0, zero in the gaps between rounds."""
    edges, values = gapped(rounds, rounds[column].to_numpy(dtype=float))
    return Steps(edges, values)


def gapped(rounds, amounts):
    """Edges from 0 to the last round's end, and `amounts` (shape (..., rounds)) spread over them
    with a zero step for the gap before each round (zero-width when there is none)."""
    start = rounds["start_s"].to_numpy(dtype=float)
    end = rounds["end_s"].to_numpy(dtype=float)
    if len(start) == 0:
        return np.array([0.0, 1.0]), np.zeros(amounts.shape[:-1] + (1,))
    edges = np.empty(2 * len(start) + 1)
    edges[0:-1:2], edges[1::2], edges[-1] = np.concatenate([[0.0], end[:-1]]), start, end[-1]
    values = np.zeros(amounts.shape[:-1] + (2 * len(start),))
    values[..., 1::2] = amounts
    keep = np.diff(edges) > 0  # drop the empty gaps, which would draw a dip to 0 at every round
    return np.append(edges[:-1][keep], edges[-1]), values[..., keep]


def bin_means(edges, values, bins):
    """Time-weighted means of step functions (rows of `values`) over `bins` equal bins."""
    cumulative = np.cumsum(values * np.diff(edges), axis=-1)
    cumulative = np.concatenate([np.zeros(values.shape[:-1] + (1,)), cumulative], axis=-1)
    bin_edges = np.linspace(edges[0], edges[-1], bins + 1)
    at_edges = np.apply_along_axis(lambda row: np.interp(bin_edges, edges, row), -1, cumulative)
    return bin_edges, np.diff(at_edges, axis=-1) / np.diff(bin_edges)


def rebinned(steps, max_steps=MAX_STEPS, bins=MAX_BINS):
    """Time-weighted means over equal bins when there are too many steps to see."""
    if len(steps.values) <= max_steps or steps.edges[-1] <= steps.edges[0]:
        return steps
    bin_edges, means = bin_means(steps.edges, steps.values, bins)
    return Steps(bin_edges, means, bin_edges[1] - bin_edges[0])


def derive_capacity(summary, rounds):
    """Capacity of each resource: utilisation = allocated resource-time / (capacity x makespan),
    so capacity = allocated resource-time / (utilisation x makespan). None where nothing was
    allocated (the utilisation then says nothing about the capacity)."""
    duration = (rounds["end_s"] - rounds["start_s"]).to_numpy(dtype=float)
    makespan = summary["makespan_s"]
    capacity = {name: None for name, _, _, _ in RESOURCES}
    if rounds.empty:
        return capacity
    for name, column, utilisation_key, _ in RESOURCES:
        amounts = rounds[column].to_numpy(dtype=float)
        used = float(np.sum(amounts * duration))
        utilisation = summary[utilisation_key]
        if not utilisation or utilisation <= 0 or makespan <= 0 or used <= 0:
            capacity[name] = None
            continue
        value = used / (utilisation * makespan)
        # The utilisation has 6 decimals: snap to a whole amount when that is within rounding.
        if name == "GPUs" or abs(value - round(value)) <= max(1e-3, value * 2e-6 / utilisation):
            value = float(round(value))
        capacity[name] = max(value, float(amounts.max()))
    return capacity


def hours_label(seconds):
    """"1.6 h" / "25 min": a bin width for a caption."""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min"
