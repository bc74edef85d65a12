//! Reading what pgbench and the server print: the run summary, the per-transaction log lines
//! (`--log`) and WAL positions (`pg_current_wal_lsn()`).

use crate::measure::LatencyHistogram;

/// The lines of pgbench's closing summary that fsbench records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// `tps = … (without initial connection time)`.
    pub tps: Option<f64>,
    /// `number of transactions actually processed: N`.
    pub transactions: Option<u64>,
    /// `number of failed transactions: N (…%)` (PostgreSQL 15 and later).
    pub failed: Option<u64>,
    /// `latency average = X ms`.
    pub latency_avg_ms: Option<f64>,
}

/// Parse pgbench's stdout. Lines it does not know are ignored, so newer pgbench versions that
/// add lines keep working; a missing `tps` line is the caller's error to raise.
pub fn parse_summary(text: &str) -> Summary {
    let mut s = Summary::default();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("tps = ") {
            // pgbench ≤ 13 printed two tps lines; only the one without connection time counts.
            if rest.contains("without initial connection time")
                || rest.contains("excluding connections establishing")
            {
                s.tps = first_number(rest);
            }
        } else if let Some(rest) = line.strip_prefix("number of transactions actually processed:") {
            // "1234" or "1234/2000" with -t.
            s.transactions = rest.trim().split('/').next().and_then(|n| n.parse().ok());
        } else if let Some(rest) = line.strip_prefix("number of failed transactions:") {
            s.failed = rest.split_whitespace().next().and_then(|n| n.parse().ok());
        } else if let Some(rest) = line.strip_prefix("latency average =") {
            s.latency_avg_ms = first_number(rest);
        }
    }
    s
}

fn first_number(s: &str) -> Option<f64> {
    s.split_whitespace().next().and_then(|n| n.parse().ok())
}

/// Transactions seen in `--log` files.
#[derive(Debug, Clone, Default)]
pub struct TxLog {
    /// Latency of every completed transaction, nanoseconds.
    pub latency: LatencyHistogram,
    /// Lines whose time field says `failed`.
    pub failed: u64,
    /// Lines that could not be read (counted so that a format change does not go unnoticed).
    pub unparsed: u64,
}

impl TxLog {
    /// Add one log file's text. A line is
    /// `client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]`
    /// where `time` is the transaction's latency in microseconds, or `failed` / `skipped`.
    pub fn add(&mut self, text: &str) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match line.split_whitespace().nth(2) {
                Some("failed") => self.failed += 1,
                Some("skipped") => {}
                Some(t) => match t.parse::<u64>() {
                    Ok(us) => self.latency.record(us.saturating_mul(1000)),
                    Err(_) => self.unparsed += 1,
                },
                None => self.unparsed += 1,
            }
        }
    }
}

/// A WAL position `X/Y` (two hex halves) as a byte offset.
pub fn parse_lsn(s: &str) -> Option<u64> {
    let (hi, lo) = s.trim().split_once('/')?;
    let hi = u64::from_str_radix(hi, 16).ok()?;
    let lo = u64::from_str_radix(lo, 16).ok()?;
    (lo <= u64::from(u32::MAX)).then_some((hi << 32) | lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PG15: &str = "pgbench (15.14 (Debian 15.14-0+deb12u1))
starting vacuum...end.
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: prepared
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 5 s
number of transactions actually processed: 2345
number of failed transactions: 3 (0.128%)
latency average = 8.531 ms
initial connection time = 12.345 ms
tps = 468.912345 (without initial connection time)
";

    #[test]
    fn reads_the_pg15_summary() {
        let s = parse_summary(PG15);
        assert_eq!(s.tps, Some(468.912345));
        assert_eq!(s.transactions, Some(2345));
        assert_eq!(s.failed, Some(3));
        assert_eq!(s.latency_avg_ms, Some(8.531));
        assert_eq!(parse_summary("nothing here"), Summary::default());
    }

    #[test]
    fn old_pgbench_prints_two_tps_lines() {
        let s = parse_summary(
            "tps = 100.0 (including connections establishing)\ntps = 110.5 (excluding connections establishing)\n",
        );
        assert_eq!(s.tps, Some(110.5));
    }

    #[test]
    fn log_lines_give_latency_and_failures() {
        let mut log = TxLog::default();
        log.add("0 0 1500 0 1700000000 123456\n1 0 2500 0 1700000000 223456\n");
        log.add("2 5 failed 0 1700000001 5\n\n3 1 skipped 0 1700000001 9\ngarbage\n");
        assert_eq!(log.latency.count(), 2);
        assert_eq!(log.latency.min(), 1_500_000);
        assert_eq!(log.latency.max(), 2_500_000);
        assert_eq!((log.failed, log.unparsed), (1, 1));
    }

    #[test]
    fn lsn_halves_combine() {
        assert_eq!(parse_lsn("0/16B3748"), Some(0x16B3748));
        assert_eq!(parse_lsn(" 1/0\n"), Some(1 << 32));
        assert_eq!(parse_lsn("16B3748"), None);
        assert_eq!(parse_lsn("0/1FFFFFFFF"), None);
    }
}
