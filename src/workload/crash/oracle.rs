//! The oracle: checksummed records written with the durability calls applications use, each
//! acknowledgement marked with the recorder's log position, and the check of a crash state
//! against those acknowledgements.
//!
//! A record is a 32-byte header (magic, sequence number, payload length, CRC-32C of the
//! sequence number and payload) and a payload of 512 B – 8 KiB derived from the sequence
//! number, so a torn, stale or misplaced record never passes as another.

use super::Mode;
use crate::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

const MAGIC: &[u8; 8] = b"FSBCRSH1";
const HEADER: usize = 32;

/// One acknowledged operation: record `seq` was durable, by the calls' promise, once the log
/// reached `mark`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Ack {
    /// The record's sequence number (1, 2, …, in the order they were acknowledged).
    pub seq: u64,
    /// The recorder's log position read right after the last durability call returned.
    pub mark: usize,
}

/// SplitMix64's finaliser: the payload bytes and the random subsets' coin flips.
pub(super) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The record with sequence number `seq`.
pub fn record(seq: u64) -> Vec<u8> {
    let len = 512 + (mix(seq) % 7681) as usize;
    let mut payload = Vec::with_capacity(len);
    let mut s = seq;
    while payload.len() < len {
        s = mix(s);
        payload.extend_from_slice(&s.to_le_bytes());
    }
    payload.truncate(len);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&seq.to_le_bytes()), &payload);
    let mut out = Vec::with_capacity(HEADER + len);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&[0u8; 8]);
    out.extend_from_slice(&payload);
    out
}

/// The record at the start of `buf`: its sequence number and length, `None` when the bytes are
/// not one intact record.
pub fn decode(buf: &[u8]) -> Option<(u64, usize)> {
    if buf.len() < HEADER || &buf[..8] != MAGIC {
        return None;
    }
    let seq = u64::from_le_bytes(buf[8..16].try_into().ok()?);
    let len = u32::from_le_bytes(buf[16..20].try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(buf[20..24].try_into().ok()?);
    let payload = buf.get(HEADER..HEADER + len)?;
    let want = crc32c::crc32c_append(crc32c::crc32c(&seq.to_le_bytes()), payload);
    (want == crc).then_some((seq, HEADER + len))
}

fn io<'a>(what: &'static str, p: &'a Path) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |e| Error::io(what, p, e)
}

fn fsync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("cannot fsync the directory", dir, e))
}

/// What `mode` needs in `dir` before recording starts, so that it is part of every crash
/// state's base (PostgreSQL: the cluster and its tables); nothing for the file oracles.
pub fn prepare(mode: Mode, dir: &Path, timeout: Duration) -> Result<()> {
    match mode {
        Mode::Pgbench => super::pg::prepare(dir, timeout),
        Mode::Fsync | Mode::Append | Mode::Rename => Ok(()),
    }
}

/// The file oracles' directory, made (and, with `sync`, made durable by an fsync of its
/// parent) while recording; PostgreSQL's was made by [`prepare`].
pub fn make_dir(mode: Mode, dir: &Path, sync: bool) -> Result<()> {
    if mode == Mode::Pgbench {
        return Ok(());
    }
    std::fs::create_dir(dir).map_err(io("cannot create", dir))?;
    match dir.parent() {
        Some(parent) if sync => fsync_dir(parent),
        _ => Ok(()),
    }
}

/// Run `ops` operations of `mode` in `dir`; after each, `mark()` gives its acknowledgement's
/// log position. With `sync` false the durability calls are skipped (the negative control:
/// an application that forgot its fsync; PostgreSQL: `fsync=off`) and the write's return is
/// taken as the acknowledgement. `timeout` bounds PostgreSQL's start and stop.
pub fn run(
    mode: Mode,
    dir: &Path,
    ops: u64,
    sync: bool,
    mark: &dyn Fn() -> usize,
    timeout: Duration,
) -> Result<Vec<Ack>> {
    if mode == Mode::Pgbench {
        return super::pg::run(dir, ops, sync, mark, timeout);
    }
    let mut acks = Vec::with_capacity(ops as usize);
    let mut append: Option<File> = None;
    if mode == Mode::Append {
        let p = dir.join("log");
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .map_err(io("cannot create", &p))?;
        if sync {
            f.sync_all().map_err(io("cannot fsync", &p))?;
            fsync_dir(dir)?;
        }
        append = Some(f);
    }
    for seq in 1..=ops {
        if crate::cancel::requested() {
            return Err(Error::Interrupted);
        }
        let rec = record(seq);
        match mode {
            Mode::Fsync => {
                let p = dir.join(format!("f{seq:05}"));
                let mut f = File::create(&p).map_err(io("cannot create", &p))?;
                f.write_all(&rec).map_err(io("cannot write", &p))?;
                if sync {
                    f.sync_all().map_err(io("cannot fsync", &p))?;
                    fsync_dir(dir)?;
                }
            }
            Mode::Append => {
                let p = dir.join("log");
                let f = append.as_mut().expect("opened above");
                f.write_all(&rec).map_err(io("cannot append to", &p))?;
                if sync {
                    f.sync_data().map_err(io("cannot fdatasync", &p))?;
                }
            }
            Mode::Pgbench => unreachable!("run hands PostgreSQL to pg::run above"),
            Mode::Rename => {
                let tmp = dir.join("current.tmp");
                let cur = dir.join("current");
                let mut f = File::create(&tmp).map_err(io("cannot create", &tmp))?;
                f.write_all(&rec).map_err(io("cannot write", &tmp))?;
                if sync {
                    f.sync_all().map_err(io("cannot fsync", &tmp))?;
                }
                drop(f);
                std::fs::rename(&tmp, &cur).map_err(io("cannot rename over", &cur))?;
                if sync {
                    fsync_dir(dir)?;
                }
            }
        }
        acks.push(Ack { seq, mark: mark() });
    }
    Ok(acks)
}

/// What a crash state holds of the acknowledged operations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checked {
    /// Acknowledged operations that do not read back intact.
    pub lost: u64,
    /// Files whose content is neither absent, empty nor an intact record where the promise
    /// says it must be one (an acknowledged record; the renamed file at any time).
    pub corrupt: u64,
}

fn read(p: &Path) -> Option<Vec<u8>> {
    let mut f = File::open(p).ok()?;
    let mut v = Vec::new();
    f.read_to_end(&mut v).ok()?;
    Some(v)
}

/// Check `dir` of a crash state where records `1..=acked` were acknowledged before the crash.
/// Unacknowledged operations may be absent or old; the atomic rename's file is never torn.
/// `Err` says why the state's application would not recover (PostgreSQL did not start).
pub fn check(
    mode: Mode,
    dir: &Path,
    acked: u64,
    timeout: Duration,
) -> std::result::Result<Checked, String> {
    let mut c = Checked::default();
    match mode {
        Mode::Pgbench => return super::pg::check(dir, acked, timeout),
        Mode::Fsync => {
            for seq in 1..=acked {
                match read(&dir.join(format!("f{seq:05}"))) {
                    Some(b) if decode(&b) == Some((seq, b.len())) => {}
                    Some(b) => {
                        c.lost += 1;
                        if !b.is_empty() {
                            c.corrupt += 1;
                        }
                    }
                    None => c.lost += 1,
                }
            }
        }
        Mode::Append => {
            let b = read(&dir.join("log")).unwrap_or_default();
            let (mut at, mut intact) = (0usize, 0u64);
            while intact < acked {
                match decode(&b[at..]) {
                    Some((seq, len)) if seq == intact + 1 => {
                        at += len;
                        intact += 1;
                    }
                    _ => break,
                }
            }
            c.lost = acked - intact;
            if c.lost > 0 && at < b.len() {
                c.corrupt = 1;
            }
        }
        Mode::Rename => match read(&dir.join("current")) {
            None => c.lost = acked,
            Some(b) => match decode(&b) {
                Some((seq, len)) if len == b.len() => c.lost = acked.saturating_sub(seq),
                _ => {
                    c.corrupt = 1;
                    c.lost = acked;
                }
            },
        },
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(5);

    fn run(
        mode: Mode,
        dir: &Path,
        ops: u64,
        sync: bool,
        mark: &dyn Fn() -> usize,
    ) -> Result<Vec<Ack>> {
        super::run(mode, dir, ops, sync, mark, T)
    }

    fn check(mode: Mode, dir: &Path, acked: u64) -> Checked {
        super::check(mode, dir, acked, T).expect("a file oracle always checks")
    }

    #[test]
    fn records_round_trip_and_a_flipped_byte_fails() {
        for seq in [1, 2, 77, 1000] {
            let r = record(seq);
            assert_eq!(decode(&r), Some((seq, r.len())));
            let mut bad = r.clone();
            let i = bad.len() - 3;
            bad[i] ^= 1;
            assert_eq!(decode(&bad), None);
            assert_eq!(decode(&r[..r.len() - 1]), None, "a short record is torn");
        }
        assert_ne!(record(1).len(), record(2).len());
    }

    #[test]
    fn check_counts_lost_and_corrupt_per_mode() {
        let d = tempfile::tempdir().unwrap();
        let acks = run(Mode::Fsync, d.path(), 5, true, &|| 0).unwrap();
        assert_eq!(acks.len(), 5);
        assert_eq!(check(Mode::Fsync, d.path(), 5), Checked::default());
        std::fs::remove_file(d.path().join("f00002")).unwrap();
        std::fs::write(d.path().join("f00004"), [7u8; 100]).unwrap();
        assert_eq!(
            check(Mode::Fsync, d.path(), 5),
            Checked {
                lost: 2,
                corrupt: 1
            }
        );

        let d = tempfile::tempdir().unwrap();
        run(Mode::Append, d.path(), 4, false, &|| 0).unwrap();
        assert_eq!(check(Mode::Append, d.path(), 4), Checked::default());
        let p = d.path().join("log");
        let b = std::fs::read(&p).unwrap();
        let cut = record(1).len() + record(2).len() + 10;
        std::fs::write(&p, &b[..cut]).unwrap();
        let c = check(Mode::Append, d.path(), 4);
        assert_eq!((c.lost, c.corrupt), (2, 1));
        assert_eq!(check(Mode::Append, d.path(), 2), Checked::default());

        let d = tempfile::tempdir().unwrap();
        run(Mode::Rename, d.path(), 3, true, &|| 0).unwrap();
        assert_eq!(check(Mode::Rename, d.path(), 3), Checked::default());
        std::fs::write(d.path().join("current"), record(2)).unwrap();
        assert_eq!(check(Mode::Rename, d.path(), 3).lost, 1);
        std::fs::write(d.path().join("current"), b"").unwrap();
        assert_eq!(
            check(Mode::Rename, d.path(), 0),
            Checked {
                lost: 0,
                corrupt: 1
            }
        );
        std::fs::remove_file(d.path().join("current")).unwrap();
        assert_eq!(check(Mode::Rename, d.path(), 0), Checked::default());
    }
}
