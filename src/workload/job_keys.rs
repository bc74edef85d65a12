//! An I/O job's plan-file keys (`rw`, `bs`, `iodepth`, `numjobs`, `split`, `rwmixread`,
//! `fsync`, `direct`, `ioengine`, `compress`, `runtime`, `ramp`, `size`, `file`, `verify`),
//! read by the kinds of the I/O family (`io`, `layout`, `memcap`: `builtin.rs`'s
//! `take_params`) as every kind reads its own keys, so the plan file's reader names no kind.
//!
//! Older plan files put these keys on workloads of any kind, which ignored them: a table of
//! another kind still may ([`drop_unused`]), and a table without `kind =` that gives `rw` is an
//! `io` job ([`implied_kind`]).

use super::api::Kind;
use super::spec::{IoParams, WorkloadSpec};
use crate::engine::{Backend, RwMode};
use crate::units::parse_duration;
use serde::de::DeserializeOwned;

/// Every key of an I/O job, as a plan file writes it, with its doc (the kinds of the I/O
/// family declare them as theirs, `Workload::keys`).
pub const KEYS: &[(&str, &str)] = &[
    ("rw", "read, write, randread, randwrite or randrw"),
    ("bs", "block size (\"4k\")"),
    ("iodepth", "requests in flight per job"),
    ("numjobs", "parallel jobs"),
    ("split", "each job on its own share of the file"),
    ("rwmixread", "percent reads of randrw"),
    ("fsync", "fsync after this many writes (0: never)"),
    ("direct", "O_DIRECT"),
    ("ioengine", "io_uring or psync"),
    ("compress", "percent of each block that compresses"),
    ("runtime", "measured time (\"30s\")"),
    ("ramp", "warm-up before it (\"5s\")"),
    ("size", "bytes of the file it works on (\"1G\")"),
    ("file", "a file of its own instead of the data file"),
    ("verify", "check what it reads back"),
];

/// The kind a `[[workload]]` table without `kind =` is, from its keys: `rw` makes it an `io`
/// job (before a catalog id's kind: `id = "pgbench-rw"` with `rw` is an I/O job so named).
pub fn implied_kind(t: &toml::Table) -> Option<Kind> {
    t.contains_key("rw").then_some(Kind::Io)
}

/// Take the I/O job's keys a table of a kind outside the I/O family carries (unused, as
/// they always were).
pub fn drop_unused(t: &mut toml::Table) {
    t.retain(|k, _| !KEYS.iter().any(|(key, _)| *key == k));
}

/// Take `key` out of `t` as a `T`; a value of the wrong type is a message naming the key.
fn take<T: DeserializeOwned>(t: &mut toml::Table, key: &str) -> Result<Option<T>, String> {
    t.remove(key)
        .map(|v| {
            let shown = v.to_string();
            v.try_into::<T>()
                .map_err(|e| format!("{key} = {shown}: {}", e.message()))
        })
        .transpose()
}

/// Take a size key (`bs = "4k"`, `size = "1G"`).
fn take_size(t: &mut toml::Table, key: &str) -> Result<Option<u64>, String> {
    t.remove(key)
        .map(|v| crate::units::toml_size(&v).map_err(|e| format!("{key}: {e}")))
        .transpose()
}

/// Take a duration key (`runtime = "30s"`).
fn take_duration(t: &mut toml::Table, key: &str) -> Result<Option<std::time::Duration>, String> {
    take::<String>(t, key)?
        .map(|s| parse_duration(&s).map_err(|e| format!("{key}: {e}")))
        .transpose()
}

/// Read the I/O job's keys out of `t` into `spec`'s job, over the job of `base` (the catalog
/// workload of the table's id: `id = "randread"` with a sweep keeps 4 jobs × 4K). `Err` is
/// the message, naming the key; the plan file's reader adds the file and the workload.
pub fn take_job(
    t: &mut toml::Table,
    base: Option<&WorkloadSpec>,
    spec: &mut WorkloadSpec,
) -> Result<(), String> {
    let base = base.and_then(WorkloadSpec::io_job);
    let rw: RwMode = take(t, "rw")?
        .or(base.as_ref().map(|b| b.rw))
        .ok_or("needs rw = \"read\"|\"write\"|\"randread\"|\"randwrite\"|\"randrw\"")?;
    let mut p = base.unwrap_or_else(|| IoParams::new(rw, 4096, 1, 1));
    p.rw = rw;
    if let Some(v) = take_size(t, "bs")? {
        p.bs = v;
    }
    // The keys named as their fields, each over the base job's value when given.
    macro_rules! over {
        ($($field:ident),*) => {
            $(if let Some(v) = take(t, stringify!($field))? {
                p.$field = v;
            })*
        };
    }
    over!(
        iodepth, numjobs, split, rwmixread, fsync, direct, compress, verify
    );
    if let Some(e) = take::<String>(t, "ioengine")? {
        p.backend = match e.as_str() {
            "io_uring" => Backend::IoUring,
            "psync" => Backend::Psync,
            other => {
                return Err(format!(
                    "ioengine '{other}' is unknown; use io_uring or psync"
                ));
            }
        };
    }
    p.runtime = take_duration(t, "runtime")?.or(p.runtime);
    p.ramp = take_duration(t, "ramp")?.or(p.ramp);
    if let Some(v) = take_size(t, "size")? {
        p.size = Some(v);
    }
    if let Some(v) = take(t, "file")? {
        p.file = Some(v);
    }
    if p.iodepth == 0 || p.numjobs == 0 || p.bs == 0 || p.rwmixread > 100 || p.compress > 100 {
        return Err(
            "iodepth, numjobs and bs must be > 0; rwmixread and compress are percentages".into(),
        );
    }
    spec.set_io_job(&p);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::plan::file::parse;

    /// The io kind reads its keys from an old plan file as the plan reader did; a bad value
    /// names the key, the workload and the file; the keys on a workload of another kind are
    /// accepted unused, as before.
    #[test]
    fn the_io_kinds_keys_read_as_before_and_errors_name_key_and_file() {
        let d = parse(
            "[[workload]]\nid = \"a\"\nrw = \"randrw\"\nbs = \"8k\"\niodepth = 16\nnumjobs = 2\nrwmixread = 60\nioengine = \"psync\"\nruntime = \"3s\"\nsize = \"1M\"\n\
             [[workload]]\nid = \"randread\"\niodepth = 32\n\
             [[workload]]\nid = \"s\"\nkind = \"sqlite\"\nruntime = \"9s\"\n",
            "--plan old.toml",
        )
        .unwrap();
        let p = d.workloads[0].io_job().expect("rw makes an io job");
        assert_eq!(d.workloads[0].kind, crate::workload::api::Kind::Io);
        assert_eq!((p.bs, p.iodepth, p.numjobs, p.rwmixread), (8192, 16, 2, 60));
        assert_eq!(p.backend, crate::engine::Backend::Psync);
        assert_eq!(p.runtime, Some(std::time::Duration::from_secs(3)));
        assert_eq!(p.size, Some(1 << 20));
        // The catalog's randread (4 jobs × 4K) under the new depth.
        let r = d.workloads[1].io_job().unwrap();
        assert_eq!((r.bs, r.numjobs, r.iodepth), (4096, 4, 32));
        assert!(d.workloads[2].io_job().is_none());
        for (table, says) in [
            ("rw = \"sideways\"", "rw = \"sideways\""),
            ("rw = \"read\"\niodepth = \"deep\"", "iodepth = \"deep\""),
            ("rw = \"read\"\nbs = \"huge\"", "bs:"),
            (
                "rw = \"read\"\nioengine = \"aio\"",
                "ioengine 'aio' is unknown",
            ),
            ("rw = \"read\"\nsplit = \"yes\"", "split = \"yes\""),
            ("kind = \"io\"", "needs rw = "),
        ] {
            let e = parse(
                &format!("[[workload]]\nid = \"x\"\n{table}\n"),
                "--plan old.toml",
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("old.toml") && e.contains("workload 'x'") && e.contains(says),
                "{table}: {e}"
            );
        }
    }
}
