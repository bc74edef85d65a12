#!/usr/bin/env python3
"""Do two runs of the same machine decide alike? For two results.json, fsbench's own
judgements (`fsbench report --format json`, recomputed from the samples): every headline
comparison with its row's leader decided beyond noise (a winner) or equivalent, and every
measured claim confirmed or refuted. Prints how many each run decided, how many both did, how
many of those agree, and lists any decided in opposite directions (a different winner, or
confirmed in one and refuted in the other); "equivalent in one, a winner in the other" is
listed apart, as a softer disagreement. Exit 1 when any decision is opposite.

usage: bench/same-decisions.py RUN1/results.json RUN2/results.json
       FSBENCH=target/debug/fsbench bench/same-decisions.py …"""
import json, os, subprocess, sys

FSBENCH = os.environ.get("FSBENCH", "target/release/fsbench")


def decisions(path):
    d = json.loads(subprocess.check_output([FSBENCH, "report", path, "--format", "json"]))
    out = {}
    for row in d["judgements"]["headline"]:
        leader = row["leader"]
        for other, v in (row.get("versus_leader") or {}).items():
            pair = tuple(sorted([leader, other]))
            key = ("row", row["label"]) + pair
            if v["outcome"] in ("ahead", "behind"):
                out[key] = "winner " + (leader if v["outcome"] == "ahead" else other)
            elif v["outcome"] == "equivalent":
                out[key] = "equivalent"
    for c in d["judgements"]["claims"]:
        if c["outcome"] in ("confirmed", "refuted"):
            out[("claim", c["id"])] = c["outcome"]
    return out


if len(sys.argv) != 3:
    sys.exit(__doc__.split("usage: ")[1])
x, y = decisions(sys.argv[1]), decisions(sys.argv[2])
both = sorted(set(x) & set(y))
opposite = [k for k in both if x[k] != y[k] and "equivalent" not in (x[k], y[k])]
soft = [k for k in both if x[k] != y[k] and "equivalent" in (x[k], y[k])]
print(
    f"decided in run 1: {len(x)}, in run 2: {len(y)}, in both: {len(both)}, "
    f"the same: {sum(x[k] == y[k] for k in both)}, opposite: {len(opposite)}, "
    f"equivalent in one and a winner in the other: {len(soft)}"
)
for k in opposite:
    print("  opposite:", " · ".join(k[1:]), f"({x[k]} | {y[k]})")
for k in soft:
    print("  softer:", " · ".join(k[1:]), f"({x[k]} | {y[k]})")
sys.exit(1 if opposite else 0)
