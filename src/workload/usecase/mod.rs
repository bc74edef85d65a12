//! The seeds' use cases as workloads of their own (issue 42): source trees and builds with real
//! `git` ([`git`]), maildir spools ([`mail`]) and appended, rotated, followed logs ([`logs`]).
//! Each family's registry entries are in [`kind`]; what they share (a seeded generator of
//! text-like bytes and sizes) is here. They need only a directory, so they also run on a
//! `--dir` target without root.

pub mod git;
pub mod kind;
pub mod logs;
pub mod mail;
pub mod postmark;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A seeded generator for the families' sizes and contents.
pub(crate) struct Gen {
    rng: Xoshiro256PlusPlus,
}

/// Words source files, mail and logs are made of, so their bytes compress like text does.
const WORDS: &[&str] = &[
    "the", "static", "int", "return", "struct", "if", "else", "for", "while", "const", "void",
    "buffer", "len", "size", "error", "state", "config", "value", "index", "node", "list",
    "request", "reply", "message", "user", "server", "client", "data", "file", "path", "open",
    "close", "read", "write", "flush", "commit", "update", "insert", "delete", "select", "from",
    "where", "and", "or", "not", "null", "true", "false", "self", "next", "prev", "count",
];

impl Gen {
    /// A generator whose every output follows from `seed`.
    pub(crate) fn new(seed: u64) -> Gen {
        Gen {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// A uniform number in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }

    /// A uniform number in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A size between `lo` and `hi`, uniform in its logarithm: small sizes common, large ones
    /// rare, as file and message sizes are.
    pub(crate) fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        let (l, h) = ((lo.max(1) as f64).ln(), (hi.max(lo + 1) as f64).ln());
        (l + self.unit() * (h - l)).exp() as u64
    }

    /// Append about `len` bytes of text-like lines (words, indentation, newlines) to `out`.
    pub(crate) fn text(&mut self, len: usize, out: &mut Vec<u8>) {
        let end = out.len() + len;
        while out.len() < end {
            let words = 3 + self.below(9);
            out.extend_from_slice(&b"        "[..(self.below(3) * 4) as usize]);
            for i in 0..words {
                if i > 0 {
                    out.push(b' ');
                }
                let w = WORDS[self.below(WORDS.len() as u64) as usize];
                out.extend_from_slice(w.as_bytes());
            }
            out.push(b'\n');
        }
        out.truncate(end);
    }
}

/// Milliseconds from a latency histogram's nanoseconds.
pub(crate) fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Removes a workload's directory on the filesystem under test when the step ends, whatever
/// way it ends, so a `--dir` target is left as it was (an image's is wiped by the next mkfs).
pub(crate) struct RemoveOnDrop(pub std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
