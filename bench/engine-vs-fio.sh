#!/usr/bin/env bash
# Native engine vs fio on the same jobs, on zram filled with random data.
#
# Why zram: it is a real block device with O_DIRECT and no media noise, so the comparison
# measures the engines' own per-I/O cost, not a disk. Runs alternate A B A B … so a slow patch
# on the host hits both engines; each figure is the median of REPS runs.
#
# Usage (root): bench/engine-vs-fio.sh
# Environment:
#   FSBENCH    path to the fsbench binary (default target/release/fsbench, built if missing)
#   RUNTIME    measured seconds per run (default 5)
#   RAMP       warm-up seconds per run, excluded from the statistics (default 1)
#   REPS       runs per engine and job (default 3)
#   ZRAM_SIZE  size given to /dev/zram0 (default 2G; needs that much free RAM)
#   OUT        keep the raw JSON of every run in this directory (default: a temp dir, removed)
# Exit status: 0 when every row meets the targets, 1 when one does not, 2 on a refusal.
#
# Targets per row: native IOPS >= 1.0x fio's, native CPU per I/O <= fio's, native p50 within
# +-15 % of fio's `lat` p50. Goal: IOPS >= 1.25x.
#
# CPU: both programs are measured the same way, from outside: user + system time of the whole
# process (every thread, io_uring's io-wq workers included, which fio's own usr_cpu/sys_cpu
# leave out), divided by the I/Os of ramp + runtime (measured I/Os scaled by the wall share).

set -euo pipefail

RUNTIME=${RUNTIME:-5}
RAMP=${RAMP:-1}
REPS=${REPS:-3}
ZRAM_SIZE=${ZRAM_SIZE:-2G}
DEV=/dev/zram0
SYS=/sys/block/zram0

die() { echo "engine-vs-fio: $*" >&2; exit 2; }

[[ $(id -u) -eq 0 ]] || die "must run as root (it configures $DEV)"
command -v fio >/dev/null || die "fio is not installed; install it (apt-get install fio)"
command -v python3 >/dev/null || die "python3 is needed to read the JSON results"
[[ $RUNTIME =~ ^[0-9]+$ && $RUNTIME -gt 0 ]] || die "RUNTIME=$RUNTIME: give whole seconds, e.g. RUNTIME=5"
[[ $RAMP =~ ^[0-9]+$ ]] || die "RAMP=$RAMP: give whole seconds, e.g. RAMP=1"
[[ $REPS =~ ^[0-9]+$ && $REPS -gt 0 ]] || die "REPS=$REPS: give a positive count, e.g. REPS=3"

cd "$(dirname "$0")/.."
FSBENCH=${FSBENCH:-target/release/fsbench}
if [[ ! -x $FSBENCH ]]; then
    [[ $FSBENCH == target/release/fsbench ]] || die "FSBENCH=$FSBENCH is not an executable"
    echo "building $FSBENCH …" >&2
    cargo build --release --locked >&2
fi

# --- zram: ours for the duration, reset on every exit path --------------------------------
ZRAM_OURS=0
WORK=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ $ZRAM_OURS -eq 1 ]]; then
        # A job killed by Ctrl-C may still hold the device for a moment.
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            echo 1 >"$SYS/reset" 2>/dev/null && break
            sleep 0.5
        done
        [[ $(cat "$SYS/disksize") == 0 ]] || echo "engine-vs-fio: could not reset $DEV; run: echo 1 > $SYS/reset" >&2
    fi
    [[ -n $WORK && -z ${OUT:-} ]] && rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ ! -e $SYS ]]; then
    modprobe zram num_devices=1 2>/dev/null || true
    [[ -e $SYS ]] || die "no $DEV and 'modprobe zram' did not create it"
fi
[[ $(cat "$SYS/disksize") == 0 ]] \
    || die "$DEV is already configured (disksize $(cat "$SYS/disksize")), so someone else uses it; refusing to touch it"
echo "$ZRAM_SIZE" >"$SYS/disksize" || die "cannot set $SYS/disksize to $ZRAM_SIZE"
ZRAM_OURS=1
DEV_BYTES=$(cat "$SYS/disksize")

if [[ -n ${OUT:-} ]]; then
    mkdir -p "$OUT"
    WORK=$OUT
else
    WORK=$(mktemp -d /tmp/engine-vs-fio.XXXXXX)
fi

# Random data everywhere, so zram stores real pages and reads are not served from zero pages.
echo "filling $DEV ($((DEV_BYTES >> 20)) MiB) with random data …" >&2
dd if=/dev/urandom of="$DEV" bs=1M count=$((DEV_BYTES >> 20)) oflag=direct status=none

# --- the jobs ------------------------------------------------------------------------------
# name | rw | ioengine | iodepth | numjobs
ROWS=(
    "4k randread psync QD1 x1|randread|psync|1|1"
    "4k randread psync QD1 x2|randread|psync|1|2"
    "4k randread io_uring QD32 x1|randread|io_uring|32|1"
    "4k randwrite io_uring QD8 x2|randwrite|io_uring|8|2"
)

# Run a command with stdout to $OUT_FILE and write its whole-process CPU seconds to $OUT_FILE.cpu.
measured() { # out cmd...
    local out=$1
    shift
    python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys
out, cmd = sys.argv[1], sys.argv[2:]
with open(out, "w") as f:
    rc = subprocess.call(cmd, stdout=f)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(out + ".cpu", "w").write(f"{r.ru_utime + r.ru_stime}\n")
sys.exit(rc)
PY
}

native() { # rw engine depth jobs out
    measured "$5" "$FSBENCH" io --filename "$DEV" --rw "$1" --bs 4k --ioengine "$2" --iodepth "$3" \
        --numjobs "$4" --direct --runtime "${RUNTIME}s" --ramp "${RAMP}s" --json
}

fio_run() { # rw engine depth jobs out — the same flags src/fio/args.rs renders
    local extra=()
    [[ $1 == *write* ]] && extra+=(--refill_buffers)
    local ramp=()
    [[ $RAMP -gt 0 ]] && ramp=(--ramp_time="${RAMP}s")
    measured "$5" fio --name=fsbench --filename="$DEV" --rw="$1" --bs=4k --ioengine="$2" --iodepth="$3" \
        --numjobs="$4" --thread --direct=1 --time_based --runtime="${RUNTIME}s" "${ramp[@]}" \
        --randrepeat=0 --norandommap "${extra[@]}" --group_reporting --lat_percentiles=1 \
        --percentile_list=50:90:99:99.9:99.99 --output-format=json
}

# --- header ----------------------------------------------------------------------------------
cpu_model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
echo "## fsbench engine vs fio"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- kernel: $(uname -r)"
echo "- CPU: ${cpu_model:-unknown} ($(nproc) CPUs)"
echo "- fio: $(fio --version)"
echo "- fsbench: $("$FSBENCH" --version 2>/dev/null || echo "$FSBENCH")"
echo "- device: $DEV, $((DEV_BYTES >> 20)) MiB of random data, $(cat "$SYS/comp_algorithm" 2>/dev/null | grep -o '\[[^]]*\]' | tr -d '[]' || echo '?') compression, O_DIRECT"
echo "- each run: ${RAMP} s ramp + ${RUNTIME} s measured; native and fio alternate, median of ${REPS}"
echo

# --- runs, alternating -------------------------------------------------------------------------
i=0
for row in "${ROWS[@]}"; do
    IFS='|' read -r name rw engine depth jobs <<<"$row"
    i=$((i + 1))
    for rep in $(seq 1 "$REPS"); do
        echo "[$name] run $rep/$REPS: native …" >&2
        native "$rw" "$engine" "$depth" "$jobs" "$WORK/row$i-native-$rep.json"
        echo "[$name] run $rep/$REPS: fio …" >&2
        fio_run "$rw" "$engine" "$depth" "$jobs" "$WORK/row$i-fio-$rep.json"
    done
    echo "$name" >"$WORK/row$i.name"
    echo "$engine" >"$WORK/row$i.engine"
done

# --- table -------------------------------------------------------------------------------------
python3 - "$WORK" "$i" "$REPS" "$RAMP" "$RUNTIME" <<'PY'
import json, statistics, sys

work, nrows, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
wall_share = (int(sys.argv[4]) + int(sys.argv[5])) / int(sys.argv[5])

def cpu(path):
    return float(open(path + ".cpu").read())

def load(path):
    text = open(path).read()
    # fio may print notes before its JSON: start at the first line that opens an object.
    start = 0 if text.startswith("{") else (text.find("\n{") + 1 or text.find("{"))
    return json.JSONDecoder().raw_decode(text[start:])[0]

def native(d, engine):
    # A native run that fell back to another backend is not the row it claims to be.
    if d.get("backend") and d["backend"] != engine:
        sys.exit(f"native ran with {d['backend']} instead of {engine}: {d.get('backend_note', '')}")
    dirs = [d[k] for k in ("read", "write") if d.get(k, {}).get("ios", 0) > 0]
    ios = sum(x["ios"] for x in dirs)
    main = max(dirs, key=lambda x: x["ios"])
    return dict(iops=sum(x["iops"] for x in dirs), ios=ios,
                p50=main["lat_ns"]["p50"], p99=main["lat_ns"]["p99"])

def fio(d):
    job = d["jobs"][0]
    if job.get("error"):
        sys.exit(f"fio job failed with error {job['error']}")
    dirs = [job[k] for k in ("read", "write") if job[k]["total_ios"] > 0]
    main = max(dirs, key=lambda x: x["total_ios"])
    pct = main["lat_ns"].get("percentile") or main["clat_ns"]["percentile"]
    pick = lambda p: next(v for k, v in pct.items() if abs(float(k) - p) < 1e-6)
    return dict(iops=sum(x["iops"] for x in dirs), ios=sum(x["total_ios"] for x in dirs),
                p50=pick(50.0), p99=pick(99.0))

def medians(runs):
    return dict(iops=statistics.median(r["iops"] for r in runs),
                p50=statistics.median(r["p50"] for r in runs) / 1000,
                p99=statistics.median(r["p99"] for r in runs) / 1000,
                cpu_per_mio=statistics.median(r["cpu"] / (r["ios"] * wall_share) * 1e6 for r in runs))

rows = []
for i in range(1, nrows + 1):
    name = open(f"{work}/row{i}.name").read().strip()
    engine = open(f"{work}/row{i}.engine").read().strip()
    def runs(who, parse):
        out = []
        for r in range(1, reps + 1):
            path = f"{work}/row{i}-{who}-{r}.json"
            out.append(dict(parse(load(path)), cpu=cpu(path)))
        return out
    n = medians(runs("native", lambda d: native(d, engine)))
    f = medians(runs("fio", fio))
    rows.append((name, n, f))

print("| job | engine | IOPS | p50 µs | p99 µs | CPU-s / M I/O |")
print("|---|---|---:|---:|---:|---:|")
for name, n, f in rows:
    for label, m in (("native", n), ("fio", f)):
        print(f"| {name} | {label} | {m['iops']:,.0f} | {m['p50']:.1f} | {m['p99']:.1f} | {m['cpu_per_mio']:.2f} |")
print()
print("| job | IOPS native/fio | CPU per I/O native/fio | p50 native/fio | verdict |")
print("|---|---:|---:|---:|---|")
failed = 0
for name, n, f in rows:
    iops_r = n["iops"] / f["iops"]
    cpu_r = n["cpu_per_mio"] / f["cpu_per_mio"] if f["cpu_per_mio"] > 0 else float("inf")
    p50_r = n["p50"] / f["p50"]
    misses = [what for what, ok in (("IOPS", iops_r >= 1.0), ("CPU", cpu_r <= 1.0),
                                    ("p50", 0.85 <= p50_r <= 1.15)) if not ok]
    verdict = "PASS" + (" (goal 1.25× met)" if iops_r >= 1.25 else "") if not misses \
        else "FAIL: " + ", ".join(misses)
    failed += bool(misses)
    print(f"| {name} | {iops_r:.2f}× | {cpu_r:.2f}× | {p50_r:.2f}× | {verdict} |")
print()
print("Targets: IOPS ≥ 1.0× fio, CPU per I/O ≤ fio, p50 within ±15 % of fio's lat p50; goal IOPS ≥ 1.25×.")
sys.exit(1 if failed else 0)
PY
