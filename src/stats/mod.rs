//! Statistics over samples: summaries, bootstrap intervals, comparisons, noise verdicts.
