//! How a driver reads the on-disk compression ratio of written data (`Caps::compression`:
//! Btrfs's extent items through the tree-search ioctl, a ZFS dataset's `compressratio`), and
//! waits until the space of what was written is accounted. The compression workload calls
//! these through `Filesystem::compression_ratio` and `Filesystem::settle_space`.

use super::caps::{Caps, Compression};
use crate::host::command::{self, argv};
use crate::{Error, Result};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// The on-disk compression ratio (logical / physical) of a btrfs file or directory tree, or
/// of the ZFS dataset holding `path_or_dataset` (a path or a dataset name), as `caps` says
/// it is read (`Caps::compression`). `None` for filesystems without compression,
/// or a btrfs path holding no data.
pub fn ratio(caps: &Caps, path_or_dataset: &str) -> Result<Option<f64>> {
    match caps.compression {
        Compression::Extents => {
            let (logical, disk) = btrfs_usage(Path::new(path_or_dataset))?;
            Ok((disk > 0).then(|| logical as f64 / disk as f64))
        }
        Compression::DatasetProperty => {
            let ds = if path_or_dataset.starts_with('/') {
                dataset_of(Path::new(path_or_dataset), caps.mount_types)?
            } else {
                path_or_dataset.to_string()
            };
            let out = command::run(
                &argv(&["zfs", "get", "-Hp", "-o", "value", "compressratio", &ds]),
                Duration::from_secs(30),
            )?;
            parse_zfs_ratio(&out.stdout)
                .map(Some)
                .ok_or_else(|| Error::tool("zfs get compressratio", out.stdout))
        }
        Compression::None => Ok(None),
    }
}

/// `1.00x`, `2.41`, or `2.41x` → 2.41.
fn parse_zfs_ratio(s: &str) -> Option<f64> {
    s.trim().trim_end_matches('x').parse().ok()
}

/// The ZFS dataset whose mount (of one of `mount_types`) holds `path` (longest matching
/// mount point).
fn dataset_of(path: &Path, mount_types: &[&str]) -> Result<String> {
    let canon = std::fs::canonicalize(path).map_err(|e| Error::io("cannot resolve", path, e))?;
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| Error::io("cannot read", "/proc/self/mountinfo", e))?;
    let mut best: Option<(usize, String)> = None;
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mp = left.split(' ').nth(4).unwrap_or("");
        let mut r = right.split(' ');
        let fstype = r.next().unwrap_or("");
        let source = r.next().unwrap_or("");
        if mount_types.contains(&fstype)
            && canon.starts_with(mp)
            && best.as_ref().is_none_or(|(l, _)| mp.len() >= *l)
        {
            best = Some((mp.len(), source.to_string()));
        }
    }
    best.map(|(_, s)| s).ok_or_else(|| {
        Error::Other(format!(
            "{} is not on a mounted ZFS dataset",
            path.display()
        ))
    })
}

/// Where space is accounted at commit time (a dataset property: ZFS's txg, seconds after
/// fsync), wait until what was written at `path` is counted; elsewhere nothing to wait for.
pub fn settle_space(caps: &Caps, path: &Path) -> Result<()> {
    if caps.compression == Compression::DatasetProperty {
        wait_dataset_settled(path, caps.mount_types)?;
    }
    Ok(())
}

/// Wait (up to 30 s) until the dataset's `used` stops changing after a sync.
fn wait_dataset_settled(path: &Path, mount_types: &[&str]) -> Result<()> {
    let ds = dataset_of(path, mount_types)?;
    crate::host::sync_all();
    let used = || -> Result<String> {
        Ok(command::run(
            &argv(&["zfs", "get", "-Hp", "-o", "value", "used", &ds]),
            Duration::from_secs(30),
        )?
        .stdout)
    };
    let start = Instant::now();
    let mut last = used()?;
    let mut stable = 0;
    while start.elapsed() < Duration::from_secs(30) && stable < 3 {
        std::thread::sleep(Duration::from_secs(1));
        let now = used()?;
        stable = if now == last { stable + 1 } else { 0 };
        last = now;
    }
    Ok(())
}

/// Referenced (logical) and on-disk bytes of every regular file under `path` on btrfs.
pub fn btrfs_usage(path: &Path) -> Result<(u64, u64)> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io("cannot stat", path, e))?;
    if meta.is_dir() {
        let mut total = (0, 0);
        let rd = std::fs::read_dir(path).map_err(|e| Error::io("cannot list", path, e))?;
        for entry in rd {
            let entry = entry.map_err(|e| Error::io("cannot list", path, e))?;
            let (l, d) = btrfs_usage(&entry.path())?;
            total.0 += l;
            total.1 += d;
        }
        return Ok(total);
    }
    if !meta.is_file() {
        return Ok((0, 0));
    }
    let f = std::fs::File::open(path).map_err(|e| Error::io("cannot open", path, e))?;
    btrfs_file_usage(&f, meta.ino(), path)
}

const BTRFS_EXTENT_DATA_KEY: u32 = 108;
const SEARCH_KEY_LEN: usize = 104;
const SEARCH_HEADER_LEN: usize = 32;

fn btrfs_file_usage(f: &std::fs::File, ino: u64, path: &Path) -> Result<(u64, u64)> {
    let mut logical = 0u64;
    let mut disk = 0u64;
    let mut min_offset = 0u64;
    loop {
        // struct btrfs_ioctl_search_args: the key, then the result buffer; u64-aligned.
        let mut args = crate::host::sys::btrfs::SearchArgs::default();
        let bytes = &mut args.0;
        let key = [
            0u64, // tree_id: 0 = the subvolume holding the fd
            ino,  // min_objectid
            ino,  // max_objectid
            min_offset,
            u64::MAX, // max_offset
            0,        // min_transid
            u64::MAX, // max_transid
        ];
        for (i, v) in key.iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
        }
        bytes[56..60].copy_from_slice(&BTRFS_EXTENT_DATA_KEY.to_ne_bytes());
        bytes[60..64].copy_from_slice(&BTRFS_EXTENT_DATA_KEY.to_ne_bytes());
        bytes[64..68].copy_from_slice(&4096u32.to_ne_bytes()); // nr_items: as many as fit
        crate::host::sys::btrfs::tree_search(f, &mut args).map_err(|e| {
            Error::io(
                "BTRFS_IOC_TREE_SEARCH (not btrfs, or not root?) on",
                path,
                e,
            )
        })?;
        let bytes = &args.0;
        let nr = u32::from_ne_bytes(bytes[64..68].try_into().unwrap()) as usize;
        if nr == 0 {
            break;
        }
        let mut pos = SEARCH_KEY_LEN;
        let mut last_offset = min_offset;
        for _ in 0..nr {
            let h = &bytes[pos..pos + SEARCH_HEADER_LEN];
            let offset = u64::from_ne_bytes(h[16..24].try_into().unwrap());
            let typ = u32::from_ne_bytes(h[24..28].try_into().unwrap());
            let len = u32::from_ne_bytes(h[28..32].try_into().unwrap()) as usize;
            let item = &bytes[pos + SEARCH_HEADER_LEN..pos + SEARCH_HEADER_LEN + len];
            if typ == BTRFS_EXTENT_DATA_KEY {
                let (l, d) = extent_usage(item);
                logical += l;
                disk += d;
            }
            last_offset = offset;
            pos += SEARCH_HEADER_LEN + len;
        }
        if last_offset == u64::MAX {
            break;
        }
        min_offset = last_offset + 1;
    }
    Ok((logical, disk))
}

/// Logical and on-disk bytes of one `btrfs_file_extent_item` (little-endian, packed).
fn extent_usage(item: &[u8]) -> (u64, u64) {
    let le = |o: usize| u64::from_le_bytes(item[o..o + 8].try_into().unwrap());
    if item.len() < 21 {
        return (0, 0);
    }
    let ram_bytes = le(8);
    let compression = item[16];
    match item[20] {
        // Inline: the (possibly compressed) data follows the 21-byte header.
        0 => (ram_bytes, (item.len() - 21) as u64),
        1 | 2 if item.len() >= 53 => {
            let (disk_bytenr, disk_num_bytes, num_bytes) = (le(21), le(29), le(45));
            if disk_bytenr == 0 {
                (0, 0) // a hole
            } else if compression != 0 {
                (num_bytes, disk_num_bytes)
            } else {
                (num_bytes, num_bytes)
            }
        }
        _ => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_zfs_ratio() {
        assert_eq!(parse_zfs_ratio("2.41x\n"), Some(2.41));
        assert_eq!(parse_zfs_ratio("1.00"), Some(1.0));
        assert_eq!(parse_zfs_ratio("-"), None);
    }

    #[test]
    fn extent_items() {
        let mut item = vec![0u8; 53];
        item[8..16].copy_from_slice(&131072u64.to_le_bytes()); // ram_bytes
        item[16] = 3; // zstd
        item[20] = 1; // regular
        item[21..29].copy_from_slice(&12345u64.to_le_bytes()); // disk_bytenr
        item[29..37].copy_from_slice(&53248u64.to_le_bytes()); // disk_num_bytes
        item[45..53].copy_from_slice(&131072u64.to_le_bytes()); // num_bytes
        assert_eq!(extent_usage(&item), (131072, 53248));
        item[16] = 0;
        assert_eq!(extent_usage(&item), (131072, 131072));
        item[21..29].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(extent_usage(&item), (0, 0));
    }
}
