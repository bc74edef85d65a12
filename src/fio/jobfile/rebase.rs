//! Moving a job into the filesystem under test: `directory=` and relative `filename=` land in
//! fsbench's data directory; devices and paths outside it are refused; sizes that cannot fit
//! are capped.
//!
//! Refusals happen while the plan is resolved, before any image, loop device or filesystem
//! exists, so a job file written for `/dev/nvme0n1` never reaches a disk.

use super::parse::{Job, Loc, Opt, size_bytes};
use crate::units::format_size;
use std::path::{Component, Path, PathBuf};

/// Options whose values are paths fio opens or lists.
const PATH_KEYS: &[&str] = &["filename", "filename_format", "opendir"];

/// Where a job's files go.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// fsbench's data directory on the mount (`directory=` is set when the job runs).
    DataDir,
    /// One existing file or device given with `fsbench io --filename`: every job uses it.
    File(PathBuf),
}

/// A refusal: where, and why.
pub type Refusal = (Loc, String);

/// The options of `job` with the last occurrence of each key kept (fio's "later wins"), so
/// a `filename=` in `[global]` that a section overrides is neither checked nor passed on.
pub fn effective(job: &Job) -> Vec<Opt> {
    let mut out: Vec<Opt> = Vec::new();
    for o in &job.opts {
        out.retain(|x| x.key != o.key);
        out.push(o.clone());
    }
    out
}

/// Rebase one job's options; returns them with notes, or the first refusal.
pub fn rebase(opts: Vec<Opt>, place: &Place) -> Result<(Vec<Opt>, Vec<String>), Refusal> {
    let mut notes = Vec::new();
    let mut out = Vec::with_capacity(opts.len());
    for o in opts {
        match o.key.as_str() {
            "directory" => {
                notes.push(format!(
                    "{}: directory={} replaced by fsbench's data directory",
                    o.at,
                    o.value.as_deref().unwrap_or("")
                ));
            }
            k if PATH_KEYS.contains(&k) => {
                if let Place::File(p) = place {
                    notes.push(format!(
                        "{}: {}={} replaced by {}",
                        o.at,
                        o.written,
                        o.value.as_deref().unwrap_or(""),
                        p.display()
                    ));
                    continue;
                }
                for part in split_names(o.value.as_deref().unwrap_or("")) {
                    check_name(&part, &o)?;
                }
                out.push(o);
            }
            _ => out.push(o),
        }
    }
    if let Place::File(p) = place {
        out.push(Opt {
            key: "filename".into(),
            written: "filename".into(),
            value: Some(escape(&p.to_string_lossy())),
            at: Loc {
                file: PathBuf::from("--filename"),
                line: 0,
            },
        });
    }
    Ok((out, notes))
}

/// fio separates several names with `:`; `\:` is a literal colon.
pub fn split_names(v: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                parts.last_mut().expect("non-empty").push(':');
            }
            ':' => parts.push(String::new()),
            c => parts.last_mut().expect("non-empty").push(c),
        }
    }
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

fn escape(name: &str) -> String {
    name.replace(':', "\\:")
}

/// A name is fine when it is relative and stays inside the data directory.
fn check_name(name: &str, o: &Opt) -> Result<(), Refusal> {
    let p = Path::new(name);
    let what = format!("{}={name}", o.written);
    if p.is_absolute() {
        let device = name.starts_with("/dev/") || is_device(p);
        let why = if device {
            format!(
                "{what} names a device; fsbench runs job files only inside the filesystem under test \
                 (remove filename= or make it a relative file name such as filename=test.dat)"
            )
        } else {
            format!(
                "{what} is a path outside the filesystem under test; use a relative name \
                 (it is placed in fsbench's data directory on each setup)"
            )
        };
        return Err((o.at.clone(), why));
    }
    let mut depth = 0i32;
    for c in p.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return Err((
                o.at.clone(),
                format!("{what} leaves fsbench's data directory ('..'); use a name inside it"),
            ));
        }
    }
    Ok(())
}

fn is_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p)
        .is_ok_and(|m| m.file_type().is_block_device() || m.file_type().is_char_device())
}

/// Bytes a job's files take: `filesize` or `size` per job, times `numjobs` when every clone
/// gets its own file (no `filename=`); `None` when the size is relative (`50%`) or absent.
pub fn footprint(opts: &[Opt], numjobs: u64) -> Option<u64> {
    let get = |k: &str| opts.iter().rev().find(|o| o.key == k);
    let size = get("size")
        .and_then(|o| o.value.as_deref())
        .and_then(size_bytes);
    let filesize = get("filesize")
        .and_then(|o| o.value.as_deref())
        .and_then(size_bytes);
    let nrfiles = get("nrfiles")
        .and_then(|o| o.value.as_deref())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1)
        .max(1);
    let per_job = match (filesize, size) {
        (Some(f), _) => f.saturating_mul(nrfiles),
        (None, Some(s)) => s,
        (None, None) => return None,
    };
    let shared = get("filename").is_some();
    Some(if shared {
        per_job
    } else {
        per_job.saturating_mul(numjobs)
    })
}

/// Scale `size=`/`filesize=` of `opts` by `factor` (< 1), down to whole MiB (at least 1 MiB);
/// returns a note per changed option.
pub fn scale_sizes(opts: &mut [Opt], factor: f64, total: u64, budget: u64) -> Vec<String> {
    const MIB: u64 = 1 << 20;
    let mut notes = Vec::new();
    // With filesize= the files' sizes are set by it and size= is the I/O amount, not space.
    let has_filesize = opts.iter().any(|o| o.key == "filesize");
    let target = if has_filesize { "filesize" } else { "size" };
    for o in opts.iter_mut().filter(|o| o.key == target) {
        let Some(bytes) = o.value.as_deref().and_then(size_bytes) else {
            continue;
        };
        let capped = (((bytes as f64 * factor) as u64) / MIB * MIB).max(MIB);
        if capped >= bytes {
            continue;
        }
        notes.push(format!(
            "{}: {}={} capped to {} so the file's data ({} in all) fits in the {} available",
            o.at,
            o.written,
            o.value.as_deref().unwrap_or(""),
            super::parse::fio_bytes(capped),
            format_size(total),
            format_size(budget)
        ));
        o.value = Some(super::parse::fio_bytes(capped));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::jobfile::parse::parse;

    fn job(text: &str) -> Job {
        parse(text, Path::new("r.fio"), &|_| None).unwrap().jobs()[0].clone()
    }

    #[test]
    fn directory_is_replaced_and_relative_names_kept() {
        let j = job("[global]\ndirectory=/mnt/ssd\nfilename=a\n[x]\nfilename=b:c\\:d\nrw=read\n");
        let (opts, notes) = rebase(effective(&j), &Place::DataDir).unwrap();
        assert!(opts.iter().all(|o| o.key != "directory"));
        let f: Vec<_> = opts.iter().filter(|o| o.key == "filename").collect();
        assert_eq!(
            f.len(),
            1,
            "the section's filename overrides the global one"
        );
        assert_eq!(f[0].value.as_deref(), Some("b:c\\:d"));
        assert_eq!(split_names("b:c\\:d"), ["b", "c:d"]);
        assert!(
            notes[0].starts_with("r.fio:2: directory=/mnt/ssd replaced"),
            "{notes:?}"
        );
    }

    #[test]
    fn devices_outside_paths_and_escapes_are_refused_with_the_line() {
        let (at, why) = rebase(
            effective(&job("[x]\nrw=read\nfilename=/dev/nvme0n1\n")),
            &Place::DataDir,
        )
        .unwrap_err();
        assert_eq!(at.line, 3);
        assert!(why.contains("names a device"), "{why}");
        let (_, why) = rebase(
            effective(&job("[x]\nfilename=/etc/passwd\n")),
            &Place::DataDir,
        )
        .unwrap_err();
        assert!(why.contains("outside the filesystem"), "{why}");
        let (_, why) = rebase(
            effective(&job("[x]\nfilename=ok:../../x\n")),
            &Place::DataDir,
        )
        .unwrap_err();
        assert!(why.contains("'..'"), "{why}");
        assert!(rebase(effective(&job("[x]\nfilename=a/../b\n")), &Place::DataDir).is_ok());
        let (opts, notes) = rebase(
            effective(&job("[x]\nfilename=/dev/sdb\n")),
            &Place::File("/mnt/t/f".into()),
        )
        .unwrap();
        assert_eq!(opts.last().unwrap().render(), "filename=/mnt/t/f");
        assert!(notes[0].contains("replaced by /mnt/t/f"));
    }

    #[test]
    fn footprint_counts_clones_unless_they_share_a_file() {
        let j = job("[x]\nsize=64m\nnumjobs=4\n");
        assert_eq!(footprint(&effective(&j), 4), Some(256 << 20));
        let j = job("[x]\nsize=64m\nnumjobs=4\nfilename=f\n");
        assert_eq!(footprint(&effective(&j), 4), Some(64 << 20));
        let j = job("[x]\nsize=64m\nfilesize=1m\nnrfiles=8\n");
        assert_eq!(footprint(&effective(&j), 1), Some(8 << 20));
        assert_eq!(footprint(&effective(&job("[x]\nsize=50%\n")), 1), None);
        let mut opts = effective(&job("[x]\nsize=64g\n"));
        let notes = scale_sizes(&mut opts, 0.001, 64 << 30, 64 << 20);
        assert_eq!(opts[0].value.as_deref(), Some("65m"));
        assert!(notes[0].contains("size=64g capped to 65m"), "{notes:?}");
        let mut opts = effective(&job("[x]\nsize=999g\nfilesize=128g\n"));
        let notes = scale_sizes(&mut opts, 0.01, 128 << 30, 1 << 30);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(
            opts[0].value.as_deref(),
            Some("999g"),
            "size= is the I/O amount here"
        );
        assert_eq!(opts[1].value.as_deref(), Some("1310m"));
    }
}
