// The live view's page: one HTML file with its own drawing code (SVG built by hand), so the
// view needs nothing from the network but troupe itself. It reads /state once, then follows
// /events; every number it shows carries an id (jobs-finished, virtual-h, ...) so a test can
// read it from the page's DOM.
#include "live/live_view.hpp"

namespace troupe {

const char* LivePageHtml() {
  return R"page(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>troupe live</title>
<style>
body{font:14px system-ui,sans-serif;margin:16px;color:#222;background:#fafafa}
h1{font-size:18px;margin:0 0 8px} h2{font-size:14px;margin:12px 0 4px}
.grid{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin-bottom:16px}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px}
table{border-collapse:collapse} td,th{padding:2px 8px;text-align:right}
td:first-child,th:first-child{text-align:left} #faults td,#faults th{text-align:left} .num{font-variant-numeric:tabular-nums}
#status.done{color:#060} #status.live{color:#a60} #status.lost{color:#a00}
svg text{font:11px system-ui,sans-serif} [hidden]{display:none!important}
</style></head><body>
<h1>troupe &middot; <span id="name">-</span> &middot; <span id="status" class="live">waiting</span></h1>
<div class="grid">
<div class="card"><h2>Time</h2><table class="num">
<tr><td>virtual</td><td><span id="virtual-h">0</span> <span id="virtual-unit">h</span></td></tr>
<tr><td>wall</td><td><span id="wall-s">0</span> s</td></tr>
<tr class="cluster"><td>rounds</td><td id="rounds">0</td></tr>
<tr><td>updates</td><td id="updates">0</td></tr></table></div>
<div class="card cluster"><h2>Jobs</h2><table class="num">
<tr><td>arrived</td><td id="jobs-arrived">0</td></tr>
<tr><td>queued</td><td id="jobs-queued">0</td></tr>
<tr><td>running</td><td id="jobs-running">0</td></tr>
<tr><td>finished</td><td id="jobs-finished">0</td></tr>
<tr><td>failed</td><td id="jobs-failed">0</td></tr></table></div>
<div class="card cluster"><h2>Allocated (latest round)</h2><table class="num">
<tr><td>GPU</td><td><span id="gpu-used">0</span> / <span id="gpu-total">0</span></td>
<td id="gpu-pct">0%</td></tr>
<tr><td>CPU</td><td><span id="cpu-used">0</span> / <span id="cpu-total">0</span></td>
<td id="cpu-pct">0%</td></tr>
<tr><td>memory GB</td><td><span id="mem-used">0</span> / <span id="mem-total">0</span></td>
<td id="mem-pct">0%</td></tr></table></div>
</div>
<div class="grid">
<div class="card ps" hidden><h2>Training</h2><table class="num">
<tr><td>steps</td><td><span id="ps-steps">0</span> / <span id="ps-steps-total">0</span></td></tr>
<tr><td>loss</td><td id="ps-loss">-</td></tr></table></div>
<div class="card ps" hidden><h2>Stage time per step (modelled ms)</h2><table class="num">
<tr><td>1 read</td><td id="ps-stage-read">0</td></tr>
<tr><td>2 partition</td><td id="ps-stage-partition">0</td></tr>
<tr><td>3 SSD-PS</td><td id="ps-stage-ssd">0</td></tr>
<tr><td>4 pull</td><td id="ps-stage-pull">0</td></tr>
<tr><td>4 GPU</td><td id="ps-stage-gpu">0</td></tr>
<tr><td>4 push</td><td id="ps-stage-push">0</td></tr>
<tr><td>4 all-reduce</td><td id="ps-stage-allreduce">0</td></tr></table></div>
<div class="card ps" hidden><h2>Hit rate per tier</h2><table class="num">
<tr><td>HBM-PS (of keys wanted)</td><td id="ps-hbm-hit">0</td></tr>
<tr><td>MEM-PS (of HBM-PS misses)</td><td id="ps-mem-hit">0</td></tr>
<tr><td>SSD-PS (of MEM-PS misses)</td><td id="ps-ssd-hit">0</td></tr>
<tr><td>memory (HBM-PS + MEM-PS)</td><td id="ps-memory-hit">0</td></tr>
<tr><td>keys wanted</td><td id="ps-keys">0</td></tr></table></div>
</div>
<div class="card sweep" hidden><h2>Runs: <span id="sweep-done">0</span> done of
<span id="sweep-total">0</span> (<span id="sweep-failed">0</span> failed)</h2>
<table id="sweep-runs"><tr><th>run</th><th>state</th><th>wall s</th><th>figures</th></tr>
</table></div>
<div class="grid cluster">
<div class="card"><h2>GPUs in use per server</h2><svg id="heat" width="420" height="60"></svg></div>
<div class="card"><h2>Allocation over virtual time</h2><svg id="timeline" width="420" height="200">
</svg></div>
<div class="card"><h2>JCT CDF so far (<span id="cdf-jobs">0</span> jobs)</h2>
<svg id="cdf" width="420" height="200"></svg></div>
<div class="card fabric" hidden><h2>Busiest links, latest round</h2>
<p><span id="links-busy">0</span> of <span id="links-total">0</span> links carried traffic</p>
<svg id="link-scale" width="200" height="18"></svg>
<table id="hot-links" class="num"><tr><th>link</th><th>utilisation</th><th></th><th>flows</th></tr>
</table></div>
</div>
<div class="card cluster"><h2>Faults (<span id="faults-total">0</span>)</h2>
<table id="faults"><tr><th>at (h)</th><th>fault</th><th>effect</th><th>recovered (h)</th></tr>
</table></div>
<script>
"use strict";
const NS = "http://www.w3.org/2000/svg";
let updates = 0;
function set(id, text) { document.getElementById(id).textContent = text; }
function fmt(v, d) { return Number(v).toFixed(d); }
function pct(used, total) { return total > 0 ? fmt(100 * used / total, 1) + "%" : "-"; }
function el(parent, tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e);
  return e;
}
function clear(svg) { while (svg.firstChild) svg.removeChild(svg.firstChild); }
// Cool (idle) to hot (full).
function heatColor(f) {
  f = Math.max(0, Math.min(1, f));
  return "hsl(" + Math.round(220 - 220 * f) + ",75%," + Math.round(92 - 42 * f) + "%)";
}
function drawHeat(servers) {
  const svg = document.getElementById("heat"); clear(svg);
  // Big cells with the GPU count in them for small clusters, small cells for large ones.
  const size = servers.length <= 64 ? 24 : 12, per = Math.floor(416 / (size + 2));
  const rows = Math.max(1, Math.ceil(servers.length / per));
  svg.setAttribute("height", rows * (size + 2) + 4);
  servers.forEach((s, i) => {
    const x = 2 + (i % per) * (size + 2), y = 2 + Math.floor(i / per) * (size + 2);
    const r = el(svg, "rect", {x: x, y: y, width: size, height: size,
      fill: heatColor(s.gpus > 0 ? s.used / s.gpus : 0), "class": "server", "data-used": s.used});
    if (size >= 24) {
      el(svg, "text", {x: x + size / 2, y: y + size / 2 + 4, "text-anchor": "middle"}, s.used);
    }
    el(r, "title", {}, s.name + ": " + s.used + "/" + s.gpus + " GPUs, " + fmt(s.cpus_used, 0) +
       "/" + fmt(s.cpus, 0) + " CPUs, " + fmt(s.mem_used, 0) + "/" + fmt(s.mem, 0) + " GB");
  });
}
// The links that carried traffic in the latest round, busiest first, coloured by utilisation.
function drawLinks(fabric) {
  set("links-busy", fabric.busy); set("links-total", fabric.links);
  const scale = document.getElementById("link-scale"); clear(scale);
  for (let i = 0; i < 10; i++) {
    el(scale, "rect", {x: 30 + 14 * i, y: 3, width: 14, height: 12, fill: heatColor(i / 9)});
  }
  el(scale, "text", {x: 26, y: 13, "text-anchor": "end"}, "0%");
  el(scale, "text", {x: 174, y: 13}, "100%");
  const table = document.getElementById("hot-links");
  while (table.rows.length > 1) table.deleteRow(1);
  for (const l of fabric.hot) {
    const row = table.insertRow();
    row.className = "link"; row.dataset.util = l.util;
    row.insertCell().textContent = l.name;
    row.insertCell().textContent = fmt(100 * l.util, 1) + "%";
    const bar = el(row.insertCell(), "svg", {width: 100, height: 10});
    el(bar, "rect", {x: 0, y: 0, width: 100, height: 10, fill: "#eee"});
    el(bar, "rect", {x: 0, y: 0, width: 100 * Math.min(1, l.util), height: 10,
                     fill: heatColor(l.util)});
    row.insertCell().textContent = l.flows;
  }
}
// Axes and polylines; series: [{points: [[x, y]...], color, label}], y in [0, ymax].
function plot(svg, series, xmax, ymax, xlabel, ylabel) {
  clear(svg);
  const W = +svg.getAttribute("width"), H = +svg.getAttribute("height"), L = 40, B = 28;
  const sx = x => L + (W - L - 8) * (xmax > 0 ? x / xmax : 0);
  const sy = y => H - B - (H - B - 8) * (ymax > 0 ? y / ymax : 0);
  el(svg, "line", {x1: L, y1: sy(0), x2: W - 8, y2: sy(0), stroke: "#888"});
  el(svg, "line", {x1: L, y1: sy(0), x2: L, y2: 8, stroke: "#888"});
  el(svg, "text", {x: L - 4, y: sy(ymax) + 4, "text-anchor": "end"}, fmt(ymax, ymax < 10 ? 1 : 0));
  el(svg, "text", {x: L - 4, y: sy(0), "text-anchor": "end"}, "0");
  el(svg, "text", {x: W - 8, y: H - 14, "text-anchor": "end"}, fmt(xmax, 1) + " " + xlabel);
  el(svg, "text", {x: L + 4, y: 12}, ylabel);
  series.forEach((s, k) => {
    if (!s.points.length) return;
    // Dashed after the first, so equal series (GPU-proportional runs) stay visible.
    el(svg, "polyline", {fill: "none", stroke: s.color, "stroke-width": 1.5,
      "stroke-dasharray": k ? (4 + 2 * k) + "," + (2 + 2 * k) : "none",
      points: s.points.map(p => sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1)).join(" ")});
    el(svg, "text", {x: L + 8 + 70 * k, y: H - 2, fill: s.color}, s.label);
  });
}
function drawTimeline(s) {
  const t = s.timeline, c = s.capacity, h = 3600;
  const share = (v, total) => total > 0 ? 100 * v / total : 0;
  plot(document.getElementById("timeline"), [
    {points: t.map(p => [p.t / h, share(p.gpus, c.gpus)]), color: "#c33", label: "GPU"},
    {points: t.map(p => [p.t / h, share(p.cpus, c.cpus)]), color: "#36c", label: "CPU"},
    {points: t.map(p => [p.t / h, share(p.mem, c.mem)]), color: "#393", label: "memory"}],
    t.length ? t[t.length - 1].t / h : 0, 100, "h", "% allocated");
}
function drawCdf(cdf) {
  const pts = cdf.map(p => [p[0] / 3600, p[1]]);
  plot(document.getElementById("cdf"), [{points: pts, color: "#63c", label: "JCT"}],
       pts.length ? pts[pts.length - 1][0] : 0, 1, "h", "fraction of jobs");
}
function drawFaults(s) {
  set("faults-total", s.faults_total);
  const table = document.getElementById("faults");
  while (table.rows.length > 1) table.deleteRow(1);
  s.faults.slice().reverse().forEach(f => {
    const row = table.insertRow();
    [fmt(f.at_s / 3600, 2), f.fault, f.effect,
     f.recovered_s >= 0 ? fmt(f.recovered_s / 3600, 2) : "-"].forEach(v => {
      row.insertCell().textContent = v;
    });
  });
}
function renderPs(ps) {
  set("ps-steps", ps.steps_done); set("ps-steps-total", ps.steps_total);
  set("ps-loss", ps.steps_done > 0 ? fmt(ps.loss, 4) : "-");
  for (const k in ps.stage_s) set("ps-stage-" + k, fmt(1000 * ps.stage_s[k], 2));
  const t = ps.tiers, rate = r => fmt(100 * r, 1) + "%";
  set("ps-hbm-hit", rate(t.hbm_hit_rate)); set("ps-mem-hit", rate(t.mem_hit_rate));
  set("ps-ssd-hit", rate(t.ssd_hit_rate)); set("ps-memory-hit", rate(t.memory_hit_rate));
  set("ps-keys", t.keys);
}
function renderSweep(sweep) {
  set("sweep-done", sweep.done); set("sweep-total", sweep.total);
  set("sweep-failed", sweep.failed);
  const table = document.getElementById("sweep-runs");
  while (table.rows.length > 1) table.deleteRow(1);
  for (const r of sweep.runs) {
    const row = table.insertRow();
    row.className = "run-" + r.state;
    const figures = r.figures.map(f => f[0] + " " + Number(f[1]).toPrecision(4)).join(", ");
    for (const text of [r.name, r.state, fmt(r.wall_s, 1), figures]) {
      row.insertCell().textContent = text;
    }
  }
}
function render(s) {
  updates++;
  // A parameter-server run shows its own panels instead of the cluster's; a sweep only its runs.
  document.querySelectorAll(".cluster").forEach(e => { e.hidden = !!s.ps || !!s.sweep; });
  document.querySelectorAll(".ps").forEach(e => { e.hidden = !s.ps; });
  document.querySelectorAll(".sweep").forEach(e => { e.hidden = !s.sweep; });
  document.querySelectorAll(".fabric").forEach(e => { e.hidden = !s.fabric; });
  if (s.fabric) drawLinks(s.fabric);
  if (s.ps) renderPs(s.ps);
  if (s.sweep) renderSweep(s.sweep);
  set("updates", updates);
  set("name", s.name || "-");
  const status = document.getElementById("status");
  status.textContent = s.done ? "finished" : "running";
  status.className = s.done ? "done" : "live";
  // Cluster runs span hours of virtual time; a parameter-server run seconds.
  set("virtual-h", s.ps ? fmt(s.virtual_s, 3) : fmt(s.virtual_s / 3600, 2));
  set("virtual-unit", s.ps ? "s" : "h");
  set("wall-s", fmt(s.wall_s, 1));
  set("rounds", s.rounds);
  for (const k of ["arrived", "queued", "running", "finished", "failed"]) {
    set("jobs-" + k, s.jobs[k]);
  }
  const l = s.latest, c = s.capacity;
  set("gpu-used", l.gpus); set("gpu-total", c.gpus); set("gpu-pct", pct(l.gpus, c.gpus));
  set("cpu-used", fmt(l.cpus, 0)); set("cpu-total", fmt(c.cpus, 0));
  set("cpu-pct", pct(l.cpus, c.cpus));
  set("mem-used", fmt(l.mem, 0)); set("mem-total", fmt(c.mem, 0));
  set("mem-pct", pct(l.mem, c.mem));
  set("cdf-jobs", s.jobs.finished);
  drawHeat(s.servers);
  drawTimeline(s);
  drawCdf(s.jct_cdf);
  drawFaults(s);
}
let shown = 0, finished = false;
function show(s) {
  if (s.version <= shown || finished) return;  // nothing published yet, or older than shown
  shown = s.version;
  finished = s.done;
  render(s);
}
fetch("/state").then(r => r.json()).then(show).catch(() => {});
const events = new EventSource("/events");
events.onmessage = e => {
  show(JSON.parse(e.data));
  if (finished) events.close();  // the final numbers are in
};
events.onerror = () => {
  if (finished) return;
  const status = document.getElementById("status");
  status.textContent = "connection lost"; status.className = "lost";
};
</script></body></html>
)page";
}

}  // namespace troupe
