//! Snapshots and backups, as the drivers offer them (the `backup` workload, docs/backups.md):
//! a point-in-time copy of a directory tree and the space the filesystem accounts to it, a
//! send stream of a copy (full or against a parent) received on a second filesystem, and the
//! maintenance commands (`fstrim`, `btrfs balance`).
//!
//! A driver declares what it has in [`Caps::backup`](super::Caps); what it lacks is
//! "unsupported here" with the reason, which the workload prints as a note. The mechanism
//! shared by any filesystem that clones files (reflink copies) is here; a filesystem's own
//! copies and send stream (Btrfs subvolumes, ZFS dataset snapshots) are a [`Copier`] in its
//! driver's folder, so no filesystem is named here.

use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How a filesystem makes a point-in-time copy of a tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Copies {
    /// None of its own; why.
    None(&'static str),
    /// Every file cloned with FICLONE into a sibling directory (XFS with reflink=1).
    Reflink,
    /// Its own copies (subvolume or dataset snapshots), by its driver's [`Copier`].
    Own(Own),
}

/// How a copy is streamed to another filesystem.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stream {
    /// Not at all; why.
    None(&'static str),
    /// By its own copies' [`Tree::send`] (`btrfs send`/`receive`, `zfs send`/`recv`).
    Own,
}

/// A driver's [`Copier`], as capability data (compared by identity).
#[derive(Clone, Copy)]
pub struct Own(pub &'static dyn Copier);

impl PartialEq for Own {
    fn eq(&self, other: &Own) -> bool {
        std::ptr::addr_eq(self.0, other.0)
    }
}

impl std::fmt::Debug for Own {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Own(..)")
    }
}

/// A filesystem's own point-in-time copies, implemented in its driver's folder.
pub trait Copier: Sync {
    /// Make `dir` (inside the filesystem mounted at `mountpoint`) a tree copies can be taken
    /// of (a subvolume, a directory in the mount's dataset).
    fn create(&self, dir: &Path, mountpoint: &Path, timeout: Duration) -> Result<Box<dyn Tree>>;
}

/// One tree a [`Copier`] made, that its copies are taken of.
pub trait Tree: Send {
    /// Make the accounting current after a sync (a pool: its transaction group committed).
    fn settle(&self) -> Result<()> {
        Ok(())
    }
    /// Take copy `name` visible at `path` (where the filesystem shows one); the command's
    /// seconds.
    fn snapshot(&self, name: &str, path: &Path) -> Result<f64>;
    /// The space `snap` takes by itself, in the filesystem's own accounting.
    fn space(&self, snap: &Snap) -> Result<u64>;
    /// Stream `snap` (against `parent`) into `stream_file` and receive it into the
    /// filesystem mounted at `dest`: the seconds of the send and of the receive.
    fn send(
        &self,
        snap: &Snap,
        parent: Option<&Snap>,
        stream_file: &Path,
        dest: &Path,
    ) -> Result<(f64, f64)>;
    /// Delete a copy.
    fn delete(&self, snap: &Snap) -> Result<()>;
    /// Remove the tree itself, its space given back before this returns.
    fn remove(self: Box<Self>) -> Result<()>;
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
    /// The driver's own tree (`Copies::Own`).
    own: Option<Box<dyn Tree>>,
}

/// One point-in-time copy of a [`Source`].
pub struct Snap {
    /// Its name (`s1`).
    pub name: String,
    /// Where its files are visible (a dataset snapshot: none, its `.zfs` is not used).
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

/// A path as one word of a command line.
pub fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl Source {
    /// Create the source tree `dir` (inside the filesystem mounted at `mountpoint`): the
    /// driver's own tree, or a plain directory. `Err` when the filesystem has no copies (the
    /// reason) or the command failed.
    pub fn create(b: &Backup, dir: &Path, mountpoint: &Path, timeout: Duration) -> Result<Source> {
        let own = match b.copies {
            Copies::None(why) => return Err(Error::workload("backup", why)),
            Copies::Own(Own(copier)) => Some(copier.create(dir, mountpoint, timeout)?),
            Copies::Reflink => {
                std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
                None
            }
        };
        Ok(Source {
            copies: b.copies,
            dir: dir.to_path_buf(),
            own,
        })
    }

    /// Make the filesystem's accounting current: sync, then what the driver's own tree
    /// waits for (a pool's transaction group).
    pub fn settle(&self) -> Result<()> {
        crate::host::cache::sync_all();
        match &self.own {
            Some(t) => t.settle(),
            None => Ok(()),
        }
    }

    /// Take copy `name` of the tree; returns it and the seconds the copy took (the command's
    /// wall time, process start included, or the clones' for a reflink copy).
    pub fn snapshot(&self, name: &str) -> Result<(Snap, f64)> {
        let parent = self.dir.parent().unwrap_or(&self.dir);
        let path = parent.join(format!("{}-{name}", file_name(&self.dir)));
        let used_before = used_bytes(&self.dir)?;
        let seconds = match (&self.own, self.copies) {
            (_, Copies::None(why)) => return Err(Error::workload("backup", why)),
            (Some(t), _) => t.snapshot(name, &path)?,
            (None, _) => reflink_tree(&self.dir, &path)?,
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

    /// The space `snap` takes by itself, in the filesystem's own accounting: the driver's
    /// (a Btrfs snapshot's exclusive bytes, a ZFS snapshot's `used`), and for a reflink copy
    /// statvfs's used bytes now minus just before the copy (the tree's in-place rewrites
    /// take no space without the copy). Call [`Source::settle`] first.
    pub fn space(&self, snap: &Snap) -> Result<u64> {
        match (&self.own, self.copies) {
            (_, Copies::None(why)) => Err(Error::workload("backup", why)),
            (Some(t), _) => t.space(snap),
            (None, _) => Ok(used_bytes(&self.dir)?.saturating_sub(snap.used_before)),
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
        let (send_s, recv_s) = match (b.stream, &self.own) {
            (Stream::None(why), _) => return Err(Error::workload("backup", why)),
            (Stream::Own, Some(t)) => t.send(snap, parent, stream_file, dest)?,
            (Stream::Own, None) => {
                return Err(Error::workload(
                    "backup",
                    "unsupported here: a send stream needs the filesystem's own copies",
                ));
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
        match (&self.own, self.copies) {
            (_, Copies::None(_)) => Ok(()),
            (Some(t), _) => t.delete(&snap),
            (None, _) => std::fs::remove_dir_all(&snap.path)
                .map_err(|e| Error::io("cannot remove", &snap.path, e)),
        }
    }

    /// Remove the source tree itself; the driver's own tree's (and its deleted copies')
    /// space is waited for (`btrfs subvolume sync`), so what runs next sees it free.
    pub fn remove(self) -> Result<()> {
        match self.own {
            Some(t) => t.remove(),
            None => std::fs::remove_dir_all(&self.dir)
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
