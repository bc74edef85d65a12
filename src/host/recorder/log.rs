//! The recorder's write log: every write the loop device sent to its backing file (offset and
//! a copy of the data) and every flush, in the order the daemon served them, bounded in bytes.
//!
//! The daemon serves one request at a time, so a flush entry follows every write the kernel
//! saw completed before it asked for the flush: exactly what a disk with a volatile write
//! cache must have made durable when it acknowledges a flush.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// One logged request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A write of `data` at `offset` of the backing file.
    Write {
        /// Byte offset.
        offset: u64,
        /// What was written.
        data: Vec<u8>,
    },
    /// A flush (the loop driver turns a flush or FUA request into an fsync of its file).
    Flush,
}

/// The log, shared between the FUSE daemon (which appends) and the workload (which reads
/// positions as acknowledgement marks and the entries afterwards).
#[derive(Debug)]
pub struct Log {
    recording: AtomicBool,
    limit: u64,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<Entry>,
    bytes: u64,
    overflowed: bool,
}

/// What the log holds once recording stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Entries in order; an entry's index is its log position.
    pub entries: Vec<Entry>,
    /// Bytes of write data held.
    pub bytes: u64,
    /// The limit was reached: entries after it were not kept.
    pub overflowed: bool,
}

impl Recorded {
    /// Number of flush entries.
    pub fn flushes(&self) -> usize {
        self.entries.iter().filter(|e| **e == Entry::Flush).count()
    }
    /// Number of write entries.
    pub fn writes(&self) -> usize {
        self.entries.len() - self.flushes()
    }
}

impl Log {
    /// An empty log that keeps at most `limit` bytes of write data; not yet recording.
    pub fn new(limit: u64) -> Log {
        Log {
            recording: AtomicBool::new(false),
            limit,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Start recording (entries served before are not logged: mkfs, the base image).
    pub fn start(&self) {
        self.recording.store(true, Ordering::SeqCst);
    }

    /// Stop recording and hand over what was logged.
    pub fn stop(&self) -> Recorded {
        self.recording.store(false, Ordering::SeqCst);
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let inner = std::mem::take(&mut *g);
        Recorded {
            entries: inner.entries,
            bytes: inner.bytes,
            overflowed: inner.overflowed,
        }
    }

    /// The position the next entry will get: read right after an operation was acknowledged,
    /// it is that acknowledgement's mark (every flush the operation waited for is before it).
    pub fn position(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entries
            .len()
    }

    /// Whether the limit was reached.
    pub fn overflowed(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .overflowed
    }

    /// Log a write (called by the daemon after the backing file took it).
    pub fn write(&self, offset: u64, data: &[u8]) {
        if !self.recording.load(Ordering::SeqCst) {
            return;
        }
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.overflowed || g.bytes + data.len() as u64 > self.limit {
            g.overflowed = true;
            return;
        }
        g.bytes += data.len() as u64;
        g.entries.push(Entry::Write {
            offset,
            data: data.to_vec(),
        });
    }

    /// Log a flush.
    pub fn flush(&self) {
        if !self.recording.load(Ordering::SeqCst) {
            return;
        }
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if !g.overflowed {
            g.entries.push(Entry::Flush);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_only_while_recording_and_stops_at_the_limit() {
        let log = Log::new(10);
        log.write(0, b"before");
        log.start();
        log.write(0, b"abcd");
        log.flush();
        assert_eq!(log.position(), 2);
        log.write(4, b"efghijk"); // 4 + 7 > 10
        assert!(log.overflowed());
        log.flush();
        let r = log.stop();
        assert_eq!(r.entries.len(), 2);
        assert_eq!(r.flushes(), 1);
        assert_eq!(r.writes(), 1);
        assert!(r.overflowed);
        assert_eq!(r.bytes, 4);
    }
}
