"""troupe's report: figures and one self-contained HTML page from run directories.

scripts/plot.py is the entry point; `troupe report` runs it. Modules:
  errors       InputError: bad input, reported as one line naming the file (and line)
  rundir       reading and checking a run directory; run types detected from the files present
  series       time series over rounds: piecewise-constant values, rebinning, derived capacity
  figures      the JCT CDF and the allocation-over-time figure
  gpu_figures  the GPU timeline (servers x GPUs) and the GPU-occupancy heat-map, from leases.csv
  fabric_runs  a run on a fabric: links.csv, jobs.csv's comm_s and contention_s, link levels
  network_figures  the link-utilisation heat-map and the contention slowdown CDF
  html_report  report.html, images embedded as base64 data URIs
  report       puts it together and writes the output folder atomically
"""

import troupe_requires

troupe_requires.require(modules=("matplotlib", "pandas"))
import matplotlib  # noqa: E402

matplotlib.use("Agg")  # files only, never a window; before any module imports pyplot
