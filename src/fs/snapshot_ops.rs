//! Snapshots and backups, as the drivers offer them (the `backup` workload, docs/backups.md):
//! a point-in-time copy of a directory tree and the space the filesystem accounts to it, a
//! send stream of a copy (full or against a parent) received on a second filesystem, and the
//! maintenance commands (`fstrim`, `btrfs balance`).
//!
//! Every filesystem-specific command of that workload runs here (issue 39: `btrfs`, `zfs`
//! only inside `src/fs`); a driver declares what it has in [`Caps::backup`](super::Caps) and
//! what it lacks is "unsupported here" with the reason, which the workload prints as a note.

use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How a filesystem makes a point-in-time copy of a tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Copies {
    /// None of its own; why.
    None(&'static str),
    /// The tree is a Btrfs subvolume; a copy is a read-only subvolume snapshot.
    Subvolume,
    /// The tree lives in a ZFS dataset; a copy is a dataset snapshot (`DS@NAME`).
    Dataset,
    /// Every file cloned with FICLONE into a sibling directory (XFS with reflink=1).
    Reflink,
}

/// How a copy is streamed to another filesystem.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stream {
    /// Not at all; why.
    None(&'static str),
    /// `btrfs send [-p PARENT] -f FILE SNAP`, `btrfs receive -f FILE DIR`.
    Btrfs,
    /// `zfs send [-i @PARENT] DS@SNAP > FILE`, `zfs recv -F DS < FILE`.
    Zfs,
}

/// A maintenance command run on the mountpoint, or why it does not apply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Maint {
    /// Not here; why.
    None(&'static str),
    /// These words, then the mountpoint.
    Run(&'static [&'static str]),
}

/// What a driver offers the `backup` workload ([`super::Caps::backup`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backup {
    /// Point-in-time copies.
    pub copies: Copies,
    /// Send/receive.
    pub stream: Stream,
    /// Discarding free space (`fstrim`).
    pub trim: Maint,
    /// Rewriting the allocation (`btrfs balance`).
    pub balance: Maint,
}

impl Backup {
    /// A filesystem with none of it (the default of [`super::Caps::NONE`]).
    pub const NONE: Backup = Backup {
        copies: Copies::None("unsupported here: no snapshot or reflink copy is known for it"),
        stream: Stream::None("unsupported here: no send stream is known for it"),
        trim: Maint::None("unsupported here: no trim is known for it"),
        balance: Maint::None("unsupported here: it has no balance"),
    };
    /// The kernel filesystems' `fstrim -v MNT`.
    pub const FSTRIM: Maint = Maint::Run(&["fstrim", "-v"]);
    /// Balance of a filesystem without one.
    pub const NO_BALANCE: Maint = Maint::None("it has no balance: allocation is not in chunks");
}

/// The tree copies are taken of, on the filesystem under test.
pub struct Source {
    copies: Copies,
    /// The directory the workload writes its data in.
    pub dir: PathBuf,
    /// The ZFS dataset holding `dir` (`Copies::Dataset`).
    dataset: Option<String>,
    timeout: Duration,
}

/// One point-in-time copy of a [`Source`].
pub struct Snap {
    /// Its name (`s1`).
    pub name: String,
    /// Where its files are visible (`Copies::Dataset`: none, the dataset's `.zfs` is not used).
    pub path: PathBuf,
    /// Bytes the filesystem used (statvfs) just before it was taken (`Copies::Reflink`).
    used_before: u64,
}

/// Bytes a filesystem uses, from statvfs (blocks − free blocks).
pub fn used_bytes(path: &Path) -> Result<u64> {
    let st = rustix::fs::statvfs(path)
        .map_err(|e| Error::io("cannot statvfs", path, std::io::Error::from(e)))?;
    Ok((st.f_blocks - st.f_bfree) * st.f_frsize)
}

fn words(w: &[&str], rest: &[&str]) -> Vec<String> {
    argv(&w.iter().chain(rest.iter()).copied().collect::<Vec<_>>())
}

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl Source {
    /// Create the source tree `dir` (inside the filesystem mounted at `mountpoint`): a
    /// subvolume, a directory in the mount's dataset, or a plain directory. `Err` when the
    /// filesystem has no copies (the reason) or the command failed.
    pub fn create(b: &Backup, dir: &Path, mountpoint: &Path, timeout: Duration) -> Result<Source> {
        let mut dataset = None;
        match b.copies {
            Copies::None(why) => return Err(Error::workload("backup", why)),
            Copies::Subvolume => {
                command::run(
                    &argv(&["btrfs", "subvolume", "create", &path_str(dir)]),
                    timeout,
                )?;
            }
            Copies::Dataset => {
                dataset = Some(dataset_of(mountpoint)?);
                std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
            }
            Copies::Reflink => {
                std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
            }
        }
        Ok(Source {
            copies: b.copies,
            dir: dir.to_path_buf(),
            dataset,
            timeout,
        })
    }

    /// Make the filesystem's accounting current: sync, and for a dataset force a
    /// transaction-group sync, then wait (up to 30 s) until its `used` stops changing (ZFS
    /// accounts when the txg commits, which zfs-fuse does every 20–30 s on its own).
    pub fn settle(&self) -> Result<()> {
        crate::host::cache::sync_all();
        let Some(ds) = &self.dataset else {
            return Ok(());
        };
        super::zfs_pool::sync_txg(ds)?;
        let used = || zfs_get(ds, "used", self.timeout);
        let start = Instant::now();
        let mut last = used()?;
        let mut stable = 0;
        while start.elapsed() < Duration::from_secs(30) && stable < 2 {
            std::thread::sleep(Duration::from_secs(1));
            crate::host::cache::sync_all();
            let now = used()?;
            stable = if now == last { stable + 1 } else { 0 };
            last = now;
        }
        Ok(())
    }

    /// Take copy `name` of the tree; returns it and the seconds the copy took (the command's
    /// wall time, process start included, or the clones' for a reflink copy).
    pub fn snapshot(&self, name: &str) -> Result<(Snap, f64)> {
        let parent = self.dir.parent().unwrap_or(&self.dir);
        let path = parent.join(format!("{}-{name}", file_name(&self.dir)));
        let used_before = used_bytes(&self.dir)?;
        let seconds = match self.copies {
            Copies::None(why) => return Err(Error::workload("backup", why)),
            Copies::Subvolume => {
                let a = argv(&["btrfs", "subvolume", "snapshot", "-r"]);
                let mut a = a;
                a.push(path_str(&self.dir));
                a.push(path_str(&path));
                command::run(&a, self.timeout)?.seconds
            }
            Copies::Dataset => {
                let ds = self
                    .dataset
                    .as_deref()
                    .expect("a dataset source has its dataset");
                command::run(
                    &argv(&["zfs", "snapshot", &format!("{ds}@{name}")]),
                    self.timeout,
                )?
                .seconds
            }
            Copies::Reflink => reflink_tree(&self.dir, &path)?,
        };
        Ok((
            Snap {
                name: name.to_string(),
                path,
                used_before,
            },
            seconds,
        ))
    }

    /// The space `snap` takes by itself, in the filesystem's own accounting: a Btrfs
    /// snapshot's exclusive bytes (`btrfs filesystem du`), a ZFS snapshot's `used`, and for a
    /// reflink copy statvfs's used bytes now minus just before the copy (the tree's in-place
    /// rewrites take no space without the copy). Call [`Source::settle`] first.
    pub fn space(&self, snap: &Snap) -> Result<u64> {
        match self.copies {
            Copies::None(why) => Err(Error::workload("backup", why)),
            Copies::Subvolume => {
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
            Copies::Dataset => {
                let ds = self
                    .dataset
                    .as_deref()
                    .expect("a dataset source has its dataset");
                zfs_get(&format!("{ds}@{}", snap.name), "used", self.timeout)
            }
            Copies::Reflink => Ok(used_bytes(&self.dir)?.saturating_sub(snap.used_before)),
        }
    }

    /// Stream `snap` (against `parent` when given) into `stream_file`, then receive it into
    /// the filesystem mounted at `dest`. `Err` when the filesystem has no stream. The file is
    /// rewritten in place (truncated, same inode: the caller's ledger entry still names it)
    /// and left for the caller to remove.
    pub fn send(
        &self,
        b: &Backup,
        snap: &Snap,
        parent: Option<&Snap>,
        stream_file: &Path,
        dest: &Path,
    ) -> Result<Sent> {
        let t = self.timeout;
        let (send_s, recv_s) = match b.stream {
            Stream::None(why) => return Err(Error::workload("backup", why)),
            Stream::Btrfs => {
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
                (sent, command::run(&r, t)?.seconds)
            }
            Stream::Zfs => {
                let ds = self
                    .dataset
                    .as_deref()
                    .expect("a dataset source has its dataset");
                let dest_ds = dataset_of(dest)?;
                let full = format!("{ds}@{}", snap.name);
                let mut s = vec!["zfs".to_string(), "send".to_string()];
                if let Some(p) = parent {
                    s.extend(argv(&["-i", &format!("@{}", p.name)]));
                }
                s.push(full);
                let sent = shell_redirect(&s, ">", stream_file, t)?;
                let r = argv(&["zfs", "recv", "-F", &format!("{dest_ds}/recv")]);
                (sent, shell_redirect(&r, "<", stream_file, t)?)
            }
        };
        let bytes = std::fs::metadata(stream_file)
            .map_err(|e| Error::io("cannot stat the send stream", stream_file, e))?
            .len();
        Ok(Sent {
            bytes,
            send_s,
            recv_s,
        })
    }

    /// Delete a copy.
    pub fn delete(&self, snap: Snap) -> Result<()> {
        match self.copies {
            Copies::None(_) => Ok(()),
            Copies::Subvolume => command::run(
                &argv(&["btrfs", "subvolume", "delete", &path_str(&snap.path)]),
                self.timeout,
            )
            .map(drop),
            Copies::Dataset => {
                let ds = self
                    .dataset
                    .as_deref()
                    .expect("a dataset source has its dataset");
                command::run(
                    &argv(&["zfs", "destroy", &format!("{ds}@{}", snap.name)]),
                    self.timeout,
                )
                .map(drop)
            }
            Copies::Reflink => std::fs::remove_dir_all(&snap.path)
                .map_err(|e| Error::io("cannot remove", &snap.path, e)),
        }
    }

    /// Remove the source tree itself; a subvolume's (and its deleted snapshots') space is
    /// waited for (`btrfs subvolume sync`), so what runs next sees it free.
    pub fn remove(self) -> Result<()> {
        match self.copies {
            Copies::Subvolume => {
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
            _ => std::fs::remove_dir_all(&self.dir)
                .map_err(|e| Error::io("cannot remove", &self.dir, e)),
        }
    }
}

/// What one send/receive moved and how long each half took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sent {
    /// Bytes of the send stream.
    pub bytes: u64,
    /// Seconds of the send (into the stream file).
    pub send_s: f64,
    /// Seconds of the receive (from it).
    pub recv_s: f64,
}

/// Run a maintenance command on `mountpoint`; its seconds, or why it was not run (the
/// filesystem has no such command, or its program is not installed).
pub fn maintain(
    m: Maint,
    mountpoint: &Path,
    timeout: Duration,
) -> Result<std::result::Result<f64, String>> {
    match m {
        Maint::None(why) => Ok(Err(why.to_string())),
        Maint::Run(w) if !command::available(w[0]) => Ok(Err(format!(
            "{} is not installed (fsbench doctor --install-missing)",
            w[0]
        ))),
        Maint::Run(w) => {
            let out = command::run(&words(w, &[&path_str(mountpoint)]), timeout)?;
            Ok(Ok(out.seconds))
        }
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tree".to_string())
}

/// Clone every regular file of `src` (flat) into the new directory `dst`; the seconds the
/// clones took.
fn reflink_tree(src: &Path, dst: &Path) -> Result<f64> {
    std::fs::create_dir(dst).map_err(|e| Error::io("cannot create", dst, e))?;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(src)
        .map_err(|e| Error::io("cannot list", src, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let start = Instant::now();
    for from in entries {
        let to = dst.join(from.file_name().unwrap_or_default());
        let a = std::fs::File::open(&from).map_err(|e| Error::io("cannot open", &from, e))?;
        let b = std::fs::File::create(&to).map_err(|e| Error::io("cannot create", &to, e))?;
        rustix::fs::ioctl_ficlone(&b, &a)
            .map_err(|e| Error::io("FICLONE into", &to, std::io::Error::from(e)))?;
    }
    Ok(start.elapsed().as_secs_f64())
}

/// The ZFS dataset whose mount holds `path` (mountinfo's source).
fn dataset_of(path: &Path) -> Result<String> {
    let canon = std::fs::canonicalize(path).map_err(|e| Error::io("cannot resolve", path, e))?;
    crate::host::mountinfo::containing(&crate::host::mountinfo::read()?, &canon)
        .map(|m| m.source)
        .ok_or_else(|| {
            Error::workload(
                "backup",
                format!("cannot find the ZFS dataset holding {}", path.display()),
            )
        })
}

/// One ZFS property as a number (`zfs get -Hp -o value`).
fn zfs_get(name: &str, prop: &str, timeout: Duration) -> Result<u64> {
    let out = command::run(
        &argv(&["zfs", "get", "-Hp", "-o", "value", prop, name]),
        timeout,
    )?;
    out.stdout.trim().parse().map_err(|_| {
        Error::tool(
            "zfs get",
            format!("{prop} of {name} is not a number: {:?}", out.stdout.trim()),
        )
    })
}

/// `argv` with its stdin or stdout redirected to `file` through `sh` (the stream is binary,
/// which the command runner's captured output is not); the seconds it took.
fn shell_redirect(argv: &[String], dir: &str, file: &Path, timeout: Duration) -> Result<f64> {
    let mut a = vec![
        "sh".to_string(),
        "-c".to_string(),
        format!("f=\"$1\"; shift; exec \"$@\" {dir} \"$f\""),
        "sh".to_string(),
        path_str(file),
    ];
    a.extend(argv.iter().cloned());
    Ok(command::run(&a, timeout)?.seconds)
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
