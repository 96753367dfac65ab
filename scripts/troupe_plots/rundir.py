"""Reading and checking a run directory.

A run's type is summary.json's "run_type" where it has one, else detected from what is in its
folder: "paramserver" (summary.json, batches.csv), "oasis" (summary.json, jobs.csv, slots.csv) or
"scheduler" (a round-based cluster run: summary.json, jobs.csv, rounds.csv and, with
run.lease_log, leases.csv). Anything else
that has a readable summary.json is of an unknown type: it is loaded with its summary only and the
report skips it with a note. Every check raises InputError naming the file and, where it can, the
line; nothing here draws.

summary.json's schema, every field of every type, is messages/summary.proto. The *_SUMMARY_FIELDS
below name the fields the report reads as (type, may be unknown): an unknown value (an `optional`
field of the schema) is absent from the file, or null in runs of older troupe versions. Counts
that may pass 2^31 are doubles in the schema (read them as numbers, not ints); the seed is a
string.
"""

import json
import os
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .errors import InputError

SCHEDULER = "scheduler"
PARAMSERVER = "paramserver"
OASIS = "oasis"

# Columns the report reads ("int", "float" or "str"); other columns are allowed and ignored.
JOBS_COLUMNS = {"job_id": "int", "model": "str", "gpus": "int", "arrival_s": "float",
                "start_s": "float", "end_s": "float", "jct_s": "float", "measured": "int"}
ROUNDS_COLUMNS = {"round": "int", "start_s": "float", "end_s": "float", "gpus_allocated": "int",
                  "cpus_allocated": "float", "memory_gb_allocated": "float",
                  "jobs_running": "int", "jobs_queued": "int"}
LEASES_COLUMNS = {"round": "int", "job_id": "int", "server": "int", "gpu_ids": "str",
                  "cpus": "float", "memory_gb": "float"}
# batches.csv of a parameter-server run (runner/ps/ps_report.cpp).
PS_STAGES = ["read_s", "partition_s", "ssd_s", "train_s"]
BATCHES_COLUMNS = {"batch": "int", "loss": "float", "batch_time_s": "float", "end_s": "float",
                   **{stage: "float" for stage in PS_STAGES}, "keys": "int", "hbm_hits": "int",
                   "mem_keys": "int", "mem_hits": "int", "mem_hit_rate": "float",
                   "cache_hit_rate": "float", "ssd_rows_read": "int"}
PS_SUMMARY_FIELDS = {"batches": (int, False), "batch_size": (int, False), "nodes": (int, False),
                     "auc": (float, True)}  # auc: absent without held-out examples
# jobs.csv and slots.csv of an OASiS run (runner/oasis/oasis_report.cpp); slots.csv has, per
# resource R, worker_use_R, ps_use_R, worker_price_R and ps_price_R (R from worker_price_*).
OASIS_JOBS_COLUMNS = {"id": "int", "arrival": "int", "admitted": "int", "utility": "float"}
SLOTS_COLUMNS = {"slot": "int", "active": "int", "workers": "int", "ps": "int"}
OASIS_KINDS = ["worker_use_", "ps_use_", "worker_price_", "ps_price_"]
OASIS_SUMMARY_FIELDS = {"policy": (str, False), "slots": (int, False), "jobs": (int, False),
                        "admitted": (int, False), "rejected": (int, False),
                        "total_utility": (float, False)}
# summary.json fields of a scheduler run: (type, may be unknown).
SUMMARY_FIELDS = {"policy": (str, False), "mechanism": (str, False), "jobs_total": (int, False),
                  "makespan_s": (float, False), "gpu_utilisation": (float, False),
                  "cpu_utilisation": (float, False), "memory_utilisation": (float, False)}


@dataclass
class Run:
    path: str  # as given on the command line
    name: str  # the folder's name, made unique among the runs of one report
    kind: str  # SCHEDULER, or the detected description of an unknown type
    summary: dict
    jobs: pd.DataFrame = None
    rounds: pd.DataFrame = None
    leases: pd.DataFrame = None  # None: the run was made without run.lease_log
    batches: pd.DataFrame = None  # parameter-server runs
    slots: pd.DataFrame = None  # OASiS runs
    resources: list = None  # OASiS runs: resource names, from slots.csv's columns
    links: pd.DataFrame = None  # a run on a fabric: links.csv (fabric_runs.attach)
    spines: set = None  # and its explicit spines' names
    interruptions: pd.DataFrame = None  # servers that went down: interruptions.csv
    notes: list = field(default_factory=list)

    @property
    def label(self):
        if self.kind == PARAMSERVER:
            return f"{self.name} (parameter server, {self.summary['nodes']} nodes)"
        if self.kind == OASIS:
            return f"{self.name} (OASiS, policy {self.summary['policy']})"
        if self.kind != SCHEDULER:
            return self.name
        return f"{self.name} ({self.summary['policy']} + {self.summary['mechanism']})"


def load_runs(paths):
    """Loads and checks every run; names are the folders' names, suffixed -2, -3 if repeated."""
    runs, seen = [], {}
    for path in paths:
        base = os.path.basename(os.path.normpath(os.path.abspath(path))) or "run"
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}-{seen[base]}"
        runs.append(load_run(path, name))
    return runs


def load_run(path, name):
    if not os.path.isdir(path):
        raise InputError(path, None, "not a run directory (no such folder)")
    summary = read_summary(os.path.join(path, "summary.json"))
    kind = detect_kind(path, summary)
    if kind not in LOADERS:
        return Run(path, name, kind, summary)
    return LOADERS[kind](path, name, summary)


def load_scheduler_run(path, name, summary):
    check_summary_fields(os.path.join(path, "summary.json"), summary, SUMMARY_FIELDS)
    jobs = read_csv(os.path.join(path, "jobs.csv"), JOBS_COLUMNS)
    rounds = read_csv(os.path.join(path, "rounds.csv"), ROUNDS_COLUMNS)
    check_rounds(os.path.join(path, "rounds.csv"), rounds)
    check_row_count(os.path.join(path, "jobs.csv"), jobs, summary, "jobs_total")
    check_row_count(os.path.join(path, "rounds.csv"), rounds, summary, "rounds")
    leases = None
    leases_path = os.path.join(path, "leases.csv")
    if os.path.exists(leases_path):
        leases = read_csv(leases_path, LEASES_COLUMNS)
        leases = parse_leases(leases_path, leases, rounds)
        check_last_round(leases_path, leases, rounds)
    return Run(path, name, SCHEDULER, summary, jobs, rounds, leases)


def load_paramserver_run(path, name, summary):
    check_summary_fields(os.path.join(path, "summary.json"), summary, PS_SUMMARY_FIELDS)
    batches_path = os.path.join(path, "batches.csv")
    batches = read_csv(batches_path, BATCHES_COLUMNS)
    check_row_count(batches_path, batches, summary, "batches")
    if batches["batch"].duplicated().any():
        row = int(np.flatnonzero(batches["batch"].duplicated().to_numpy())[0])
        raise InputError(batches_path, row + 2, "repeats a batch number")
    return Run(path, name, PARAMSERVER, summary, batches=batches)


def load_oasis_run(path, name, summary):
    check_summary_fields(os.path.join(path, "summary.json"), summary, OASIS_SUMMARY_FIELDS)
    jobs_path, slots_path = os.path.join(path, "jobs.csv"), os.path.join(path, "slots.csv")
    jobs = read_csv(jobs_path, OASIS_JOBS_COLUMNS)
    check_row_count(jobs_path, jobs, summary, "jobs")
    header = read_csv(slots_path, SLOTS_COLUMNS).columns
    resources = [c[len("worker_price_"):] for c in header if c.startswith("worker_price_")]
    if not resources:
        raise InputError(slots_path, 1, "no worker_price_* column")
    columns = dict(SLOTS_COLUMNS)
    columns.update({kind + r: "float" for kind in OASIS_KINDS for r in resources})
    slots = read_csv(slots_path, columns)
    check_row_count(slots_path, slots, summary, "slots")
    if slots["slot"].duplicated().any():
        row = int(np.flatnonzero(slots["slot"].duplicated().to_numpy())[0])
        raise InputError(slots_path, row + 2, "repeats a slot number")
    return Run(path, name, OASIS, summary, jobs=jobs, slots=slots, resources=resources)


# Run types, tried in order: (type, test on the folder's file names and its summary). A new type
# adds a line here, a loader below and a section in report.py.
RUN_TYPES = [
    (PARAMSERVER, lambda files, summary: "batches.csv" in files
     or {"batch_size", "slowest_stage"} <= summary.keys()),
    (OASIS, lambda files, summary: "slots.csv" in files
     or {"worker_servers", "ps_machines"} <= summary.keys()),
    (SCHEDULER, lambda files, summary: bool({"jobs.csv", "rounds.csv"} & files)
     or "mechanism" in summary),
]


def detect_kind(path, summary):
    """The run's type: summary.json's "run_type" where it has one, else the first of RUN_TYPES
    that matches; otherwise a short description of what was found, for the note that skips it."""
    files = set(os.listdir(path))
    declared = summary.get("run_type")
    if declared is None:
        declared = next((kind for kind, test in RUN_TYPES if test(files, summary)), None)
    if isinstance(declared, str) and declared in LOADERS:
        return declared
    found = ", ".join(sorted(files))
    return f"unknown run type {json.dumps(declared)} (files: {found})" if declared else \
        f"unknown run type (files: {found})"


def read_summary(path):
    if not os.path.isfile(path):
        raise InputError(path, None, "missing: not a run directory")
    text = read_text(path)
    try:
        summary = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(path, error.lineno, f"invalid or truncated JSON: {error.msg}") from None
    if not isinstance(summary, dict):
        raise InputError(path, 1, "expected a JSON object")
    return summary


def check_summary_fields(path, summary, fields):
    for key, (kind, may_be_unknown) in fields.items():
        if summary.get(key) is None and may_be_unknown:
            continue
        if key not in summary:
            raise InputError(path, None, f"missing field \"{key}\"")
        value = summary[key]
        ok = isinstance(value, str) if kind is str else (
            isinstance(value, (int, float)) and not isinstance(value, bool))
        if kind is int and isinstance(value, float):
            ok = False
        if not ok:
            what = {str: "a string", int: "a whole number", float: "a number"}[kind]
            raise InputError(path, json_line(path, key), f"field \"{key}\": expected {what}")


def json_line(path, key):
    """The line of summary.json on which `key` is defined, or None."""
    pattern = re.compile(r'"' + re.escape(key) + r'"\s*:')
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if pattern.search(line):
            return number
    return None


def read_text(path):
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None
    except OSError as error:
        raise InputError(path, None, f"cannot read: {error.strerror}") from None


def read_csv(path, columns):
    """Reads a CSV with a header; checks that `columns` are there and their values parse."""
    if not os.path.isfile(path):
        raise InputError(path, None, "missing")
    frame = read_well_formed_csv(path, columns)
    return frame if frame is not None else read_checked_csv(path, columns)


def read_well_formed_csv(path, columns):
    """The fast path: pandas' own number parsing. None when anything is off (a missing column, a
    value that is not a finite number, an empty field, a line that does not parse); the checked
    path then reads the file again to say where."""
    text_columns = [column for column, kind in columns.items() if kind == "str"]
    try:
        # low_memory=False: a whole column's type at once, so a bad value far down a long file
        # fails the fast path quietly instead of warning about mixed types.
        frame = pd.read_csv(path, na_filter=False, skip_blank_lines=False, low_memory=False,
                            dtype={column: str for column in text_columns})
    except (ValueError, UnicodeDecodeError, OSError):  # pandas' parse errors are ValueErrors
        return None
    for column, kind in columns.items():
        if column not in frame.columns:
            return None
        if kind == "str":
            continue
        values = frame[column]
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            return None
        if kind == "int" and pd.api.types.is_integer_dtype(values):
            continue
        numbers = values.to_numpy(dtype=float)
        if not np.isfinite(numbers).all():
            return None
        if kind == "int" and (numbers != np.round(numbers)).any():
            return None
        frame[column] = numbers.astype(np.int64) if kind == "int" else numbers
    return frame


def read_checked_csv(path, columns):
    """Reads every value as text and checks it, naming the first bad one's line and column."""
    try:
        frame = pd.read_csv(path, dtype=str, na_filter=False, skip_blank_lines=False)
    except pd.errors.EmptyDataError:
        raise InputError(path, 1, "empty: no header line") from None
    except pd.errors.ParserError as error:
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(error))
        if not match:
            raise InputError(path, None, f"not CSV: {error}") from None
        expected, line, saw = match.groups()
        raise InputError(path, int(line), f"{saw} fields; the header has {expected}") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None
    except OSError as error:
        raise InputError(path, None, f"cannot read: {error.strerror}") from None
    for column, kind in columns.items():
        if column not in frame.columns:
            raise InputError(path, 1, f"missing column \"{column}\"")
        if kind != "str":
            frame[column] = parse_numbers(path, frame[column], column, kind)
    return frame


def parse_numbers(path, raw, column, kind):
    values = pd.to_numeric(raw, errors="coerce").astype(float)
    bad = ~np.isfinite(values.to_numpy())
    if kind == "int":
        bad |= values.to_numpy() != np.round(values.to_numpy())
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        text = raw.iloc[row]
        if text == "":
            what = "empty (a short or truncated line?)"
        else:
            what = f"\"{text}\" is not a {'whole number' if kind == 'int' else 'finite number'}"
        raise InputError(path, row + 2, f"column \"{column}\": {what}")
    return values.astype(np.int64) if kind == "int" else values


def check_rounds(path, rounds):
    start, end = rounds["start_s"].to_numpy(), rounds["end_s"].to_numpy()
    problems = [(end < start, "ends before it starts"),
                (np.concatenate([[False], start[1:] < end[:-1]]),
                 "starts before the previous round ends"),
                (rounds["round"].duplicated().to_numpy(), "repeats a round number")]
    for bad, what in problems:
        if bad.any():
            raise InputError(path, int(np.flatnonzero(bad)[0]) + 2, f"the round {what}")


def check_row_count(path, frame, summary, key):
    """A CSV cut at a line boundary parses; its row count against summary.json's shows it."""
    expected = summary.get(key)
    if isinstance(expected, int) and not isinstance(expected, bool) and expected != len(frame):
        raise InputError(path, len(frame) + 2, f"{len(frame)} rows, but summary.json's {key} "
                                               f"is {expected} (truncated?)")


def check_last_round(path, leases, rounds):
    """leases.csv cut at a line boundary: its last round must hold all that round's GPUs."""
    allocated = rounds[rounds["gpus_allocated"] > 0]
    if allocated.empty:
        return
    # Column by column: a whole row of numbers would come back as floats ("round 164.0").
    last_round = int(allocated["round"].iloc[-1])
    gpus = int(allocated["gpus_allocated"].iloc[-1])
    held = int((leases["round"] == last_round).sum())
    if held != gpus:
        raise InputError(path, None, f"{held} GPUs leased in round {last_round}, but "
                                     f"rounds.csv allocates {gpus} (truncated?)")


def parse_leases(path, leases, rounds):
    """One row per (lease, GPU): round, job_id, server, gpu; rows without GPUs are dropped."""
    unknown = ~leases["round"].isin(rounds["round"]).to_numpy()
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        raise InputError(path, row + 2,
                         f"round {leases['round'].iloc[row]} is not in rounds.csv")
    expanded = expand_gpu_ids(leases)
    return expanded if expanded is not None else expand_gpu_ids_checked(path, leases)


def expand_gpu_ids(leases):
    """The fast path of parse_leases (one split of all the ids, no per-row pandas call); None
    where an id is not a non-negative whole number, for the checked path to name its line."""
    texts = leases["gpu_ids"].tolist()
    if not texts:
        return None
    pieces = ";".join(texts).split(";")
    rows = np.repeat(np.arange(len(texts)), [text.count(";") + 1 for text in texts])
    kept = np.array([piece != "" for piece in pieces], dtype=bool)
    try:
        gpus = np.array([piece for piece in pieces if piece], dtype=np.int64)
    except (ValueError, OverflowError):
        return None
    if (gpus < 0).any():
        return None
    rows = rows[kept]
    return pd.DataFrame({column: leases[column].to_numpy()[rows]
                         for column in ("round", "job_id", "server")} | {"gpu": gpus})


def expand_gpu_ids_checked(path, leases):
    ids = leases["gpu_ids"].str.split(";").explode()
    ids = ids[ids != ""]
    gpus = pd.to_numeric(ids, errors="coerce")
    bad = ~np.isfinite(gpus.to_numpy(dtype=float)) | (gpus.to_numpy(dtype=float) < 0)
    if bad.any():
        row = int(ids.index[np.flatnonzero(bad)[0]])
        raise InputError(path, row + 2, f"column \"gpu_ids\": \"{leases['gpu_ids'].iloc[row]}\" "
                                        "is not a ';'-separated list of GPU indices")
    expanded = leases.loc[ids.index, ["round", "job_id", "server"]].copy()
    expanded["gpu"] = gpus.astype(np.int64).to_numpy()
    return expanded.reset_index(drop=True)


LOADERS = {SCHEDULER: load_scheduler_run, PARAMSERVER: load_paramserver_run,
           OASIS: load_oasis_run}
