#!/usr/bin/env bash
# fsbench's untar / cold walk / rm against GNU tar, find and rm -rf, on ext4, XFS and Btrfs.
#
# For each filesystem (a private loop image with direct I/O, so the host page cache does not
# flatter) and each corpus size (COPIES_LIST, default "1 3": 35,001 and 105,003 entries), it
# alternates ROUNDS times:
#   own trees   fsbench meta untar,find-cold,rm-tree   vs  tar -xf; find -printf; rm -rf
#               (each tool walks the tree it extracted itself: layout + walk speed together)
#   same tree   GNU tar extracts once; then fsbench meta --existing and find walk that same tree,
#               alternately (walk speed alone, layout held equal)
# Every walk is truly cold: the filesystem is frozen and thawed (journal checkpointed, so no
# metadata stays pinned in memory) and caches are dropped; fsbench does the same internally.
# Untar and rm end with syncfs on both sides. Output: per filesystem, size and operation the
# median seconds of each tool and the fsbench/GNU ratio with its min–max across rounds.
#
# Usage (root): bench/meta-vs-gnu.sh
#   env: FSBENCH (target/release/fsbench), ROUNDS (5), COPIES_LIST ("1 3"), FSLIST ("ext4 xfs btrfs"),
#        WORKDIR (/var/tmp: where the image and the corpus go), IMAGE_SIZE (4G)
set -euo pipefail

FSBENCH=${FSBENCH:-$(dirname "$0")/../target/release/fsbench}
ROUNDS=${ROUNDS:-5}
COPIES_LIST=${COPIES_LIST:-"1 3"}
FSLIST=${FSLIST:-"ext4 xfs btrfs"}
WORKDIR=${WORKDIR:-/var/tmp}
IMAGE_SIZE=${IMAGE_SIZE:-4G}

if [ "$(id -u)" != 0 ]; then
    echo "meta-vs-gnu.sh: needs root (mount, losetup, fsfreeze, drop_caches)" >&2
    exit 2
fi
for t in tar find rm losetup fsfreeze python3; do
    command -v "$t" >/dev/null || { echo "meta-vs-gnu.sh: $t not found" >&2; exit 2; }
done
[ -x "$FSBENCH" ] || { echo "meta-vs-gnu.sh: $FSBENCH missing; cargo build --release" >&2; exit 2; }

WORK=$(mktemp -d "$WORKDIR/fsbench-meta-vs-gnu.XXXXXX")
MNT=""
LOOP=""
cleanup() {
    set +e
    [ -n "$MNT" ] && umount "$MNT" 2>/dev/null
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
cold() { sync -f "$1"; fsfreeze -f "$MNT"; fsfreeze -u "$MNT"; echo 3 > /proc/sys/vm/drop_caches; }
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$WORK/results.tsv"; }

fresh_fs() { # fs
    [ -n "$MNT" ] && umount "$MNT"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -f "$WORK/img"
    truncate -s "$IMAGE_SIZE" "$WORK/img"
    LOOP=$(losetup -f --show --direct-io=on "$WORK/img")
    case $1 in
        ext4) mkfs.ext4 -q -F "$LOOP" ;;
        xfs) mkfs.xfs -q -f "$LOOP" ;;
        btrfs) mkfs.btrfs -q -f "$LOOP" >/dev/null ;;
    esac
    MNT="$WORK/mnt"
    mkdir -p "$MNT"
    mount "$LOOP" "$MNT"
}

fsbench_own() { # key
    "$FSBENCH" meta --dir "$MNT" --workload untar,find-cold,rm-tree \
        --corpus-file "$WORK/corpus.tar" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert not d["failures"], d["failures"]
for s in d["samples"]:
    if s["metric"] == "seconds":
        op = {"untar": "untar", "find-cold": "walk-own", "rm-tree": "rm"}[s["workload"]]
        print("%s\t%s\tfsbench\t%.4f" % (sys.argv[1], op, s["value"]))
' "$1" | while IFS=$'\t' read -r k op who v; do record "$k" "$op" "$who" "$v" x; done
}

gnu_own() { # key
    local d="$MNT/gnu" t0 t1
    mkdir "$d"
    t0=$(now); tar -xf "$WORK/corpus.tar" -C "$d"; sync -f "$d"; t1=$(now)
    record "$1" untar gnu "$(secs "$t0" "$t1")" x
    cold "$d"
    t0=$(now); find "$d" -printf '%s\n' > /dev/null; t1=$(now)
    record "$1" walk-own gnu "$(secs "$t0" "$t1")" x
    t0=$(now); rm -rf "$d"; sync -f "$MNT"; t1=$(now)
    record "$1" rm gnu "$(secs "$t0" "$t1")" x
}

# Device counters of the loop device plus the host's drop_caches count, as "reads sectors drops"
# (reads and sectors completed: /sys/block/loopN/stat fields 1 and 3; drops: drop_pagecache +
# drop_slab of /proc/vmstat). They are not noisy: the same tree read twice the same way issues
# the same requests, however loaded the host is, unless some process drops the caches in the
# middle of the walk (other benchmarks do: every drop_caches is machine-wide). Then what was
# read is evicted and read again, so such rounds are counted apart.
counters() {
    echo "$(awk '{print $1, $3}' "/sys/block/${LOOP#/dev/}/stat")" \
        "$(awk '$1 == "drop_pagecache" || $1 == "drop_slab" { s += $2 } END { print s }' /proc/vmstat)"
}
# Counters since $1 (a counters line) as "reads,sectors,foreign drops"; $2: drops of our own in
# between (fsbench drops the caches once itself: echo 3 counts in both vmstat fields).
since() { # before own
    local r0 s0 d0 r1 s1 d1
    read -r r0 s0 d0 <<< "$1"
    read -r r1 s1 d1 <<< "$(counters)"
    echo "$((r1 - r0)),$((s1 - s0)),$((d1 - d0 - $2))"
}

walk_same_fsbench() { # key
    local d="$MNT/shared" v r0
    cold "$d"
    c0=$(counters)
    v=$("$FSBENCH" meta --dir "$d" --existing --json 2>/dev/null | python3 -c '
import json, sys
print([s["value"] for s in json.load(sys.stdin)["samples"] if s["metric"] == "seconds"][0])')
    record "$1" walk-same fsbench "$v" "$(since "$c0" 2)"
}

walk_same_gnu() { # key
    local d="$MNT/shared" t0 t1 r0
    cold "$d"
    c0=$(counters)
    t0=$(now); find "$d" -printf '%s\n' > /dev/null; t1=$(now)
    record "$1" walk-same gnu "$(secs "$t0" "$t1")" "$(since "$c0" 0)"
}

: > "$WORK/results.tsv"
echo "start: $(uptime)"
for copies in $COPIES_LIST; do
    "$FSBENCH" corpus --copies "$copies" --out "$WORK/corpus.tar" >/dev/null
    entries=$(tar -tf "$WORK/corpus.tar" | wc -l)
    for fs in $FSLIST; do
        key="$fs $entries"
        fresh_fs "$fs"
        mkdir "$MNT/shared"
        tar -xf "$WORK/corpus.tar" -C "$MNT/shared"
        for r in $(seq "$ROUNDS"); do
            echo "== $fs, $entries entries, round $r/$ROUNDS" >&2
            # Alternate who goes first, so neither always follows the other's writes.
            if [ $((r % 2)) = 1 ]; then
                fsbench_own "$key"; gnu_own "$key"; walk_same_fsbench "$key"; walk_same_gnu "$key"
            else
                gnu_own "$key"; fsbench_own "$key"; walk_same_gnu "$key"; walk_same_fsbench "$key"
            fi
        done
    done
done

python3 - "$WORK/results.tsv" "$ROUNDS" <<'PY'
import statistics, sys
vals, reads = {}, {}
for line in open(sys.argv[1]).read().splitlines():
    key, op, who, v, r = line.split("\t")
    vals.setdefault((key, op, who), []).append(float(v))
    if r != "x":
        reads.setdefault((key, who), []).append(tuple(int(x) for x in r.split(",")))
print(f"median of {sys.argv[2]} rounds; ratio = fsbench/GNU (median, min-max of per-round ratios)\n")
print("| filesystem | entries | operation | fsbench s | GNU s | fsbench/GNU | range |")
print("|---|---:|---|---:|---:|---:|---|")
names = {"untar": "untar (tar -xf)", "walk-own": "cold walk, own tree", "walk-same": "cold walk, same tree", "rm": "rm (rm -rf)"}
worst = {}
for key in dict.fromkeys(k for k, _, _ in vals):
    fs, entries = key.split()
    for op in ("untar", "walk-own", "walk-same", "rm"):
        a, b = vals[(key, op, "fsbench")], vals[(key, op, "gnu")]
        ratios = [x / y for x, y in zip(a, b)]
        r = statistics.median(a) / statistics.median(b)
        worst[op] = max(worst.get(op, 0), r)
        print(f"| {fs} | {int(entries):,} | {names[op]} | {statistics.median(a):.3f} | "
              f"{statistics.median(b):.3f} | {r:.2f} | {min(ratios):.2f}–{max(ratios):.2f} |")
print("\nworst median ratio per operation: " + ", ".join(f"{names[k]} {v:.2f}" for k, v in worst.items()))
print("\ndevice reads of the cold walk over the same tree: requests / 512-byte sectors, median "
      "(min-max) of the rounds no other process dropped the caches in; +N: rounds left out\n")
print("| filesystem | entries | fsbench requests | find requests | fsbench/find | fsbench sectors | find sectors |")
print("|---|---:|---:|---:|---:|---:|---:|")
def cell(runs, i):
    v = [r[i] for r in runs]
    return statistics.median(v), f"{statistics.median(v):.0f} ({min(v)}–{max(v)})"
for key in dict.fromkeys(k for k, _ in reads):
    fs, entries = key.split()
    row, req = [], []
    for who in ("fsbench", "gnu"):
        runs = reads[(key, who)]
        clean = [r for r in runs if r[2] == 0]
        note = f" +{len(runs) - len(clean)}" if clean else " (every round disturbed)"
        clean = clean or runs
        req.append(cell(clean, 0)[0])
        row.append((cell(clean, 0)[1] + (note if len(clean) < len(runs) or note[1] == "(" else ""),
                    cell(clean, 1)[1]))
    print(f"| {fs} | {int(entries):,} | {row[0][0]} | {row[1][0]} | {req[0] / req[1]:.2f} | "
          f"{row[0][1]} | {row[1][1]} |")
PY
echo "end: $(uptime)"
