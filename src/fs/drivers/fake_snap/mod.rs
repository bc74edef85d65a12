//! The "a filesystem with its own mechanisms" recipe, followed by a test (docs/ARCHITECTURE.md,
//! "A filesystem"): a FAKE driver written the way a new one is — this folder, with its
//! mechanisms in files of their own (a snapshot, `snapshot.rs`; backup copies; a `raid=`
//! layout; a substitute fact), and one registration line (here `fs::register_for_test`, the
//! test build's stand-in for its line in `DRIVERS`) — is reached by the shared code through
//! the `Filesystem` trait and its `Caps` alone: the capability probe's snapshot, the backup
//! workload's `Source`, the layout keys, the results' substitute warning. Nothing outside
//! this folder names it but `drivers/mod.rs`'s `mod` line. Test builds only; its "mkfs" and
//! "mount" are the FAKE filesystem's ([`super::fake`]), so no root is needed.

mod snapshot;

use crate::Result;
use crate::fs::caps::{Caps, Snapshot};
use crate::fs::layout::{Builder, Layout, row};
use crate::fs::ops::{Live, Outcome, SnapshotJob};
use crate::fs::setup::variant_keys::Accepts;
use crate::fs::snapshot_ops::{Backup, Copies, Own, Stream};
use crate::fs::{Filesystem, MkfsRecord, Mounted, SetupSpec};
use crate::measure::backing::Backing;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Its `--fs` name.
pub const NAME: &str = "test-snap-fs";

/// The fake driver with mechanisms of its own.
pub struct SnapFs;

/// No variant keys of its own.
const ACCEPTS: Accepts = Accepts {
    mkfs: true,
    mount: true,
    props: &[],
    dir_attrs: &[],
    args: crate::fs::setup::variant_args::ArgRules::NONE,
    hints: &[],
};

/// Its one layout: a mirror of two devices.
const LAYOUTS: &[Layout] = &[row("mirror", 2, Builder::Vdev(Some("mirror")), 1)];

const CAPS: Caps = Caps {
    mount_types: &[NAME],
    backing: Backing::None,
    snapshot: Snapshot::Own,
    layouts: LAYOUTS,
    backup: Backup {
        copies: Copies::Own(Own(&snapshot::COPIES)),
        stream: Stream::None("the recipe's fake has no send stream"),
        ..Backup::NONE
    },
    ..Caps::NONE
};

impl Filesystem for SnapFs {
    fn name(&self) -> &'static str {
        NAME
    }
    fn required_tools(&self) -> &'static [&'static str] {
        &[]
    }
    fn min_device_size(&self) -> u64 {
        0
    }
    fn validate(&self, _: &SetupSpec) -> Result<()> {
        Ok(())
    }
    fn accepts(&self) -> &Accepts {
        &ACCEPTS
    }
    fn caps(&self) -> &Caps {
        &CAPS
    }
    fn mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<Box<dyn Mounted>> {
        super::fake::FakeFs.mount(device, setup, mountpoint, timeout)
    }
    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        super::fake::FakeFs.create_and_mount(device, setup, mountpoint, timeout)
    }
    /// Its own snapshot (`snapshot.rs`), which the capability probe reaches through here.
    fn snapshot(
        &self,
        live: &dyn Live,
        job: SnapshotJob<'_>,
        _timeout: Duration,
    ) -> Result<Outcome<f64>> {
        snapshot::probe(live.mountpoint(), job).map(Outcome::Done)
    }
}

/// The recipe's driver, for `register_for_test`.
pub static SNAP_FS: SnapFs = SnapFs;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::snapshot_ops::Source;

    /// The probe's handle on a "mounted" directory.
    struct Dir(PathBuf);

    impl Live for Dir {
        fn device(&self) -> &Path {
            &self.0
        }
        fn mountpoint(&self) -> &Path {
            &self.0
        }
        fn source(&self) -> Option<String> {
            None
        }
        fn unmount(&mut self) -> Result<()> {
            Ok(())
        }
        fn mount(&mut self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_driver_with_its_own_mechanisms_needs_only_its_folder_and_a_registration() {
        assert!(
            crate::fs::driver(NAME).is_none(),
            "not known before its line"
        );
        crate::fs::register_for_test(&SNAP_FS);
        let d = crate::fs::driver(NAME).expect("found by its name once registered");
        let t = Duration::from_secs(5);
        let tmp = tempfile::tempdir().unwrap();

        // The capability probe's snapshot, through the trait: fill, snapshot, verify.
        let live = Dir(tmp.path().to_path_buf());
        let mut filled = 0;
        let mut fill = |dir: &Path| {
            filled += 1;
            std::fs::write(dir.join("f"), b"data").map_err(|e| crate::Error::io("w", dir, e))
        };
        let mut verified = false;
        let mut verify = |a: &Path, b: &Path| {
            verified = std::fs::read(a.join("f")).ok() == std::fs::read(b.join("f")).ok();
            Ok(())
        };
        let job = SnapshotJob {
            fill: &mut fill,
            verify: &mut verify,
        };
        assert!(matches!(
            d.snapshot(&live, job, t).unwrap(),
            Outcome::Done(_)
        ));
        assert_eq!(filled, 1);
        assert!(verified, "the snapshot holds what the tree held");

        // The backup workload's copies, through its `Caps::backup` and the shared `Source`.
        let b = d.caps().backup;
        let src = Source::create(&b, &tmp.path().join("src"), tmp.path(), t).unwrap();
        std::fs::write(src.dir.join("r"), vec![7u8; 4096]).unwrap();
        src.settle().unwrap();
        let (s1, _secs) = src.snapshot("s1").unwrap();
        assert_eq!(
            src.space(&s1).unwrap(),
            4096,
            "its own accounting: the copy's bytes"
        );
        let e = src
            .send(&b, &s1, None, &tmp.path().join("stream"), tmp.path())
            .err()
            .unwrap();
        assert!(e.to_string().contains("no send stream"), "{e}");
        src.delete(s1).unwrap();
        src.remove().unwrap();
        assert!(!tmp.path().join("src").exists());

        // Its layout keys, from its declared layouts.
        assert_eq!(crate::fs::layout::keys(NAME), ["raid", "spare"]);
        assert_eq!(
            crate::fs::layout::find(NAME, "mirror").unwrap().min_devices,
            2
        );
    }
}
