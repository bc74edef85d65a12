#!/usr/bin/env python3
"""Variance components (round x setup) of a results.json's plain samples, per (workload, metric):
the noise all setups of a round share (which the paired ratio cancels), the two-way residual
(the noise each setup keeps after the round's shared part: per setup, not yet a ratio), the
noise of a paired log ratio of two setups (√2 × that residual: both sides carry it), and each
setup's own spread across rounds. Then, over the nine rows
docs/design-notes.md ("Rounds by steps") tabulates, the shared share of the variance and the
rms of the other two.

usage: bench/variance-components.py results.json [setups,to,exclude]"""
import json, math, sys, collections
d = json.load(open(sys.argv[1]))
excl = set(sys.argv[2].split(',')) if len(sys.argv) > 2 and sys.argv[2] else set()
cells = collections.defaultdict(dict)
for s in d['samples']:
    if s['setup'] in excl or s['value'] is None or s['value'] <= 0:
        continue
    cells[(s['workload'], s['metric'])].setdefault(s['round'], {})[s['setup']] = math.log(s['value'])
rows = []
for key, byround in sorted(cells.items()):
    setups = sorted(set.intersection(*[set(v) for v in byround.values()]))
    rounds = sorted(byround)
    R, S = len(rounds), len(setups)
    if R < 3 or S < 2:
        continue
    Y = [[byround[r][s] for s in setups] for r in rounds]
    g = sum(map(sum, Y)) / (R * S)
    rm = [sum(row) / S for row in Y]
    cm = [sum(Y[i][j] for i in range(R)) / R for j in range(S)]
    ssr = sum((Y[i][j] - rm[i] - cm[j] + g) ** 2 for i in range(R) for j in range(S))
    ms_res = ssr / ((R - 1) * (S - 1))
    ms_round = S * sum((x - g) ** 2 for x in rm) / (R - 1)
    var_round = max(0.0, (ms_round - ms_res) / S)
    # the unpaired view: each setup's own spread across rounds (what the range rule paid)
    unpaired = sum(sum((Y[i][j] - cm[j]) ** 2 for i in range(R)) / (R - 1) for j in range(S)) / S
    rows.append((key, R, S, math.sqrt(var_round), math.sqrt(ms_res), math.sqrt(unpaired)))
print(f"{'workload/metric':45} R S  shared-round  residual(per setup)  paired ratio(√2×)  per-setup(unpaired)")
for (w, m), R, S, sr, se, su in rows:
    print(f"{w+'/'+m:45} {R} {S}  {100*sr:10.1f} %  {100*se:15.1f} %  {100*math.sqrt(2)*se:13.1f} %  {100*su:14.1f} %")

NINE = ["randread/iops", "randwrite/iops", "randrw70/read_iops", "fsync-write/iops",
        "seqread/bw_mib_s", "seqwrite/bw_mib_s", "untar/seconds", "find-cold/seconds",
        "rm-tree/seconds"]
sel = [(sr, se, su) for (w, m), R, S, sr, se, su in rows if f"{w}/{m}" in NINE]
if sel:
    shared = sum(x[0] ** 2 for x in sel)
    left = sum(x[1] ** 2 for x in sel)
    own = sum(x[2] ** 2 for x in sel)
    print(f"\nover {len(sel)} rows: shared by the round's setups {100 * shared / (shared + left):.0f} % of the "
          f"variance; residual per setup, rms {100 * math.sqrt(left / len(sel)):.1f} % (a paired ratio's noise: "
          f"{100 * math.sqrt(2 * left / len(sel)):.1f} %); each setup's own "
          f"spread, rms {100 * math.sqrt(own / len(sel)):.1f} %")
