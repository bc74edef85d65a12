#!/usr/bin/env bash
# fsbench tune against the exhaustive grid of a small space (docs/tune.md, issue 57), on the
# same workloads and loop image size: Btrfs' atime × autodefrag × discard × compress (none,
# zstd:1, lzo) by default, 24 configurations, all safe, randwrite and seqread.
#   1. tune (its answer, OUT/tune/tune.json, and its wall time);
#   2. the grid: one fsbench run of every configuration, ROUNDS rounds (its wall time);
#   3. a re-test in a separate run: the baseline, tune's winner and the grid's best, ROUNDS
#      rounds.
# Prints the grid's best and tune's winner (score over the baseline: the geometric mean over
# rounds and workloads of the headline metric's ratio, the same score tune judges), tune's
# share of the grid's time, and both again in the re-test. The issue's bar: tune's winner
# within 5 % of the grid's best at ≤ 25 % of its time, its confirmed gain within 5 % on the
# re-test. Needs root and python3. Quote figures only from a quiet machine (load printed).
# The defaults fit a quiet window of about 30 minutes: two workloads, 3 s steps, 3 rounds, 24
# configurations on a 1 GiB image; fsbench's own estimates are printed first (from `fsbench
# plan` and `fsbench tune --dry-run`): the grid 13.5 min, tune's screening (6 setups) 3.5
# and a confirmation 1 (racing only when two options or more are separated from noise, at
# most 7 more within BUDGET), the re-test about 2: about 20 min, 27 with a full race.
# Screening costs (1 + the values screened) / (the grid's configurations) of the grid at
# equal rounds: 6/24 here, 5/16 on the old default (ext4 atime × lazytime × discard × -I 512),
# which could never come under a quarter (docs/tune.md).
#
#   sudo bench/tune-vs-grid.sh
#   SCREEN=fractional sudo bench/tune-vs-grid.sh     # tune's screening as a fractional design
#   # 48 configurations (ssd added), a budget of a quarter of the grid's time: screening's floor
#   # is 8/48 (docs/tune.md, 2026-12-07: tune 16 % of the grid's time); about 35 minutes
#   FS=btrfs GRID='noatime;autodefrag;nodiscard;compress=zstd:1,compress=lzo;ssd' \
#     OPTIONS=atime,autodefrag,discard,compress=zstd:1,compress=lzo,ssd BUDGET=6m sudo bench/tune-vs-grid.sh
#   # the old default, ext4 (16 configurations, one workload):
#   FS=ext4 GRID='noatime;lazytime;discard;mkfs=-I 512' OPTIONS=atime,lazytime,discard,inode_size \
#     ONLY=randwrite sudo bench/tune-vs-grid.sh
#   # a check of the script, not a figure (tiny images, 1 s steps):
#   GRID='noatime;autodefrag' OPTIONS=atime,autodefrag SIZE=256M FILE_SIZE=32M RUNTIME=1s \
#     ROUNDS=2 FSBENCH=target/debug/fsbench bench/tune-vs-grid.sh
set -euo pipefail

ONLY=${ONLY:-randwrite,seqread}
RUNTIME=${RUNTIME:-3s}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-1G}
FILE_SIZE=${FILE_SIZE:-256M}
BUDGET=${BUDGET:-10m}
FSBENCH=${FSBENCH:-target/release/fsbench}
SCRATCH=${SCRATCH:-/var/tmp}
SCREEN=${SCREEN:-auto}
# The filesystem whose space is searched (ext4, xfs, btrfs: the grid's words must be values of
# its space, docs/tune.md's table).
FS=${FS:-btrfs}
# The grid: FS's values of these factors, all combinations; factors separated by ';', a
# factor's values by ',' (one value: on/off); `mkfs=` words go to mkfs.
GRID=${GRID:-"noatime;autodefrag;nodiscard;compress=zstd:1,compress=lzo"}
OPTIONS=${OPTIONS:-atime,autodefrag,discard,compress=zstd:1,compress=lzo}
# Set UNSAFE=1 when the grid holds durability-weakening values (data=writeback, barrier=0).
UNSAFE=${UNSAFE:-}

[ "$(id -u)" = 0 ] || { echo "needs root (loop devices, mounts)" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "no fsbench binary at $FSBENCH (set FSBENCH=…)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }

work=$(mktemp -d "$SCRATCH/tune-vs-grid.XXXXXX")
echo "work: $work; load: $(cut -d' ' -f1-3 /proc/loadavg); $ONLY, $RUNTIME steps, $ROUNDS rounds, image $SIZE"
common=(--only "$ONLY" --runtime "$RUNTIME" --ramp 0s --image-size "$SIZE" --file-size "$FILE_SIZE"
        --scratch-dir "$work" --quiet-window 2s --seed 57)
# Kept out of the machine's history store: these runs measure tune, not the machine.
nohist=(--no-history)
tune_flags=(--fs "$FS" --options "$OPTIONS" --screen "$SCREEN" --rounds "$ROUNDS" --budget "$BUDGET")
[ -n "$UNSAFE" ] && tune_flags+=(--allow-unsafe)

# Every combination of the grid's values.
variants=$(python3 - "$GRID" "$FS" <<'PY'
import itertools, sys
fs = sys.argv[2]
factors = [[""] + f.split(",") for f in sys.argv[1].split(";")]
out = []
for i, combo in enumerate(itertools.product(*factors)):
    words = [w for w in combo if w]
    mkfs = " ".join(w[5:] for w in words if w.startswith("mkfs="))
    mount = ",".join(w for w in words if not w.startswith("mkfs="))
    keys = ";".join(k for k in [f"mkfs={mkfs}" if mkfs else "", f"mount={mount}" if mount else ""] if k)
    out.append(fs if not keys else f"g{i}={fs}:{keys}")
print("\n".join(out))
PY
)
mapfile -t fs <<< "$variants"

# fsbench's own estimates first, so a window too short shows before anything runs.
grid_eta=$("$FSBENCH" plan "${fs[@]/#/--fs=}" --rounds "$ROUNDS" "${common[@]}" | grep -m1 '^Estimated time' || true)
tune_eta=$("$FSBENCH" tune "${tune_flags[@]}" "${common[@]}" --dry-run | grep -E '^  [0-9] |budget' || true)
echo "grid of ${#fs[@]}: ${grid_eta:-no estimate}"
echo "tune:"; echo "$tune_eta"

t0=$(date +%s)
"$FSBENCH" tune "${tune_flags[@]}" "${common[@]}" "${nohist[@]}" --out "$work/tune" \
    > "$work/tune.txt" 2> "$work/tune.err" || true
t1=$(date +%s)
cat "$work/tune.txt"

"$FSBENCH" run "${fs[@]/#/--fs=}" --rounds "$ROUNDS" "${common[@]}" "${nohist[@]}" --out "$work/grid" \
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
score "$work/grid/results.json" "$FS" | sort -k2 -n -r > "$work/grid.scores"
best=$(head -1 "$work/grid.scores" | cut -d' ' -f1)
best_variant=$(printf '%s\n' "${fs[@]}" | grep "^$best=" || echo "$FS")
winner=$(python3 -c '
import json,sys; a=json.load(open(sys.argv[1]))
w = a.get("unsafe_best") or a.get("recommended")
print(w["setup"]["variant"] if w else sys.argv[2])' "$work/tune/tune.json" "$FS")
confirmed=$(python3 -c '
import json,sys; a=json.load(open(sys.argv[1]))
w = a.get("unsafe_best") or a.get("recommended")
print(round(w["gain"]["ratio"],4) if w else 1.0)' "$work/tune/tune.json")

# The grid's name of tune's winner: the grid configuration with the same mkfs and mount words.
opts() { # variant → its mkfs words and sorted mount options, one line
    local keys=${1#*=}; keys=${keys#"$FS"}; keys=${keys#:}
    local mkfs="" mount=""
    IFS=';' read -ra parts <<< "$keys"
    for p in "${parts[@]}"; do
        case "$p" in mkfs=*) mkfs=${p#mkfs=};; mount=*) mount=$(echo "${p#mount=}" | tr ',' '\n' | sort | tr '\n' ' ');; esac
    done
    echo "mkfs[$mkfs] mount[$mount]"
}
winner_in_grid=$FS
for v in "${fs[@]}"; do
    [ "$(opts "$v")" = "$(opts "$winner")" ] && winner_in_grid=${v%%=*}
done

retest=(--fs "$FS")
[ "$winner" != "$FS" ] && retest+=(--fs "$winner")
[ "$best_variant" != "$FS" ] && [ "$winner_in_grid" != "$best" ] && retest+=(--fs "$best_variant")
"$FSBENCH" run "${retest[@]}" --rounds "$ROUNDS" "${common[@]}" "${nohist[@]}" --out "$work/retest" \
    > "$work/retest.txt" 2> "$work/retest.err" || true
score "$work/retest/results.json" "$FS" > "$work/retest.scores"

echo
echo "grid: ${#fs[@]} configurations, $((t2 - t1)) s; tune: $((t1 - t0)) s ($(( 100 * (t1 - t0) / (t2 - t1 > 0 ? t2 - t1 : 1) )) % of the grid's time)"
echo "grid's best:   $best_variant  score $(head -1 "$work/grid.scores" | cut -d' ' -f2) (grid rounds)"
echo "tune's winner: $winner  confirmed $confirmed; in the grid ($winner_in_grid): $(grep "^$winner_in_grid " "$work/grid.scores" | cut -d' ' -f2)"
echo "re-test (separate run, $ROUNDS rounds):"
sed 's/^/  /' "$work/retest.scores"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); everything is in $work"
