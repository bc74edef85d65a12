//! ZFS's own copies for the `backup` workload: the tree is a directory in the mount's
//! dataset, a copy a dataset snapshot (`DS@NAME`, its space the snapshot's `used`), the
//! stream `zfs send [-i @PARENT]` / `zfs recv -F`.

use crate::fs::snapshot_ops::{Copier, Snap, Tree, path_str};
use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Dataset snapshots ([`crate::fs::snapshot_ops::Copies::Own`] of the ZFS driver).
pub struct DatasetSnapshots;

/// The one instance the driver's capabilities name.
pub static DATASET_SNAPSHOTS: DatasetSnapshots = DatasetSnapshots;

impl Copier for DatasetSnapshots {
    fn create(&self, dir: &Path, mountpoint: &Path, timeout: Duration) -> Result<Box<dyn Tree>> {
        let dataset = dataset_of(mountpoint)?;
        std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
        Ok(Box::new(InDataset {
            dir: dir.to_path_buf(),
            dataset,
            timeout,
        }))
    }
}

/// A directory in a dataset, whose snapshots are the dataset's.
struct InDataset {
    dir: PathBuf,
    dataset: String,
    timeout: Duration,
}

impl Tree for InDataset {
    /// Force a transaction-group sync, then wait (up to 30 s) until the dataset's `used`
    /// stops changing (ZFS accounts when the txg commits, which zfs-fuse does every 20–30 s
    /// on its own).
    fn settle(&self) -> Result<()> {
        let ds = &self.dataset;
        super::pool::sync_txg(ds)?;
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

    fn snapshot(&self, name: &str, _path: &Path) -> Result<f64> {
        let snap = format!("{}@{name}", self.dataset);
        Ok(command::run(&argv(&["zfs", "snapshot", &snap]), self.timeout)?.seconds)
    }

    fn space(&self, snap: &Snap) -> Result<u64> {
        zfs_get(
            &format!("{}@{}", self.dataset, snap.name),
            "used",
            self.timeout,
        )
    }

    fn send(
        &self,
        snap: &Snap,
        parent: Option<&Snap>,
        stream_file: &Path,
        dest: &Path,
    ) -> Result<(f64, f64)> {
        let t = self.timeout;
        let dest_ds = dataset_of(dest)?;
        let full = format!("{}@{}", self.dataset, snap.name);
        let mut s = vec!["zfs".to_string(), "send".to_string()];
        if let Some(p) = parent {
            s.extend(argv(&["-i", &format!("@{}", p.name)]));
        }
        s.push(full);
        let sent = shell_redirect(&s, ">", stream_file, t)?;
        let r = argv(&["zfs", "recv", "-F", &format!("{dest_ds}/recv")]);
        Ok((sent, shell_redirect(&r, "<", stream_file, t)?))
    }

    fn delete(&self, snap: &Snap) -> Result<()> {
        command::run(
            &argv(&["zfs", "destroy", &format!("{}@{}", self.dataset, snap.name)]),
            self.timeout,
        )
        .map(drop)
    }

    fn remove(self: Box<Self>) -> Result<()> {
        std::fs::remove_dir_all(&self.dir).map_err(|e| Error::io("cannot remove", &self.dir, e))
    }
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
