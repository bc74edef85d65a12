#!/usr/bin/env bash
# Fidelity of `fsbench record` + `fsbench run --replay` (docs/replay.md, "What capture costs
# and how close replay comes"), on real programs in a directory of SCRATCH (default /var/tmp):
#   sqlite: N (default 300) autocommitted INSERTs by the sqlite3 shell (each one fsync'd);
#   git:    a repository of F (default 400) files: git add + commit, checkout of an older
#           commit and back, git status.
# For each program and capture (CAPTURES, default "ebpf strace": `fsbench record --capture`)
# it prints the live time (best of REPS, default 3, without recording), the time under
# `fsbench record` (best of REPS; fsbench's own start-up, the scans and, for ebpf, bpftrace's
# compile-and-attach before the command starts are counted) and their ratio (the capture
# overhead), with the command's own time under capture as the summary reports it ("cmd s",
# the ratio without bpftrace's start-up in "cmd x"), then the
# replay of the trace by `fsbench run --dir` on the same filesystem (1 round; `seconds` is
# the replay's own elapsed time: the calls only, no process start-up or CPU work of the
# program) against the live time, and whether the replayed end state matched the recorded
# one (names, sizes). Needs root (drop caches), strace, sqlite3, git, jq. Quote figures only
# from a quiet machine: the load average is printed.
#
#   sudo bench/replay-fidelity.sh
#   N=1000 REPS=5 FSBENCH=target/debug/fsbench bench/replay-fidelity.sh
set -euo pipefail

N=${N:-300}
F=${F:-400}
REPS=${REPS:-3}
CAPTURES=${CAPTURES:-ebpf strace}
FSBENCH=${FSBENCH:-target/release/fsbench}
SCRATCH=${SCRATCH:-/var/tmp}

[ "$(id -u)" = 0 ] || { echo "needs root (drop caches)" >&2; exit 2; }
[ -x "$FSBENCH" ] || { echo "no fsbench binary at $FSBENCH (set FSBENCH=…)" >&2; exit 2; }
for t in strace bpftrace sqlite3 git jq; do
    command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 2; }
done
FSBENCH=$(readlink -f "$FSBENCH")

work=$(mktemp -d "$SCRATCH/replay-fidelity.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "directory: $(findmnt -no FSTYPE -T "$work") ($work); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# The programs, each given its directory as $1 (which starts empty).
sqlite_prog() {
    local sql="$work/inserts.sql"
    [ -f "$sql" ] || {
        echo "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);"
        for i in $(seq 1 "$N"); do echo "INSERT INTO t(v) VALUES (hex(randomblob(100)));"; done
    } > "$sql"
    sqlite3 "$1/db.sqlite" < "$sql"
}
git_prog() {
    cd "$1"
    git init -q .
    for i in $(seq 1 "$F"); do mkdir -p "d$((i % 20))"; head -c 2000 /dev/urandom > "d$((i % 20))/f$i"; done
    git add -A && git -c user.email=a@b -c user.name=a commit -qm one
    for i in $(seq 1 "$((F / 4))"); do echo "$i" >> "d$((i % 20))/f$i"; done
    git -c user.email=a@b -c user.name=a commit -qam two
    git checkout -q HEAD~1 && git checkout -q - && git status --short > /dev/null
}
export -f sqlite_prog git_prog
export work N F

# Best wall time of REPS runs of "$@" (with a fresh, empty directory each time).
best() {
    local b=""
    for _ in $(seq 1 "$REPS"); do
        rm -rf "$work/root" && mkdir "$work/root"
        sync; echo 3 > /proc/sys/vm/drop_caches
        local t0 t1
        t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N)
        b=$(echo "$t0 $t1 ${b:-999999}" | awk '{d=$2-$1; print (d<$3)?d:$3}')
    done
    echo "$b"
}

printf '%-8s %-7s %8s %10s %8s %7s %7s %8s %9s %11s %9s\n' program capture "live s" "recorded s" overhead "cmd s" "cmd x" calls "replay s" "replay/live" "end state"
for prog in sqlite git; do
    live=$(best bash -c "${prog}_prog $work/root")
    for cap in $CAPTURES; do
        rec=$(best "$FSBENCH" record --capture "$cap" --root "$work/root" --out "$work/$prog.trace.gz" -- bash -c "${prog}_prog $work/root")
        # The trace replayed: the last recording's.
        rm -rf "$work/root" "$work/target" "$work/out" && mkdir "$work/root" "$work/target"
        "$FSBENCH" record --capture "$cap" --root "$work/root" --out "$work/$prog.trace.gz" -- bash -c "${prog}_prog $work/root" > "$work/$prog.summary"
        calls=$(sed -n 's/.*: \([0-9]*\) calls on.*/\1/p' "$work/$prog.summary")
        cmd=$(sed -n 's/.* calls on [0-9]* files in \([0-9.]*\) s,.*/\1/p' "$work/$prog.summary")
        "$FSBENCH" run --dir "$work/target" --replay "$work/$prog.trace.gz" --rounds 1 --out "$work/out" --yes > /dev/null 2>&1
        q='[.samples[] | select(.workload | startswith("replay-"))]'
        rs=$(jq -r "$q | map(select(.metric==\"seconds\"))[0].value" "$work/out/results.json")
        mism=$(jq -r "$q | map(select(.metric==\"replay_end_mismatches\"))[0].value" "$work/out/results.json")
        awk -v p="$prog" -v k="$cap" -v l="$live" -v r="$rec" -v d="$cmd" -v c="$calls" -v s="$rs" -v m="$mism" 'BEGIN {
            printf "%-8s %-7s %8.3f %10.3f %7.2fx %7.3f %6.2fx %8d %9.3f %11.2f %10s\n", p, k, l, r, r / l, d, d / l, c, s, s / l, (m == 0 ? "matches" : m " differ")
        }'
    done
done
