#!/usr/bin/env bash
# Close calls settled per extra minute: should the default include a short close-call phase?
# Runs the same plan twice on this machine, one after the other: once with fixed rounds (the
# default's design) and once with --until-settled --budget BUDGET (the same minimum rounds,
# then extra rounds, by steps, of only the questions still open). Prints, from each run's
# `judgements.counts` (src/report/count.rs, as fsbench counts them): questions, decided, close
# calls (open after the minimum rounds) and those the extra rounds settled; each run's wall
# time; and close calls settled per extra minute (the settled run's extra close calls decided
# over its extra wall time against the fixed run). Everything after BUDGET goes to both
# `fsbench run`s (a --budget counts the whole run, minimum rounds included), but --max-rounds,
# which only the settled run takes.
#
#   bench/close-calls-per-minute.sh BUDGET [fsbench run flags …]
#   bench/close-calls-per-minute.sh 10m                      # the default plan, +close calls
#   FSBENCH=target/debug/fsbench bench/close-calls-per-minute.sh 4m --fs ext4,xfs \
#       --only untar,randread --rounds 2 --image-size 256M --runtime 1s --ramp 0s \
#       --quiet-window 1s --max-rounds 4                    # a tiny smoke run
#
# Quote its figures only from a quiet machine: other load moves both runs' times.
set -euo pipefail

FSBENCH=${FSBENCH:-target/release/fsbench}
[ $# -ge 1 ] || { echo "usage: $0 BUDGET [fsbench run flags …]" >&2; exit 2; }
budget=$1
shift
settle_only=()
work=$(mktemp -d /var/tmp/close-calls.XXXXXX)
trap 'rm -rf "$work"' EXIT

counts() {
    "$FSBENCH" report "$1" --format json | jq -r '
      def minutes: ((.finished_at | fromdateiso8601) - (.started_at | fromdateiso8601)) / 60;
      .judgements.counts as $c
      | [$c.questions, $c.decided, $c.close_calls, $c.close_calls_settled, minutes] | @tsv'
}

# --max-rounds bounds extra rounds only: the fixed run is refused it (exit 2).
fixed=()
while [ $# -gt 0 ]; do
    case $1 in
        --max-rounds) settle_only+=("$1" "$2"); shift 2 ;;
        --max-rounds=*) settle_only+=("$1"); shift ;;
        *) fixed+=("$1"); shift ;;
    esac
done
# Each run's progress goes to a log, shown when the run fails.
run() {
    local name=$1
    shift
    "$FSBENCH" run --yes --no-history --out "$work/$name" "$@" >/dev/null 2>"$work/$name.log" \
        || { cat "$work/$name.log" >&2; exit 1; }
}
run fixed "${fixed[@]}"
run settled --until-settled --budget "$budget" "${fixed[@]}" "${settle_only[@]}"
read -r q1 d1 c1 s1 m1 < <(counts "$work/fixed/results.json")
read -r q2 d2 c2 s2 m2 < <(counts "$work/settled/results.json")
printf 'fixed rounds:  questions %s, decided %s, close calls %s, settled %s, %.1f min\n' \
    "$q1" "$d1" "$c1" "$s1" "$m1"
printf 'until settled: questions %s, decided %s, close calls %s, settled %s, %.1f min (budget %s)\n' \
    "$q2" "$d2" "$c2" "$s2" "$m2" "$budget"
awk -v s="$s2" -v m1="$m1" -v m2="$m2" 'BEGIN {
    extra = m2 - m1
    if (extra <= 0.05) { printf "extra minutes: %.1f: too few to divide by\n", extra; exit }
    printf "close calls settled per extra minute: %.2f (%d over %.1f extra min)\n", s / extra, s, extra
}'
