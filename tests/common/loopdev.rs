//! Loop devices of a test's own over sparse image files, detached on drop.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{sh, sh_result};

/// How to attach a [`LoopImage`]: `LoopImage::spec(size)…attach()`.
#[derive(Clone, Debug)]
pub struct LoopSpec {
    size: u64,
    prefix: String,
    direct_io: bool,
    block_size: Option<u32>,
    partitioned: bool,
    in_dir: Option<PathBuf>,
    file_name: String,
}

/// A sparse image attached to a loop device; detached (and the image deleted) on drop.
#[derive(Debug)]
pub struct LoopImage {
    /// The device path, `/dev/loopN`.
    pub dev: String,
    /// The backing image file.
    pub image: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl LoopSpec {
    /// The scratch directory's name starts with `prefix` (default `fsbench-test-loop-`).
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_string();
        self
    }
    /// Attach with `--direct-io=on` (default off, as `losetup -f` does).
    pub fn direct_io(mut self, on: bool) -> Self {
        self.direct_io = on;
        self
    }
    /// Logical block size (`losetup -b`).
    pub fn block_size(mut self, bytes: u32) -> Self {
        self.block_size = Some(bytes);
        self
    }
    /// Write one MBR partition of type 0x83 from 1 MiB to the end and scan it (`losetup -P`);
    /// the entries count in the loop device's logical block size (4 KiB unless set).
    pub fn partitioned(mut self) -> Self {
        self.partitioned = true;
        self
    }
    /// Name the image file `name` (default `disk.img`).
    pub fn file_name(mut self, name: &str) -> Self {
        self.file_name = name.to_string();
        self
    }
    /// Put the image in `dir` (which the caller owns) instead of a fresh scratch directory.
    pub fn in_dir(mut self, dir: &Path) -> Self {
        self.in_dir = Some(dir.to_path_buf());
        self
    }

    /// Create the image and attach it; an error says what failed (the caller decides whether
    /// that skips or fails the test).
    pub fn attach(self) -> Result<LoopImage, String> {
        let (dir, base) = match &self.in_dir {
            Some(d) => (None, d.clone()),
            None => {
                let d = super::scratch(&self.prefix);
                let p = d.path().to_path_buf();
                (Some(d), p)
            }
        };
        let image = base.join(&self.file_name);
        let f = std::fs::File::create(&image).map_err(|e| format!("{}: {e}", image.display()))?;
        f.set_len(self.size).map_err(|e| e.to_string())?;
        if self.partitioned {
            let sector = u64::from(self.block_size.unwrap_or(4096));
            let mut mbr = [0u8; 512];
            let e = &mut mbr[446..462];
            e[4] = 0x83;
            let start = (1 << 20) / sector;
            e[8..12].copy_from_slice(&(start as u32).to_le_bytes());
            e[12..16].copy_from_slice(&((self.size / sector - start) as u32).to_le_bytes());
            mbr[510] = 0x55;
            mbr[511] = 0xAA;
            f.write_all_at(&mbr, 0).map_err(|e| e.to_string())?;
        }
        drop(f);
        let bs = self.block_size.map(|b| b.to_string());
        let mut args = vec!["losetup", "-f", "--show"];
        if let Some(b) = &bs {
            args.extend(["-b", b]);
        }
        if self.direct_io {
            args.push("--direct-io=on");
        }
        if self.partitioned {
            args.push("-P");
        }
        let img = image.to_str().expect("UTF-8 scratch path");
        args.push(img);
        let dev = sh_result(&args)?.trim().to_string();
        Ok(LoopImage {
            dev,
            image,
            _dir: dir,
        })
    }
}

impl LoopImage {
    /// What to attach: a sparse image of `size` bytes, by default in a fresh directory in
    /// `/var/tmp`, without direct I/O, 512-byte blocks.
    pub fn spec(size: u64) -> LoopSpec {
        LoopSpec {
            size,
            prefix: "fsbench-test-loop-".into(),
            direct_io: false,
            block_size: None,
            partitioned: false,
            in_dir: None,
            file_name: "disk.img".into(),
        }
    }

    /// `spec(size).attach()`, panicking with the reason when it fails.
    #[track_caller]
    pub fn new(size: u64) -> LoopImage {
        Self::spec(size)
            .attach()
            .unwrap_or_else(|e| panic!("a loop device: {e}"))
    }

    /// The kernel name (`loop7`), as sysfs and the wipe prompt use it.
    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    /// The device as a path.
    pub fn path(&self) -> &Path {
        Path::new(&self.dev)
    }

    /// A sysfs attribute of the device (`queue/rotational`), trimmed.
    pub fn sys(&self, attr: &str) -> String {
        std::fs::read_to_string(format!("/sys/block/{}/{attr}", self.name()))
            .unwrap_or_else(|e| panic!("/sys/block/{}/{attr}: {e}", self.name()))
            .trim()
            .to_string()
    }

    /// `cksum` of every byte of the device.
    pub fn checksum(&self) -> String {
        super::sh_ok(&["cksum", &self.dev])
    }
}

impl Drop for LoopImage {
    fn drop(&mut self) {
        let o = sh(&["losetup", "-d", &self.dev]);
        if !o.status.success() {
            eprintln!("cleanup: losetup -d {}: {}", self.dev, super::stderr(&o));
        }
        let _ = std::fs::remove_file(&self.image);
    }
}
