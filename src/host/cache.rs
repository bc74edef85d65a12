//! Page-cache control: sync and drop caches between workloads so each starts cold.

/// `sync(2)`: flush every filesystem.
pub fn sync_all() {
    rustix::fs::sync();
}

/// Sync, then drop the page cache, dentries and inodes (`echo 3 > /proc/sys/vm/drop_caches`).
///
/// Needs root; without it the error says so, and callers that can live with warm caches
/// (the `--dir` mode without root) record a warning instead of failing.
pub fn drop_caches() -> crate::Result<()> {
    sync_all();
    // Test hook: lets root-run tests see the unprivileged path (warm caches) without
    // dropping privileges for the whole test binary.
    let refused = std::env::var_os("FSBENCH_TEST_REFUSE_DROP_CACHES")
        .map(|_| Err(std::io::Error::from_raw_os_error(libc::EACCES)));
    refused
        .unwrap_or_else(|| std::fs::write("/proc/sys/vm/drop_caches", b"3\n"))
        .map_err(|e| {
            crate::Error::io(
                "cannot drop caches (run as root, or accept warm caches) via",
                "/proc/sys/vm/drop_caches",
                e,
            )
        })
}

/// Write every journaled metadata block of the filesystem holding `dir` to its home location,
/// so that a following [`drop_caches`] can evict it: freeze (`FIFREEZE`), then thaw at once.
///
/// Why: `sync` commits ext4's and XFS's journals but leaves the committed metadata pinned in
/// memory until the journal is checkpointed, and drop_caches cannot evict pinned buffers. A
/// "cold" walk right after an untar then reads almost nothing (measured: zero device reads on
/// ext4 after `tar -x; sync; drop_caches`). Freezing forces the checkpoint.
///
/// A frozen filesystem blocks every writer until thawed, and only SIGKILL can come between the
/// two calls; so this refuses the filesystem that holds `/` or fsbench's own binary and returns
/// `Ok(false)` there, and whenever the filesystem or the caller cannot freeze (tmpfs, no
/// CAP_SYS_ADMIN).
pub fn checkpoint(dir: &std::path::Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir)?.dev();
    let protected = ["/", "/proc/self/exe"]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .any(|m| m.dev() == dev);
    if protected {
        return Ok(false);
    }
    let f = std::fs::File::open(dir)?;
    Ok(crate::host::sys::freeze_thaw(&f))
}
