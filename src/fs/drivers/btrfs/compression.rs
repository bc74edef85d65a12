//! Btrfs's compression ratio: referenced (logical) against on-disk bytes of each file's
//! extent items, read through the tree-search ioctl (its driver's `compression_ratio`).

use crate::{Error, Result};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The on-disk compression ratio (logical / physical) of a file or directory tree; `None`
/// when it holds no data.
pub fn ratio(path: &Path) -> Result<Option<f64>> {
    let (logical, disk) = usage(path)?;
    Ok((disk > 0).then(|| logical as f64 / disk as f64))
}

/// [`ratio`] of a path given as text (the driver's `compression_ratio`).
pub fn ratio_of(path: &str) -> Result<Option<f64>> {
    ratio(Path::new(path))
}

/// Referenced (logical) and on-disk bytes of every regular file under `path` on btrfs.
pub fn usage(path: &Path) -> Result<(u64, u64)> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io("cannot stat", path, e))?;
    if meta.is_dir() {
        let mut total = (0, 0);
        let rd = std::fs::read_dir(path).map_err(|e| Error::io("cannot list", path, e))?;
        for entry in rd {
            let entry = entry.map_err(|e| Error::io("cannot list", path, e))?;
            let (l, d) = usage(&entry.path())?;
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
