//! The size of a tune's images. Rounds by steps hold one sparse image per setup at once, and
//! tune's largest stage (screening, or racing at its bound) names twenty setups or more,
//! which at the default 8 GiB would not fit an ordinary scratch disk: the stage would fall
//! back to rounds by setup (`plan::resolve::order::no_room`), whose pairs are minutes apart
//! instead of seconds, the noise tune can least afford. One smaller size for every stage
//! keeps the stages comparable.

const GIB: u64 = 1 << 30;

/// The size of each of `setups` images in `free` bytes: `size` when they fit, else the largest
/// whole number of GiB at which they fit in 90 % of `free` (room for the results and the
/// filesystems' own metadata); `size` too when that would be under 1 GiB (the stage then
/// runs by setup, and the plan says why).
pub fn fitted(size: u64, setups: usize, free: u64) -> u64 {
    let n = setups.max(1) as u64;
    if crate::scratch::multi::images_fit(size, n, free) {
        return size;
    }
    let each = free / 10 * 9 / n / GIB * GIB;
    if each >= GIB { each.min(size) } else { size }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_shrink_to_whole_gib_only_when_they_would_not_fit() {
        // 21 × 8 GiB in 66 GiB: 66 × 0.9 / 21 = 2.8 → 2 GiB.
        assert_eq!(fitted(8 * GIB, 21, 66 * GIB), 2 * GIB);
        // They fit: unchanged, however many.
        assert_eq!(fitted(8 * GIB, 8, 64 * GIB), 8 * GIB);
        // Under 1 GiB each: unchanged (by setup instead).
        assert_eq!(fitted(8 * GIB, 40, 30 * GIB), 8 * GIB);
        // Never larger than asked.
        assert_eq!(fitted(3 * GIB, 100, 200 * GIB), GIB);
    }
}
