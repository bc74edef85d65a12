//! The job-file side of the table: a fio job file's `iodepth=`, `numjobs=`, `bs=` and
//! `rwmixread=` get the same ranges as fsbench's own flags and plan-file keys, and a refusal
//! names `file:line` and the section. Values fio writes in forms the table has no row for
//! (`bs=4k-16k` ranges are checked end by end, `bs=4k,8k` part by part; anything unreadable
//! is left to fio, which says what it expected).

use super::{BS, IODEPTH, NUMJOBS, Param, RWMIXREAD};
use crate::Error;
use crate::fio::jobfile::parse::JobFile;
use crate::fio::jobfile::rebase::effective;

/// The rows job-file options are checked against, by fio's canonical option name.
const ROWS: &[(&str, &Param)] = &[
    ("iodepth", &IODEPTH),
    ("numjobs", &NUMJOBS),
    ("bs", &BS),
    ("rwmixread", &RWMIXREAD),
];

/// Check every job section of `file` (after `[global]` inheritance); exit 2 on the first
/// value out of range.
pub fn check(file: &JobFile) -> crate::Result<()> {
    for job in file.jobs() {
        for opt in effective(&job) {
            let Some((_, row)) = ROWS.iter().find(|(k, _)| *k == opt.key) else {
                continue;
            };
            let Some(value) = opt.value.as_deref() else {
                continue;
            };
            for part in value.split([',', '-', ':']).filter(|p| !p.is_empty()) {
                let Ok(n) = crate::units::parse_size(part) else {
                    continue;
                };
                if let Err(why) = row.check_as(&format!("{}={part}", opt.written), n as f64) {
                    return Err(Error::invalid(
                        "--fio-job",
                        format!("{}: [{}] {why}", opt.at, job.name),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    fn check(text: &str) -> Result<(), String> {
        let f = crate::fio::jobfile::parse::parse(text, std::path::Path::new("j.fio"), &|_| None)
            .unwrap();
        super::check(&f).map_err(|e| e.to_string())
    }

    #[test]
    fn job_file_values_get_the_flags_ranges_with_file_and_line() {
        let e = check("[global]\niodepth=100000\n[rr]\nrw=randread\n").unwrap_err();
        assert!(
            e.starts_with("--fio-job: j.fio:2: [rr] iodepth=100000 is out of range"),
            "{e}"
        );
        assert!(e.contains("32,768"), "{e}");
        let e = check("[a]\nrw=read\nblocksize=1000\n").unwrap_err();
        assert!(
            e.contains("j.fio:3: [a] blocksize=1000") && e.contains("512"),
            "{e}"
        );
        let e = check("[a]\nrw=randrw\nbs=4k,8k\nnumjobs=0\n").unwrap_err();
        assert!(e.contains("j.fio:4: [a] numjobs=0"), "{e}");
        check("[a]\nrw=randrw\nbs=4k-16k\niodepth=32\nnumjobs=4\nrwmixread=70\n").unwrap();
        // What the table cannot read is fio's to judge.
        check("[a]\nrw=read\niodepth=lots\n").unwrap();
    }
}
