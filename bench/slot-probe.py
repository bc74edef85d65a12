#!/usr/bin/env python3
"""What a probe of the disk beside each job would take out of the paired noise
(docs/design-notes.md, "A probe of the disk beside each job"), from bench/slot-probe.sh's CSV.

Per job: the correlation of the job's two-way (round x setup) residuals of log value with the
probe's, the slope beta pooled over every slot, whether the probe differs by setup (an F test;
a probe the filesystems move could not be adjusted by), and for each pair of setups the paired
noise (sd of the per-round log ratios) before and after subtracting beta times the probe's log
ratio.

usage: bench/slot-probe.py OUT.csv"""
import csv, math, sys, itertools
rows = list(csv.DictReader(open(sys.argv[1])))

def twoway(cell):
    """Residuals and per-setup effects of {(round, setup): log value}, and the residual mean square."""
    rs = sorted({r for r, _ in cell}); ss = sorted({s for _, s in cell})
    g = sum(cell.values()) / len(cell)
    rm = {r: sum(cell[(r, s)] for s in ss) / len(ss) for r in rs}
    sm = {s: sum(cell[(r, s)] for r in rs) / len(rs) for s in ss}
    res = {k: cell[k] - rm[k[0]] - sm[k[1]] + g for k in cell}
    ms_res = sum(e * e for e in res.values()) / ((len(rs) - 1) * (len(ss) - 1))
    ms_setup = len(rs) * sum((sm[s] - g) ** 2 for s in ss) / (len(ss) - 1)
    return res, ms_setup / ms_res if ms_res > 0 else float('nan'), rs, ss

def sd(v):
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))

for job in sorted({r['job'] for r in rows}):
    v = {(int(r['round']), r['fs']): math.log(float(r['value'])) for r in rows if r['job'] == job}
    p = {(int(r['round']), r['fs']): math.log(float(r['probe_iops'])) for r in rows if r['job'] == job}
    ev, _, rs, ss = twoway(v)
    ep, f_setup, _, _ = twoway(p)
    sxy = sum(ep[k] * ev[k] for k in ev); sxx = sum(ep[k] ** 2 for k in ev); syy = sum(ev[k] ** 2 for k in ev)
    beta = sxy / sxx
    pairs = []
    for a, b in itertools.combinations(ss, 2):
        d = [v[(r, a)] - v[(r, b)] for r in rs]
        adj = [x - beta * (p[(r, a)] - p[(r, b)]) for x, r in zip(d, rs)]
        pairs.append(f"{a}/{b} {100 * sd(d):.0f} -> {100 * sd(adj):.0f} %")
    print(f"{job:11} r = {sxy / math.sqrt(sxx * syy):+.2f}  beta = {beta:+.2f}  "
          f"probe by setup F({len(ss) - 1},{(len(rs) - 1) * (len(ss) - 1)}) = {f_setup:.2f}  "
          f"paired noise: {', '.join(pairs)}")
