"""report.html: one self-contained page, every image embedded as a base64 data URI."""

import base64
import html
import os

from . import sweeps
from .rundir import SCHEDULER
from .series import RESOURCES

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1240px; margin: 2em auto; padding: 0 1em;
       color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.7em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 0.9em; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr));
        gap: 0 1.5em; }
.note { background: #fff6d6; border-left: 4px solid #e0b000; padding: 0.5em 1em; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""

# Rows of the table comparing runs: (title, summary field, format).
COMPARISON = [("JCT mean", "jct_mean_s", "hours"), ("JCT median", "jct_median_s", "hours"),
              ("JCT p95", "jct_p95_s", "hours"), ("JCT p99", "jct_p99_s", "hours"),
              ("makespan", "makespan_s", "hours"), ("GPU utilisation", "gpu_utilisation", "percent"),
              ("CPU utilisation", "cpu_utilisation", "percent"),
              ("memory utilisation", "memory_utilisation", "percent"),
              ("measured jobs finished", "jobs_measured_finished", "plain")]
# Rows added for runs on a fabric: (title, field of summary.json's network block, format).
NETWORK_COMPARISON = [("jobs that crossed the fabric", "jobs_crossing", "plain"),
                      ("communication time", "comm_hours", "hours of"),
                      ("contention time", "contention_hours", "hours of"),
                      ("contention slowdown mean", "contention_slowdown_mean", "times"),
                      ("contention slowdown p99", "contention_slowdown_p99", "times")]


def esc(value):
    return html.escape(str(value), quote=True)


def format_value(key, value):
    if value is None:
        return "null"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if key.endswith("utilisation"):
        return f"{100 * value:.1f} %"
    if key.startswith("jct_") or key == "makespan_s":
        return f"{value / 3600:.2f} h ({value:,.0f} s)"
    if key == "wall_s":
        return f"{value:.3f} s"
    if isinstance(value, int):
        return f"{value:,}"
    if abs(value) >= 1e12 or (value != 0 and abs(value) < 100):
        return f"{value:.6g}"
    return f"{value:,.1f}"


def comparison_format(kind, value):
    if value is None:
        return "–"
    return {"hours": f"{value / 3600:.2f} h", "percent": f"{100 * value:.1f} %",
            "plain": f"{value}", "hours of": f"{value:,.1f} h", "times": f"{value:.3f}x"}[kind]


def image(folder, figure):
    with open(os.path.join(folder, figure["file"]), "rb") as file:
        data = base64.b64encode(file.read()).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{esc(figure["alt"])}">'
            f'<figcaption>{esc(figure["caption"])} <code>{esc(figure["file"])}</code>'
            "</figcaption></figure>")


def note(text):
    return f'<p class="note">{esc(text)}</p>'


def summary_table(run, capacity):
    rows = [f"<tr><th>{esc(key)}</th><td>{BLOCK_TABLES[key](value)}</td></tr>"
            if key in BLOCK_TABLES and isinstance(value, dict) else
            f"<tr><th>{esc(key)}</th><td>{esc(format_value(key, value))}</td></tr>"
            for key, value in run.summary.items()]
    if capacity is not None:
        derived = ", ".join(f"{capacity[name]:g} {unit}" if capacity[name] else f"? {unit}"
                            for name, _, _, unit in RESOURCES)
        rows.append(f"<tr><th>capacity (derived)</th><td>{esc(derived)}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def network_value(key, value):
    """A figure of summary.json's network block: shares in percent, bytes in decimal units."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if key.startswith("utilisation"):
            return f"{100 * value:.1f} %"
        if key == "bytes":
            return next((f"{value / 10 ** (3 * k):.2f} {unit}" for k, unit in
                         ((5, "PB"), (4, "TB"), (3, "GB"), (2, "MB"), (1, "kB"))
                         if value >= 10 ** (3 * k)), f"{value:g} B")
    return format_value(key, value)


def block_table(block, list_key, value=format_value):
    """A summary.json block: its figures, then its list `list_key` as a table of one row each."""
    rows = [f"<tr><th>{esc(key)}</th><td>{esc(value(key, item))}</td></tr>"
            for key, item in block.items() if key != list_key]
    entries = block.get(list_key) or []
    if entries:
        head = "".join(f"<th>{esc(key)}</th>" for key in entries[0])
        body = "".join("<tr>" + "".join(f'<td class="num">{esc(value(key, item))}</td>'
                                        for key, item in entry.items()) + "</tr>"
                       for entry in entries)
        rows.append(f"<tr><th>{esc(list_key)}</th><td><table><tr>{head}</tr>{body}</table></td>"
                    "</tr>")
    return "<table>" + "".join(rows) + "</table>"


def network_table(network):
    """summary.json's network block: its figures, then its busiest links as a table."""
    return block_table(network, "busiest_links", network_value)


# summary.json's blocks drawn as tables of their own.
BLOCK_TABLES = {"network": network_table,
                "failures": lambda failures: block_table(failures, "by_cause"),
                "recovery": lambda recovery: block_table(recovery, None)}


def busiest_link(network):
    links = (network or {}).get("busiest_links") or []
    if not links:
        return "–"
    top = links[0]
    return (f"{top.get('link')}: mean {100 * top.get('utilisation_mean', 0):.1f} %, peak "
            f"{100 * top.get('utilisation_peak', 0):.1f} %")


def comparison_table(runs):
    head = "".join(f"<th>{esc(run.label)}</th>" for run in runs)
    rows = []
    for title, key, kind in COMPARISON:
        cells = "".join(f'<td class="num">{esc(comparison_format(kind, run.summary.get(key)))}</td>'
                        for run in runs)
        rows.append(f"<tr><th>{esc(title)}</th>{cells}</tr>")
    networks = [run.summary.get("network") for run in runs]
    if any(isinstance(network, dict) for network in networks):
        for title, key, kind in NETWORK_COMPARISON:
            cells = "".join(f'<td class="num">{esc(comparison_format(kind, (n or {}).get(key)))}'
                            "</td>" for n in networks)
            rows.append(f"<tr><th>{esc(title)}</th>{cells}</tr>")
        cells = "".join(f'<td class="num">{esc(busiest_link(n))}</td>' for n in networks)
        rows.append(f"<tr><th>busiest link</th>{cells}</tr>")
    return f"<table><tr><th></th>{head}</tr>{''.join(rows)}</table>"


def spread_cell(spread, metric):
    """"15.92 ± 0.29" in the figure's display units, the 95% interval below it."""
    _, _, scale = sweeps.shown_as(metric)
    mean = scale * spread.mean
    if spread.n < 2:
        return esc(sweeps.significant(mean, mean))
    sd, low, high = (sweeps.significant(scale * v, mean)
                     for v in (spread.sd, spread.ci_low, spread.ci_high))
    return (f"{esc(sweeps.significant(mean, mean))} ± {esc(sd)}"
            f"<br><small>[{esc(low)}, {esc(high)}]</small>")


def sweep_table(sweep, spreads, metrics):
    """One row a combination of swept values: seeds, then each figure's mean ± sd and 95% CI."""
    heads = [esc(sweeps.leaf(field)) for field in sweep.axes] + ["seeds"]
    for metric in metrics:
        title, unit, _ = sweeps.shown_as(metric)
        heads.append(esc(f"{title} ({unit})" if unit else title))
    rows = ["<tr>" + "".join(f"<th>{head}</th>" for head in heads) + "</tr>"]
    for values, by_metric in spreads:
        n = next(iter(by_metric.values())).n if by_metric else 0
        cells = [f"<td>{esc(v)}</td>" for v in values] + [f'<td class="num">{n}</td>']
        cells += [f'<td class="num">{spread_cell(by_metric[m], m)}</td>' for m in metrics]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return "<table>" + "".join(rows) + "</table>"


def sweep_block(folder, block):
    """block: {"sweep", "spreads", "metrics" (those that vary), "csv", "figures", "notes"}."""
    sweep = block["sweep"]
    every = f"Every number, in sweep.csv's units: <code>{esc(block['csv'])}</code>.</p>"
    seeded = any(s.n > 1 for _, by_metric in block["spreads"] for s in by_metric.values())
    if seeded:
        heading = "spread over seeds"
        intro = (f"<p>Each row: the runs of <code>{esc(sweep.path)}</code> that differ only in "
                 "their seed. Cells: mean ± sample standard deviation, and below it the 95% "
                 "confidence interval of the mean (Student's t, n − 1 degrees of freedom) cut to "
                 "the values the figure can take: never below 0, and a share never above 100%. "
                 + every)
    else:
        heading = "one run per combination"
        intro = (f"<p>Each row: a run of <code>{esc(sweep.path)}</code> (one seed each, so no "
                 "spread to show). " + every)
    return ([f"<h2>Sweep {esc(sweep.name)}: {heading}</h2>", intro,
             sweep_table(sweep, block["spreads"], block["metrics"]), '<div class="grid">']
            + [image(folder, figure) for figure in block["figures"]]
            + ["</div>"] + [note(text) for text in block["notes"]])


def page(folder, runs, sections, overview, notes, sweep_blocks=(), unswept=None, network=None):
    """sections: per run, {"capacity", "figures": [...], "notes": [...]}; overview: the CDF's
    figure dict or None; notes: report-wide notes; sweep_blocks: per sweep folder, its spread;
    unswept: the scheduler runs of no sweep, compared in a table (default: every scheduler run);
    network: with runs on a fabric, {"runs", "cdf": the contention CDF's figure dict or None}.

    The answer comes first: the JCT CDF, then the tables that compare the runs (each sweep's
    spread over seeds, with its figures; the other runs side by side), the contention CDF of runs
    on a fabric, then each run."""
    scheduler_runs = [run for run in runs if run.kind == SCHEDULER]
    if unswept is None:
        unswept = scheduler_runs
    body = ["<h1>troupe report</h1>", "<p>Runs: " + ", ".join(
        f"<b>{esc(run.name)}</b> (<code>{esc(run.path)}</code>)" for run in runs) + "</p>"]
    body += [note(text) for text in notes]
    if scheduler_runs:
        body.append("<h2>Job completion times</h2>")
        body.append(image(folder, overview) if overview else note("No measured job finished."))
        if unswept:
            body.append(comparison_table(unswept))
    if network:
        body.append("<h2>Network contention</h2>")
        body.append(image(folder, network["cdf"]) if network["cdf"]
                    else note("No measured job crossed the fabric."))
    for block in sweep_blocks:
        body += sweep_block(folder, block)
    for run, section in zip(runs, sections):
        body.append(f"<h2>{esc(run.label)}</h2>")
        if section is None:
            body.append(note(f"Skipped: {run.kind}; this report knows scheduler runs "
                             "(summary.json, jobs.csv, rounds.csv), parameter-server runs "
                             "(summary.json, batches.csv) and OASiS runs (summary.json, jobs.csv, "
                             "slots.csv)."))
            continue
        body.append(summary_table(run, section["capacity"]))
        body += [image(folder, figure) for figure in section["figures"]]
        body += [note(text) for text in section["notes"]]
    title = "troupe report: " + ", ".join(run.name for run in runs)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
