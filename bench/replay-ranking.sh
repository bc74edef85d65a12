#!/usr/bin/env bash
# Fidelity of `fsbench record` + `fsbench run --replay` on PostgreSQL, and whether a replay
# ranks filesystems as the live program does (docs/replay.md, "Fidelity"; issue 56).
#
# 1. pgbench, capture overhead and timing: a private PostgreSQL cluster (initdb as the
#    postgres user, its socket in a scratch directory, no TCP) on SCRATCH's filesystem,
#    `pgbench -i -s SCALE`, then `pgbench -T T -c C` live and, right after, again while `fsbench record
#    --pid <postmaster> --for T+ATTACH+5 s` records it (each capture of CAPTURES, default
#    "ebpf bpftrace strace": fsbench's own BPF program, bpftrace, ptrace; pgbench starts ATTACH
#    s after the recorder so that it is attached), OREPS times (default 3), captures in turn,
#    each recorded run between two live ones: overhead = the live runs' mean / recorded tps
#    (1.00: free), the median and range over the OREPS runs. The first capture's trace is then
#    replayed `--replay-speed 1` (as recorded) by `fsbench run --dir`: timing error =
#    (replay seconds - the trace's recorded span) / span.
# 2. ranking on ext4, XFS and Btrfs (FSS): three programs are recorded once on SCRATCH
#    (pgbench as above, a SQLite bulk insert of ROWS rows in transactions of 100, an untar
#    of FILES small files), then run live REPS times on each filesystem (a loop image of
#    IMAGE made here, mkfs'd and mounted, released by the trap; the program's wall time,
#    pgbench's as seconds per transaction), and their traces replayed as fast as possible by
#    `fsbench run --fs ext4,xfs,btrfs --replay …` (fsbench's own images, ROUNDS rounds,
#    `seconds` per round). A pair is *decided* by a side when the ranges (min..max) of its
#    two filesystems' samples do not overlap; the table shows every pair, and the summary
#    counts the pairs both decide and whether they agree in direction.
#
# The clusters listen on PGPORT (default 5432), on their socket alone, in a directory of their own.
# Small sizes by default (T=20, SCALE=1, ROWS=2000, FILES=2000, REPS=3, ROUNDS=2, IMAGE=1G):
# on a loaded machine (the load average is printed) the figures say whether the pipeline
# works, not how faithful replay is; quote them only from a quiet machine. Needs root,
# PostgreSQL's server binaries (/usr/lib/postgresql/*/bin), pgbench, sqlite3, tar, jq,
# mkfs.ext4/xfs/btrfs, strace and bpftrace for their captures. Every cluster, mount and loop
# device it starts is released on exit, error or Ctrl-C.
#
#   sudo FSBENCH=target/debug/fsbench bench/replay-ranking.sh
#   T=60 SCALE=10 REPS=5 ROUNDS=5 bench/replay-ranking.sh     # on a quiet machine
#   CAPTURES=ebpf OREPS=7 RANKING=0 T=30 SCALE=5 bench/replay-ranking.sh   # fsbench's capture's overhead alone
set -euo pipefail

T=${T:-20}
C=${C:-4}
SCALE=${SCALE:-1}
ATTACH=${ATTACH:-15}
ROWS=${ROWS:-2000}
FILES=${FILES:-2000}
REPS=${REPS:-3}
ROUNDS=${ROUNDS:-2}
IMAGE=${IMAGE:-1G}
TLIVE=${TLIVE:-$T}
CAPTURES=${CAPTURES:-ebpf bpftrace strace}
OREPS=${OREPS:-3}
RANKING=${RANKING:-1}   # 0: the capture overhead and the timing only (part 1)
FSS=${FSS:-ext4 xfs btrfs}
FSBENCH=${FSBENCH:-target/release/fsbench}
SCRATCH=${SCRATCH:-/var/tmp}
PGPORT=${PGPORT:-5432}   # the clusters' port (their sockets are in their own directories)

[ "$(id -u)" = 0 ] || { echo "needs root (initdb as postgres, mkfs, mount, drop caches)" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "no fsbench binary at $FSBENCH (set FSBENCH=…)" >&2; exit 2; }
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] || { echo "needs PostgreSQL's server (/usr/lib/postgresql/*/bin)" >&2; exit 2; }
for t in sqlite3 tar jq losetup runuser; do
    command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 2; }
done
for fs in $FSS; do
    command -v "mkfs.$fs" >/dev/null || { echo "needs mkfs.$fs" >&2; exit 2; }
done
FSBENCH=$(readlink -f "$FSBENCH")

work=$(mktemp -d "$SCRATCH/replay-ranking.XXXXXX")
chmod 755 "$work"
CLUSTERS=()
MOUNTS=()
LOOPS=()
BG=()
cleanup() {
    set +e
    for p in "${BG[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    for d in "${CLUSTERS[@]}"; do
        [ -f "$d/data/postmaster.pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d/data" -m immediate -w stop >/dev/null 2>&1
    done
    for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
    for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "scratch: $(findmnt -no FSTYPE -T "$work") ($work); PostgreSQL: $PGBIN; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sizes: pgbench -s $SCALE -T $T -c $C (live on each fs: -T $TLIVE), sqlite $ROWS rows, untar $FILES files, $REPS live runs, $ROUNDS replay rounds, images $IMAGE"

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
now() { date +%s.%N; }

# A cluster in $1 (created, owned by postgres), started; its socket directory is $1.
pg_start() {
    local d=$1
    mkdir -p "$d" && chown postgres: "$d" && chmod 700 "$d"
    CLUSTERS+=("$d")
    runuser -u postgres -- "$PGBIN/initdb" -D "$d/data" -A trust >/dev/null
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d/data" -l "$d/log" -w \
        -o "-c listen_addresses='' -c unix_socket_directories='$d' -p $PGPORT" start >/dev/null
    runuser -u postgres -- "$PGBIN/pgbench" -h "$d" -p "$PGPORT" -i -q -s "$SCALE" postgres >/dev/null 2>&1
}
pg_stop() { runuser -u postgres -- "$PGBIN/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null; }
# tps of `pgbench -T $2` on the cluster in $1.
pgb() {
    runuser -u postgres -- "$PGBIN/pgbench" -h "$1" -p "$PGPORT" -n -T "$2" -c "$C" -j "$C" postgres 2>/dev/null |
        awk '/^tps/ {print $3; exit}'
}

# The other two programs, each given its (empty) directory.
sqlite_prog() {
    local sql="$work/bulk.sql"
    [ -f "$sql" ] || {
        echo "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);"
        for i in $(seq 1 "$ROWS"); do
            [ $((i % 100)) = 1 ] && echo "BEGIN;"
            echo "INSERT INTO t(v) VALUES (hex(randomblob(200)));"
            [ $((i % 100)) = 0 ] && echo "COMMIT;"
        done
        [ $((ROWS % 100)) = 0 ] || echo "COMMIT;"
    } > "$sql"
    sqlite3 "$1/db.sqlite" < "$sql"
}
untar_prog() { tar -xf "$work/tree.tar" -C "$1"; }
export -f sqlite_prog untar_prog
export work ROWS
mkdir "$work/src"
for i in $(seq 1 "$FILES"); do
    mkdir -p "$work/src/d$((i % 50))"
    head -c $(( (i * 7919) % 16384 + 1 )) /dev/urandom > "$work/src/d$((i % 50))/f$i"
done
tar -cf "$work/tree.tar" -C "$work/src" . && rm -rf "$work/src"

# --- 1. pgbench: capture overhead, then as-recorded timing -------------------------------
pgtrace=""
pg_start "$work/pg"
pm=$(head -1 "$work/pg/data/postmaster.pid")
drop_caches
echo
# OREPS rounds, each capture in turn: a live run, then a recorded one, and a last live run at
# the end; a recorded run's overhead is the mean of the live runs on either side of it over
# its tps, so a drifting machine weighs on both sides alike.
: > "$work/tps.txt"
for rep in $(seq 1 "$OREPS"); do
    for cap in $CAPTURES; do
        echo "live - $(pgb "$work/pg" "$T")" >> "$work/tps.txt"
        "$FSBENCH" record --capture "$cap" --root "$work/pg/data" --pid "$pm" --for "$((T + ATTACH + 5))s" \
            --name pgbench --out "$work/pgbench-$cap.trace.gz" > "$work/pgbench-$cap.summary" 2>&1 &
        BG+=("$!")
        sleep "$ATTACH"
        rec_tps=$(pgb "$work/pg" "$T")
        wait "${BG[-1]}" || { echo "record --capture $cap failed:" >&2; cat "$work/pgbench-$cap.summary" >&2; exit 1; }
        unset 'BG[-1]'
        calls=$(sed -n 's/.*: \([0-9]*\) calls on.*/\1/p' "$work/pgbench-$cap.summary")
        echo "rec $cap $rec_tps ${calls:-?}" >> "$work/tps.txt"
        # The first capture's first trace (eBPF by default: strace attached to the postmaster
        # misses the processes it had started before) is the one replayed below.
        if [ -z "$pgtrace" ]; then
            cp "$work/pgbench-$cap.trace.gz" "$work/pgbench-replayed.trace.gz"
            pgtrace=$work/pgbench-replayed.trace.gz
        fi
    done
done
echo "live - $(pgb "$work/pg" "$T")" >> "$work/tps.txt"
printf '%-8s %-9s %5s %9s %9s %9s %-17s %8s\n' program capture runs "live tps" "rec tps" overhead "(min..max)" calls
awk -v caps="$CAPTURES" '
    { kind[NR] = $1; cap[NR] = $2; tps[NR] = $3; calls[NR] = $4 }
    END {
        n = split(caps, order, " ")
        for (i = 1; i <= NR; i++) if (kind[i] == "rec") {
            c = cap[i]; live = (tps[i - 1] + tps[i + 1]) / 2
            k = ++runs[c]; r[c, k] = live / tps[i]; lsum[c] += live; rsum[c] += tps[i]; last[c] = calls[i]
        }
        for (j = 1; j <= n; j++) {
            c = order[j]; m = runs[c]
            # median of the ratios (insertion sort; a handful of values)
            for (a = 1; a <= m; a++) v[a] = r[c, a]
            for (a = 2; a <= m; a++) { x = v[a]; b = a - 1; while (b > 0 && v[b] > x) { v[b + 1] = v[b]; b-- } v[b + 1] = x }
            med = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
            printf "%-8s %-9s %5d %9.1f %9.1f %8.3fx %-17s %8s\n", "pgbench", c, m, lsum[c] / m, rsum[c] / m, med,
                sprintf("(%.3f..%.3f)", v[1], v[m]), last[c]
        }
    }' "$work/tps.txt"
echo "overhead: the median over $OREPS recorded runs of (mean of the live runs either side) / recorded tps"
pg_stop "$work/pg"

span=$(gzip -dc "$pgtrace" | jq -n 'reduce (inputs | select(.k == "ev") | .ts + .dur) as $t (0; if $t > . then $t else . end) / 1e6')
mkdir "$work/asrec"
"$FSBENCH" run --dir "$work/asrec" --replay "$pgtrace" --replay-speed 1 --rounds 1 --quiet-window 1s \
    --out "$work/asrec-out" --yes > "$work/asrec.log" 2>&1 || { tail -20 "$work/asrec.log" >&2; exit 1; }
q='[.samples[] | select(.workload | startswith("replay-"))]'
rs=$(jq -r "$q | map(select(.metric == \"seconds\"))[0].value" "$work/asrec-out/results.json")
mism=$(jq -r "$q | map(select(.metric == \"replay_end_mismatches\"))[0].value" "$work/asrec-out/results.json")
echo
awk -v s="$span" -v r="$rs" -v m="$mism" 'BEGIN {
    printf "pgbench as-recorded replay: recorded span %.2f s, replay %.2f s, timing error %+.1f %%, end state %s\n",
        s, r, (r - s) / s * 100, (m == 0 ? "matches" : m " entries differ") }'

# --- 2. ranking -------------------------------------------------------------------------
[ "$RANKING" = 0 ] && { echo; echo "ranking left out (RANKING=0)"; exit 0; }
for prog in sqlite untar; do
    rm -rf "$work/root" && mkdir "$work/root"
    "$FSBENCH" record --root "$work/root" --name "$prog" --out "$work/$prog.trace.gz" -- \
        bash -c "${prog}_prog $work/root" > "$work/$prog.summary" 2>&1 ||
        { cat "$work/$prog.summary" >&2; exit 1; }
done
rm -rf "$work/root"

# Live: REPS samples per program and filesystem, one line each: fs program seconds.
: > "$work/live.txt"
for fs in $FSS; do
    img="$work/$fs.img" mnt="$work/mnt-$fs"
    truncate -s "$IMAGE" "$img"
    loop=$(losetup -f --show "$img")
    LOOPS+=("$loop")
    case $fs in
        xfs) mkfs.xfs -q -f "$loop" ;;
        btrfs) mkfs.btrfs -q -f "$loop" >/dev/null ;;
        *) "mkfs.$fs" -q -F "$loop" ;;
    esac
    mkdir "$mnt" && mount "$loop" "$mnt"
    MOUNTS+=("$mnt")
    for _ in $(seq 1 "$REPS"); do
        for prog in sqlite untar; do
            rm -rf "$mnt/root" && mkdir "$mnt/root" && drop_caches
            t0=$(now); bash -c "${prog}_prog $mnt/root"; t1=$(now)
            echo "$fs $prog $(echo "$t0 $t1" | awk '{print $2 - $1}')" >> "$work/live.txt"
        done
    done
    pg_start "$mnt/pg"
    for _ in $(seq 1 "$REPS"); do
        drop_caches
        tps=$(pgb "$mnt/pg" "$TLIVE")
        echo "$fs pgbench $(awk -v t="$tps" 'BEGIN {print 1 / t}')" >> "$work/live.txt"
    done
    pg_stop "$mnt/pg"
    umount "$mnt" && losetup -d "$loop"
    rm -f "$img"
done
MOUNTS=()
LOOPS=()

# Replay: fsbench's own images, every trace as fast as possible.
fslist=$(echo "$FSS" | tr ' ' ',')
"$FSBENCH" run --fs "$fslist" --replay "$pgtrace" --replay "$work/sqlite.trace.gz" --replay "$work/untar.trace.gz" \
    --image-size "$IMAGE" --scratch-dir "$work" --rounds "$ROUNDS" --quiet-window 1s --yes --out "$work/rank-out" \
    > "$work/rank.log" 2>&1 || { tail -30 "$work/rank.log" >&2; exit 1; }
jq -r '.samples[] | select(.metric == "seconds" and (.workload | startswith("replay-")))
       | "\(.setup) \(.workload | sub("^replay-"; "")) \(.value)"' "$work/rank-out/results.json" > "$work/replay.txt"

echo
echo "live: wall seconds (pgbench: seconds per transaction); replay: seconds, as fast as possible; lower is better"
printf '%-8s %-12s %12s %6s %12s %6s %s\n' workload pair "live a/b" decided "replay a/b" decided verdict
awk -v fss="$FSS" '
    FNR == 1 { side++ }
    { k = side SUBSEP $1 SUBSEP $2; v[k] = v[k] " " $3; progs[$2] = 1 }
    function stats(s, out,    n, a, i, t, j) {   # out: min, max, median
        n = split(s, a, " ")
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        out["min"] = a[1]; out["max"] = a[n]; out["med"] = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        return n
    }
    END {
        nf = split(fss, f, " ")
        for (p in progs) for (i = 1; i <= nf; i++) for (j = i + 1; j <= nf; j++) {
            dir[1] = dir[2] = 0; dec[1] = dec[2] = 0
            for (s = 1; s <= 2; s++) {
                if (stats(v[s SUBSEP f[i] SUBSEP p], A) == 0 || stats(v[s SUBSEP f[j] SUBSEP p], B) == 0) { r[s] = "-"; continue }
                r[s] = sprintf("%.2f", A["med"] / B["med"])
                dir[s] = (A["med"] < B["med"]) ? 1 : -1
                dec[s] = (A["max"] < B["min"] || B["max"] < A["min"])
            }
            verdict = (dec[1] && dec[2]) ? (dir[1] == dir[2] ? "agree" : "DISAGREE") : "not both decided"
            if (dec[1] && dec[2]) { both++; if (dir[1] == dir[2]) agree++; else bad = bad " " p ":" f[i] "/" f[j] }
            printf "%-8s %-12s %12s %6s %12s %6s %s\n", p, f[i] "/" f[j], r[1], dec[1] ? "yes" : "no", r[2], dec[2] ? "yes" : "no", verdict
        }
        printf "\nranking: %d of %d pairs both decide agree%s\n", agree, both, (bad == "" ? "" : "; disagree on" bad)
    }' "$work/live.txt" "$work/replay.txt"
mism=$(jq -r '[.samples[] | select(.metric == "replay_end_mismatches" and .value > 0)] | length' "$work/rank-out/results.json")
# The work directory goes with the trap: say which replays differed, by how many entries, here.
echo "end state: $( [ "$mism" = 0 ] && echo "every replay matches the recording" || echo "$mism replays differ:" )"
[ "$mism" = 0 ] || jq -r '.samples[] | select(.metric == "replay_end_mismatches" and .value > 0)
    | "  \(.workload) on \(.setup), round \(.round): \(.value) entries"' "$work/rank-out/results.json"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
