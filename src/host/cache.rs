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
