//! Records in time order without holding them all. The eBPF capture's records reach its
//! output as calls end, but the descriptor tables must read them as they began; sorting the
//! whole output in memory made a long recording cost about a kilobyte of memory per call.
//! Here runs of at most a budget of bytes are sorted in memory and written to unnamed
//! temporary files in a directory (beside the trace), then merged: memory is one run, whatever
//! the recording's length. A recording that fits in one run never goes back to the disk.

use crate::Error;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The bytes of records a run holds in memory (its index adds 16 bytes a record).
pub const RUN_BYTES: usize = 64 << 20;

/// Items (opaque bytes, each under a key: a time) pushed in any order, drained in key order;
/// items of equal keys keep the order they were pushed in.
pub struct TimeSort {
    dir: PathBuf,
    limit: usize,
    arena: Vec<u8>,
    /// (key, offset in `arena`, length) of each item of the run in memory.
    index: Vec<(u64, usize, u32)>,
    runs: Vec<File>,
}

impl TimeSort {
    /// An empty sort whose runs of `limit` bytes go to `dir`.
    pub fn new(dir: &Path, limit: usize) -> TimeSort {
        TimeSort {
            dir: dir.to_path_buf(),
            limit,
            arena: Vec::new(),
            index: Vec::new(),
            runs: Vec::new(),
        }
    }

    fn err(&self, e: std::io::Error) -> Error {
        Error::io("cannot sort a capture's records in", &self.dir, e)
    }

    /// Add `item` under `key`; the run in memory goes to the disk first when `item` would
    /// take it past the budget.
    pub fn push(&mut self, key: u64, item: &[u8]) -> crate::Result<()> {
        if !self.index.is_empty() && self.arena.len() + item.len() > self.limit {
            self.spill()?;
        }
        self.index.push((
            key,
            self.arena.len(),
            item.len().min(u32::MAX as usize) as u32,
        ));
        self.arena.extend_from_slice(item);
        Ok(())
    }

    /// The run in memory, sorted (stable: equal keys stay in push order).
    fn sort(&mut self) {
        self.index.sort_by_key(|&(k, _, _)| k);
    }

    fn spill(&mut self) -> crate::Result<()> {
        self.sort();
        let written = (|| -> std::io::Result<File> {
            let mut w = BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(&self.dir)?);
            for &(k, off, len) in &self.index {
                w.write_all(&k.to_le_bytes())?;
                w.write_all(&len.to_le_bytes())?;
                w.write_all(&self.arena[off..off + len as usize])?;
            }
            let mut f = w.into_inner().map_err(|e| e.into_error())?;
            f.seek(SeekFrom::Start(0))?;
            Ok(f)
        })();
        let f = written.map_err(|e| self.err(e))?;
        self.runs.push(f);
        self.arena.clear();
        self.index.clear();
        Ok(())
    }

    /// Every item to `f` in key order, then the runs are gone (their files were never
    /// named). Returns how many runs were merged from the disk (0: all fitted in memory).
    pub fn drain(
        mut self,
        f: &mut dyn FnMut(u64, &[u8]) -> crate::Result<()>,
    ) -> crate::Result<usize> {
        if self.runs.is_empty() {
            self.sort();
            for &(k, off, len) in &self.index {
                f(k, &self.arena[off..off + len as usize])?;
            }
            return Ok(0);
        }
        if !self.index.is_empty() {
            self.spill()?;
        }
        self.arena = Vec::new();
        let merged = self.runs.len();
        let mut readers: Vec<BufReader<File>> = std::mem::take(&mut self.runs)
            .into_iter()
            .map(|f| BufReader::with_capacity(1 << 16, f))
            .collect();
        let mut heads: Vec<Vec<u8>> = vec![Vec::new(); readers.len()];
        // (key, run): the smallest key first, and of equal keys the earlier run, which holds
        // the earlier pushes.
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(k) = next(r, &mut heads[i]).map_err(|e| self.err(e))? {
                heap.push(Reverse((k, i)));
            }
        }
        while let Some(Reverse((k, i))) = heap.pop() {
            f(k, &heads[i])?;
            if let Some(k) = next(&mut readers[i], &mut heads[i]).map_err(|e| self.err(e))? {
                heap.push(Reverse((k, i)));
            }
        }
        Ok(merged)
    }
}

/// The next item of a run into `item`, and its key; `None` at the run's end.
fn next(r: &mut impl Read, item: &mut Vec<u8>) -> std::io::Result<Option<u64>> {
    let mut head = [0u8; 12];
    match r.read_exact(&mut head[..1]) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        r => r?,
    }
    r.read_exact(&mut head[1..])?;
    let key = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
    let len = u32::from_le_bytes(head[8..].try_into().expect("4 bytes")) as usize;
    item.resize(len, 0);
    r.read_exact(item)?;
    Ok(Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the sort gives for `items` with a run budget of `limit` bytes, and the runs it
    /// wrote.
    fn sorted(items: &[(u64, Vec<u8>)], limit: usize) -> (Vec<(u64, Vec<u8>)>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = TimeSort::new(dir.path(), limit);
        for (k, v) in items {
            s.push(*k, v).unwrap();
        }
        let mut out = Vec::new();
        let runs = s
            .drain(&mut |k, v| {
                out.push((k, v.to_vec()));
                Ok(())
            })
            .unwrap();
        // Unnamed files: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        (out, runs)
    }

    #[test]
    fn runs_on_disk_merge_into_the_order_one_sort_in_memory_gives() {
        // Keys out of order with many ties; each item names its push, so stability shows.
        let items: Vec<(u64, Vec<u8>)> = (0u32..500)
            .map(|i| {
                (
                    u64::from((i * 7919) % 37),
                    i.to_le_bytes().repeat(1 + i as usize % 3),
                )
            })
            .collect();
        let mut want = items.clone();
        want.sort_by_key(|(k, _)| *k);
        let (whole, runs) = sorted(&items, usize::MAX);
        assert_eq!(runs, 0);
        assert_eq!(whole, want);
        // About 40 items a run: a dozen runs merged.
        let (merged, runs) = sorted(&items, 300);
        assert!(runs > 10, "{runs} runs");
        assert_eq!(merged, want);
        // An item larger than the budget is a run of its own.
        let big = vec![(2, vec![1u8; 50]), (1, vec![2u8; 50]), (0, vec![])];
        let (out, runs) = sorted(&big, 10);
        assert_eq!(runs, 3);
        assert_eq!(out, vec![big[2].clone(), big[1].clone(), big[0].clone()]);
        assert_eq!(sorted(&[], 10), (vec![], 0));
    }
}
