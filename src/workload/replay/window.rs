//! The part of a capture the trace keeps: the calls between the moments the starting and the
//! end state were taken. An attached service runs on while the capture starts and stops
//! (bpftrace attaches and detaches over a hundred probes, seconds each way); a call made
//! before the starting scan is already in the starting state, and one made after the end
//! scan is not in the end state. Kept, either would be replayed against a tree that already
//! (or never) shows it: PostgreSQL's autovacuum, run while bpftrace detached, left a
//! visibility-map file in the recorded end state that no replayed call made (docs/replay.md,
//! "End state").

/// A moment on both clocks the captures use: bpftrace's `nsecs` (the monotonic clock) and
/// strace's `-ttt` (the wall clock, seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moment {
    /// Monotonic nanoseconds.
    pub mono_ns: u64,
    /// Wall-clock seconds since the epoch.
    pub wall_s: f64,
}

impl Moment {
    /// Now.
    pub fn now() -> Moment {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        Moment {
            mono_ns: t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64,
            wall_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        }
    }
}

/// The calls kept: from `from` (the starting scan began) to `to` (the end scan began), each
/// end open when not given; and the calls left out on each side.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    /// The starting state's moment.
    pub from: Option<Moment>,
    /// The end state's moment.
    pub to: Option<Moment>,
    /// Calls left out: before `from`.
    pub before: u64,
    /// Calls left out: after `to`.
    pub after: u64,
}

impl Window {
    /// Whether a call at `ts` monotonic nanoseconds is kept (counted when not).
    pub fn keeps_ns(&mut self, ts: u64) -> bool {
        self.keeps(ts as f64, |m| m.mono_ns as f64)
    }

    /// Whether a call at `ts` wall-clock seconds is kept (counted when not).
    pub fn keeps_s(&mut self, ts: f64) -> bool {
        self.keeps(ts, |m| m.wall_s)
    }

    fn keeps(&mut self, ts: f64, on: fn(&Moment) -> f64) -> bool {
        if self.from.is_some_and(|m| ts < on(&m)) {
            self.before += 1;
            false
        } else if self.to.is_some_and(|m| ts > on(&m)) {
            self.after += 1;
            false
        } else {
            true
        }
    }

    /// What the summary says of the calls left out (empty when none were).
    pub fn note(&self) -> String {
        match (self.before, self.after) {
            (0, 0) => String::new(),
            (b, a) => format!(
                "; calls left out because their effect is already in the starting state ({b}, \
                 made before it was taken) or not in the end state ({a}, made after it)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_outside_the_two_scans_are_left_out_and_counted() {
        let at = |s: f64| Moment {
            mono_ns: (s * 1e9) as u64,
            wall_s: 1000.0 + s,
        };
        let mut w = Window {
            from: Some(at(1.0)),
            to: Some(at(5.0)),
            ..Default::default()
        };
        assert!(!w.keeps_ns(500_000_000));
        assert!(w.keeps_ns(1_000_000_000) && w.keeps_ns(5_000_000_000));
        assert!(!w.keeps_ns(5_000_000_001));
        assert!(w.keeps_s(1003.0) && !w.keeps_s(1006.0) && !w.keeps_s(999.0));
        assert_eq!((w.before, w.after), (2, 2));
        assert!(w.note().contains("(2, made before") && w.note().contains("(2, made after"));
        // No moments: everything kept, nothing said.
        let mut open = Window::default();
        assert!(open.keeps_ns(0) && open.keeps_s(1e12));
        assert_eq!(open.note(), "");
    }
}
