//! I/O buffers: page-aligned (O_DIRECT needs it), allocated once per job, refilled per write.

// `unsafe` outside host::sys, an allowed exception (docs/ARCHITECTURE.md): the engine's hot path
// (the aligned buffer pool the I/O loops hand to the kernel).

use super::rng::Xoshiro;
use std::alloc::{Layout, alloc_zeroed, dealloc};

/// Alignment of every buffer: a page satisfies every logical block size we meet.
pub const ALIGN: usize = 4096;

/// One aligned allocation holding `count` buffers of `bs` bytes each.
pub struct BufferPool {
    ptr: *mut u8,
    layout: Layout,
    bs: usize,
    count: usize,
}

// SAFETY: the pool owns its allocation; each worker thread has its own pool.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// Allocate `count` zeroed buffers of `bs` bytes (bs rounded up to [`ALIGN`] for spacing).
    pub fn new(bs: usize, count: usize) -> Self {
        let stride = bs.div_ceil(ALIGN) * ALIGN;
        let layout =
            Layout::from_size_align((stride * count).max(ALIGN), ALIGN).expect("buffer layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory allocating I/O buffers");
        BufferPool {
            ptr,
            layout,
            bs,
            count,
        }
    }

    fn stride(&self) -> usize {
        self.bs.div_ceil(ALIGN) * ALIGN
    }

    /// Number of buffers.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Pointer to buffer `i` (for the kernel).
    ///
    /// # Panics
    /// When `i` is not below the pool's count, in release builds too: the pointer goes to the
    /// kernel and to [`BufferPool::buf`], so an out-of-range index must never become one.
    #[inline]
    pub fn ptr(&self, i: usize) -> *mut u8 {
        assert!(
            i < self.count,
            "buffer index {i} out of range (pool of {})",
            self.count
        );
        // SAFETY: i < count (checked above), so the offset stays inside the allocation.
        unsafe { self.ptr.add(i * self.stride()) }
    }

    /// Buffer `i` as a slice.
    ///
    /// # Panics
    /// When `i` is not below the pool's count (checked by [`BufferPool::ptr`]).
    #[inline]
    pub fn buf(&mut self, i: usize) -> &mut [u8] {
        let p = self.ptr(i);
        // SAFETY: `ptr` checked i < count, so `bs` bytes from p lie inside the allocation
        // (stride >= bs), and &mut self makes this the only live reference into the pool.
        unsafe { std::slice::from_raw_parts_mut(p, self.bs) }
    }

    /// iovecs for io_uring buffer registration.
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.count)
            .map(|i| libc::iovec {
                iov_base: self.ptr(i).cast(),
                iov_len: self.bs,
            })
            .collect()
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Fills write buffers so that compression cannot flatter the results.
///
/// A buffer is first filled with random words; each later write XORs its random part with a
/// fresh per-write key (plus a per-word counter), which keeps it incompressible and different
/// from every earlier block at the cost of one XOR per 8 bytes (vectorised) instead of one
/// generator step per word. With `compress_percentage` P, the last P % of each block are
/// zeros, which a compressor removes and the random head it cannot.
#[derive(Debug, Clone)]
pub struct DataGen {
    rng: Xoshiro,
    random_words: usize,
}

impl DataGen {
    /// A generator for blocks of `bs` bytes with `compress_percentage` % compressible.
    pub fn new(seed: u64, bs: usize, compress_percentage: u8) -> Self {
        let words = bs / 8;
        let random_words = words - words * compress_percentage.min(100) as usize / 100;
        DataGen {
            rng: Xoshiro::new(seed ^ 0xDA7A_DA7A_DA7A_DA7A),
            random_words,
        }
    }

    /// Fill a buffer from scratch.
    pub fn fill(&mut self, buf: &mut [u8]) {
        buf.fill(0);
        for chunk in buf.chunks_exact_mut(8).take(self.random_words) {
            chunk.copy_from_slice(&self.rng.next_u64().to_ne_bytes());
        }
    }

    /// Make a previously [`fill`](Self::fill)ed buffer new for the next write.
    #[inline]
    pub fn refill(&mut self, buf: &mut [u8]) {
        let key = self.rng.next_u64();
        let step = self.rng.next_u64() | 1;
        let (head, words, _) = {
            // SAFETY: u64 has no invalid bit patterns; align_to only reinterprets.
            unsafe { buf.align_to_mut::<u64>() }
        };
        debug_assert!(head.is_empty(), "buffers are page aligned");
        let n = self.random_words.min(words.len());
        let mut k = key;
        for w in &mut words[..n] {
            *w ^= k;
            k = k.wrapping_add(step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_distinct() {
        let mut p = BufferPool::new(4096 + 512, 3);
        for i in 0..3 {
            assert_eq!(p.ptr(i) as usize % ALIGN, 0);
            assert_eq!(p.buf(i).len(), 4608);
        }
        assert_eq!(p.iovecs().len(), 3);
    }

    #[test]
    #[should_panic(expected = "buffer index 3 out of range (pool of 3)")]
    fn out_of_range_index_panics_in_every_build() {
        let mut p = BufferPool::new(4096, 3);
        let _ = p.buf(3);
    }

    #[test]
    fn refill_changes_random_part_only() {
        let mut g = DataGen::new(1, 4096, 50);
        let mut pool = BufferPool::new(4096, 1);
        let b = pool.buf(0);
        g.fill(b);
        assert!(b[2048..].iter().all(|&x| x == 0));
        let before = b.to_vec();
        g.refill(b);
        assert_ne!(&before[..2048], &b[..2048]);
        assert!(b[2048..].iter().all(|&x| x == 0));
    }
}
