//! One crash state, checked: a scratch image holding the base plus the state's writes, on a
//! loop device of its own; mounted (the journal or log replays, as after a real power cut),
//! the oracle's check, unmounted, then the filesystem's read-only checker. A failing state is
//! kept (its image and a `state.json` with the log position, subset and seed).

use super::Mode;
use super::oracle::{self, Checked};
use super::states::CrashState;
use crate::fs::caps::{Check, Crash};
use crate::fs::{Filesystem, SetupSpec};
use crate::host::command::{self, argv};
use crate::host::recorder::Entry;
use crate::{Error, Result};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a run's states share.
pub struct Replay<'a> {
    /// The filesystem driver.
    pub fs: &'a dyn Filesystem,
    /// The setup, with the clone-identity mount option (`nouuid`) added where needed.
    pub setup: SetupSpec,
    /// Where the scratch images go.
    pub scratch: &'a Path,
    /// The image size.
    pub size: u64,
    /// The base image's data extents (what mkfs left, before recording).
    pub base: &'a [(u64, Vec<u8>)],
    /// The write log.
    pub entries: &'a [Entry],
    /// The oracle's workload.
    pub mode: Mode,
    /// Acknowledgement marks, in order.
    pub marks: &'a [usize],
    /// A mountpoint the states are mounted on in turn.
    pub mountpoint: PathBuf,
    /// Timeout of each tool.
    pub timeout: Duration,
    /// Where failing states are kept (`None`: not kept).
    pub keep_dir: Option<PathBuf>,
}

/// What one state showed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Acknowledged operations the state held.
    pub acked: u64,
    /// The oracle's finding (zero when it could not mount).
    pub checked: Checked,
    /// Whether it mounted.
    pub mounted: bool,
    /// Whether the application on it recovered (PostgreSQL started: its crash recovery
    /// succeeded); the file oracles always do once it mounted.
    pub recovered: bool,
    /// Whether the read-only checker called it clean.
    pub fsck_clean: bool,
    /// The checker's last lines when it was not clean, or the mount error.
    pub detail: String,
    /// Where it was kept, when it failed.
    pub kept: Option<PathBuf>,
}

impl Verdict {
    /// Whether the state breaks a promise (or the filesystem).
    pub fn failed(&self) -> bool {
        !self.fsck_clean || self.lost_data()
    }

    /// Whether an acknowledged operation did not survive it: lost, torn, or on a state that
    /// would not mount (the durability verdict's count; an fsck complaint alone is not).
    pub fn lost_data(&self) -> bool {
        self.unrecoverable() || self.checked.lost > 0 || self.checked.corrupt > 0
    }

    /// Take the oracle's check of a mounted state: its finding, or why it did not recover.
    pub fn take(&mut self, checked: std::result::Result<Checked, String>) {
        match checked {
            Ok(c) => {
                self.recovered = true;
                self.checked = c;
            }
            Err(why) => self.detail = why,
        }
    }

    /// Whether the state would not mount, or its application would not recover on it (the
    /// `unmountable_states` count).
    pub fn unrecoverable(&self) -> bool {
        !self.mounted || !self.recovered
    }
}

/// The offline read-only checker of `fs` on `dev` (its driver's `Caps::check`).
pub fn fsck_argv(fs: &dyn Filesystem, dev: &Path) -> Option<Vec<String>> {
    match fs.caps().check {
        Check::Offline(words) => {
            let mut v = argv(words);
            v.push(dev.to_string_lossy().into_owned());
            Some(v)
        }
        Check::Own | Check::None => None,
    }
}

/// Make the kernel forget a device so a clone with the same fsid is never paired with it,
/// where the driver says it must (Btrfs: `btrfs device scan --forget`).
pub fn forget(fs: &dyn Filesystem, dev: &Path, timeout: Duration) {
    if let Crash::Clones {
        forget: Some(words),
        ..
    } = fs.caps().crash
    {
        let mut v = argv(words);
        v.push(dev.to_string_lossy().into_owned());
        let _ = command::run_unchecked(&v, timeout);
    }
}

/// The mount options every crash-state clone of `fs` needs (XFS: `nouuid`).
pub fn clone_mount_options(fs: &dyn Filesystem) -> &'static [&'static str] {
    match fs.caps().crash {
        Crash::Clones { mount_extra, .. } => mount_extra,
        Crash::Unsupported(_) => &[],
    }
}

/// The last `n` non-empty lines of `text`, joined on one line.
pub(super) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

impl Replay<'_> {
    /// Build, mount, check, unmount and fsck state `s`.
    pub fn check(&self, s: &CrashState, kept_so_far: usize) -> Result<Verdict> {
        use crate::scratch::Target;
        let target = crate::scratch::image::ImageTarget::acquire(self.scratch, self.size, false)?;
        let dev = target
            .block_device()
            .ok_or_else(|| Error::Other("the crash state's image has no loop device".into()))?
            .to_path_buf();
        let image = target.image_path().to_path_buf();
        self.fill(Path::new(&image), s)?;
        let mut v = Verdict {
            acked: super::states::acked(self.marks, s.point),
            ..Default::default()
        };
        match self
            .fs
            .mount(&dev, &self.setup, &self.mountpoint, self.timeout)
        {
            Ok(m) => {
                v.mounted = true;
                let dir = self.mountpoint.join(super::DIR);
                v.take(oracle::check(self.mode, &dir, v.acked, self.timeout));
                m.release()?;
            }
            Err(e) => v.detail = format!("mount failed: {e}"),
        }
        if let Some(cmd) = fsck_argv(self.fs, &dev) {
            let out = command::run_unchecked(&cmd, self.timeout)?;
            v.fsck_clean = out.status == Some(0);
            if !v.fsck_clean {
                v.detail = format!(
                    "{}{}`{}`: {}",
                    v.detail,
                    if v.detail.is_empty() { "" } else { "; " },
                    command::display(&cmd),
                    last_lines(&out.combined(), 3)
                );
            }
        } else {
            v.fsck_clean = true;
        }
        forget(self.fs, &dev, self.timeout);
        if v.failed()
            && kept_so_far < super::KEEP_AT_MOST
            && let Some(dir) = &self.keep_dir
        {
            v.kept = Some(self.keep(dir, Path::new(&image), s, &v)?);
        }
        drop(target);
        Ok(v)
    }

    fn fill(&self, image: &Path, s: &CrashState) -> Result<()> {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(image)
            .map_err(|e| Error::io("cannot open", image, e))?;
        let put = |off: u64, data: &[u8]| {
            f.write_all_at(data, off)
                .map_err(|e| Error::io("cannot write the crash state into", image, e))
        };
        for (off, data) in self.base {
            put(*off, data)?;
        }
        for i in super::states::writes(self.entries, s) {
            if let Entry::Write { offset, data } = &self.entries[i] {
                put(*offset, data)?;
            }
        }
        Ok(())
    }

    fn keep(&self, dir: &Path, image: &Path, s: &CrashState, v: &Verdict) -> Result<PathBuf> {
        let to = dir.join(format!("state-{:03}", s.index));
        std::fs::create_dir_all(&to).map_err(|e| Error::io("cannot create", &to, e))?;
        let img = to.join("image");
        command::run(
            &argv(&[
                "cp",
                "--sparse=always",
                &image.to_string_lossy(),
                &img.to_string_lossy(),
            ]),
            self.timeout,
        )?;
        let json = serde_json::json!({
            "fs": self.fs.name(),
            "setup": self.setup.name,
            "mount": self.setup.mount,
            "oracle": self.mode.id(),
            "state": s,
            "log_entries": self.entries.len(),
            "acknowledged_before_crash": v.acked,
            "lost": v.checked.lost,
            "corrupt": v.checked.corrupt,
            "mounted": v.mounted,
            "recovered": v.recovered,
            "fsck_clean": v.fsck_clean,
            "detail": v.detail,
            "replay": format!(
                "losetup -f --show {}; mount it{}; inspect {}/",
                img.display(),
                match clone_mount_options(self.fs) {
                    [] => String::new(),
                    opts => format!(" -o {}", opts.join(",")),
                },
                super::DIR
            ),
        });
        let p = to.join("state.json");
        std::fs::write(&p, serde_json::to_string_pretty(&json).unwrap_or_default())
            .map_err(|e| Error::io("cannot write", &p, e))?;
        Ok(to)
    }
}

/// The nonzero `block`-aligned runs of `extents` (each `(offset, bytes)`): what a fresh sparse
/// image needs written to hold them, since its holes read as zeros. mkfs.xfs zeroes its whole
/// log (64 MiB of a 300 MiB image, 132 KiB of it nonzero): writing those zeros into every
/// state's image, whose loop device does direct I/O, made each state wait for them to reach
/// the disk.
pub fn nonzero_runs(extents: Vec<(u64, Vec<u8>)>, block: usize) -> Vec<(u64, Vec<u8>)> {
    let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
    for (off, data) in extents {
        let mut run: Option<(u64, usize)> = None;
        let mut flush = |run: &mut Option<(u64, usize)>, end: usize| {
            if let Some((at, from)) = run.take() {
                out.push((at, data[from..end].to_vec()));
            }
        };
        for from in (0..data.len()).step_by(block) {
            let end = (from + block).min(data.len());
            if data[from..end].iter().all(|b| *b == 0) {
                flush(&mut run, from);
            } else if run.is_none() {
                run = Some((off + from as u64, from));
            }
        }
        flush(&mut run, data.len());
    }
    out
}

/// Seconds since `t`.
pub fn since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_blocks_of_the_base_are_left_as_holes() {
        let mut a = vec![0u8; 4096 * 4];
        a[4096 + 7] = 1; // block 1
        a[4096 * 2] = 2; // block 2: joins block 1's run
        let tail = vec![5u8; 100]; // a short last block
        let runs = nonzero_runs(vec![(8192, a.clone()), (1 << 20, tail.clone())], 4096);
        assert_eq!(
            runs,
            vec![(8192 + 4096, a[4096..4096 * 3].to_vec()), (1 << 20, tail)]
        );
        assert!(nonzero_runs(vec![(0, vec![0; 8192])], 4096).is_empty());
        // Writing the runs into zeros gives back the extents.
        let mut img = vec![0u8; (1 << 20) + 100];
        for (off, d) in nonzero_runs(vec![(8192, a.clone())], 4096) {
            img[off as usize..off as usize + d.len()].copy_from_slice(&d);
        }
        assert_eq!(&img[8192..8192 + a.len()], &a[..]);
    }
}
