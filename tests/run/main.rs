//! End-to-end tests of `fsbench run` / `fsbench plan` through the real binary, one module per
//! concern: [`refusals`] (bad input and unsafe targets, before anything is touched),
//! [`full_run`] (whole runs on loop images: four filesystems, the vps and nvme profiles, a full
//! filesystem), [`interrupt`] (Ctrl-C releases everything, `--resume` completes) and
//! [`device`] (`--device`: consent on a terminal or `--yes`, preconditioning).
//!
//! Privileged tests (loop devices, mkfs, mounts) run as root when the tools exist; otherwise
//! they print `skipped: <reason>`, or fail under `FSBENCH_REQUIRE_PRIVILEGED=1` ([`common`]).
//! Every test uses its own scratch directory, so checking for
//! leftovers (loop devices backed by it, mounts under it or under fsbench's mount root for the
//! child's pid, new fsbench pools) never confuses our resources with anyone else's.

#[path = "../common/mod.rs"]
mod common;

mod device;
mod full_run;
mod interrupt;
mod refusals;

use common::{assert_refused, bin, load_results, serial, sh, sh_ok, stderr, zfs_pools};
use std::path::Path;

/// Root, loop devices and `tools`, or skip (fail under FSBENCH_REQUIRE_PRIVILEGED=1).
fn privileged(name: &str, tools: &[&str]) -> bool {
    common::privileged_loop(&format!("run::{name}"), tools)
}

/// Loop devices backed by files under `scratch`, mounts of ours, new fsbench pools.
fn leftovers(scratch: &Path, child_pid: u32, pools_before: &[String]) -> Vec<String> {
    let mut found = common::leftovers(scratch, Some(child_pid));
    found.extend(common::new_fsbench_pools(pools_before));
    found
}

/// Every (setup, workload, round) of the standard suite has at least one sample.
fn assert_complete(r: &serde_json::Value, setups: &[&str], rounds: u32) {
    let ids = [
        "mkfs",
        "usable-space",
        "layout",
        "seqread",
        "seqwrite",
        "randread",
        "randwrite",
        "randrw70",
        "fsync-write",
        "untar",
        "find-cold",
        "rm-tree",
    ];
    let samples = r["samples"].as_array().expect("samples");
    let mut missing = Vec::new();
    for s in setups {
        for w in ids {
            for round in 1..=rounds {
                let hit = samples.iter().any(|x| {
                    x["setup"] == *s && x["workload"] == w && x["round"] == u64::from(round)
                });
                if !hit {
                    missing.push(format!("{s}/{w}/round {round}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "missing samples: {missing:?}\nfailures: {}",
        r["failures"]
    );
}

/// PIDs of running zfs-fuse daemons.
fn zfs_fuse_pids() -> Vec<String> {
    let o = sh(&["pgrep", "-x", "zfs-fuse"]);
    let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn zfs_is_fuse() -> bool {
    !Path::new("/sys/module/zfs").exists()
}
