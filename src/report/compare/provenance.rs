//! What differs between the two results besides the numbers: when they ran (interleaved in one
//! run, or one after the other), the host and target, and each matched setup's configuration.
//! From that `compare` knows whether drift can be told apart from the change, and which setups
//! did not change and can serve as a control.

use crate::results::{Results, SetupInfo};
use serde::Serialize;
use std::collections::BTreeMap;

/// When A and B ran relative to each other.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Timing {
    /// Both come from one run (same start time): their rounds were interleaved, so host drift
    /// hit both alike (an odd/even split, or one file filtered two ways).
    SameRun {
        /// The run's start (RFC 3339).
        started_at: String,
    },
    /// Two different runs.
    Separate {
        /// Seconds from the end of the earlier run to the start of the later one (0 when they
        /// overlapped).
        gap_s: f64,
        /// Seconds between the two start times.
        start_to_start_s: f64,
        /// Whether B started after A.
        b_after_a: bool,
    },
    /// A start time is missing or unreadable: cannot tell.
    Unknown,
}

fn parse_time(s: &str) -> Option<std::time::SystemTime> {
    humantime::parse_rfc3339(s)
        .or_else(|_| humantime::parse_rfc3339_weak(s))
        .ok()
}

/// When A and B ran relative to each other.
pub fn timing(a: &Results, b: &Results) -> Timing {
    if !a.started_at.is_empty() && a.started_at == b.started_at {
        return Timing::SameRun {
            started_at: a.started_at.clone(),
        };
    }
    let (Some(sa), Some(sb)) = (parse_time(&a.started_at), parse_time(&b.started_at)) else {
        return Timing::Unknown;
    };
    // A partial run has no end time: its start is the best bound there is.
    let fa = parse_time(&a.finished_at).unwrap_or(sa);
    let fb = parse_time(&b.finished_at).unwrap_or(sb);
    let secs = |x: std::time::SystemTime, y: std::time::SystemTime| match x.duration_since(y) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    };
    let b_after_a = sb >= sa;
    let gap = if b_after_a {
        secs(sb, fa)
    } else {
        secs(sa, fb)
    };
    Timing::Separate {
        gap_s: gap.max(0.0),
        start_to_start_s: secs(sb, sa).abs(),
        b_after_a,
    }
}

/// Target `extra` keys that name this attachment rather than the target (a loop device is
/// attached afresh, under a new number, for every run).
const VOLATILE_TARGET_EXTRA: [&str; 4] = ["loop_device", "kernel_name", "device_number", "attach"];

/// Host `extra` keys that differ between runs by design.
const VOLATILE_HOST_EXTRA: [&str; 2] = ["fsbench_seed", "plan"];

fn diff<T: PartialEq + std::fmt::Debug>(out: &mut Vec<String>, what: &str, a: &T, b: &T) {
    if a != b {
        out.push(format!("{what} {a:?} vs {b:?}"));
    }
}

fn diff_maps(
    out: &mut Vec<String>,
    what: &str,
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    skip: impl Fn(&str) -> bool,
) {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys.into_iter().filter(|k| !skip(k)) {
        let (va, vb) = (a.get(k), b.get(k));
        if va != vb {
            let show = |v: Option<&String>| v.map_or("(absent)".to_string(), |v| format!("{v:?}"));
            out.push(format!("{what}.{k} {} vs {}", show(va), show(vb)));
        }
    }
}

/// Differences of the host, the target and tools that concern every setup (kernel, CPU, RAM,
/// target model and size, fio, fsbench itself). Any of them means no setup is "unchanged".
pub fn host_differences(a: &Results, b: &Results) -> Vec<String> {
    let mut d = Vec::new();
    let (ha, hb) = (&a.host, &b.host);
    diff(&mut d, "fsbench", &a.fsbench_version, &b.fsbench_version);
    diff(&mut d, "kernel", &ha.kernel, &hb.kernel);
    diff(&mut d, "cpu", &ha.cpu, &hb.cpu);
    diff(&mut d, "cpus", &ha.cpus, &hb.cpus);
    diff(&mut d, "ram_bytes", &ha.ram_bytes, &hb.ram_bytes);
    diff(&mut d, "hostname", &ha.hostname, &hb.hostname);
    diff_maps(&mut d, "host", &ha.extra, &hb.extra, |k| {
        VOLATILE_HOST_EXTRA.contains(&k)
    });
    // A tool no driver declares (fio…) concerns every setup.
    let host_tool = |k: &str| crate::fs::provenance::owner(k).is_none();
    let only = |m: &BTreeMap<String, String>| {
        m.iter()
            .filter(|(k, _)| host_tool(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    diff_maps(
        &mut d,
        "tool",
        &only(&ha.tool_versions),
        &only(&hb.tool_versions),
        |_| false,
    );
    let (ta, tb) = (&a.target, &b.target);
    diff(&mut d, "target kind", &ta.kind, &tb.kind);
    // An image is a fresh temporary file per run; a device or directory is named by its path.
    if ta.kind != "image" {
        diff(&mut d, "target path", &ta.path, &tb.path);
    }
    diff(&mut d, "target size", &ta.size_bytes, &tb.size_bytes);
    diff(&mut d, "target model", &ta.model, &tb.model);
    diff(&mut d, "target rotational", &ta.rotational, &tb.rotational);
    diff(&mut d, "target scheduler", &ta.scheduler, &tb.scheduler);
    diff(
        &mut d,
        "target logical block size",
        &ta.logical_block_size,
        &tb.logical_block_size,
    );
    diff_maps(&mut d, "target", &ta.extra, &tb.extra, |k| {
        VOLATILE_TARGET_EXTRA.contains(&k)
    });
    d
}

/// mkfs arguments with the device path replaced: the loop device differs from run to run.
fn mkfs_args(s: &SetupInfo, device: &str) -> Vec<String> {
    s.mkfs_args
        .iter()
        .map(|x| {
            if x.starts_with("/dev/") || (!device.is_empty() && x == device) {
                "DEVICE".to_string()
            } else {
                x.clone()
            }
        })
        .collect()
}

/// Differences in one setup's configuration between A and B (filesystem, implementation,
/// variant options, mkfs arguments, mount options, versions of its own tools). Filesystem
/// `properties` are not compared: they follow from these, and some record state (ext4's
/// `needs_recovery`).
pub fn setup_differences(a: &Results, b: &Results, name: &str) -> Vec<String> {
    let (Some(sa), Some(sb)) = (
        a.setups.iter().find(|s| s.name == name),
        b.setups.iter().find(|s| s.name == name),
    ) else {
        return vec!["setup description missing from one file".into()];
    };
    let mut d = Vec::new();
    diff(&mut d, "fs", &sa.fs, &sb.fs);
    diff(
        &mut d,
        "implementation",
        &sa.implementation,
        &sb.implementation,
    );
    diff_maps(&mut d, "option", &sa.options, &sb.options, |_| false);
    diff(
        &mut d,
        "mkfs",
        &mkfs_args(sa, &a.target.path),
        &mkfs_args(sb, &b.target.path),
    );
    diff(&mut d, "mount options", &sa.mount_opts, &sb.mount_opts);
    let own = |m: &BTreeMap<String, String>| {
        m.iter()
            .filter(|(k, _)| crate::fs::provenance::owner(k) == Some(sa.fs.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    diff_maps(
        &mut d,
        "tool",
        &own(&a.host.tool_versions),
        &own(&b.host.tool_versions),
        |_| false,
    );
    d
}

/// "17 min", "2 h 05 min", "3 d 4 h", "40 s".
pub fn human_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..=119 => format!("{s} s"),
        120..=3599 => format!("{} min", (s + 30) / 60),
        3600..=86_399 => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
        _ => format!("{} d {} h", s / 86_400, (s % 86_400) / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start: &str, end: &str) -> Results {
        Results {
            started_at: start.into(),
            finished_at: end.into(),
            ..Results::new()
        }
    }

    #[test]
    fn timing_of_runs() {
        let a = run("2026-12-01T09:02:28Z", "2026-12-01T09:08:00Z");
        let b = run("2026-12-01T09:25:00Z", "2026-12-01T09:31:00Z");
        match timing(&a, &b) {
            Timing::Separate {
                gap_s, b_after_a, ..
            } => {
                assert!(b_after_a);
                assert_eq!(gap_s, 17.0 * 60.0);
            }
            t => panic!("{t:?}"),
        }
        assert!(
            matches!(timing(&b, &a), Timing::Separate { b_after_a: false, gap_s, .. } if gap_s == 1020.0)
        );
        assert!(matches!(timing(&a, &a), Timing::SameRun { .. }));
        assert_eq!(timing(&run("", ""), &a), Timing::Unknown);
        assert_eq!(human_duration(1020.0), "17 min");
        assert_eq!(human_duration(7500.0), "2 h 05 min");
    }

    #[test]
    fn loop_device_numbers_are_not_a_change() {
        let mut a = Results::new();
        a.target.kind = "image".into();
        a.target.path = "/var/tmp/fsbench-1-0.img".into();
        a.target
            .extra
            .insert("loop_device".into(), "/dev/loop2".into());
        a.setups.push(SetupInfo {
            name: "ext4".into(),
            fs: "ext4".into(),
            mkfs_args: vec!["mkfs.ext4".into(), "-F".into(), "/dev/loop2".into()],
            mount_opts: "rw,relatime".into(),
            ..Default::default()
        });
        let mut b = a.clone();
        b.target.path = "/var/tmp/fsbench-2-0.img".into();
        b.target
            .extra
            .insert("loop_device".into(), "/dev/loop5".into());
        b.setups[0].mkfs_args[2] = "/dev/loop5".into();
        assert!(host_differences(&a, &b).is_empty());
        assert!(setup_differences(&a, &b, "ext4").is_empty());
        b.setups[0].mount_opts = "rw,relatime,nobarrier".into();
        b.host
            .tool_versions
            .insert("mkfs.ext4".into(), "1.48".into());
        let d = setup_differences(&a, &b, "ext4");
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(
            host_differences(&a, &b).is_empty(),
            "mkfs.ext4 concerns ext4 only"
        );
        b.host.kernel = "6.19".into();
        assert_eq!(host_differences(&a, &b).len(), 1);
    }
}
