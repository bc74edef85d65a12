//! Targets and filesystem drivers against the real kernel: loop images, mkfs, mounts, zpools,
//! and the safety refusals for `--device`. Privileged parts run as root with the tools present;
//! otherwise they print `skipped: <reason>`, or fail under `FSBENCH_REQUIRE_PRIVILEGED=1`
//! ([`common`]).

mod common;

use fsbench::fs::{self, Filesystem};
use fsbench::plan::SetupSpec;
use fsbench::scratch::{self, TargetKind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const T: Duration = Duration::from_secs(120);

use common::loopdev::LoopImage;
use common::{is_root, require};

fn sh(args: &[&str]) -> (bool, String) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), s)
}

/// Root and loop devices, or skip (fail under FSBENCH_REQUIRE_PRIVILEGED=1).
fn loop_test(name: &str) -> bool {
    common::privileged(name).loop_devices().ok()
}

/// Whether `dev` is still bound to `image` (losetup -j cannot stat a deleted image).
fn still_attached(dev: &Path, image: &Path) -> bool {
    let name = dev.file_name().unwrap().to_str().unwrap();
    std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
        .map(|b| b.trim().starts_with(image.to_str().unwrap()))
        .unwrap_or(false)
}

fn mountinfo() -> String {
    std::fs::read_to_string("/proc/self/mountinfo").unwrap()
}

fn variant(fs: &str) -> SetupSpec {
    let mut s = SetupSpec::plain(fs);
    s.name = format!("{fs}-variant");
    match fs {
        "ext4" | "xfs" => {
            s.mount = vec!["noatime".into()];
            s.raw.insert("mount".into(), "noatime".into());
        }
        "btrfs" => {
            s.mount = vec!["compress=zstd:3".into()];
            s.raw.insert("mount".into(), "compress=zstd:3".into());
        }
        "zfs" => {
            s.props.insert("recordsize".into(), "16K".into());
            s.raw.insert("recordsize".into(), "16K".into());
        }
        _ => {}
    }
    s
}

/// What each driver must show after mounting its variant.
fn expect(fs: &str, opts: &str, props: &std::collections::BTreeMap<String, String>) {
    match fs {
        "ext4" => {
            assert!(opts.contains("noatime"), "{opts}");
            assert_eq!(props["block_size"], "4096", "{props:?}");
            assert!(props["filesystem_features"].contains("has_journal"));
        }
        "xfs" => {
            assert!(opts.contains("noatime"), "{opts}");
            assert_eq!(props["data.bsize"], "4096", "{props:?}");
            assert_eq!(props["meta-data.crc"], "1", "{props:?}");
        }
        "btrfs" => {
            assert!(opts.contains("compress=zstd:3"), "{opts}");
            assert_eq!(props["sectorsize"], "4096", "{props:?}");
            assert!(props.contains_key("metadata_profile"), "{props:?}");
        }
        "zfs" => {
            assert_eq!(props["zfs.recordsize"], "16K", "{props:?}");
            assert_eq!(props["zpool.ashift"], "12", "{props:?}");
            assert!(props["zfs.pool"].starts_with("fsbench_"));
        }
        _ => {}
    }
}

#[test]
fn image_target_formats_and_mounts_every_filesystem() {
    let name = "scratch::image_target_formats_and_mounts_every_filesystem";
    if !common::privileged(name).loop_devices().case_ok() {
        return;
    }
    // Keeps a zfs-fuse daemon started below up until the pool checks at the end are done.
    let _zfs = fsbench::fs::drivers::zfs::daemon::hold();
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let kind = TargetKind::Image {
        scratch_dir: scratch.path().to_path_buf(),
        size: 512 << 20,
        keep: false,
    };
    let t = scratch::acquire(&kind, true).unwrap();
    let info = t.info();
    println!("target: {info:?}");
    assert_eq!(info.kind, "image");
    assert_eq!(info.size_bytes, 512 << 20);
    assert_eq!(info.extra["direct_io"], "true", "{info:?}");
    assert_eq!(info.extra["loop_block_size"], "4096");
    assert_eq!(info.logical_block_size, 4096);
    let image = PathBuf::from(&info.path);
    let dev = t.block_device().unwrap().to_path_buf();
    assert!(dev.to_str().unwrap().starts_with("/dev/loop"));
    let (_, lj) = sh(&["losetup", "-j", image.to_str().unwrap()]);
    assert!(lj.contains(dev.to_str().unwrap()), "{lj}");
    t.check_identity().unwrap();

    let mut tried = 0;
    let all = ["ext4", "xfs", "btrfs", "zfs"];
    let test = name;
    for name in all {
        let avail = fs::available(name);
        if !require(&format!("{test}: {name}: {avail:?}"), avail.is_ok()) {
            continue;
        }
        tried += 1;
        assert!(t.discard().unwrap(), "loop devices support discard");
        let d = fs::driver(name).unwrap();
        let setup = variant(name);
        d.validate(&setup).unwrap();
        let mnt = fs::unique_mountpoint(&setup.name);
        t.check_identity().unwrap();
        let (rec, m) = d.create_and_mount(&dev, &setup, &mnt, T).unwrap();
        println!("{name}: {} ({:.2} s)", rec.args.join(" "), rec.seconds);
        assert!(rec.args.contains(&dev.display().to_string()));
        assert_eq!(m.path(), mnt);
        let e = t.discard().expect_err(name);
        assert_eq!(
            e.exit_code(),
            2,
            "discard under a mounted fs must be refused: {e}"
        );
        t.check_identity().unwrap();
        std::fs::write(mnt.join("hello"), b"fsbench").unwrap();
        assert_eq!(std::fs::read(mnt.join("hello")).unwrap(), b"fsbench");
        let opts = m.mount_options();
        let props = m.properties();
        println!("{name}: options {opts}; {} properties", props.len());
        expect(name, &opts, &props);
        if name == "zfs" {
            let want = if Path::new("/sys/module/zfs").exists() {
                "OpenZFS"
            } else {
                "zfs-fuse"
            };
            assert!(m.implementation().starts_with(want));
        } else {
            assert_eq!(m.implementation(), "linux");
        }
        // Unmount keeping the data, mount again: what the offline probes rely on.
        m.unmount().unwrap();
        assert!(!mountinfo().contains(mnt.to_str().unwrap()));
        let mnt2 = fs::unique_mountpoint(&setup.name);
        let m = d.mount(&dev, &setup, &mnt2, T).unwrap();
        assert_eq!(std::fs::read(mnt2.join("hello")).unwrap(), b"fsbench");
        m.release().unwrap();
        for p in [&mnt, &mnt2] {
            assert!(
                !mountinfo().contains(p.to_str().unwrap()),
                "{name} still mounted"
            );
            assert!(!p.exists(), "{} left behind", p.display());
        }
    }
    drop(t);
    assert!(!still_attached(&dev, &image), "loop device left");
    assert!(!image.exists(), "image left behind");
    assert!(!mountinfo().contains(dev.to_str().unwrap()));
    if fs::available("zfs").is_ok() {
        let (_, pools) = sh(&["zpool", "list", "-H", "-o", "name"]);
        let mine = format!("fsbench_{}_", std::process::id());
        assert!(!pools.contains(&mine), "pool left: {pools}");
    }
    common::ran_cases(test, tried, all.len());
}

#[test]
fn too_small_image_is_refused_before_mkfs() {
    let test = "scratch::too_small_image_is_refused_before_mkfs";
    if !common::privileged(test).loop_devices().case_ok() {
        return;
    }
    // Keeps a zfs-fuse daemon started below up until the checks at the end are done.
    let _zfs = fsbench::fs::drivers::zfs::daemon::hold();
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let kind = TargetKind::Image {
        scratch_dir: scratch.path().to_path_buf(),
        size: 48 << 20,
        keep: false,
    };
    let t = scratch::acquire(&kind, true).unwrap();
    let dev = t.block_device().unwrap().to_path_buf();
    let mut tried = 0;
    for name in ["xfs", "zfs"] {
        let avail = fs::available(name);
        if !require(&format!("{test}: {name}: {avail:?}"), avail.is_ok()) {
            continue;
        }
        tried += 1;
        let d = fs::driver(name).unwrap();
        let mnt = fs::unique_mountpoint("small");
        let e = d
            .create_and_mount(&dev, &SetupSpec::plain(name), &mnt, T)
            .err()
            .expect("too small");
        println!("{e}");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().starts_with("--image-size: "), "{e}");
        assert!(
            e.to_string().contains(&format!("{name} needs at least")),
            "{e}"
        );
        assert!(!mnt.exists());
    }
    let (_, sig) = sh(&["blkid", "-p", dev.to_str().unwrap()]);
    assert!(sig.trim().is_empty(), "nothing may be written: {sig}");
    common::ran_cases(test, tried, 2);
}

#[test]
fn tmpfs_reference_mounts_with_a_size() {
    if !common::privileged("scratch::tmpfs_reference_mounts_with_a_size")
        .root()
        .ok()
    {
        return;
    }
    let mut s = SetupSpec::plain("tmpfs");
    s.props.insert("size".into(), "64M".into());
    let d = fs::driver("tmpfs").unwrap();
    d.validate(&s).unwrap();
    let mnt = fs::unique_mountpoint("tmpfs");
    let (rec, m) = d
        .create_and_mount(Path::new("/nonexistent"), &s, &mnt, T)
        .unwrap();
    assert!(rec.args.iter().any(|a| a.contains("size=67108864")));
    assert!(
        m.mount_options().contains("size=65536k"),
        "{}",
        m.mount_options()
    );
    std::fs::write(mnt.join("x"), b"1").unwrap();
    m.release().unwrap();
    assert!(!mnt.exists());
}

#[test]
fn device_refusals_leave_data_untouched() {
    // A path that is not a block device: no root needed.
    let f = tempfile::NamedTempFile::new().unwrap();
    let e = scratch::acquire(
        &TargetKind::Device {
            path: f.path().to_path_buf(),
            force_wipe: true,
        },
        true,
    )
    .err()
    .unwrap();
    println!("{e}");
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("it is not a block device"), "{e}");

    if !common::privileged("scratch::device_refusals_leave_data_untouched")
        .loop_devices()
        .tools(&["mkfs.ext4", "mount", "blkid"])
        .ok()
    {
        return;
    }
    let lo = LoopImage::new(64 << 20);
    let dev = PathBuf::from(&lo.dev);
    let device = |force_wipe| TargetKind::Device {
        path: dev.clone(),
        force_wipe,
    };

    // Blank and unused: accepted (nothing is written by acquire).
    let t = scratch::acquire(&device(false), true).unwrap();
    let info = t.info();
    assert_eq!(info.kind, "device");
    assert_eq!(info.size_bytes, 64 << 20);
    t.check_identity().unwrap();
    drop(t);

    // Held open exclusively by someone else.
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _held = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(&dev)
            .unwrap();
        let e = scratch::acquire(&device(true), true).err().unwrap();
        println!("{e}");
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().contains("cannot be opened exclusively"),
            "{e}"
        );
    }

    let (ok, out) = sh(&["mkfs.ext4", "-F", "-q", "-L", "userdata", &lo.dev]);
    assert!(ok, "{out}");
    let mnt = tempfile::tempdir().unwrap();
    let (ok, out) = sh(&["mount", &lo.dev, mnt.path().to_str().unwrap()]);
    assert!(ok, "{out}");
    std::fs::write(mnt.path().join("precious"), b"user data").unwrap();

    // Mounted: refused even with --force-wipe.
    let e = scratch::acquire(&device(true), true).err().unwrap();
    println!("{e}");
    let _ = sh(&["umount", mnt.path().to_str().unwrap()]);
    assert_eq!(e.exit_code(), 2);
    assert_eq!(
        e.to_string(),
        format!(
            "refusing to use {}: it is mounted at {}; unmount it first",
            lo.dev,
            mnt.path().display()
        )
    );

    // Unmounted but carrying ext4: refused without --force-wipe, data untouched.
    let before = lo.checksum();
    let e = scratch::acquire(&device(false), true).err().unwrap();
    println!("{e}");
    assert_eq!(e.exit_code(), 2);
    let msg = e.to_string();
    assert!(msg.contains("an ext4 filesystem signature"), "{msg}");
    assert!(msg.contains("LABEL=userdata"), "{msg}");
    assert!(msg.ends_with("use --force-wipe to wipe it"), "{msg}");
    assert_eq!(lo.checksum(), before, "the refused device was modified");
    let (ok, out) = sh(&["blkid", "-p", "-s", "TYPE", "-o", "value", &lo.dev]);
    assert!(ok && out.trim() == "ext4", "{out}");

    // With --force-wipe the checks pass; acquiring still writes nothing.
    let t = scratch::acquire(&device(true), true).unwrap();
    assert_eq!(t.block_device(), Some(dev.as_path()));
    drop(t);
    assert_eq!(lo.checksum(), before);
}

#[test]
fn bad_scratch_dir_and_dir_target() {
    let e = scratch::acquire(
        &TargetKind::Image {
            scratch_dir: "/nonexistent/scratch".into(),
            size: 1 << 30,
            keep: false,
        },
        true,
    )
    .err()
    .unwrap();
    assert!(e.to_string().starts_with("--scratch-dir: "), "{e}");
    assert_eq!(e.exit_code(), 2);

    let d = tempfile::tempdir().unwrap();
    let e = scratch::acquire(
        &TargetKind::Image {
            scratch_dir: d.path().to_path_buf(),
            size: 1 << 60,
            keep: false,
        },
        true,
    )
    .err()
    .unwrap();
    println!("{e}");
    assert!(e.to_string().starts_with("--image-size: "), "{e}");
    assert!(e.to_string().contains("--scratch-dir"), "{e}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);

    if !is_root() {
        let e = scratch::acquire(
            &TargetKind::Image {
                scratch_dir: d.path().to_path_buf(),
                size: 64 << 20,
                keep: false,
            },
            true,
        )
        .err()
        .unwrap();
        println!("{e}");
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("needs root"), "{e}");
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "image not removed"
        );
    }
    let t = scratch::acquire(
        &TargetKind::Dir {
            path: d.path().to_path_buf(),
        },
        false,
    )
    .unwrap();
    let work = t.directory().unwrap().to_path_buf();
    assert_eq!(
        work.file_name().unwrap().to_str().unwrap(),
        format!("fsbench-{}", std::process::id())
    );
    assert!(t.block_device().is_none());
    drop(t);
    assert!(!work.exists());
}

#[test]
fn unknown_filesystem_and_variant_keys() {
    assert!(fs::driver("ntfs").is_none());
    let e = fs::available("ntfs").unwrap_err();
    assert!(
        e.contains("known filesystems: ext4, xfs, btrfs, zfs, tmpfs"),
        "{e}"
    );
    let mut s = SetupSpec::plain("xfs");
    s.name = "xfs-odd".into();
    s.raw.insert("compression".into(), "lz4".into());
    let e = fs::XFS.validate(&s).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert_eq!(
        e.to_string(),
        "--fs: setup \"xfs-odd\": xfs does not understand \"compression\"; valid keys for xfs: mkfs, mount, raid; host tunings: sched, read_ahead_kb, nr_requests, nomerges, wbt_lat_usec, sysctl.vm.*, sysctl.fs.*"
    );
}

#[test]
fn image_on_tmpfs_is_flagged_and_parallel_images_get_their_own_loop() {
    if !loop_test("scratch::image_on_tmpfs_is_flagged_and_parallel_images_get_their_own_loop") {
        return;
    }
    if let Some(shm) = Some(Path::new("/dev/shm")).filter(|p| p.is_dir()) {
        let dir = tempfile::tempdir_in(shm).unwrap();
        let t = scratch::acquire(
            &TargetKind::Image {
                scratch_dir: dir.path().to_path_buf(),
                size: 64 << 20,
                keep: false,
            },
            true,
        )
        .unwrap();
        let info = t.info();
        assert_eq!(info.extra["backing_fs"], "tmpfs");
        assert!(info.extra["warning"].contains("RAM"), "{info:?}");
    }
    // Several acquisitions at once must each end up on a distinct loop device (GET_FREE races).
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let d = scratch.path().to_path_buf();
            std::thread::spawn(move || {
                scratch::acquire(
                    &TargetKind::Image {
                        scratch_dir: d,
                        size: 32 << 20,
                        keep: false,
                    },
                    true,
                )
                .unwrap()
            })
        })
        .collect();
    let targets: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mut devs: Vec<_> = targets
        .iter()
        .map(|t| t.block_device().unwrap().to_path_buf())
        .collect();
    devs.sort();
    devs.dedup();
    assert_eq!(devs.len(), 4);
    drop(targets);
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
}

#[test]
fn partitioned_device_refusals() {
    let test = "scratch::partitioned_device_refusals";
    if !common::privileged(test)
        .loop_devices()
        .tools(&["mkfs.ext4", "mount"])
        .case_ok()
    {
        return;
    }
    // One MBR partition from 1 MiB to the end, the entries in 512-byte sectors.
    let lo = LoopImage::spec(64 << 20)
        .block_size(512)
        .partitioned()
        .attach()
        .unwrap_or_else(|e| panic!("a loop device: {e}"));
    let part = format!("{}p1", lo.dev);
    std::thread::sleep(Duration::from_millis(100));
    if !Path::new(&part).exists() {
        // Kernels without the msdos partition parser: add it by hand (BLKPG).
        let (ok, out) = sh(&["partx", "-a", &lo.dev]);
        if !require(
            &format!("{test}: the kernel did not create {part} ({out})"),
            ok && Path::new(&part).exists(),
        ) {
            return;
        }
    }
    common::ran(test);
    let (ok, out) = sh(&["mkfs.ext4", "-F", "-q", &part]);
    assert!(ok, "{out}");
    let mnt = tempfile::tempdir().unwrap();
    let (ok, out) = sh(&["mount", &part, mnt.path().to_str().unwrap()]);
    assert!(ok, "{out}");
    let device = |force_wipe| TargetKind::Device {
        path: PathBuf::from(&lo.dev),
        force_wipe,
    };
    let e = scratch::acquire(&device(true), true).err().unwrap();
    let _ = sh(&["umount", mnt.path().to_str().unwrap()]);
    println!("{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "refusing to use {}: its partition {part} is mounted at {}; unmount it first",
            lo.dev,
            mnt.path().display()
        )
    );
    let e = scratch::acquire(&device(false), true).err().unwrap();
    println!("{e}");
    assert!(e.to_string().contains("a dos partition table"), "{e}");
    assert!(
        e.to_string().ends_with("use --force-wipe to wipe it"),
        "{e}"
    );
}

#[test]
fn image_grows_and_a_busy_mount_is_detached_lazily() {
    if !common::privileged("scratch::image_grows_and_a_busy_mount_is_detached_lazily")
        .loop_devices()
        .need("ext4 (mkfs.ext4)", fs::available("ext4").is_ok())
        .ok()
    {
        return;
    }
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let t = scratch::acquire(
        &TargetKind::Image {
            scratch_dir: scratch.path().to_path_buf(),
            size: 64 << 20,
            keep: false,
        },
        true,
    )
    .unwrap();
    let mut t = t;
    t.resize(96 << 20).unwrap();
    assert_eq!(t.info().size_bytes, 96 << 20);
    t.check_identity().unwrap();
    let image = PathBuf::from(t.info().path);
    assert_eq!(std::fs::metadata(&image).unwrap().len(), 96 << 20);
    let dev = t.block_device().unwrap().to_path_buf();
    let mnt = fs::unique_mountpoint("busy");
    let (_, m) = fs::EXT4
        .create_and_mount(&dev, &SetupSpec::plain("ext4"), &mnt, T)
        .unwrap();
    let open = std::fs::File::create(mnt.join("held-open")).unwrap();
    m.release().unwrap();
    assert!(!mountinfo().contains(mnt.to_str().unwrap()));
    assert!(!mnt.exists());
    drop(t);
    assert!(!image.exists());
    assert!(
        still_attached(&dev, &image),
        "the busy filesystem still holds the loop device"
    );
    drop(open);
    // The lazily detached filesystem lets go of the loop device once the file closes.
    let mut attached = true;
    for _ in 0..50 {
        attached = still_attached(&dev, &image);
        if !attached {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!attached, "{} still attached to the image", dev.display());
}

#[test]
fn failed_mkfs_or_zpool_create_leaves_nothing() {
    let test = "scratch::failed_mkfs_or_zpool_create_leaves_nothing";
    if !common::privileged(test).loop_devices().case_ok() {
        return;
    }
    // Keeps a zfs-fuse daemon started below up until the checks at the end are done.
    let _zfs = fsbench::fs::drivers::zfs::daemon::hold();
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let t = scratch::acquire(
        &TargetKind::Image {
            scratch_dir: scratch.path().to_path_buf(),
            size: 128 << 20,
            keep: false,
        },
        true,
    )
    .unwrap();
    let dev = t.block_device().unwrap().to_path_buf();
    let mut cases = vec![];
    let avail = |name: &str| {
        let a = fs::available(name);
        require(&format!("{test}: {name}: {a:?}"), a.is_ok())
    };
    if avail("ext4") {
        let mut s = SetupSpec::plain("ext4");
        s.mkfs = vec!["-O".into(), "no_such_feature".into()];
        cases.push(s);
    }
    if avail("zfs") {
        let mut s = SetupSpec::plain("zfs");
        s.props
            .insert("compression".into(), "no-such-algorithm".into());
        cases.push(s);
    }
    let n_cases = cases.len();
    for s in cases {
        let d = fs::driver(&s.fs).unwrap();
        d.validate(&s).unwrap();
        let mnt = fs::unique_mountpoint("fail");
        let e = d
            .create_and_mount(&dev, &s, &mnt, T)
            .err()
            .expect("must fail");
        println!("{e}");
        assert_eq!(e.exit_code(), 1);
        assert!(e.to_string().contains("failed: exit status"), "{e}");
        assert!(!mnt.exists(), "{} left behind", mnt.display());
        assert!(!mountinfo().contains(mnt.to_str().unwrap()));
    }
    if fs::available("zfs").is_ok() {
        let (_, pools) = sh(&["zpool", "list", "-H", "-o", "name"]);
        assert!(
            !pools.contains(&format!("fsbench_{}_", std::process::id())),
            "{pools}"
        );
    }
    common::ran_cases(test, n_cases, 2);
}
