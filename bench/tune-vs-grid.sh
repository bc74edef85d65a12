#!/usr/bin/env bash
# fsbench tune against the exhaustive grid of a small space (docs/tune.md, issue 57), on the
# same workload and loop image size: ext4's atime × data × lazytime × discard (24
# configurations, data=writeback among them, so tune runs with --allow-unsafe) by default.
#   1. tune (its answer, OUT/tune/tune.json, and its wall time);
#   2. the grid: one fsbench run of every configuration, ROUNDS rounds (its wall time);
#   3. a re-test in a separate run: the baseline, tune's winner and the grid's best, ROUNDS
#      rounds.
# Prints the grid's best and tune's winner (score over the baseline: the geometric mean over
# rounds and workloads of the headline metric's ratio, the same score tune judges), tune's
# share of the grid's time, and both again in the re-test. The issue's bar: tune's winner
# within 5 % of the grid's best at ≤ 25 % of its time, its confirmed gain within 5 % on the
# re-test. Needs root and python3. Quote figures only from a quiet machine (load printed).
# With the defaults (randwrite + seqread, 5 s steps, 3 rounds) the grid alone takes about
# 24 × 3 × (mkfs, quiet wait, two 5 s jobs) ≈ 40 min here, tune about 15 min.
#
#   sudo bench/tune-vs-grid.sh
#   ONLY=randwrite RUNTIME=2s ROUNDS=2 FSBENCH=target/debug/fsbench bench/tune-vs-grid.sh
set -euo pipefail

ONLY=${ONLY:-randwrite,seqread}
RUNTIME=${RUNTIME:-5s}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-1G}
FILE_SIZE=${FILE_SIZE:-256M}
BUDGET=${BUDGET:-2h}
FSBENCH=${FSBENCH:-target/release/fsbench}
SCRATCH=${SCRATCH:-/var/tmp}
# The grid: ext4's values of these factors (docs/tune.md's table), all combinations.
GRID=${GRID:-"noatime data=writeback,data=journal lazytime discard"}
OPTIONS=${OPTIONS:-atime,data,lazytime,discard}

[ "$(id -u)" = 0 ] || { echo "needs root (loop devices, mounts)" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "no fsbench binary at $FSBENCH (set FSBENCH=…)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }

work=$(mktemp -d "$SCRATCH/tune-vs-grid.XXXXXX")
echo "work: $work; load: $(cut -d' ' -f1-3 /proc/loadavg); $ONLY, $RUNTIME steps, $ROUNDS rounds, image $SIZE"
common=(--only "$ONLY" --runtime "$RUNTIME" --ramp 0s --image-size "$SIZE" --file-size "$FILE_SIZE"
        --scratch-dir "$work" --quiet-window 2s --seed 57)

t0=$(date +%s)
"$FSBENCH" tune --fs ext4 --options "$OPTIONS" --allow-unsafe --rounds "$ROUNDS" --budget "$BUDGET" \
    "${common[@]}" --out "$work/tune" > "$work/tune.txt" 2> "$work/tune.err" || true
t1=$(date +%s)
cat "$work/tune.txt"

# Every combination of the grid's values (a factor's words separated by commas; one word: on/off).
variants=$(python3 - "$GRID" <<'PY'
import itertools, sys
factors = [[""] + f.split(",") for f in sys.argv[1].split()]
out = []
for i, combo in enumerate(itertools.product(*factors)):
    opts = [w for w in combo if w]
    out.append("ext4" if not opts else f"g{i}=ext4:mount=" + ",".join(opts))
print("\n".join(out))
PY
)
mapfile -t fs <<< "$variants"
"$FSBENCH" run "${fs[@]/#/--fs=}" --rounds "$ROUNDS" "${common[@]}" --out "$work/grid" \
    > "$work/grid.txt" 2> "$work/grid.err" || true
t2=$(date +%s)

score() { # results.json baseline → one line per setup: name score
python3 - "$1" "$2" "$work/tune/tune.json" <<'PY'
import json, math, sys, collections
r = json.load(open(sys.argv[1])); base = sys.argv[2]
objs = [(o["workload"], o["metric"]) for o in json.load(open(sys.argv[3]))["objectives"]]
lower = {"seconds", "lat_p99_ms"}
v = collections.defaultdict(dict)
for s in r["samples"]:
    v[(s["setup"], s["workload"], s["metric"])][s["round"]] = s["value"]
for setup in sorted({s["setup"] for s in r["samples"]}):
    logs = []
    for w, m in objs:
        a, b = v.get((setup, w, m), {}), v.get((base, w, m), {})
        for rnd in a.keys() & b.keys():
            x = a[rnd] / b[rnd] if b[rnd] else float("nan")
            if m in lower: x = 1 / x
            if x > 0: logs.append(math.log(x))
    if logs: print(setup, round(math.exp(sum(logs) / len(logs)), 4))
PY
}
score "$work/grid/results.json" ext4 | sort -k2 -n -r > "$work/grid.scores"
best=$(head -1 "$work/grid.scores" | cut -d' ' -f1)
best_variant=$(printf '%s\n' "${fs[@]}" | grep "^$best=" || echo ext4)
winner=$(python3 -c '
import json,sys; a=json.load(open(sys.argv[1]))
w = a.get("unsafe_best") or a.get("recommended")
print(w["setup"]["variant"] if w else "ext4")' "$work/tune/tune.json")
confirmed=$(python3 -c '
import json,sys; a=json.load(open(sys.argv[1]))
w = a.get("unsafe_best") or a.get("recommended")
print(round(w["gain"]["ratio"],4) if w else 1.0)' "$work/tune/tune.json")

# The grid's name of tune's winner: the grid configuration with the same mount options.
opts() { case "$1" in *mount=*) echo "${1#*mount=}" | tr ',' '\n' | sort | tr '\n' ' ';; esac; }
winner_in_grid=ext4
for v in "${fs[@]}"; do
    [ "$(opts "$v")" = "$(opts "$winner")" ] && winner_in_grid=${v%%=*}
done

retest=(--fs ext4)
[ "$winner" != ext4 ] && retest+=(--fs "$winner")
[ "$best_variant" != ext4 ] && [ "$winner_in_grid" != "$best" ] && retest+=(--fs "$best_variant")
"$FSBENCH" run "${retest[@]}" --rounds "$ROUNDS" "${common[@]}" --out "$work/retest" \
    > "$work/retest.txt" 2> "$work/retest.err" || true
score "$work/retest/results.json" ext4 > "$work/retest.scores"

echo
echo "grid: ${#fs[@]} configurations, $((t2 - t1)) s; tune: $((t1 - t0)) s ($(( 100 * (t1 - t0) / (t2 - t1 > 0 ? t2 - t1 : 1) )) % of the grid's time)"
echo "grid's best:   $best_variant  score $(head -1 "$work/grid.scores" | cut -d' ' -f2) (grid rounds)"
echo "tune's winner: $winner  confirmed $confirmed; in the grid ($winner_in_grid): $(grep "^$winner_in_grid " "$work/grid.scores" | cut -d' ' -f2)"
echo "re-test (separate run, $ROUNDS rounds):"
sed 's/^/  /' "$work/retest.scores"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); everything is in $work"
