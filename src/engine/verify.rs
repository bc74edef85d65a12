//! `--verify`: every written block starts with a header naming where it belongs, and a crc32c
//! of the whole block; reads check both and report the first mismatch.
//!
//! Header (little endian): magic `FSBVRFY1` (8), offset (8), seed (8), sequence (8),
//! crc32c (4, computed with this field taken as zero), block size (4) = 40 bytes.

/// Header length in bytes; `--verify` needs `--bs` at least this large.
pub const HEADER_LEN: usize = 40;
const MAGIC: u64 = u64::from_le_bytes(*b"FSBVRFY1");

fn get(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap())
}

fn crc_of(buf: &[u8]) -> u32 {
    let c = crc32c::crc32c(&buf[..32]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &buf[36..])
}

/// Stamp a block about to be written at `offset`.
#[inline]
pub fn stamp(buf: &mut [u8], offset: u64, seed: u64, seq: u64) {
    buf[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    buf[8..16].copy_from_slice(&offset.to_le_bytes());
    buf[16..24].copy_from_slice(&seed.to_le_bytes());
    buf[24..32].copy_from_slice(&seq.to_le_bytes());
    let len = buf.len() as u32;
    buf[36..40].copy_from_slice(&len.to_le_bytes());
    let crc = crc_of(buf);
    buf[32..36].copy_from_slice(&crc.to_le_bytes());
}

/// Check a block read from `offset`; `Err` describes the first mismatch (expected vs found).
pub fn check(buf: &[u8], offset: u64) -> Result<(), String> {
    let magic = get(buf, 0);
    if magic != MAGIC {
        return Err(format!(
            "offset {offset}: no verify header: expected magic {MAGIC:#018x}, found \
             {magic:#018x} (block overwritten, or never written with --verify at this --bs)"
        ));
    }
    let (found_off, seed, seq) = (get(buf, 8), get(buf, 16), get(buf, 24));
    let bs = u32::from_le_bytes(buf[36..40].try_into().unwrap());
    if bs as usize != buf.len() {
        return Err(format!(
            "offset {offset}: block written with --bs {bs}, read with --bs {}; verify with the \
             same --bs",
            buf.len()
        ));
    }
    if found_off != offset {
        return Err(format!(
            "offset {offset}: header names offset {found_off} (expected {offset}; seed {seed}, \
             sequence {seq}): misplaced write"
        ));
    }
    let stored = u32::from_le_bytes(buf[32..36].try_into().unwrap());
    let actual = crc_of(buf);
    if stored != actual {
        return Err(format!(
            "offset {offset}: crc32c mismatch: expected {stored:#010x} (from header; seed \
             {seed}, sequence {seq}), found {actual:#010x} over the data read"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_then_check_and_detect_damage() {
        let mut b = vec![7u8; 4096];
        stamp(&mut b, 8192, 5, 1);
        check(&b, 8192).unwrap();
        assert!(
            check(&b, 4096)
                .unwrap_err()
                .contains("header names offset 8192")
        );
        b[1000] ^= 1;
        let e = check(&b, 8192).unwrap_err();
        assert!(
            e.contains("crc32c mismatch") && e.contains("offset 8192"),
            "{e}"
        );
        assert!(
            check(&[0u8; 4096], 0)
                .unwrap_err()
                .contains("no verify header")
        );
    }
}
