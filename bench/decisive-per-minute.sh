#!/usr/bin/env bash
# Decisive answers per minute of run time, for any results.json: how many headline rows got an
# answer (the leader ★ ahead of every other setup, or = equivalent to its nearest rivals:
# every comparison with the leader decided) and how many measured claims were confirmed or
# refuted, over the run's wall time (started_at to finished_at). The judgements are fsbench's
# own (`fsbench report --format json`, `judgements`), recomputed from the samples, so an
# older results.json works too. Also prints each open headline row with the rounds its
# noisiest comparison would need to tell 10 % apart.
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
      | ($j.headline | map(select(.leader != null))) as $rows
      | ($rows | map(select(.marks[.leader] == "best" or .marks[.leader] == "equivalent")) | length) as $rows_decided
      | ($j.claims | map(select(.outcome == "confirmed" or .outcome == "refuted" or .outcome == "inconclusive"))) as $claims
      | ($claims | map(select(.outcome != "inconclusive")) | length) as $claims_decided
      | (if (.started_at != "" and .finished_at != "") then minutes else null end) as $min
      | "\($file): headline rows decisive \($rows_decided) of \($rows | length); measured claims decisive \($claims_decided) of \($claims | length); "
        + (if $min == null or $min <= 0 then "run time unknown"
           else "run time \($min * 10 | round / 10) min; \((($rows_decided + $claims_decided) / $min) * 100 | round / 100) decisive answers per minute" end),
        ($rows[] | select(.marks[.leader] != "best" and .marks[.leader] != "equivalent")
         | "  open: \(.label): " + ([.versus_leader | to_entries[] | select(.value.outcome == "not_separated")
             | "\(.key) (about \(.value.rounds_for_10pct // ">100") rounds for ±10 %)"] | join(", ")))
    '
done
