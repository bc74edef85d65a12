//! The room aging promised: after the last aged write, the data file's size is written to a
//! scratch file the way the workloads will write it. On a copy-on-write filesystem (Btrfs,
//! ZFS) statvfs's free space is a promise the filesystem does not keep once overwrites and
//! chunk allocation have had their way, so the only honest check is the write itself; when
//! it runs out, aged files are deleted (random ones, as aging's own ENOSPC rule does) until
//! it fits.

use super::{Ager, is_enospc};
use crate::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// The scratch file's name in the aging directory.
const ROOM_FILE: &str = "room-check";
/// Tries before giving up: each frees what the last one lacked and an eighth more.
const TRIES: usize = 8;

impl Ager<'_> {
    /// Make sure `reserve` bytes can be written and synced beside the aged files; returns the
    /// bytes of aged files deleted to make it so (0 when it fit at once).
    pub(crate) fn keep_room(&mut self, reserve: u64) -> Result<u64> {
        if reserve == 0 {
            return Ok(0);
        }
        let path = self.dir.join(ROOM_FILE);
        let live_before = self.live;
        for _ in 0..TRIES {
            let written = self.try_write(&path, reserve);
            std::fs::remove_file(&path).map_err(|e| Error::io("cannot remove", &path, e))?;
            self.sync()?;
            let fell_short = match written {
                Ok(()) => return Ok(live_before - self.live),
                Err((n, e)) if is_enospc(&e) => reserve - n,
                Err((_, e)) => return Err(e),
            };
            let goal = self
                .live
                .saturating_sub(fell_short.saturating_add(reserve / 8));
            while self.live > goal
                && let Some(i) = self.pick()
            {
                self.delete(i)?;
            }
            self.sync()?;
            crate::cancel::check()?;
        }
        Err(Error::Other(format!(
            "aging left no room for {} even after deleting {} of its files ({} tries); use a \
             larger --image-size or a lower fullness",
            crate::units::format_size(reserve),
            crate::units::format_size(live_before - self.live),
            TRIES
        )))
    }

    /// Write `len` bytes of the pattern to a new `path` and sync it; on failure, how much
    /// was written before it.
    fn try_write(&self, path: &std::path::Path, len: u64) -> std::result::Result<(), (u64, Error)> {
        let io = |e| Error::io("aging: cannot write the room check", path, e);
        let f = File::create(path).map_err(|e| (0, io(e)))?;
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(self.pattern.len() as u64) as usize;
            f.write_all_at(&self.pattern[..n], done)
                .map_err(|e| (done, io(e)))?;
            done += n as u64;
        }
        f.sync_all().map_err(|e| (done, io(e)))
    }
}
