//! Concurrent replay of a trace of several recorded threads (ARTC, SOSP'13): each recorded
//! thread replays on a lane of its own, in its own order; across lanes a call waits only for
//! the earlier calls [`super::order::Order`] names (same handle or path, namespace changes
//! above or below, so an fsync after the writes on its handle).
//!
//! The calling thread reads the trace (streaming), numbers the calls, finds each call's waits
//! and hands it to its lane through a bounded queue; each lane publishes the number of the
//! last call it finished. A call's waits are all on earlier calls, already handed out, so the
//! earliest unfinished call can always run: no deadlock, whatever the queues' bounds. Memory
//! is the queues (lanes × [`QUEUE`] calls) and the order's index, not the trace's length.
//!
//! More recorded threads than [`MAX_LANES`] share lanes (`tid % lanes`): a lane runs its
//! calls in trace order, so each thread's order is still kept.

use super::exec::{Replayed, Replayer, bad_trace, pace};
use super::order::{Order, Wait};
use super::trace::{Event, TraceReader};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Most lanes (threads) a replay runs.
pub const MAX_LANES: usize = 256;
/// Calls queued per lane ahead of it.
const QUEUE: usize = 1024;

/// What a test hook sees: call `seq` starts or has finished on its lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// The call's waits are over; it is about to be issued.
    Start(u64),
    /// The call returned.
    End(u64),
}

/// A hook called at every [`Point`] (tests observe the order through it, not through timings).
pub type Hook<'h> = &'h (dyn Fn(Point) + Sync);

/// What each lane has finished, and the means to wait for it.
struct Progress {
    /// Per lane: one more than the number of the last call it finished (0: none yet).
    done: Vec<AtomicU64>,
    /// Lanes asleep in [`Progress::wait`]: a finishing lane takes the lock only when some are.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
    /// Set when a lane or the reader failed: everyone stops.
    abort: AtomicBool,
}

impl Progress {
    fn new(lanes: usize) -> Progress {
        Progress {
            done: (0..lanes).map(|_| AtomicU64::new(0)).collect(),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
            abort: AtomicBool::new(false),
        }
    }

    fn finished(&self, w: Wait) -> bool {
        self.done[w.lane].load(Ordering::SeqCst) > w.seq
    }

    /// Wait until `w` is finished; `Err` when the replay is stopped (Ctrl-C, a failed lane).
    fn wait(&self, w: Wait) -> crate::Result<()> {
        if self.finished(w) {
            return Ok(());
        }
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let res = (|| {
            let mut g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if self.finished(w) {
                    return Ok(());
                }
                if self.abort.load(Ordering::SeqCst) {
                    return Err(crate::Error::Interrupted);
                }
                crate::cancel::check()?;
                // The timeout only bounds how late Ctrl-C is noticed; a finish wakes us.
                g = self
                    .cv
                    .wait_timeout(g, Duration::from_millis(100))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        })();
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        res
    }

    /// Lane `lane` finished call `seq`: publish it, waking sleepers if there are any.
    fn finish(&self, lane: usize, seq: u64) {
        self.done[lane].store(seq + 1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            self.cv.notify_all();
        }
    }

    fn stop(&self) {
        self.abort.store(true, Ordering::SeqCst);
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.cv.notify_all();
    }
}

/// One call handed to a lane: its number, its waits, the call.
type Job = (u64, Vec<Wait>, Event);

/// Replay `reader`'s remaining calls concurrently through `r`: `threads` recorded threads on
/// `min(threads, MAX_LANES)` lanes. `speed` as in [`super::exec::replay`]; `hook`, tests'.
pub(super) fn replay(
    r: &Replayer<'_>,
    reader: &mut TraceReader,
    speed: Option<f64>,
    threads: u32,
    hook: Option<Hook<'_>>,
) -> crate::Result<Replayed> {
    let lanes = (threads as usize).clamp(1, MAX_LANES);
    let progress = Progress::new(lanes);
    let began = Instant::now();
    let (outs, fed) = std::thread::scope(|s| {
        let mut queues: Vec<SyncSender<Job>> = Vec::with_capacity(lanes);
        let mut workers = Vec::with_capacity(lanes);
        for lane in 0..lanes {
            let (tx, rx) = sync_channel::<Job>(QUEUE);
            queues.push(tx);
            let progress = &progress;
            workers.push(s.spawn(move || {
                let res = run_lane(r, lane, rx, progress, began, speed, hook);
                if res.is_err() {
                    progress.stop();
                }
                res
            }));
        }
        let fed = feed(reader, &queues, &progress);
        if fed.is_err() {
            progress.stop();
        }
        drop(queues);
        let outs: Vec<crate::Result<Replayed>> = workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        (outs, fed)
    });
    let elapsed = began.elapsed();
    fed?;
    let mut out = Replayed::new();
    for o in outs {
        out.merge(&o?);
    }
    out.elapsed = elapsed;
    out.lanes = lanes;
    Ok(out)
}

/// Read the calls, find their waits, hand each to its lane.
fn feed(
    reader: &mut TraceReader,
    queues: &[SyncSender<Job>],
    progress: &Progress,
) -> crate::Result<()> {
    let mut order = Order::new();
    let mut seq = 0u64;
    while let Some(ev) = reader.next_event().map_err(bad_trace)? {
        if progress.abort.load(Ordering::SeqCst) {
            // A lane failed: its error is the one reported.
            return Ok(());
        }
        let lane = ev.tid as usize % queues.len();
        let waits = order.waits(seq, lane, &ev);
        if queues[lane].send((seq, waits, ev)).is_err() {
            return Ok(());
        }
        seq += 1;
    }
    Ok(())
}

/// One lane: its calls in order, each after its waits (and, as recorded, its time).
fn run_lane(
    r: &Replayer<'_>,
    lane: usize,
    rx: Receiver<Job>,
    progress: &Progress,
    began: Instant,
    speed: Option<f64>,
    hook: Option<Hook<'_>>,
) -> crate::Result<Replayed> {
    let mut out = Replayed::new();
    let mut scratch = Vec::new();
    for (seq, waits, ev) in rx {
        if out.calls.is_multiple_of(1024) {
            crate::cancel::check()?;
        }
        for w in waits {
            progress.wait(w)?;
        }
        if let Some(x) = speed {
            pace(began, ev.ts, x)?;
        }
        if let Some(h) = hook {
            h(Point::Start(seq));
        }
        r.timed(&ev, &mut scratch, &mut out);
        if let Some(h) = hook {
            h(Point::End(seq));
        }
        progress.finish(lane, seq);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::replay::trace::open_flags;

    /// A trace of `events` (each a JSON event body without `k`).
    fn reader(events: &[&str]) -> TraceReader {
        let mut text = "{\"k\":\"header\",\"format\":\"fsbench-trace\",\"version\":1,\"name\":\"t\",\"capture\":\"strace\",\"command\":[\"sh\"]}\n".to_string();
        for e in events {
            text.push_str(&format!("{{\"k\":\"ev\",{e}}}\n"));
        }
        text.push_str(&format!(
            "{{\"k\":\"trailer\",\"events\":{}}}\n",
            events.len()
        ));
        TraceReader::from_reader(std::io::Cursor::new(text)).unwrap()
    }

    /// Replay `events` where the hook holds call 2 (thread 1's first) until call 3 (thread
    /// 0's second) has started, or `patience` passed; the points seen, in order.
    fn replay_holding(events: &[&str], patience: Duration) -> Vec<Point> {
        let d = tempfile::tempdir().unwrap();
        let seen = Mutex::new(Vec::new());
        let cv = Condvar::new();
        let hook = |p: Point| {
            let mut g = seen.lock().unwrap();
            g.push(p);
            cv.notify_all();
            if p == Point::Start(2) {
                let deadline = Instant::now() + patience;
                while !g.contains(&Point::Start(3)) && Instant::now() < deadline {
                    g = cv.wait_timeout(g, Duration::from_millis(10)).unwrap().0;
                }
            }
        };
        let r = Replayer::new(
            d.path(),
            crate::workload::replay::data::Fill::incompressible(1),
        )
        .unwrap();
        let mut rd = reader(events);
        let out = replay(&r, &mut rd, None, 2, Some(&hook)).unwrap();
        assert_eq!(out.calls, events.len() as u64);
        assert_eq!(out.diverged, 0, "{:?}", out.diverged_examples);
        assert_eq!(out.lanes, 2);
        seen.into_inner().unwrap()
    }

    fn pos(seen: &[Point], p: Point) -> usize {
        seen.iter().position(|x| *x == p).unwrap()
    }

    #[test]
    fn two_threads_sharing_a_file_are_ordered() {
        let (c, w) = (open_flags::CREATE, open_flags::WRITE);
        // Thread 0 creates and writes f; thread 1 fsyncs f's handle, then thread 0 writes
        // again: the fsync (call 2) must wait for the first write (call 1), and the second
        // write (call 3) for the fsync, so call 3 cannot start while the hook holds call 2.
        let seen = replay_holding(
            &[
                &format!(
                    "\"tid\":0,\"ts\":0,\"c\":\"open\",\"p\":\"f\",\"h\":1,\"fl\":{}",
                    c | w
                ),
                "\"tid\":0,\"ts\":1,\"c\":\"write\",\"h\":1,\"o\":0,\"n\":4096",
                "\"tid\":1,\"ts\":2,\"c\":\"fsync\",\"h\":1",
                "\"tid\":0,\"ts\":3,\"c\":\"write\",\"h\":1,\"o\":4096,\"n\":4096",
            ],
            Duration::from_millis(300),
        );
        assert!(pos(&seen, Point::End(1)) < pos(&seen, Point::Start(2)));
        assert!(pos(&seen, Point::End(2)) < pos(&seen, Point::Start(3)));
    }

    #[test]
    fn unrelated_threads_overlap() {
        let (c, w) = (open_flags::CREATE, open_flags::WRITE);
        // Thread 1 writes g, thread 0 writes f: nothing shared, so thread 0's call 3 starts
        // while the hook still holds thread 1's call 2 (serially it could not).
        let seen = replay_holding(
            &[
                &format!(
                    "\"tid\":0,\"ts\":0,\"c\":\"open\",\"p\":\"f\",\"h\":1,\"fl\":{}",
                    c | w
                ),
                &format!(
                    "\"tid\":1,\"ts\":1,\"c\":\"open\",\"p\":\"g\",\"h\":2,\"fl\":{}",
                    c | w
                ),
                "\"tid\":1,\"ts\":2,\"c\":\"write\",\"h\":2,\"o\":0,\"n\":4096",
                "\"tid\":0,\"ts\":3,\"c\":\"write\",\"h\":1,\"o\":0,\"n\":4096",
            ],
            Duration::from_secs(20),
        );
        assert!(
            pos(&seen, Point::Start(3)) < pos(&seen, Point::End(2)),
            "call 3 did not overlap call 2: {seen:?}"
        );
    }
}
