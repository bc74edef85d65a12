#!/usr/bin/env bash
# Decisive answers per minute of run time, for any results.json, counted as fsbench counts them
# (`judgements.counts`, src/report/count.rs): a question is a judged comparison of two setups
# on a measured metric (each other setup against a headline row's leader, and each measured
# claim); facts (usable space, fixed by mkfs) and probes are stated, not questions. Prints the
# questions, the decided ones, the close calls (open after the minimum rounds) and those the
# extra rounds of a --until-settled run settled, the expected wrong decisions at most
# (α × questions), and decided questions per minute of wall time (started_at to
# finished_at). The judgements are recomputed from the samples (`fsbench report --format
# json`), so an older results.json works too. Also prints each open headline row with the
# rounds its noisiest comparison would need to tell 10 % apart at 80 % power.
#
#   bench/decisive-per-minute.sh OUT/results.json [more results.json …]
#   FSBENCH=target/debug/fsbench bench/decisive-per-minute.sh tests/fixtures/results-sample.json
set -euo pipefail

FSBENCH=${FSBENCH:-target/release/fsbench}
[ $# -ge 1 ] || { echo "usage: $0 results.json [...]" >&2; exit 2; }
for f in "$@"; do
    "$FSBENCH" report "$f" --format json | jq -r --arg file "$f" '
      def minutes: ((.finished_at | fromdateiso8601) - (.started_at | fromdateiso8601)) / 60;
      .judgements as $j
      | $j.counts as $c
      | ($j.headline | map(select(.leader != null and (.versus_leader | length) > 0))) as $rows
      | (if (.started_at != "" and .finished_at != "") then minutes else null end) as $min
      | "\($file): questions \($c.questions), decided \($c.decided); close calls (open after \($c.min_rounds) rounds) \($c.close_calls), settled later \($c.close_calls_settled); wrong decisions expected at most \($c.expected_wrong_at_most * 10 | round / 10) (α \($c.alpha) per question); "
        + (if $min == null or $min <= 0 then "run time unknown"
           else "run time \($min * 10 | round / 10) min; \(($c.decided / $min) * 100 | round / 100) decided questions per minute" end),
        ($rows[] | select(.marks[.leader] != "best" and .marks[.leader] != "equivalent")
         | "  open: \(.label): " + ([.versus_leader | to_entries[] | select(.value.outcome == "not_separated")
             | "\(.key) (about \(.value.rounds_for_10pct // ">100") rounds for ±10 % at 80 % power)"] | join(", ")))
    '
done
