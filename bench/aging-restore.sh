#!/usr/bin/env bash
# Re-aging against restoring an aged image (docs/aging.md, "Replication"), in one run per
# AMOUNT: for each filesystem of FS (default ext4) two aged twins of PROFILE (default churn)
# on one loop image of SIZE (default 2G) in SCRATCH, NAME-reage (replicate=re-age) and
# NAME-restore (replicate=restore), ROUNDS rounds (default 2) of a 1-second seqread. Prints
# per setup and AMOUNT (default "1 3") what each round's aged filesystem cost: re-aging's
# age_seconds in every round; restore's aging plus keeping the image (age_keep_seconds) in
# the first round, its write-back (age_restore_seconds) in the others, with the bytes kept.
# Needs root. Quote figures only from a quiet machine: the load average is printed.
#
#   sudo bench/aging-restore.sh
#   FS=ext4,xfs AMOUNTS="1 3" SIZE=1G FSBENCH=target/debug/fsbench bench/aging-restore.sh
set -euo pipefail

FS=${FS:-ext4}
PROFILE=${PROFILE:-churn}
AMOUNTS=${AMOUNTS:-1 3}
SIZE=${SIZE:-2G}
ROUNDS=${ROUNDS:-2}
FSBENCH=${FSBENCH:-target/release/fsbench}
SCRATCH=${SCRATCH:-/var/tmp}

[ "$(id -u)" = 0 ] || { echo "needs root (loop devices, mounts)" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "no fsbench binary at $FSBENCH (set FSBENCH=…)" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }

work=$(mktemp -d "$SCRATCH/aging-restore.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "image directory: $(findmnt -no FSTYPE -T "$SCRATCH") ($SCRATCH), image $SIZE, $PROFILE, $ROUNDS rounds"
printf '%-16s %6s %5s %9s %9s %9s %10s\n' setup amount round "aging s" "keep s" "restore s" "image MiB"
for amount in $AMOUNTS; do
    setups=()
    for fs in ${FS//,/ }; do
        setups+=("$fs-reage=$fs:age=$PROFILE:$amount:replicate=re-age")
        setups+=("$fs-restore=$fs:age=$PROFILE:$amount:replicate=restore")
    done
    echo "load before ($amount×): $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    "$FSBENCH" run --fs "$(IFS=,; echo "${setups[*]}")" --image-size "$SIZE" \
        --scratch-dir "$SCRATCH" --only seqread --file-size 16M --runtime 1s --ramp 0s \
        --rounds "$ROUNDS" --seed 1 --out "$work/out-$amount" >/dev/null 2>"$work/stderr" ||
        { cat "$work/stderr" >&2; exit 1; }
    echo "load after  ($amount×): $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    jq -r --arg amount "$amount" '
      def r: if type == "number" then (. * 10 | round) / 10 else . end;
      [.samples[] | select(.workload == "age")] as $s
      | ($s | map(.setup) | unique[]) as $setup
      | ($s | map(select(.setup == $setup) | .round) | unique[]) as $round
      | ($s | map(select(.setup == $setup and .round == $round) | {key: .metric, value: .value}) | from_entries) as $m
      | [$setup, $amount, $round, (($m.age_seconds // "-") | r), (($m.age_keep_seconds // "-") | r),
         (($m.age_restore_seconds // "-") | r),
         (($m.age_image_bytes // $m.age_restore_bytes // null) | if . == null then "-" else (. / 1048576 | floor) end)]
      | @tsv' "$work/out-$amount/results.json" |
        while IFS=$'\t' read -r s a r g k w b; do
            printf '%-16s %6s %5s %9s %9s %9s %10s\n' "$s" "$a" "$r" "$g" "$k" "$w" "$b"
        done
done
