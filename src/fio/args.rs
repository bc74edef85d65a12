//! Rendering a [`JobSpec`] as fio arguments with the same semantics as the native engine.
//!
//! Each flag is chosen so that fio does what the engine does, not merely something similar:
//! threads instead of processes (the engine runs one thread per job), `norandommap` (the engine
//! draws independent uniform offsets and may repeat them), per-I/O refilled incompressible write
//! buffers, and percentiles of `lat` (submission → completion) rather than fio's default `clat`.

use crate::engine::{Backend, JobSpec};
use crate::units::fio_size;
use std::time::Duration;

/// The percentiles the engine reports (p50/p90/p99/p99.9/p99.99), in fio's list syntax.
pub const PERCENTILE_LIST: &str = "50:90:99:99.9:99.99";

/// The bits of a seed fio accepts (`randseed` is parsed as a signed 64-bit number).
pub const FIO_SEED_MASK: u64 = i64::MAX as u64;

/// The fio arguments (without the leading `fio`) that run `spec`.
///
/// With `seed: None` this renders `--randrepeat=0` (a fresh sequence per run, as the engine does);
/// [`crate::fio::run`] instead picks the seed itself so the report can record it.
///
/// `verify` is deliberately not rendered: fio's verify adds a separate read-back phase that
/// would change what is measured. `device` is not needed: fio samples disk counters itself.
pub fn args(spec: &JobSpec) -> Vec<String> {
    let mut a = vec![
        "--name=fsbench".to_string(),
        format!(
            "--filename={}",
            escape_filename(&spec.filename.to_string_lossy())
        ),
    ];
    if let Some(size) = spec.size {
        a.push(format!("--size={}", fio_size(size)));
    }
    a.push(format!("--rw={}", spec.rw.as_str()));
    if spec.rw == crate::engine::RwMode::Randrw {
        a.push(format!("--rwmixread={}", spec.rwmixread));
    }
    a.push(format!("--bs={}", fio_size(spec.bs)));
    // psync has one I/O in flight whatever iodepth says; say so instead of letting fio warn.
    let depth = match spec.backend {
        Backend::IoUring => spec.iodepth.max(1),
        Backend::Psync => 1,
    };
    a.push(format!("--iodepth={depth}"));
    a.push(format!("--numjobs={}", spec.numjobs.max(1)));
    a.push("--thread".to_string());
    a.push(format!("--ioengine={}", spec.backend.as_str()));
    a.push(format!("--direct={}", u8::from(spec.direct)));
    if spec.offset_increment > 0 {
        a.push(format!(
            "--offset_increment={}",
            fio_size(spec.offset_increment)
        ));
    }
    if let Some(runtime) = spec.runtime {
        a.push("--time_based".to_string());
        a.push(format!("--runtime={}", fio_duration(runtime)));
    }
    if !spec.ramp.is_zero() {
        a.push(format!("--ramp_time={}", fio_duration(spec.ramp)));
    }
    if spec.fsync > 0 && spec.rw.writes() {
        a.push(format!("--fsync={}", spec.fsync));
    }
    match spec.seed {
        // fio parses randseed as a signed 64-bit number; the top bit cannot reach it.
        Some(seed) => a.push(format!("--randseed={}", seed & FIO_SEED_MASK)),
        None => a.push("--randrepeat=0".to_string()),
    }
    if spec.rw.writes() {
        a.push("--refill_buffers".to_string());
        if spec.buffer_compress_percentage > 0 {
            a.push(format!(
                "--buffer_compress_percentage={}",
                spec.buffer_compress_percentage
            ));
        }
    }
    if spec.rw.random() {
        a.push("--norandommap".to_string());
    }
    a.push("--group_reporting".to_string());
    a.push("--lat_percentiles=1".to_string());
    a.push(format!("--percentile_list={PERCENTILE_LIST}"));
    a.push("--output-format=json".to_string());
    a
}

/// `fio …` as one shell-quoted line, for `fsbench plan --emit-fio` and the docs.
pub fn command_line(spec: &JobSpec) -> String {
    let mut line = String::from("fio");
    for arg in args(spec) {
        line.push(' ');
        line.push_str(&shell_quote(&arg));
    }
    line
}

/// fio separates several filenames with `:`, so a colon inside one name must be escaped.
fn escape_filename(name: &str) -> String {
    name.replace(':', "\\:")
}

/// A duration in the largest fio unit that represents it exactly (fio accepts us/ms/s).
fn fio_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1_000) {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

/// POSIX shell quoting: bare when every byte is harmless, otherwise single quotes.
fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b'=' | b':' | b',' | b'+' | b'@' | b'%'
                )
        });
    if safe {
        s.to_string()
    } else if let Some((pre, post)) = s.split_once("$MNT")
        && shell_quote(pre) == pre
        && shell_quote(post) == post
    {
        // `fsbench plan` writes paths as $MNT/…: double quotes let the user's shell expand it.
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RwMode;
    use std::path::PathBuf;

    fn has(a: &[String], flag: &str) -> bool {
        a.iter().any(|x| x == flag)
    }

    fn value<'a>(a: &'a [String], key: &str) -> Option<&'a str> {
        let prefix = format!("--{key}=");
        a.iter().find_map(|x| x.strip_prefix(prefix.as_str()))
    }

    #[test]
    fn randread_io_uring_time_based() {
        let spec = JobSpec {
            filename: PathBuf::from("/dev/zram0"),
            rw: RwMode::Randread,
            bs: 4096,
            iodepth: 32,
            numjobs: 1,
            backend: Backend::IoUring,
            direct: true,
            runtime: Some(Duration::from_secs(5)),
            ramp: Duration::from_millis(1500),
            ..JobSpec::default()
        };
        let a = args(&spec);
        assert_eq!(value(&a, "filename"), Some("/dev/zram0"));
        assert_eq!(value(&a, "rw"), Some("randread"));
        assert_eq!(value(&a, "bs"), Some("4k"));
        assert_eq!(value(&a, "iodepth"), Some("32"));
        assert_eq!(value(&a, "ioengine"), Some("io_uring"));
        assert_eq!(value(&a, "direct"), Some("1"));
        assert_eq!(value(&a, "runtime"), Some("5s"));
        assert_eq!(value(&a, "ramp_time"), Some("1500ms"));
        assert_eq!(value(&a, "randrepeat"), Some("0"));
        assert_eq!(value(&a, "percentile_list"), Some("50:90:99:99.9:99.99"));
        assert_eq!(value(&a, "output-format"), Some("json"));
        for flag in [
            "--time_based",
            "--norandommap",
            "--group_reporting",
            "--thread",
        ] {
            assert!(has(&a, flag), "{flag} missing in {a:?}");
        }
        // Whole device, reads only: no size, no write-buffer or mix flags.
        for key in [
            "size",
            "rwmixread",
            "fsync",
            "buffer_compress_percentage",
            "randseed",
        ] {
            assert_eq!(value(&a, key), None, "{key} in {a:?}");
        }
        assert!(!has(&a, "--refill_buffers"));
    }

    #[test]
    fn size_based_randrw_with_seed_fsync_and_regions() {
        let spec = JobSpec {
            filename: PathBuf::from("/mnt/t/file"),
            rw: RwMode::Randrw,
            rwmixread: 70,
            bs: 16384,
            iodepth: 4,
            numjobs: 4,
            backend: Backend::Psync,
            size: Some(1 << 30),
            offset_increment: 1 << 30,
            fsync: 8,
            seed: Some(1234),
            ..JobSpec::default()
        };
        let a = args(&spec);
        assert_eq!(value(&a, "size"), Some("1g"));
        assert_eq!(value(&a, "offset_increment"), Some("1g"));
        assert_eq!(value(&a, "rwmixread"), Some("70"));
        assert_eq!(value(&a, "bs"), Some("16k"));
        assert_eq!(
            value(&a, "iodepth"),
            Some("1"),
            "psync is capped at depth 1"
        );
        assert_eq!(value(&a, "numjobs"), Some("4"));
        assert_eq!(value(&a, "fsync"), Some("8"));
        assert_eq!(value(&a, "randseed"), Some("1234"));
        assert_eq!(value(&a, "randrepeat"), None);
        let big = args(&JobSpec {
            seed: Some(u64::MAX),
            ..spec.clone()
        });
        assert_eq!(value(&big, "randseed"), Some(i64::MAX.to_string().as_str()));
        assert_eq!(value(&a, "direct"), Some("0"));
        assert!(has(&a, "--refill_buffers"));
        assert!(!has(&a, "--time_based"));
        assert_eq!(value(&a, "runtime"), None);
    }

    #[test]
    fn sequential_write_compressible() {
        let spec = JobSpec {
            filename: PathBuf::from("/tmp/a:b c"),
            rw: RwMode::Write,
            bs: 1 << 20,
            buffer_compress_percentage: 50,
            fsync: 1,
            ..JobSpec::default()
        };
        let a = args(&spec);
        assert_eq!(value(&a, "filename"), Some("/tmp/a\\:b c"));
        assert_eq!(value(&a, "buffer_compress_percentage"), Some("50"));
        assert_eq!(value(&a, "fsync"), Some("1"));
        assert!(!has(&a, "--norandommap"), "sequential jobs keep fio's map");
        let line = command_line(&spec);
        assert!(
            line.starts_with("fio --name=fsbench '--filename=/tmp/a\\:b c' "),
            "{line}"
        );
        assert!(line.contains(" --bs=1m "), "{line}");
    }

    #[test]
    fn fsync_is_not_rendered_for_reads_and_durations_keep_precision() {
        let spec = JobSpec {
            filename: PathBuf::from("f"),
            rw: RwMode::Read,
            fsync: 4,
            runtime: Some(Duration::from_micros(2500)),
            ..JobSpec::default()
        };
        let a = args(&spec);
        assert_eq!(value(&a, "fsync"), None);
        assert_eq!(value(&a, "runtime"), Some("2500us"));
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}

#[cfg(test)]
mod mnt_placeholder_tests {
    #[test]
    fn the_mountpoint_placeholder_stays_expandable() {
        assert_eq!(
            super::shell_quote("--filename=$MNT/fsbench/fsbench.dat"),
            "\"--filename=$MNT/fsbench/fsbench.dat\""
        );
        assert_eq!(super::shell_quote("a b"), "'a b'");
        assert_eq!(super::shell_quote("$HOME x"), "'$HOME x'");
    }
}
