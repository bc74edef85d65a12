#!/usr/bin/env python3
"""What pooling the paired noise across setups would decide (docs/design-notes.md, "The
default's design"): for ext4, XFS and Btrfs in each results.json, every metric and pair, the
per-pair paired t interval (fsbench's statistic, 90 % two-sided, df = rounds - 1) against one
using the two-way (round x setup) residual variance (df = 2 x (rounds - 1)); counts the
questions each decides beyond noise and lists any decided in opposite directions by two runs.

usage: bench/pooled-noise.py OUT1/results.json OUT2/results.json ..."""
import json, math, sys, collections, itertools
T = {2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 8: 1.860}
def dirs(path):
    d = json.load(open(path))
    cells = collections.defaultdict(dict)
    for s in d['samples']:
        if s['setup'] not in ('ext4', 'xfs', 'btrfs') or not s['value'] or s['value'] <= 0: continue
        cells[(s['workload'], s['metric'])].setdefault(s['round'], {})[s['setup']] = math.log(s['value'])
    out = {}
    for key, br in cells.items():
        rounds = [r for r in sorted(br) if len(br[r]) == 3]
        R = len(rounds)
        if R not in (3, 4, 5): continue  # the t table below
        setups = ['ext4', 'xfs', 'btrfs']
        Y = [[br[r][s] for s in setups] for r in rounds]
        g = sum(map(sum, Y)) / (R * 3); rm = [sum(row) / 3 for row in Y]
        cm = [sum(Y[i][j] for i in range(R)) / R for j in range(3)]
        ssr = sum((Y[i][j] - rm[i] - cm[j] + g) ** 2 for i in range(R) for j in range(3))
        df = (R - 1) * 2; s2 = ssr / df
        for a, b in itertools.combinations(range(3), 2):
            d_ = [Y[i][a] - Y[i][b] for i in range(R)]
            m = sum(d_) / R
            sd = math.sqrt(sum((x - m) ** 2 for x in d_) / (R - 1))
            hw_p = T[R - 1] * sd / math.sqrt(R)
            hw_q = T[df] * math.sqrt(2 * s2 / R)
            dec = lambda hw: (1 if m - hw > 0 else -1 if m + hw < 0 else 0)
            out[(key, setups[a], setups[b])] = (dec(hw_p), dec(hw_q), m, sd, math.sqrt(2 * s2))
    return out
runs = [dirs(p) for p in sys.argv[1:]]
for i, r in enumerate(runs):
    p = sum(1 for v in r.values() if v[0]); q = sum(1 for v in r.values() if v[1])
    print(f"run {i+1}: {len(r)} questions, paired decides {p}, pooled decides {q}")
for i, j in itertools.combinations(range(len(runs)), 2):
    for k in set(runs[i]) & set(runs[j]):
        for col, name in ((0, 'paired'), (1, 'pooled')):
            if runs[i][k][col] * runs[j][k][col] < 0:
                print(f"  OPPOSITE ({name}) runs {i+1},{j+1}: {k}")
