"""Puts a report together: check every run, draw into a staging folder, rename it into place.

Every run is read and checked before anything is written, and the figures and report.html go
into a sibling staging folder that replaces the output folder only once all of it is written, so
bad input or a failure leaves no partial report (and an earlier report stays as it was).
"""

import os
import re
import shutil
from collections import namedtuple

import numpy as np

from . import (fabric_runs, failure_figures, figures, gpu_figures, html_report, network_figures,
               oasis_figures, output_folder, ps_figures, rundir, series, sweep_figures, sweeps)
from .errors import InputError

CDF_FILE = "jct_cdf.png"
CONTENTION_FILE = "contention_cdf.png"


def build(run_paths, out_dir):
    """Writes out_dir/report.html and the PNGs; returns (report path, notes for the terminal)."""
    run_paths, swept = sweeps.expand(run_paths)
    runs = rundir.load_runs(run_paths)
    fabric_runs.attach(runs)
    failure_figures.attach(runs)
    out_dir = os.path.normpath(out_dir)
    check_output(out_dir, run_paths)
    parent = os.path.dirname(os.path.abspath(out_dir))
    os.makedirs(parent, exist_ok=True)
    # Named as troupe's C++ side names staging folders, so that a later run removes it if this
    # process is killed: "<out>.tmp-<pid>", marked as troupe's at once.
    staging = out_dir + ".tmp-" + str(os.getpid())
    if output_folder.read_marker(staging) is not None:
        shutil.rmtree(staging, ignore_errors=True)  # a leftover of an earlier process, same pid
    os.mkdir(staging)
    output_folder.write_marker(staging, "staging")
    try:
        notes = draw(runs, staging, swept)
        output_folder.write_marker(staging, "report")
        replace(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return os.path.join(out_dir, "report.html"), notes


def check_output(out_dir, run_paths):
    """Refuses an output path that is a file, holds a run, or is a folder other than a report."""
    if os.path.basename(out_dir) in ("", ".", ".."):
        raise InputError(out_dir, None, "must name a folder")
    target = os.path.realpath(out_dir)
    for path in run_paths:
        run = os.path.realpath(path)
        if run == target or run.startswith(target + os.sep):
            raise InputError(out_dir, None, "is (or holds) a run directory; not replacing it")
    if os.path.lexists(out_dir):
        if not os.path.isdir(out_dir) or os.path.islink(out_dir):
            raise InputError(out_dir, None, "exists and is not a folder; not replacing it")
        if os.listdir(out_dir) and not output_folder.is_troupe_folder(out_dir):
            raise InputError(out_dir, None, "exists and was not written by troupe (no "
                             f"{output_folder.MARKER}, or files troupe did not write); not "
                             "replacing it: move it away or choose another folder")


def replace(staging, out_dir):
    """Moves staging onto out_dir, replacing an earlier report; restores it if that fails."""
    if not os.path.exists(out_dir):
        os.rename(staging, out_dir)
        return
    old = out_dir + ".old-" + str(os.getpid())
    if output_folder.read_marker(old) is not None:
        shutil.rmtree(old, ignore_errors=True)
    os.rename(out_dir, old)
    try:
        os.rename(staging, out_dir)
    except OSError:
        os.rename(old, out_dir)
        raise
    shutil.rmtree(old, ignore_errors=True)


def file_stem(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def draw(runs, folder, swept=()):
    """Draws every figure into folder and writes report.html; returns the notes."""
    notes, sections = [], []
    sweep_blocks = [sweep_block(sweep, folder) for sweep in swept]
    groups = sweep_groups(swept)
    scheduler_runs = [run for run in runs if run.kind == rundir.SCHEDULER]
    for run in runs:
        if run.kind not in SECTIONS:
            notes.append(f"{run.path}: skipped: {run.kind}")
            sections.append(None)
            continue
        group = groups.get(os.path.normpath(run.path))
        if group is not None and group.first != os.path.normpath(run.path):
            sections.append(undrawn_section(run, group))
            continue
        sections.append(SECTIONS[run.kind](run, folder))
        notes += [f"{run.path}: {text}" for text in sections[-1]["notes"]]
    overview = None
    caption = figures.jct_cdf(cdf_lines(scheduler_runs, groups), os.path.join(folder, CDF_FILE))
    if caption:
        overview = {"file": CDF_FILE, "alt": "JCT CDF", "caption": caption}
    unswept = [run for run in scheduler_runs if os.path.normpath(run.path) not in groups]
    network = network_overview(scheduler_runs, groups, folder)
    page = html_report.page(folder, runs, sections, overview, [], sweep_blocks, unswept, network)
    output_folder.name_entry(folder, "report.html")
    with open(os.path.join(folder, "report.html"), "w", encoding="utf-8") as file:
        file.write(page)
    return notes


# The runs of a sweep that differ only in their seed: `first` (in the sweep's order) is drawn.
Group = namedtuple("Group", "label first seeds")


def sweep_groups(swept):
    """{normalised run path: Group} for every run of the sweeps."""
    out = {}
    for sweep in swept:
        prefix = f"{sweep.name}: " if len(swept) > 1 else ""
        for values, rows in sweep.groups():
            paths = [os.path.normpath(os.path.join(sweep.path, row["run_dir"])) for row in rows]
            shown = [f"{sweeps.leaf(field)}={value}" for field, value in zip(sweep.axes, values)]
            group = Group(prefix + (", ".join(shown) or sweep.name), paths[0], len(rows))
            for path in paths:
                out.setdefault(path, group)
    return out


def network_overview(scheduler_runs, groups, folder):
    """Runs on a fabric: the contention slowdown CDF of all of them on one axis; None without."""
    fabric = [run for run in scheduler_runs if run.links is not None]
    if not fabric:
        return None
    caption = network_figures.contention_cdf(cdf_lines(fabric, groups, fabric_runs.slowdowns),
                                             os.path.join(folder, CONTENTION_FILE))
    figure = {"file": CONTENTION_FILE, "alt": "contention slowdown CDF", "caption": caption}
    return {"runs": fabric, "cdf": figure if caption else None}


def cdf_lines(scheduler_runs, groups, values=figures.measured_jct_hours):
    """[(label, sorted values(run))], by default JCT hours: one line per run, or per combination
    of a sweep's swept values with its seeds' jobs pooled (a sweep of 3 loads x 2 mechanisms x 3
    seeds draws 6 lines)."""
    lines, pooled = [], {}
    for run in scheduler_runs:
        group = groups.get(os.path.normpath(run.path))
        hours = values(run)
        if group is None:
            lines.append((run.label, hours))
        elif group not in pooled:
            pooled[group] = len(lines)
            lines.append((group.label + (f" ({group.seeds} seeds)" if group.seeds > 1 else ""),
                          [hours]))
        else:
            lines[pooled[group]][1].append(hours)
    return [(label, np.sort(np.concatenate(hours)) if isinstance(hours, list) else hours)
            for label, hours in lines]


def undrawn_section(run, group):
    """A sweep's run other than the first of its seeds: its summary, and no figures."""
    capacity = series.derive_capacity(run.summary, run.rounds) if run.kind == rundir.SCHEDULER \
        else None
    first = os.path.basename(group.first)
    return {"capacity": capacity, "figures": [], "notes": [
        f"Figures are drawn for the first seed of each combination of swept values ({first} "
        f"here); `troupe report {run.path}` draws this run's."]}


def sweep_block(sweep, folder):
    """A sweep folder's spread over seeds: NAME-sweep.csv and a figure per figure that varies."""
    stem = file_stem(sweep.name)
    spreads = sweep.spreads()
    csv_name = f"{stem}-sweep.csv"
    output_folder.name_entry(folder, csv_name)
    with open(os.path.join(folder, csv_name), "w", encoding="utf-8", newline="") as file:
        file.write(sweeps.spread_csv(sweep, spreads))
    drawn, notes = sweep_figures.draw_all(sweep, spreads, folder, stem)
    same = sweep_figures.constant_figures(sweep)
    return {"sweep": sweep, "spreads": spreads, "csv": csv_name, "figures": drawn, "notes": notes,
            "metrics": [metric for metric in sweep.metrics if metric not in same]}


def run_section(run, folder):
    capacity = series.derive_capacity(run.summary, run.rounds)
    stem = file_stem(run.name)
    section = {"capacity": capacity, "figures": [], "notes": []}
    if run.rounds.empty:
        section["notes"].append("No figures: rounds.csv holds no round.")
        return section
    allocation_file = f"{stem}-allocation.png"
    caption = figures.allocation(run, capacity, os.path.join(folder, allocation_file))
    section["figures"].append({"file": allocation_file, "alt": f"{run.name}: allocation",
                               "caption": caption})
    kind = gpu_figures.figure_kind(run)
    if kind is None:
        section["notes"].append(gpu_figures.missing_note(run))
    else:
        gpu_file = f"{stem}-gpu-{kind}.png"
        caption = gpu_figures.gpu_figure(run, kind, capacity, os.path.join(folder, gpu_file))
        section["figures"].append({"file": gpu_file, "alt": f"{run.name}: GPU {kind}",
                                   "caption": caption})
    if run.links is not None:
        links_file = f"{stem}-links.png"
        caption = network_figures.link_heatmap(run, os.path.join(folder, links_file))
        if caption:
            section["figures"].append({"file": links_file, "alt": f"{run.name}: link utilisation",
                                       "caption": caption})
        else:
            section["notes"].append("No link heat-map: links.csv holds no row (no job's traffic "
                                    "left its server).")
    if run.interruptions is not None and not run.interruptions.empty:
        failures_file = f"{stem}-failures.png"
        caption = failure_figures.timeline(run, os.path.join(folder, failures_file))
        section["figures"].append({"file": failures_file, "alt": f"{run.name}: failures",
                                   "caption": caption})
    return section


def figure_section(run, folder, drawings):
    """drawings: (file suffix, alt text, function(run, path) -> caption)."""
    stem = file_stem(run.name)
    section = {"capacity": None, "figures": [], "notes": []}
    for suffix, alt, draw_figure in drawings:
        name = f"{stem}-{suffix}.png"
        caption = draw_figure(run, os.path.join(folder, name))
        section["figures"].append({"file": name, "alt": f"{run.name}: {alt}", "caption": caption})
    return section


def paramserver_section(run, folder):
    if run.batches.empty:
        return {"capacity": None, "figures": [],
                "notes": ["No figures: batches.csv holds no batch."]}
    return figure_section(run, folder, [("ps-stages", "pipeline stages", ps_figures.stages),
                                        ("ps-hit-rates", "hit rates", ps_figures.hit_rates),
                                        ("ps-loss", "loss", ps_figures.loss)])


def oasis_section(run, folder):
    if run.slots.empty:
        return {"capacity": None, "figures": [], "notes": ["No figures: slots.csv holds no slot."]}
    return figure_section(run, folder, [("oasis-prices", "prices", oasis_figures.prices),
                                        ("oasis-utilisation", "utilisation",
                                         oasis_figures.utilisation),
                                        ("oasis-jobs", "admitted vs rejected jobs",
                                         oasis_figures.admissions)])


# What each run type shows in its own section (the JCT CDF takes scheduler runs only).
SECTIONS = {rundir.SCHEDULER: run_section, rundir.PARAMSERVER: paramserver_section,
            rundir.OASIS: oasis_section}
