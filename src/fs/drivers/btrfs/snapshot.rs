//! Btrfs's own copies for the `backup` workload: the tree is a subvolume, a copy a read-only
//! subvolume snapshot (its space: `btrfs filesystem du`'s exclusive bytes), the stream
//! `btrfs send [-p PARENT]` / `btrfs receive`.

use crate::fs::snapshot_ops::{Copier, Snap, Tree, path_str};
use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Subvolume copies ([`crate::fs::snapshot_ops::Copies::Own`] of the Btrfs driver).
pub struct Subvolumes;

/// The one instance the driver's capabilities name.
pub static SUBVOLUMES: Subvolumes = Subvolumes;

impl Copier for Subvolumes {
    fn create(&self, dir: &Path, _mountpoint: &Path, timeout: Duration) -> Result<Box<dyn Tree>> {
        command::run(
            &argv(&["btrfs", "subvolume", "create", &path_str(dir)]),
            timeout,
        )?;
        Ok(Box::new(Subvolume {
            dir: dir.to_path_buf(),
            timeout,
        }))
    }
}

/// A subvolume the workload writes in.
struct Subvolume {
    dir: PathBuf,
    timeout: Duration,
}

impl Tree for Subvolume {
    fn snapshot(&self, _name: &str, path: &Path) -> Result<f64> {
        let mut a = argv(&["btrfs", "subvolume", "snapshot", "-r"]);
        a.push(path_str(&self.dir));
        a.push(path_str(path));
        Ok(command::run(&a, self.timeout)?.seconds)
    }

    fn space(&self, snap: &Snap) -> Result<u64> {
        let out = command::run(
            &argv(&[
                "btrfs",
                "filesystem",
                "du",
                "-s",
                "--raw",
                &path_str(&snap.path),
            ]),
            self.timeout,
        )?;
        parse_du_exclusive(&out.stdout).ok_or_else(|| {
            Error::tool(
                "btrfs filesystem du",
                format!("no exclusive bytes in its output: {}", out.stdout.trim()),
            )
        })
    }

    fn send(
        &self,
        snap: &Snap,
        parent: Option<&Snap>,
        stream_file: &Path,
        dest: &Path,
    ) -> Result<(f64, f64)> {
        let t = self.timeout;
        let mut s = argv(&["btrfs", "send", "-q", "-f", &path_str(stream_file)]);
        if let Some(p) = parent {
            s.extend(argv(&["-p", &path_str(&p.path)]));
        }
        s.push(path_str(&snap.path));
        let sent = command::run(&s, t)?.seconds;
        let r = argv(&[
            "btrfs",
            "receive",
            "-f",
            &path_str(stream_file),
            &path_str(dest),
        ]);
        Ok((sent, command::run(&r, t)?.seconds))
    }

    fn delete(&self, snap: &Snap) -> Result<()> {
        command::run(
            &argv(&["btrfs", "subvolume", "delete", &path_str(&snap.path)]),
            self.timeout,
        )
        .map(drop)
    }

    fn remove(self: Box<Self>) -> Result<()> {
        command::run(
            &argv(&["btrfs", "subvolume", "delete", &path_str(&self.dir)]),
            self.timeout,
        )?;
        let parent = self.dir.parent().unwrap_or(&self.dir);
        command::run(
            &argv(&["btrfs", "subvolume", "sync", &path_str(parent)]),
            self.timeout,
        )
        .map(drop)
    }
}

/// The Exclusive column of `btrfs filesystem du -s --raw`'s one data line.
fn parse_du_exclusive(out: &str) -> Option<u64> {
    out.lines()
        .filter(|l| !l.trim_start().starts_with("Total"))
        .find_map(|l| l.split_whitespace().nth(1)?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn du_exclusive_is_the_second_column() {
        let out = "     Total   Exclusive  Set shared  Filename\n  33554432     4194304    29360128  /m/s\n";
        assert_eq!(parse_du_exclusive(out), Some(4_194_304));
        assert_eq!(parse_du_exclusive("garbage"), None);
    }
}
