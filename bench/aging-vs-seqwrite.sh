#!/usr/bin/env bash
# How fast fsbench ages a filesystem against the same device's sequential write rate, in one
# run: for each filesystem of FS (default ext4,xfs,btrfs) a fresh setup runs seqwrite and its
# twin NAME-aged ages with every PROFILES entry (default churn, overwrite, punch, git), all
# on one loop image of SIZE (default 2G) in SCRATCH. Prints, per aged setup, the aging rate
# (fsbench's own age_mib_s: bytes written by aging over its wall time) and that as a fraction
# of the fresh setup's seqwrite MiB/s (1 MiB direct writes to a 64 MiB file, which fits beside
# an aged filesystem's quarter of free space; the device's sequential rate
# through that filesystem). Needs root. Quote figures only from a quiet machine: the load
# average is printed before and after.
#
#   sudo bench/aging-vs-seqwrite.sh
#   FS=ext4 PROFILES=churn SIZE=1G FSBENCH=target/debug/fsbench bench/aging-vs-seqwrite.sh
set -euo pipefail

FS=${FS:-ext4,xfs,btrfs}
PROFILES=${PROFILES:-churn overwrite punch git}
SIZE=${SIZE:-2G}
FSBENCH=${FSBENCH:-target/release/fsbench}
SCRATCH=${SCRATCH:-/var/tmp}

[ "$(id -u)" = 0 ] || { echo "needs root (loop devices, mounts)" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "no fsbench binary at $FSBENCH (set FSBENCH=…)" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }

work=$(mktemp -d "$SCRATCH/aging-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
setups=()
for fs in ${FS//,/ }; do
    setups+=("$fs")
    for p in $PROFILES; do setups+=("$fs-$p=$fs:age=$p:1"); done
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
"$FSBENCH" run --fs "$(IFS=,; echo "${setups[*]}")" --image-size "$SIZE" --scratch-dir "$SCRATCH" \
    --only seqwrite --file-size 64M --runtime 5s --rounds 1 --seed 1 \
    --out "$work/out" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-18s %12s %14s %10s\n' setup "aging MiB/s" "seqwrite MiB/s" fraction
jq -r '
  ([.samples[] | select(.workload == "seqwrite" and .metric == "bw_mib_s") | {key: .setup, value: .value}]
    | from_entries) as $seq
  | .samples[] | select(.workload == "age" and .metric == "age_mib_s")
  | (.setup | split("-")[0]) as $fs
  | [.setup, .value, ($seq[$fs] // 0), (if ($seq[$fs] // 0) > 0 then .value / $seq[$fs] else 0 end)]
  | @tsv' "$work/out/results.json" |
    while IFS=$'\t' read -r s a q f; do printf '%-18s %12.0f %14.0f %10.2f\n' "$s" "$a" "$q" "$f"; done
echo "whole run: $(( $(date +%s) - start )) s"
