#!/usr/bin/env python3
"""Side by side: troupe's max-min flow sharing against SimGrid's flow model on the same cases.

Each case is a set of directed links (capacity in bytes per second) and flows (the links each
crosses, in order). For every flow it prints the closed-form max-min rate, the rate troupe's
fabric/flow_sharing.cpp gives (compiled here into a small driver, outside the default build), and
the rate SimGrid's CM02 network model gives, measured as the bytes a long transfer moves in the
first second; and, for reference only (not checked), the rate of SimGrid's default LV08 model,
max-min calibrated on TCP, in which 97% of a link's bandwidth is usable (it also weighs flows by
their routes' latency and bandwidth, which these latency-free cases do not exercise). Links have no latency, so SimGrid weighs every flow alike (CM02 weighs a flow by
its route's latency when there is one), and cross-traffic (a share of each flow's bytes put on
the reverse path for its acknowledgements) is off: what is left is plain max-min.

Needs SimGrid's Python bindings (Debian: apt-get install python3-simgrid) and a C++20 compiler.
Usage: python3 scripts/compare-simgrid.py   (from the repository root; docs/network.md)
Exit status: 0 when every rate agrees within 1e-6 (relative), 1 when one does not, 2 when a tool
is missing.
"""
import os
import subprocess
import sys
import tempfile

try:
    import simgrid
except ImportError:
    sys.exit("compare-simgrid: SimGrid's Python bindings are missing "
             "(Debian: apt-get install python3-simgrid)")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GBPS = 1e9 / 8  # bytes per second in one Gb/s

# The driver: reads "links N" then N capacities, then "flows M" and M lines "K l1 ... lK"; prints
# each flow's rate after one Update, one per line.
DRIVER = r"""
#include <cstdio>
#include <iostream>
#include <vector>
#include "fabric/flow_sharing.hpp"
int main() {
  std::string word;
  size_t links = 0, flows = 0;
  std::cin >> word >> links;
  std::vector<double> capacities(links);
  for (double& c : capacities) std::cin >> c;
  troupe::fabric::FlowSharing sharing(capacities);
  std::cin >> word >> flows;
  std::vector<troupe::fabric::FlowId> ids;
  for (size_t f = 0; f < flows; ++f) {
    size_t k = 0;
    std::cin >> k;
    std::vector<int32_t> route(k);
    for (int32_t& l : route) std::cin >> l;
    ids.push_back(sharing.Add(route));
  }
  sharing.Update();
  for (auto id : ids) std::printf("%.17g\n", sharing.Rate(id));
}
"""


def parking_lot_equal():
    """One long flow over 4 links of 100 Gb/s, one short flow on each: every flow gets C/2."""
    links = [("l%d" % i, 100 * GBPS) for i in range(4)]
    flows = [("long", [0, 1, 2, 3])] + [("short%d" % i, [i]) for i in range(4)]
    expected = [50 * GBPS] * 5
    return "parking lot, 4 links of 100 Gb/s", links, flows, expected


def parking_lot_unequal():
    """Links of 80, 32 and 48 Gb/s; the long flow crosses all three, one short flow on each link
    and a second on the last. Link 1 fills first at 32/2 = 16 (the long flow and its short flow);
    link 0 leaves 80 - 16 = 64 to its short flow, link 2 leaves 48 - 16 = 32 to its two, 16 each."""
    links = [("l0", 80 * GBPS), ("l1", 32 * GBPS), ("l2", 48 * GBPS)]
    flows = [("long", [0, 1, 2]), ("short0", [0]), ("short1", [1]), ("short2", [2]),
             ("short2b", [2])]
    expected = [g * GBPS for g in (16, 64, 16, 16, 16)]
    return "parking lot, links of 80/32/48 Gb/s", links, flows, expected


def two_racks():
    """Two racks of two servers (s0, s1 | s2, s3), 100 Gb/s NICs, racks 4:1 oversubscribed (uplink
    2 x 100 / 4 = 50 Gb/s), one spine. Job A's ring over s0 and s2 and job B's over s1 and s3 cross
    the spine; job C's ring over s0 and s1 stays in rack 0. Each rack uplink carries one flow of A
    and one of B (25 Gb/s each); C's flows take what the NICs leave: 100 - 25 = 75 Gb/s."""
    names = []
    for s in range(4):
        names += ["s%d.up" % s, "s%d.down" % s]
    for r in range(2):
        names += ["rack%d.up" % r, "rack%d.down" % r]
    cap = {n: (100 if n.startswith("s") else 50) * GBPS for n in names}
    index = {n: i for i, n in enumerate(names)}
    rack = {0: 0, 1: 0, 2: 1, 3: 1}

    def route(a, b):
        hops = ["s%d.up" % a]
        if rack[a] != rack[b]:
            hops += ["rack%d.up" % rack[a], "rack%d.down" % rack[b]]
        hops.append("s%d.down" % b)
        return [index[h] for h in hops]

    flows = [("A s0->s2", route(0, 2)), ("A s2->s0", route(2, 0)), ("B s1->s3", route(1, 3)),
             ("B s3->s1", route(3, 1)), ("C s0->s1", route(0, 1)), ("C s1->s0", route(1, 0))]
    expected = [g * GBPS for g in (25, 25, 25, 25, 75, 75)]
    return ("two racks 4:1, two cross-rack rings and one in-rack ring",
            [(n, cap[n]) for n in names], flows, expected)


def build_driver(workdir):
    source = os.path.join(workdir, "driver.cpp")
    with open(source, "w") as out:
        out.write(DRIVER)
    binary = os.path.join(workdir, "driver")
    compiler = os.environ.get("CXX", "c++")
    cmd = [compiler, "-std=c++20", "-O2", "-I", REPO, source,
           os.path.join(REPO, "fabric", "flow_sharing.cpp"), "-o", binary]
    if subprocess.run(cmd).returncode != 0:
        sys.exit("compare-simgrid: could not compile fabric/flow_sharing.cpp with " + compiler)
    return binary


def troupe_rates(binary, links, flows):
    text = "links %d\n%s\nflows %d\n" % (len(links), " ".join("%.17g" % c for _, c in links),
                                        len(flows))
    text += "".join("%d %s\n" % (len(r), " ".join(map(str, r))) for _, r in flows)
    out = subprocess.run([binary], input=text, capture_output=True, text=True, check=True)
    return [float(x) for x in out.stdout.split()]


def platform_xml(links, flows):
    """A Full-routing zone: one host per flow end (src and dst of flow f), each flow's route is
    its own list of links, one direction only."""
    lines = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '<zone id="world" routing="Full">']
    for f in range(len(flows)):
        lines.append('<host id="src%d" speed="1f"/><host id="dst%d" speed="1f"/>' % (f, f))
    for name, capacity in links:
        lines.append('<link id="%s" bandwidth="%.17gBps" latency="0s"/>' % (name, capacity))
    for f, (_, route) in enumerate(flows):
        ctn = "".join('<link_ctn id="%s"/>' % links[l][0] for l in route)
        lines.append('<route src="src%d" dst="dst%d" symmetrical="NO">%s</route>' % (f, f, ctn))
    lines += ["</zone>", "</platform>"]
    return "\n".join(lines)


def simgrid_rates(links, flows, workdir, case, model):
    """Runs SimGrid in a child process (an engine is one per process) and reads the rates."""
    path = os.path.join(workdir, "platform%d.xml" % case)
    with open(path, "w") as out:
        out.write(platform_xml(links, flows))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--simgrid-child", path,
                          str(len(flows)), model], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("compare-simgrid: SimGrid failed:\n" + out.stderr)
    return [float(x) for x in out.stdout.split()]


def simgrid_child(path, flows, model):
    size = 10**15  # bytes: long enough that no transfer ends within the measured second
    window = 1.0
    e = simgrid.Engine(["compare-simgrid", "--cfg=network/model:" + model,
                        "--cfg=network/crosstraffic:0", "--log=root.thres:critical"])
    e.load_platform(path)
    rates = []

    def measure():
        comms = [simgrid.Comm.sendto_async(e.host_by_name("src%d" % f),
                                           e.host_by_name("dst%d" % f), size)
                 for f in range(flows)]
        simgrid.this_actor.sleep_for(window)
        rates.extend((size - c.remaining) / window for c in comms)
        for c in comms:
            c.cancel()

    simgrid.Actor.create("measure", e.host_by_name("src0"), measure)
    e.run()
    print("\n".join("%.17g" % r for r in rates))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--simgrid-child":
        simgrid_child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return 0
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="troupe-simgrid-") as workdir:
        driver = build_driver(workdir)
        for case, (title, links, flows, expected) in enumerate(
                [parking_lot_equal(), parking_lot_unequal(), two_racks()]):
            ours = troupe_rates(driver, links, flows)
            theirs = simgrid_rates(links, flows, workdir, case, "CM02")
            calibrated = simgrid_rates(links, flows, workdir, case, "LV08")
            print("\n%s (Gb/s)" % title)
            print("| flow | closed form | troupe | SimGrid CM02 | SimGrid LV08 |")
            print("|---|---|---|---|---|")
            for (name, _), x, t, s, v in zip(flows, expected, ours, theirs, calibrated):
                print("| %s | %.6g | %.6g | %.6g | %.6g |" %
                      (name, x / GBPS, t / GBPS, s / GBPS, v / GBPS))
                worst = max(worst, abs(t - x) / x, abs(s - x) / x)
    print("\nlargest relative difference from the closed form: %.3g" % worst)
    return 0 if worst <= 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
