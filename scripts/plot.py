#!/usr/bin/env python3
"""Figures and one self-contained report.html from troupe run directories.

    python3 scripts/plot.py RUN_DIR [RUN_DIR ...] [--out DIR]      (what `troupe report` runs)

A sweep folder (`troupe sweep --out DIR`) may stand in for its runs: they are listed in the sweep's
order (sweep.csv's run_dir column), after the sweep's comparison: per combination of swept values,
each figure's mean, standard deviation, min, max and 95% confidence interval over seeds, never
below 0 (NAME-sweep.csv), and NAME-sweep-FIGURE.png, each figure against the swept value with
error bars (bars for a swept name, lines for a swept number). The first seed of each combination
gets its own figures; the JCT CDF pools each combination's seeds into one line.

Writes DIR (default RUN_DIR/report, the first run's) with jct_cdf.png (every run's JCT CDF on one
axis), per run NAME-allocation.png (GPUs, CPUs, memory in percent of capacity and the queue over
virtual time) and NAME-gpu-timeline.png or, from 2000 jobs on, NAME-gpu-heatmap.png (from
leases.csv); parameter-server runs (batches.csv) get NAME-ps-stages.png, NAME-ps-hit-rates.png and
NAME-ps-loss.png, OASiS runs (slots.csv, jobs.csv) NAME-oasis-prices.png,
NAME-oasis-utilisation.png and NAME-oasis-jobs.png; report.html leads with the JCT CDF and the
tables comparing the runs, then shows each run's figures with its summary. Output is
deterministic.

Exit status: 0 written; 2 bad input (a missing, truncated or malformed run directory, or an output
path it must not replace) or python3 without matplotlib or pandas: one line on stderr naming the
file and line (or the module and `apt-get install python3-...`), nothing written; 1 other failures
(cannot write). Needs Debian's python3-matplotlib and python3-pandas (scripts/install-deps.sh
installs them).
"""

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import argparse  # noqa: E402
import os  # noqa: E402

PROG = "troupe report"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories to show")
    parser.add_argument("--out", metavar="DIR", help="report folder (default: RUN_DIR/report)")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)  # usage errors: argparse prints them and exits with 2
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import troupe_requires

    troupe_requires.require(modules=("matplotlib", "pandas"), prog=PROG)  # else exit status 2
    from troupe_plots.errors import InputError
    from troupe_plots.report import build

    out_dir = args.out or os.path.join(os.path.normpath(args.runs[0]), "report")
    try:
        _, notes = build(args.runs, out_dir)
    except InputError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"{PROG}: {error.filename or out_dir}: {error.strerror}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
