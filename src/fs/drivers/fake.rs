//! A FAKE filesystem, compiled only into the library's unit tests (`cfg(test)`) and found by
//! [`crate::fs::driver`] once a test registers it ([`crate::fs::register_for_test`]): its "mkfs"
//! writes a marker into the target's device, which may be a plain file, and its "mount" is a
//! directory, so a whole setup-round, the mkfs branch included, runs without root, loop
//! devices or mounts (`runner/fake_runs.rs`). It records what it was asked to do, the
//! run's hold on what it needs running ([`Filesystem::hold_services`]) included.

use crate::fs::caps::Caps;
use crate::fs::setup::variant_args::ArgRules;
use crate::fs::setup::variant_keys::Accepts;
use crate::fs::{Filesystem, MkfsRecord, Mounted, SetupSpec};
use crate::measure::backing::Backing;
use crate::{Error, Result};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The fake filesystem's `--fs` name.
pub const NAME: &str = "test-fake-fs";

/// What its mkfs writes at the start of the device.
pub const MARKER: &str = "fsbench fake filesystem\n";

/// The fake driver.
pub struct FakeFs;

const ACCEPTS: Accepts = Accepts {
    mkfs: true,
    mount: true,
    props: &[],
    dir_attrs: &[],
    args: ArgRules::NONE,
    hints: &[],
};

const CAPS: Caps = Caps {
    mount_types: &[NAME],
    backing: Backing::None,
    ..Caps::NONE
};

thread_local! {
    /// What the driver did on this thread, in order (`mkfs SETUP`, `mount SETUP`, `release SETUP`).
    static LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn note(what: String) {
    LOG.with(|l| l.borrow_mut().push(what));
}

/// What the fake driver did on this thread, in order.
pub fn log() -> Vec<String> {
    LOG.with(|l| l.borrow().clone())
}

impl Filesystem for FakeFs {
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

    /// "Mount": the device must carry the marker; the mountpoint is a plain directory.
    fn mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        _: Duration,
    ) -> Result<Box<dyn Mounted>> {
        let on_disk = std::fs::read_to_string(device).unwrap_or_default();
        if !on_disk.starts_with(MARKER) {
            return Err(Error::Other(format!(
                "{}: no fake filesystem on it (its mkfs writes one)",
                device.display()
            )));
        }
        std::fs::create_dir_all(mountpoint)
            .map_err(|e| Error::io("cannot create", mountpoint, e))?;
        note(format!("mount {}", setup.name));
        Ok(Box::new(FakeMount {
            path: mountpoint.to_path_buf(),
            setup: setup.name.clone(),
            released: false,
        }))
    }

    /// "mkfs": the marker and the setup's name written over the device (a plain file will do).
    fn create_and_mount(
        &self,
        device: &Path,
        setup: &SetupSpec,
        mountpoint: &Path,
        timeout: Duration,
    ) -> Result<(MkfsRecord, Box<dyn Mounted>)> {
        let start = Instant::now();
        std::fs::write(device, format!("{MARKER}{}\n", setup.name))
            .map_err(|e| Error::io("cannot format", device, e))?;
        note(format!("mkfs {}", setup.name));
        let record = MkfsRecord {
            args: vec!["fake-mkfs".into(), device.display().to_string()],
            output: "marker written".into(),
            seconds: start.elapsed().as_secs_f64(),
        };
        Ok((record, self.mount(device, setup, mountpoint, timeout)?))
    }

    /// "What it needs running": a log line when the run takes the hold and one when it lets
    /// go, so a test sees the runner hold it around every round.
    fn hold_services(&self) -> Option<crate::fs::ServiceHold> {
        note("hold".into());
        Some(crate::fs::ServiceHold::new(LetGo))
    }
}

/// The fake's service hold: letting go is logged.
struct LetGo;

impl Drop for LetGo {
    fn drop(&mut self) {
        note("let go".into());
    }
}

/// A "mounted" fake filesystem: releasing it empties the directory, as an unmount hides
/// what was written there.
struct FakeMount {
    path: PathBuf,
    setup: String,
    released: bool,
}

impl FakeMount {
    fn unmount_now(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.released, true) {
            return Ok(());
        }
        note(format!("release {}", self.setup));
        let entries =
            std::fs::read_dir(&self.path).map_err(|e| Error::io("cannot list", &self.path, e))?;
        for e in entries.flatten() {
            let p = e.path();
            let gone = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            gone.map_err(|e| Error::io("cannot remove", &p, e))?;
        }
        Ok(())
    }
}

impl Mounted for FakeMount {
    fn path(&self) -> &Path {
        &self.path
    }
    fn mount_options(&self) -> String {
        "fake".into()
    }
    fn properties(&self) -> BTreeMap<String, String> {
        BTreeMap::from([("fake.marker".to_string(), "yes".to_string())])
    }
    fn implementation(&self) -> String {
        "fake (tests)".into()
    }
    fn release(mut self: Box<Self>) -> Result<()> {
        self.unmount_now()
    }
}

impl Drop for FakeMount {
    fn drop(&mut self) {
        let _ = self.unmount_now();
    }
}
