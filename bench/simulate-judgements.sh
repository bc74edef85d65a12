#!/usr/bin/env bash
# The simulation tables of fsbench's judging, printed from the unit tests that assert them (so
# the numbers here are the ones CI checks):
#   - report::simulation: whole runs of 3 and 4 setups, 8 rows × 5 rounds each, heavy-tailed
#     per-slot noise (t with 3 degrees of freedom) at 12–36 % paired noise per round, a bad
#     slot (× 0.6) now and then, judged by the real report model; per question the wrong
#     decisions against α + two simulation standard errors, per run the wrong decisions and the
#     share of runs with at least one;
#   - stats::sequential: optional stopping under the α-spending boundary (looks at rounds 3–15
#     and 3–6), and the boundary itself (each look's nominal p-value and critical |t|);
#   - stats::simulation: the disk-adjusted ratio of a --by-setup --until-settled run, each
#     look adjusted on the rounds up to it, against α + two simulation standard errors.
# A release build runs 400 simulated runs per scenario (a debug build 60).
#
#   bench/simulate-judgements.sh
set -euo pipefail
cd "$(dirname "$0")/.."
run() {
    cargo test --release --quiet --lib "$1" -- --nocapture --test-threads 1 2>/dev/null \
        | grep -E '^\||^looks|^  n '
}
echo "## Whole runs, 3 and 4 setups, heavy tails (report::simulation)"
run report::simulation::
echo
echo "## Optional stopping under the α-spending boundary (stats::sequential)"
run stats::sequential::tests::optional_stopping
echo
echo "## The boundary"
run stats::sequential::tests::the_boundary
echo
echo "## The disk-adjusted ratio over sequential looks (stats::simulation)"
run stats::simulation::the_disk_adjusted_ratio_keeps_its_error_rate_over_sequential_looks
