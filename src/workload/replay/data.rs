//! What replay writes: the recreated starting files and every replayed write take their bytes
//! from one buffer of a stated compressibility (plan-file `compress`, `--replay-compressibility`;
//! default incompressible, so a compressing filesystem is not flattered by data the
//! application may not have). The trace holds no contents, so this is the one knob on them.
//!
//! Compressibility is the io kind's (`compress`, `--buffer-compress-percentage`): with P %,
//! the last P % of every 4 KiB block are zeros and the rest random
//! ([`crate::engine::buffer::DataGen`]). Filesystems compress an extent or record of 4 KiB to
//! 128 KiB at a time, so a block-level mix gives every extent the same ratio.

/// Bytes in the buffer writes cycle through (offsets are taken modulo this).
pub const BUF: usize = 1 << 20;

/// The block the compressible share is measured in.
const BLOCK: usize = 4096;

/// The data replay writes: its seed and compressible share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    /// Generator seed (the run's seed: the same seed writes the same bytes).
    pub seed: u64,
    /// Percentage of each 4 KiB block that compresses (0: incompressible, the default).
    pub compress: u8,
}

impl Fill {
    /// Incompressible data from `seed`.
    pub fn incompressible(seed: u64) -> Fill {
        Fill { seed, compress: 0 }
    }

    /// The same compressibility from another seed (the writes' buffer differs from the
    /// starting files').
    pub fn reseeded(self, seed: u64) -> Fill {
        Fill { seed, ..self }
    }

    /// [`BUF`] bytes of this data.
    pub fn buffer(self) -> Vec<u8> {
        let mut g = crate::engine::buffer::DataGen::new(self.seed, BLOCK, self.compress);
        let mut v = vec![0u8; BUF];
        for block in v.chunks_mut(BLOCK) {
            g.fill(block);
        }
        v
    }

    /// How the plan and the report say it.
    pub fn describe(self) -> String {
        match self.compress {
            0 => "incompressible data".to_string(),
            p => format!("data {p} % compressible"),
        }
    }
}

/// Parse a compressibility given on the command line or in a plan file: a percentage 0–100
/// (`50`, `50%`).
pub fn parse_percent(s: &str) -> Result<u8, String> {
    s.trim()
        .trim_end_matches('%')
        .trim()
        .parse::<u8>()
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| {
            format!("{s:?}: give a percentage from 0 (incompressible, the default) to 100")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflated(data: &[u8]) -> usize {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap().len()
    }

    #[test]
    fn the_stated_share_compresses_and_the_default_does_not() {
        let none = Fill::incompressible(7).buffer();
        assert_eq!(none.len(), BUF);
        // Random bytes: deflate cannot shrink them (it adds a little framing).
        assert!(deflated(&none) as f64 > 0.99 * BUF as f64);
        let half = Fill {
            seed: 7,
            compress: 50,
        }
        .buffer();
        assert!(
            half.chunks(BLOCK)
                .all(|b| b[BLOCK / 2..].iter().all(|&x| x == 0))
        );
        assert!(half.chunks(BLOCK).all(|b| b[..8].iter().any(|&x| x != 0)));
        let ratio = deflated(&half) as f64 / BUF as f64;
        assert!((0.45..0.55).contains(&ratio), "{ratio}");
        // Another seed, other bytes, the same share.
        let other = Fill {
            seed: 8,
            compress: 50,
        }
        .buffer();
        assert_ne!(half, other);
    }

    #[test]
    fn a_percentage_is_0_to_100() {
        assert_eq!(parse_percent("0"), Ok(0));
        assert_eq!(parse_percent("50%"), Ok(50));
        assert_eq!(parse_percent("100"), Ok(100));
        for bad in ["101", "-1", "half", ""] {
            assert!(parse_percent(bad).is_err(), "{bad}");
        }
    }
}
