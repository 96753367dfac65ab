"""A scheduler run on a fabric (docs/network.md): links.csv, jobs.csv's comm_s and contention_s,
summary.json's network block.

attach() reads links.csv of every scheduler run that has one into run.links (and checks the
fabric's columns of jobs.csv), before anything is drawn; a run without links.csv keeps
run.links None and is drawn as a run without a fabric. links.csv holds one row per link and round
that carried traffic: a link absent from a round carried nothing in it.
"""

import os
import re

import numpy as np
import pandas as pd

from . import rundir
from .errors import InputError

LINKS_FILE = "links.csv"
# The columns the report reads; the others are checked only where these do not parse.
LINKS_COLUMNS = {"link": "str", "start_s": "float", "end_s": "float", "utilisation": "float"}
LINKS_HEADER = ["round", "link", "start_s", "end_s", "capacity_gbps", "bytes", "utilisation",
                "flows", "rate_gbps"]
FABRIC_JOBS_COLUMNS = {"gpus": "int", "gpu_seconds": "float", "measured": "int",
                       "comm_s": "float", "contention_s": "float"}
# Link levels, in the heat-map's order: servers' NICs, racks' uplinks, spines' uplinks.
LEVELS = ("server NIC", "rack uplink", "spine uplink")
SERVER_LINK = re.compile(r"server\d+\.(up|down)")


def attach(runs):
    """Reads links.csv of every scheduler run that has one (run.links: link as a category,
    start_s, end_s, utilisation) and the spine names of its config."""
    for run in runs:
        path = os.path.join(run.path, LINKS_FILE)
        if run.kind != rundir.SCHEDULER or not os.path.exists(path):
            continue
        run.links = read_links(path)
        check_jobs(os.path.join(run.path, "jobs.csv"), run.jobs)
        run.spines = spine_names(os.path.join(run.path, "config.textproto"))


def read_links(path):
    """links.csv, only the columns drawn: the fast path reads them typed (a 500,000-row file in a
    fifth of a second); anything off, and the checked path says where."""
    try:
        frame = pd.read_csv(path, na_filter=False, usecols=list(LINKS_COLUMNS),
                            dtype={"link": "category", "start_s": np.float64,
                                   "end_s": np.float64, "utilisation": np.float64})
    except (ValueError, UnicodeDecodeError, OSError):  # pandas' parse errors are ValueErrors
        frame = None
    if frame is None or not all(
            np.isfinite(frame[c].to_numpy()).all() for c in LINKS_COLUMNS if c != "link"):
        frame = rundir.read_csv(path, {column: "float" for column in LINKS_HEADER} | {
            "round": "int", "link": "str", "flows": "int"})
        frame = frame[list(LINKS_COLUMNS)].astype({"link": "category"})
    bad = (frame["end_s"] < frame["start_s"]).to_numpy() | (frame["utilisation"] < 0).to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(path, row + 2, "a link's round ends before it starts, or its "
                                        "utilisation is negative")
    return frame


def check_jobs(path, jobs):
    """jobs.csv of a run on a fabric has comm_s and contention_s; they and gpu_seconds are
    numbers."""
    for column, kind in FABRIC_JOBS_COLUMNS.items():
        if column not in jobs.columns:
            raise InputError(path, 1, f"missing column \"{column}\" (links.csv says the run had "
                                      "a fabric)")
        if not pd.api.types.is_numeric_dtype(jobs[column]) or not np.isfinite(
                jobs[column].to_numpy(dtype=float)).all():
            jobs[column] = rundir.parse_numbers(path, jobs[column].astype(str), column, kind)


def spine_names(config_path):
    """The explicit spines' names in the run's config.textproto (racks and spines may carry any
    name; a spine's links are named after it); none when the file is absent."""
    try:
        with open(config_path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError):
        return set()
    blocks = re.findall(r"(?m)^\s*spine\s*\{([^{}]*)\}", text)
    return {m for block in blocks for m in re.findall(r"\bname:\s*\"((?:[^\"\\]|\\.)*)\"", block)}


def level(name, spines):
    """0 for a server's NIC, 1 for a rack's uplink, 2 for a spine's."""
    if SERVER_LINK.fullmatch(name):
        return 0
    owner = name.rsplit(".", 1)[0]
    return 2 if owner in spines or re.fullmatch(r"spine\d+", owner) else 1


def natural_key(name):
    """"server2.up" before "server10.up"."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.findall(r"\d+|\D+", name)]


def ordered_links(run):
    """The links that carried traffic, sorted by level, then name: [(name, level)]."""
    links = run.links["link"]
    used = np.bincount(links.cat.codes.to_numpy(), minlength=len(links.cat.categories)) > 0
    names = links.cat.categories.astype(str)[used]
    shown = [(name, level(name, run.spines)) for name in names]
    return sorted(shown, key=lambda item: (item[1], natural_key(item[0])))


def slowdowns(run):
    """Per measured job that crossed the fabric (comm_s > 0): leased time / (leased time -
    contention_s), leased time = gpu_seconds / gpus: the jobs summary.json's contention slowdown is
    over. Sorted."""
    jobs = run.jobs
    crossed = jobs[(jobs["measured"] == 1) & (jobs["comm_s"] > 0) & (jobs["gpus"] > 0)]
    leased = crossed["gpu_seconds"].to_numpy(dtype=float) / crossed["gpus"].to_numpy(dtype=float)
    contention = crossed["contention_s"].to_numpy(dtype=float)
    keep = leased > contention
    return np.sort(leased[keep] / (leased[keep] - contention[keep]))
