"""Figures of a parameter-server run (batches.csv): pipeline stages, cache hit rates, loss.

Each function draws one figure, saves it as a PNG at `path` and returns its caption.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from .figures import plain_log_ticks, save

STAGES = [("read_s", "read examples", "#1f77b4"), ("partition_s", "partition keys", "#ff7f0e"),
          ("ssd_s", "load/dump SSD-PS", "#2ca02c"), ("train_s", "train on HBM-PS", "#d62728")]


def stages(run, path):
    """Each pipeline stage's time per batch and the batch time, ms (log scale over decades)."""
    batches = run.batches
    x = batches["batch"].to_numpy()
    figure, axis = plt.subplots(figsize=(11, 5.6), layout="constrained")
    positive = []
    for column, title, colour in STAGES:
        ms = batches[column].to_numpy(dtype=float) * 1e3
        axis.plot(x, np.where(ms > 0, ms, np.nan), color=colour, linewidth=1.5, label=title)
        positive.append(ms[ms > 0])
    batch_ms = batches["batch_time_s"].to_numpy(dtype=float) * 1e3
    axis.plot(x, np.where(batch_ms > 0, batch_ms, np.nan), color="black", linewidth=2.2,
              linestyle="--", label="batch time")
    positive.append(batch_ms[batch_ms > 0])
    values = np.concatenate(positive)
    logarithmic = len(values) > 0 and values.max() / values.min() > 100
    if logarithmic:
        axis.set_yscale("log")
        plain_log_ticks(axis.yaxis)
    else:
        axis.set_ylim(0, 1.1 * max(values.max(initial=0), 1e-9))
    axis.set_xlabel("batch")
    axis.set_ylabel("time per batch (ms" + (", log scale)" if logarithmic else ")"))
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlim(x.min(), max(x.max(), x.min() + 1))
    summary = run.summary
    slowest = summary.get("slowest_stage")
    axis.set_title(f"{run.label}: pipeline stages per batch"
                   + (f" (slowest: {slowest})" if isinstance(slowest, str) else ""))
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=True)
    save(figure, path)
    return ("Time of each pipeline stage per batch and the batch time (the pipelined step), in "
            "ms; a stage that took no time in a batch leaves a gap.")


def hit_rates(run, path):
    """Hit rate per tier over batches (HBM-PS, MEM-PS, both) and SSD-PS rows read per batch."""
    batches = run.batches
    x = batches["batch"].to_numpy()
    keys = batches["keys"].to_numpy(dtype=float)
    hbm = np.divide(batches["hbm_hits"].to_numpy(dtype=float), keys,
                    out=np.full(len(keys), np.nan), where=keys > 0)
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7.2), sharex=True,
                                         layout="constrained", height_ratios=(3, 2))
    top.plot(x, 100 * hbm, color="#9467bd", linewidth=1.5, label="HBM-PS (hits / keys)")
    top.plot(x, 100 * batches["mem_hit_rate"].to_numpy(dtype=float), color="#2ca02c",
             linewidth=1.5, label="MEM-PS (hits / keys that missed HBM-PS)")
    top.plot(x, 100 * batches["cache_hit_rate"].to_numpy(dtype=float), color="black",
             linewidth=2, linestyle="--", label="HBM-PS + MEM-PS (of all keys)")
    top.set_ylim(0, 100)
    top.set_ylabel("hit rate (%)")
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=True)
    rows = batches["ssd_rows_read"].to_numpy(dtype=float)
    bottom.bar(x, rows / 1e3, width=0.9, color="#8c564b", alpha=0.7, label="rows read from SSD-PS")
    bottom.set_ylabel("SSD-PS rows read\n(thousands)")
    bottom.set_ylim(0, max(1e-3, 1.1 * rows.max(initial=0) / 1e3))
    bottom.set_xlabel("batch")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=True)
    figure.suptitle(f"{run.label}: hit rate per tier over batches")
    save(figure, path)
    return ("Share of each batch's keys found in HBM-PS, of the rest found in MEM-PS, and of all "
            "found in either; below, the rows each batch read from SSD-PS.")


def loss(run, path):
    """Training loss per batch; the held-out AUC (measured once, at the end) in the title."""
    batches = run.batches
    figure, axis = plt.subplots(figsize=(11, 5), layout="constrained")
    axis.plot(batches["batch"].to_numpy(), batches["loss"].to_numpy(dtype=float), color="#1f77b4",
              linewidth=1.5, label="training loss (log loss of the batch)")
    axis.set_xlabel("batch")
    axis.set_ylabel("loss")
    axis.set_ylim(bottom=0)
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    auc = run.summary.get("auc")
    title = f"{run.label}: loss over batches"
    if auc is not None:
        title += f"; held-out AUC at the end {auc:.4f}"
    axis.set_title(title)
    axis.legend(loc="upper right", frameon=True)
    save(figure, path)
    return ("Training loss per batch" + ("; the AUC is measured once, on held-out examples after "
                                         "the last batch." if auc is not None else "."))
