#!/usr/bin/env bash
# How fast fsbench checks crash states: STATES (default 100) states of crash-fsync per setup on
# the 256 MiB recording image (XFS: its 300 MiB minimum), for ext4, XFS and Btrfs, one run.
# Prints, per setup, the states checked, lost acknowledged operations, the seconds per state
# (fsbench's own `seconds_per_state`: build the image, mount with journal replay, the oracle's
# check, unmount, read-only fsck) and that times the states (the issue's bar: 100 in under
# 2 minutes); the whole run's wall time is printed last. Needs root and
# /dev/fuse. Quote the figures only from a quiet machine: the script prints the load average
# before and after.
#
#   sudo bench/crash-states.sh
#   STATES=30 FS=ext4 FSBENCH=target/debug/fsbench bench/crash-states.sh
set -euo pipefail

STATES=${STATES:-100}
OPS=${OPS:-60}
FS=${FS:-ext4,xfs,btrfs}
FSBENCH=${FSBENCH:-target/release/fsbench}
SCRATCH=${SCRATCH:-/var/tmp}

[ "$(id -u)" = 0 ] || { echo "needs root (loop devices, mounts, FUSE)" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "no fsbench binary at $FSBENCH (set FSBENCH=…)" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }

work=$(mktemp -d "$SCRATCH/crash-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat >"$work/plan.toml" <<TOML
rounds = 1
[[workload]]
id = "crash-fsync"
ops = $OPS
states = $STATES
TOML

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
start=$(date +%s)
"$FSBENCH" run --yes --fs "$FS" --only crash-fsync --plan "$work/plan.toml" \
    --image-size 1G --scratch-dir "$SCRATCH" --out "$work/out" >"$work/log" 2>&1 \
    || { tail -20 "$work/log"; exit 1; }
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

printf '%-8s %7s %6s %10s %12s\n' setup states lost 's/state' 'states time'
for s in ${FS//,/ }; do
    v() { jq -r --arg s "$s" --arg m "$1" \
        '[.samples[] | select(.setup==$s and .workload=="crash-fsync" and .metric==$m) | .value][0]' \
        "$work/out/results.json"; }
    n=$(v crash_states) per=$(v seconds_per_state)
    printf '%-8s %7s %6s %10.3f %11.0fs\n' "$s" "$n" "$(v lost_acked_ops)" "$per" \
        "$(echo "$n * $per" | bc -l)"
done
echo "whole run (mkfs of the main image, recording, states): $(( $(date +%s) - start )) s"
