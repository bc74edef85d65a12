//! The part of fio's vocabulary the native engine speaks, as a table: a job whose every
//! option is here runs natively under `--engine native`; any other option refuses the job by
//! name. Nothing is approximated: an option is listed only where the engine does exactly what
//! fio does (docs/fio-jobs.md renders this table).

use super::parse::{Opt, duration, size_bytes};
use crate::engine::{Backend, JobSpec, RwMode};
use std::path::Path;

/// How one fio option maps onto the native engine.
pub struct Mapping {
    /// fio's canonical option name.
    pub option: &'static str,
    /// What the native engine does with it.
    pub native: &'static str,
}

/// Every option the native engine accepts.
pub const NATIVE_OPTIONS: &[Mapping] = &[
    Mapping {
        option: "name, description",
        native: "labels only",
    },
    Mapping {
        option: "stonewall, new_group, group_reporting",
        native: "phases and reporting, handled by fsbench (each section is reported on its own, clones merged)",
    },
    Mapping {
        option: "directory",
        native: "replaced by fsbench's data directory",
    },
    Mapping {
        option: "filename",
        native: "one relative file in the data directory (default: the section name, as fio's jobname.0.0)",
    },
    Mapping {
        option: "rw",
        native: "read, write, randread, randwrite, randrw (no rw/readwrite mixes of sequential I/O, no trim)",
    },
    Mapping {
        option: "bs",
        native: "one block size for reads and writes (no `r,w` pair, no bsrange/bssplit)",
    },
    Mapping {
        option: "ioengine",
        native: "io_uring or psync (fio's default); nothing else",
    },
    Mapping {
        option: "iodepth",
        native: "I/Os in flight per job (io_uring; psync has one)",
    },
    Mapping {
        option: "numjobs",
        native: "threads; only with filename= (fio gives each clone its own file otherwise)",
    },
    Mapping {
        option: "thread",
        native: "the native engine always uses threads",
    },
    Mapping {
        option: "direct, buffered",
        native: "O_DIRECT on or off",
    },
    Mapping {
        option: "size",
        native: "bytes per job (absolute sizes only, not percentages)",
    },
    Mapping {
        option: "offset_increment",
        native: "job k starts at k × offset_increment",
    },
    Mapping {
        option: "runtime + time_based",
        native: "time-based run; runtime without time_based (stop at whichever comes first) is refused",
    },
    Mapping {
        option: "ramp_time",
        native: "warm-up before statistics",
    },
    Mapping {
        option: "rwmixread, rwmixwrite",
        native: "read share of randrw by I/O count",
    },
    Mapping {
        option: "fsync",
        native: "fsync after every N writes",
    },
    Mapping {
        option: "randseed",
        native: "seed of offsets and data",
    },
    Mapping {
        option: "randrepeat",
        native: "accepted: the seed is fsbench's per-step seed, recorded in the results",
    },
    Mapping {
        option: "norandommap",
        native: "required for random patterns: the engine draws independent offsets, fio's random map does not",
    },
    Mapping {
        option: "refill_buffers",
        native: "the engine refills every write buffer",
    },
    Mapping {
        option: "buffer_compress_percentage",
        native: "compressible share of each block",
    },
    Mapping {
        option: "lat_percentiles, clat_percentiles, percentile_list",
        native: "reporting only; fsbench reports p50/p99/p99.9 of submission→completion latency",
    },
];

/// Options the table accepts, as canonical names.
const ACCEPTED: &[&str] = &[
    "name",
    "description",
    "stonewall",
    "new_group",
    "group_reporting",
    "directory",
    "filename",
    "rw",
    "bs",
    "ioengine",
    "iodepth",
    "numjobs",
    "thread",
    "direct",
    "buffered",
    "size",
    "offset_increment",
    "runtime",
    "time_based",
    "ramp_time",
    "rwmixread",
    "rwmixwrite",
    "fsync",
    "randseed",
    "randrepeat",
    "norandommap",
    "refill_buffers",
    "buffer_compress_percentage",
    "lat_percentiles",
    "clat_percentiles",
    "percentile_list",
];

/// The native job for a section's (rebased, effective) options with files in `dir`, or why
/// it cannot run natively (naming the option).
pub fn to_spec(section: &str, opts: &[Opt], dir: &Path) -> Result<JobSpec, String> {
    let outside: Vec<&str> = opts
        .iter()
        .map(|o| o.key.as_str())
        .filter(|k| !ACCEPTED.contains(k))
        .collect();
    if !outside.is_empty() {
        return Err(format!(
            "option{} {} {} outside the native engine's vocabulary (docs/fio-jobs.md); run it with fio (drop --engine native)",
            if outside.len() == 1 { "" } else { "s" },
            outside.join(", "),
            if outside.len() == 1 { "is" } else { "are" }
        ));
    }
    let get = |k: &str| opts.iter().rev().find(|o| o.key == k);
    let val = |k: &str| get(k).and_then(|o| o.value.clone());
    let flag = |k: &str| {
        get(k).is_some_and(|o| !matches!(o.value.as_deref().map(str::trim), Some("0" | "false")))
    };
    let bad = |k: &str, why: &str| format!("{k}={}: {why}", val(k).unwrap_or_default());
    let rw = match val("rw").as_deref().map(str::trim).unwrap_or("read") {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "randread" => RwMode::Randread,
        "randwrite" => RwMode::Randwrite,
        "randrw" => RwMode::Randrw,
        _ => {
            return Err(bad(
                "rw",
                "the native engine runs read, write, randread, randwrite, randrw",
            ));
        }
    };
    let bs = match val("bs") {
        None => 4096,
        Some(v) => size_bytes(&v).ok_or_else(|| bad("bs", "one size for all directions only"))?,
    };
    let backend = match val("ioengine").as_deref().map(str::trim) {
        None | Some("psync") => Backend::Psync,
        Some("io_uring") => Backend::IoUring,
        Some(_) => return Err(bad("ioengine", "the native engine has io_uring and psync")),
    };
    let num = |k: &str, default: u32| -> Result<u32, String> {
        match val(k) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| bad(k, "not a number")),
        }
    };
    let numjobs = num("numjobs", 1)?.max(1);
    let filename = val("filename");
    if numjobs > 1 && filename.is_none() {
        return Err(
            "numjobs>1 without filename=: fio gives each clone its own file, the native engine shares one"
                .into(),
        );
    }
    if let Some(f) = &filename
        && super::rebase::split_names(f).len() > 1
    {
        return Err(bad("filename", "the native engine works on one file"));
    }
    if rw.random() && !flag("norandommap") {
        return Err(format!(
            "rw={}: without norandommap fio touches every block once; the native engine draws independent offsets (add norandommap)",
            rw.as_str()
        ));
    }
    let time_based = flag("time_based");
    let runtime = match val("runtime") {
        None => None,
        Some(v) => Some(duration(&v).ok_or_else(|| bad("runtime", "not a time"))?),
    };
    if runtime.is_some() != time_based {
        return Err(if time_based {
            "time_based without runtime= never ends".into()
        } else {
            "runtime= without time_based stops at whichever of size or runtime comes first; \
             the native engine is either time- or size-based (add time_based)"
                .into()
        });
    }
    let size = match val("size") {
        None => None,
        Some(v) => Some(size_bytes(&v).ok_or_else(|| bad("size", "absolute sizes only"))?),
    };
    let mut direct = flag("direct");
    if get("buffered").is_some() {
        direct = !flag("buffered");
    }
    let rwmixread = match (val("rwmixread"), val("rwmixwrite")) {
        (Some(r), _) => r
            .trim()
            .parse()
            .map_err(|_| bad("rwmixread", "not a percentage"))?,
        (None, Some(w)) => {
            100 - w
                .trim()
                .parse::<u8>()
                .map_err(|_| bad("rwmixwrite", "not a percentage"))?
                .min(100)
        }
        (None, None) => 50,
    };
    let name = filename.unwrap_or_else(|| format!("{section}.0.0"));
    Ok(JobSpec {
        filename: dir.join(name.replace("\\:", ":")),
        rw,
        bs,
        iodepth: num("iodepth", 1)?.max(1),
        numjobs,
        backend,
        direct,
        size,
        offset_increment: match val("offset_increment") {
            None => 0,
            Some(v) => {
                size_bytes(&v).ok_or_else(|| bad("offset_increment", "absolute sizes only"))?
            }
        },
        runtime,
        ramp: match val("ramp_time") {
            None => std::time::Duration::ZERO,
            Some(v) => duration(&v).ok_or_else(|| bad("ramp_time", "not a time"))?,
        },
        rwmixread,
        fsync: num("fsync", 0)?,
        seed: match val("randseed") {
            None => None,
            Some(v) => Some(
                v.trim()
                    .parse()
                    .map_err(|_| bad("randseed", "not a number"))?,
            ),
        },
        buffer_compress_percentage: num("buffer_compress_percentage", 0)?.min(100) as u8,
        verify: false,
        device: None,
        steady: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::jobfile::parse::parse;
    use crate::fio::jobfile::rebase::effective;

    fn opts(text: &str) -> Vec<Opt> {
        effective(&parse(text, Path::new("n.fio"), &|_| None).unwrap().jobs()[0])
    }

    #[test]
    fn a_job_inside_the_vocabulary_maps_exactly() {
        let s = to_spec(
            "rr",
            &opts("[rr]\nrw=randread\nblocksize=16k\nioengine=io_uring\niodepth=8\ndirect=1\nsize=64m\nnorandommap\ntime_based\nruntime=3s\nramp_time=1\n"),
            Path::new("/d"),
        )
        .unwrap();
        assert_eq!(s.filename, Path::new("/d/rr.0.0"));
        assert_eq!(
            (s.rw, s.bs, s.iodepth, s.backend),
            (RwMode::Randread, 16384, 8, Backend::IoUring)
        );
        assert!(s.direct);
        assert_eq!(s.size, Some(64 << 20));
        assert_eq!(s.runtime, Some(std::time::Duration::from_secs(3)));
        assert_eq!(s.ramp, std::time::Duration::from_secs(1));
        let s = to_spec(
            "m",
            &opts("[m]\nrw=randrw\nrwmixwrite=30\nnorandommap\nsize=1m\n"),
            Path::new("/d"),
        )
        .unwrap();
        assert_eq!(
            (s.rwmixread, s.backend, s.runtime),
            (70, Backend::Psync, None)
        );
    }

    #[test]
    fn options_outside_are_refused_by_name() {
        let e = to_spec(
            "x",
            &opts("[x]\nrw=read\nbssplit=4k/50:8k/50\nrate_iops=10\n"),
            Path::new("/d"),
        )
        .unwrap_err();
        assert!(e.contains("bssplit, rate_iops are outside"), "{e}");
        let e = to_spec("x", &opts("[x]\nioengine=libaio\n"), Path::new("/d")).unwrap_err();
        assert!(e.contains("ioengine=libaio"), "{e}");
        let e = to_spec("x", &opts("[x]\nrw=randread\nsize=1m\n"), Path::new("/d")).unwrap_err();
        assert!(e.contains("norandommap"), "{e}");
        let e = to_spec("x", &opts("[x]\nsize=1m\nruntime=5\n"), Path::new("/d")).unwrap_err();
        assert!(e.contains("time_based"), "{e}");
        let e = to_spec("x", &opts("[x]\nsize=1m\nnumjobs=2\n"), Path::new("/d")).unwrap_err();
        assert!(e.contains("own file"), "{e}");
    }

    #[test]
    fn the_docs_show_the_table() {
        let doc = include_str!("../../../docs/fio-jobs.md");
        for m in NATIVE_OPTIONS {
            let row = format!("| `{}` | {} |", m.option, m.native);
            assert!(doc.contains(&row), "docs/fio-jobs.md lacks the row {row}");
        }
    }

    #[test]
    fn the_table_and_the_accepted_list_agree() {
        let in_table: Vec<&str> = NATIVE_OPTIONS
            .iter()
            .flat_map(|m| m.option.split([',', '+']).map(str::trim))
            .collect();
        for k in ACCEPTED {
            assert!(in_table.contains(k), "{k} accepted but not documented");
        }
        for k in &in_table {
            assert!(ACCEPTED.contains(k), "{k} documented but not accepted");
        }
    }
}
