#!/usr/bin/env bash
# fsbench's pgbench-rw against pgbench run by hand on the same ext4 loop mount, alternating
# (fsbench, hand, fsbench, hand, …), RUNS of each, with the same scale, clients, threads and
# duration. Prints every TPS figure, both medians and their ratio. Needs root and PostgreSQL.
#
# Both sides do the same steps: initdb (no --no-sync), a private server (unix socket only,
# fsync/synchronous_commit/full_page_writes on, the same shared_buffers), pgbench -i -s SCALE,
# CHECKPOINT, sync, then pgbench -c CLIENTS -j THREADS -T DURATION -M prepared. fsbench also writes
# per-transaction --log lines (to a directory off the mount) for its percentiles; the hand run
# does not.
#
#   sudo bench/pgbench-vs-hand.sh            # scale 10, 32 clients, 2 threads, 20 s, 3 runs each
#   SCALE=1 CLIENTS=4 DURATION=5 RUNS=2 FSBENCH=target/debug/fsbench bench/pgbench-vs-hand.sh
#   HAND_FIRST=1 …                          # each pair starts with the hand run
set -euo pipefail

SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-32}
THREADS=${THREADS:-2}
DURATION=${DURATION:-20}
RUNS=${RUNS:-3}
SHARED_BUFFERS=${SHARED_BUFFERS:-32MB}
IMAGE_SIZE=${IMAGE_SIZE:-4G}
FSBENCH=${FSBENCH:-target/release/fsbench}
BIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}

[ "$(id -u)" = 0 ] || { echo "needs root (loop device, mount)" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "no fsbench binary at $FSBENCH (set FSBENCH=…)" >&2; exit 2; }
[ -x "$BIN/pgbench" ] || { echo "no PostgreSQL in $BIN" >&2; exit 2; }

WORK=$(mktemp -d /var/tmp/pgbench-vs-hand.XXXXXX)
chmod 755 "$WORK"
MNT="$WORK/mnt"
SOCK=""
PGDATA=""
LOOP=""
cleanup() {
    if [ -n "$PGDATA" ] && [ -f "$PGDATA/postmaster.pid" ]; then
        runuser -u postgres -- "$BIN/pg_ctl" stop -D "$PGDATA" -m fast -w >/dev/null 2>&1 || true
    fi
    [ -n "$SOCK" ] && rm -rf "$SOCK"
    mountpoint -q "$MNT" && umount "$MNT"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

truncate -s "$IMAGE_SIZE" "$WORK/img"
LOOP=$(losetup -f --show --direct-io=on "$WORK/img")
mkfs.ext4 -q "$LOOP"
mkdir -p "$MNT"
mount "$LOOP" "$MNT"
chmod 755 "$MNT"

cat >"$WORK/plan.toml" <<PLAN
name = "pgbench-vs-hand"
rounds = 1
[[workload]]
id = "pgbench-rw"
scale = $SCALE
clients = $CLIENTS
threads = $THREADS
duration = "${DURATION}s"
shared_buffers = "$SHARED_BUFFERS"
PLAN

fsbench_tps() {
    local out="$WORK/out-$1"
    "$FSBENCH" run --dir "$MNT" --plan "$WORK/plan.toml" --out "$out" >/dev/null 2>"$WORK/fsbench-$1.log" ||
        { cat "$WORK/fsbench-$1.log" >&2; return 1; }
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(next(s["value"] for s in r["samples"] if s["workload"]=="pgbench-rw" and s["metric"]=="tps"))' \
        "$out/results.json"
    rm -rf "$out"
}

hand_tps() {
    local port=$((20000 + RANDOM % 20000))
    PGDATA="$MNT/hand-pgdata"
    SOCK=$(mktemp -d /tmp/pgbench-hand.XXXXXX)
    chown postgres: "$SOCK"
    chmod 700 "$SOCK"
    mkdir -m 700 "$PGDATA"
    chown postgres: "$PGDATA"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    (cd / && runuser -u postgres -- "$BIN/initdb" -D "$PGDATA" --auth=trust -U postgres \
        --encoding=UTF8 --locale=C >/dev/null)
    (cd / && runuser -u postgres -- "$BIN/pg_ctl" start -D "$PGDATA" -w -l "$SOCK/server.log" \
        -o "-c listen_addresses='' -c port=$port -c unix_socket_directories=$SOCK -c fsync=on \
            -c synchronous_commit=on -c full_page_writes=on -c shared_buffers=$SHARED_BUFFERS" >/dev/null)
    local conn=(-h "$SOCK" -p "$port" -U postgres)
    "$BIN/pgbench" "${conn[@]}" -i -q -s "$SCALE" postgres >/dev/null 2>&1
    "$BIN/psql" "${conn[@]}" -X -q -c CHECKPOINT postgres
    sync
    "$BIN/pgbench" "${conn[@]}" -c "$CLIENTS" -j "$THREADS" -T "$DURATION" -M prepared postgres 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p'
    runuser -u postgres -- "$BIN/pg_ctl" stop -D "$PGDATA" -m fast -w >/dev/null
    rm -rf "$PGDATA" "$SOCK"
    PGDATA=""
    SOCK=""
}

echo "ext4 on $LOOP; scale $SCALE, $CLIENTS clients, $THREADS threads, ${DURATION} s, shared_buffers $SHARED_BUFFERS, $($BIN/postgres --version)"
F=()
H=()
one_fsbench() {
    f=$(fsbench_tps "$1")
    F+=("$f")
    echo "run $1  fsbench  tps = $f"
}
one_hand() {
    h=$(hand_tps)
    H+=("$h")
    echo "run $1  by hand  tps = $h"
}
for i in $(seq 1 "$RUNS"); do
    if [ "${HAND_FIRST:-0}" = 1 ]; then
        one_hand "$i"
        one_fsbench "$i"
    else
        one_fsbench "$i"
        one_hand "$i"
    fi
done
python3 - "${F[*]}" "${H[*]}" <<'PY'
import statistics, sys
f = [float(x) for x in sys.argv[1].split()]
h = [float(x) for x in sys.argv[2].split()]
mf, mh = statistics.median(f), statistics.median(h)
diff = (mf - mh) / mh * 100
print(f"median fsbench {mf:.1f} tps, by hand {mh:.1f} tps: fsbench/hand = {mf / mh:.3f} ({diff:+.1f} %)")
print("agree within 15 %" if abs(diff) <= 15 else "DIFFER by more than 15 %")
PY
