#!/usr/bin/env bash
# A measuring campaign for the default's noise (docs/design-notes.md, "A probe of the disk
# beside each job"): the quick profile's slot structure by hand — ext4, XFS and Btrfs in turn on
# one 8 GiB sparse image on a loop device (direct I/O), ROUNDS rounds with the order rotated,
# each slot mkfs, a 3 s wait, the 256 MiB layout and the six I/O jobs at quick's sizes (2 s after
# a 0.3 s ramp) — with a 0.5 s probe of the disk itself right before each job: 4K random reads
# at queue depth 8 of a 256 MiB file beside the image, outside the filesystem under test. fio
# runs every job, so the campaign measures the disk and the filesystems, not fsbench.
# Root only; everything it makes (image, probe file, loop device, mount) is removed on exit.
#
#   bench/slot-probe.sh OUT.csv            # then: bench/slot-probe.py OUT.csv
#   ROUNDS=5 DIR=/var/tmp bench/slot-probe.sh OUT.csv
set -euo pipefail
OUT=${1:?usage: $0 OUT.csv}
[ "$(id -u)" = 0 ] || { echo "$0: needs root (losetup, mkfs, mount)" >&2; exit 2; }
for t in fio jq mkfs.ext4 mkfs.xfs mkfs.btrfs losetup; do
    command -v "$t" >/dev/null || { echo "$0: $t is missing" >&2; exit 2; }
done
ROUNDS=${ROUNDS:-5}; DIR=${DIR:-/var/tmp}
IMG=$DIR/fsbench-slot-probe-$$.img; PROBE=$DIR/fsbench-slot-probe-$$.dat
MNT=$(mktemp -d /tmp/fsbench-slot-probe.XXXXXX); L=
cleanup() {
    mountpoint -q "$MNT" && umount "$MNT"
    [ -n "$L" ] && losetup -d "$L"
    rm -f "$IMG" "$PROBE"; rmdir "$MNT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
truncate -s 8G "$IMG"
dd if=/dev/urandom of="$PROBE" bs=1M count=256 oflag=direct status=none
L=$(losetup --direct-io=on -f --show "$IMG")
echo "round,fs,job,probe_iops,value" > "$OUT"
job() { fio --output-format=json --direct=1 --ioengine=io_uring --filename="$MNT/data" --size=256M --group_reporting "$@"; }
probe() {
    fio --output-format=json --name=probe --filename="$PROBE" --rw=randread --bs=4k --direct=1 \
        --ioengine=io_uring --iodepth=8 --time_based --runtime=500ms --size=256M | jq '.jobs[0].read.iops'
}
timed=(--time_based --runtime=2 --ramp_time=300ms)
order=(ext4 xfs btrfs)
for r in $(seq 1 "$ROUNDS"); do
    for i in 0 1 2; do
        fs=${order[$(((i + r - 1) % 3))]}
        case $fs in
            ext4) mkfs.ext4 -q -F "$L" ;;
            xfs) mkfs.xfs -q -f "$L" ;;
            btrfs) mkfs.btrfs -q -f "$L" >/dev/null ;;
        esac
        mount "$L" "$MNT"; sleep 3
        job --name=layout --rw=write --bs=1M --iodepth=8 >/dev/null; sync
        for j in seqread seqwrite randread randwrite randrw70 fsync-write; do
            p=$(probe)
            case $j in
                seqread) v=$(job --name=j --rw=read --bs=1M --numjobs=4 --iodepth=2 --size=64M --offset_increment=64M "${timed[@]}" | jq '.jobs[0].read.bw_bytes / 1048576') ;;
                seqwrite) v=$(job --name=j --rw=write --bs=1M --numjobs=4 --iodepth=2 --size=64M --offset_increment=64M "${timed[@]}" | jq '.jobs[0].write.bw_bytes / 1048576') ;;
                randread) v=$(job --name=j --rw=randread --bs=4k --numjobs=4 --iodepth=8 "${timed[@]}" | jq '.jobs[0].read.iops') ;;
                randwrite) v=$(job --name=j --rw=randwrite --bs=4k --numjobs=4 --iodepth=8 "${timed[@]}" | jq '.jobs[0].write.iops') ;;
                randrw70) v=$(job --name=j --rw=randrw --rwmixread=70 --bs=4k --numjobs=4 --iodepth=4 "${timed[@]}" | jq '.jobs[0].read.iops') ;;
                fsync-write) v=$(job --name=j --rw=randwrite --bs=4k --numjobs=1 --iodepth=1 --fsync=1 "${timed[@]}" | jq '.jobs[0].write.iops') ;;
            esac
            echo "$r,$fs,$j,$p,$v" >> "$OUT"
            case $j in seqread | randread) ;; *) sync; sleep 1 ;; esac
        done
        umount "$MNT"
    done
    echo "round $r of $ROUNDS done" >&2
done
