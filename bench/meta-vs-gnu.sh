#!/usr/bin/env bash
# fsbench's untar / walk / rm against GNU tar, find and rm -rf on the same corpus.
#
# Builds the corpus once with `fsbench corpus`, then on a private tmpfs and on a private ext4
# loop image (direct I/O, so the host page cache does not flatter) runs, alternately
# (fsbench, GNU, fsbench, GNU, …), ROUNDS rounds and prints medians and fsbench/GNU ratios
# (target <= 1.0, goal <= 0.8). Both sides read the same tarball from outside the filesystem
# under test and both end untar and rm with syncfs (`sync -f`); both walks start after
# `sync; echo 3 > drop_caches` and stat every entry (`find -printf '%s\n'` needs the size).
# Finally the peak RSS of a 105k-entry untar + walk + rm by fsbench (synthetic corpus held in
# memory) is measured with /usr/bin/time -v (or getrusage via python3).
#
# Usage (root): bench/meta-vs-gnu.sh   env: FSBENCH, COPIES (3), ROUNDS (3), IMG_SIZE (3G)
set -euo pipefail

FSBENCH=${FSBENCH:-$(dirname "$0")/../target/release/fsbench}
COPIES=${COPIES:-3}
ROUNDS=${ROUNDS:-3}
IMG_SIZE=${IMG_SIZE:-3G}

if [ "$(id -u)" != 0 ]; then
    echo "meta-vs-gnu.sh: needs root (mount, losetup, drop_caches)" >&2
    exit 2
fi
for t in tar find rm mkfs.ext4 losetup python3; do
    command -v "$t" >/dev/null || { echo "meta-vs-gnu.sh: $t not found" >&2; exit 2; }
done
[ -x "$FSBENCH" ] || { echo "meta-vs-gnu.sh: $FSBENCH missing; cargo build --release" >&2; exit 2; }

WORK=$(mktemp -d /tmp/fsbench-meta-vs-gnu.XXXXXX)
MOUNTS=()
LOOP=""
cleanup() {
    set +e
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[$i]}" 2>/dev/null; done
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }

echo "== corpus: $COPIES copies"
"$FSBENCH" corpus --copies "$COPIES" --out "$WORK/corpus.tar"

mkdir "$WORK/tmpfs" "$WORK/ext4"
mount -t tmpfs -o size=3g fsbench-meta-vs-gnu "$WORK/tmpfs"
MOUNTS+=("$WORK/tmpfs")
truncate -s "$IMG_SIZE" "$WORK/ext4.img"
LOOP=$(losetup -f --show --direct-io=on "$WORK/ext4.img")
mkfs.ext4 -q -F "$LOOP"
mount "$LOOP" "$WORK/ext4"
MOUNTS+=("$WORK/ext4")

RESULTS="$WORK/results.tsv"
: > "$RESULTS"

fsbench_round() { # fs mountpoint round
    local out
    out=$("$FSBENCH" meta --dir "$2" --workload untar,find-cold,rm-tree \
        --corpus-file "$WORK/corpus.tar" --json)
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert not d["failures"], d["failures"]
for s in d["samples"]:
    if s["metric"] == "seconds":
        op = {"untar": "untar", "find-cold": "walk", "rm-tree": "rm"}[s["workload"]]
        print("%s\t%s\tfsbench\t%.3f" % (sys.argv[2], op, s["value"]))
' "$out" "$1" >> "$RESULTS"
}

gnu_round() { # fs mountpoint round
    local d="$2/gnu" t0 t1
    mkdir "$d"
    t0=$(now); tar -xf "$WORK/corpus.tar" -C "$d"; sync -f "$d"; t1=$(now)
    printf '%s\tuntar\tgnu\t%s\n' "$1" "$(secs "$t0" "$t1")" >> "$RESULTS"
    drop
    t0=$(now); find "$d" -printf '%s\n' > /dev/null; t1=$(now)
    printf '%s\twalk\tgnu\t%s\n' "$1" "$(secs "$t0" "$t1")" >> "$RESULTS"
    t0=$(now); rm -rf "$d"; sync -f "$2"; t1=$(now)
    printf '%s\trm\tgnu\t%s\n' "$1" "$(secs "$t0" "$t1")" >> "$RESULTS"
}

for fs in tmpfs ext4; do
    for r in $(seq "$ROUNDS"); do
        echo "== $fs round $r/$ROUNDS"
        fsbench_round "$fs" "$WORK/$fs" "$r"
        gnu_round "$fs" "$WORK/$fs" "$r"
    done
done

echo "== peak RSS: fsbench untar + walk + rm of the in-memory corpus ($COPIES copies) on tmpfs"
RSS_CMD=("$FSBENCH" meta --dir "$WORK/tmpfs" --workload untar,find-cold,rm-tree
    --corpus-copies "$COPIES" --json)
if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "${RSS_CMD[@]}" > /dev/null 2> "$WORK/time.txt"
    RSS_KB=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$WORK/time.txt")
else
    RSS_KB=$(python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "${RSS_CMD[@]}")
fi

python3 - "$RESULTS" "$RSS_KB" "$ROUNDS" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if l]
vals = {}
for fs, op, who, v in rows:
    vals.setdefault((fs, op, who), []).append(float(v))
print("\nevery round (fs, operation, who, seconds):")
for r in rows:
    print("  " + " ".join(r))
print(f"\nmedian of {sys.argv[3]} rounds, seconds (untar and rm include syncfs; walk is cold)\n")
print("| filesystem | operation | fsbench s | GNU s | fsbench/GNU |")
print("|---|---|---:|---:|---:|")
names = {"untar": "untar (tar -xf)", "walk": "walk (find -printf %s)", "rm": "rm (rm -rf)"}
worst = 0.0
for fs in ("tmpfs", "ext4"):
    for op in ("untar", "walk", "rm"):
        a = statistics.median(vals[(fs, op, "fsbench")])
        b = statistics.median(vals[(fs, op, "gnu")])
        worst = max(worst, a / b)
        print(f"| {fs} | {names[op]} | {a:.3f} | {b:.3f} | {a / b:.2f} |")
rss = int(sys.argv[2]) / 1024
print(f"\npeak RSS of fsbench untar + walk + rm (in-memory corpus): {rss:.1f} MiB "
      f"({'OK, < 100 MiB' if rss < 100 else 'OVER 100 MiB'})")
print(f"worst ratio {worst:.2f} (target <= 1.0, goal <= 0.8)")
PY
