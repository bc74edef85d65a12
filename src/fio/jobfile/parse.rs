//! Reading fio job files as fio does: sections, `[global]` inheritance, comments, `include`,
//! `${VAR}` from the environment, option aliases.
//!
//! The rules follow fio's own ini parser (`init.c`): a line whose first non-blank character is
//! `;` or `#` is a comment, and so is everything after a `;` or `#` inside a line; options are
//! `key` or `key=value` (blanks around both trimmed); `include FILE` inside a section reads
//! options from FILE (relative to the including file's directory, else the current one), which
//! may not open sections of its own; a `[global]` section adds to the options of every job
//! section after it. Values are kept as written; only sizes and times that fsbench itself needs
//! (capping, the native engine) are read by [`size_bytes`] and [`duration`].

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where something was written: file and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    /// The job file (or included file) as it was named.
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// One option as written, with its canonical name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// fio's canonical name (`blocksize` → `bs`, `timeout` → `runtime`).
    pub key: String,
    /// The name as written (kept when the option is passed on).
    pub written: String,
    /// The value after `${VAR}` expansion; `None` for a bare `key`.
    pub value: Option<String>,
    /// Where it was written.
    pub at: Loc,
}

impl Opt {
    /// `key=value` or `key`, as fio reads it.
    pub fn render(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.written),
            None => self.written.clone(),
        }
    }
}

/// A section as written (`[global]` included), options in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets.
    pub name: String,
    /// Where the `[name]` line is.
    pub at: Loc,
    /// Its own options (and those of its includes), in order.
    pub opts: Vec<Opt>,
}

impl Section {
    /// fio treats every section whose name starts with `global` as global.
    pub fn is_global(&self) -> bool {
        self.name.starts_with("global")
    }
}

/// A job section with the `[global]` options in force where it stands prepended to its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Section name.
    pub name: String,
    /// Where the section starts.
    pub at: Loc,
    /// Global options first, then the section's own; later ones win, as in fio.
    pub opts: Vec<Opt>,
}

impl Job {
    /// The last occurrence of `key` (canonical name).
    pub fn get(&self, key: &str) -> Option<&Opt> {
        self.opts.iter().rev().find(|o| o.key == key)
    }

    /// The value of `key`, when given with one.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(|o| o.value.as_deref())
    }

    /// A boolean option: a bare `key` or any value but `0`/`false` is on.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key).is_some_and(|o| match o.value.as_deref() {
            None => true,
            Some(v) => !matches!(v.trim(), "0" | "false"),
        })
    }

    /// `numjobs` (1 when absent or unreadable).
    pub fn numjobs(&self) -> u64 {
        self.value("numjobs")
            .and_then(|v| v.trim().parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(1)
    }
}

/// A parsed job file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFile {
    /// The file as named on the command line or in the plan.
    pub path: PathBuf,
    /// Every section in order, globals included.
    pub sections: Vec<Section>,
}

impl JobFile {
    /// The job sections with the globals in force where each stands.
    pub fn jobs(&self) -> Vec<Job> {
        let mut globals: Vec<Opt> = Vec::new();
        let mut jobs = Vec::new();
        for s in &self.sections {
            if s.is_global() {
                globals.extend(s.opts.iter().cloned());
            } else {
                let mut opts = globals.clone();
                opts.extend(s.opts.iter().cloned());
                jobs.push(Job {
                    name: s.name.clone(),
                    at: s.at.clone(),
                    opts,
                });
            }
        }
        jobs
    }
}

/// fio's option aliases: (alias, canonical name), from fio's `options.c`.
pub const ALIASES: &[(&str, &str)] = &[
    ("readwrite", "rw"),
    ("blocksize", "bs"),
    ("blockalign", "ba"),
    ("blocksize_range", "bsrange"),
    ("blocksize_unaligned", "bs_unaligned"),
    ("timeout", "runtime"),
    ("io_limit", "io_size"),
    ("fill_fs", "fill_device"),
    ("fileoffset", "offset"),
    ("nr_files", "nrfiles"),
    ("allrandrepeat", "randrepeat"),
    ("iodepth_batch_submit", "iodepth_batch"),
    ("iodepth_batch_complete", "iodepth_batch_complete_min"),
    ("iomem", "mem"),
    ("mem_align", "iomem_align"),
    ("ratemin", "rate_min"),
    ("ratecycle", "rate_cycle"),
    ("wait_for_previous", "stonewall"),
    ("log_max_value", "log_window_value"),
    ("log_unix_epoch", "log_alternate_epoch"),
    ("disable_bw", "disable_bw_measurement"),
    ("ss", "steadystate"),
    ("ss_dur", "steadystate_duration"),
    ("ss_ramp", "steadystate_ramp_time"),
    ("ss_interval", "steadystate_check_interval"),
];

/// fio's canonical name of an option as written.
pub fn canonical(key: &str) -> String {
    let k = key.trim();
    ALIASES
        .iter()
        .find(|(a, _)| a.eq_ignore_ascii_case(k))
        .map_or_else(|| k.to_ascii_lowercase(), |(_, c)| (*c).to_string())
}

/// A job file that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where (the file alone when it cannot be read: line 0).
    pub at: Loc,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.at.line == 0 {
            write!(f, "{}: {}", self.at.file.display(), self.message)
        } else {
            write!(f, "{}: {}", self.at, self.message)
        }
    }
}

/// Includes nested deeper than this are taken for a cycle.
const MAX_INCLUDE_DEPTH: usize = 8;

/// Largest job file (or included file) read: fio job files are a few KiB, and `include
/// /dev/zero` must not read forever.
pub const MAX_JOB_FILE_BYTES: u64 = 1 << 20;

/// Most options one section may hold, includes expanded (includes may repeat a file).
const MAX_SECTION_OPTS: usize = 10_000;

/// Most options all job sections hold once the globals in force are copied into each
/// ([`JobFile::jobs`]): bounds that copy for a file of many sections after many globals.
const MAX_EXPANDED_OPTS: usize = 100_000;

/// Read at most [`MAX_JOB_FILE_BYTES`] of `path` as text.
fn read_limited(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(MAX_JOB_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB, which is not a job file",
            MAX_JOB_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// Read and parse `path`, with `env` answering `${VAR}`.
pub fn read(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<JobFile, SyntaxError> {
    let text = read_limited(path).map_err(|e| SyntaxError {
        at: Loc {
            file: path.to_path_buf(),
            line: 0,
        },
        message: format!("cannot read the job file: {e}"),
    })?;
    parse(&text, path, env)
}

/// Parse job-file text; `path` names it in errors and anchors relative includes.
pub fn parse(
    text: &str,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, SyntaxError> {
    if text.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err(SyntaxError {
            at: Loc {
                file: path.to_path_buf(),
                line: 0,
            },
            message: format!(
                "larger than {} MiB, which is not a job file",
                MAX_JOB_FILE_BYTES >> 20
            ),
        });
    }
    let mut sections: Vec<Section> = Vec::new();
    let (mut globals, mut expanded) = (0usize, 0usize);
    for (i, raw) in text.lines().enumerate() {
        let at = Loc {
            file: path.to_path_buf(),
            line: i + 1,
        };
        let Some(line) = content(raw) else { continue };
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.strip_suffix(']').ok_or_else(|| SyntaxError {
                at: at.clone(),
                message: format!("section header '{line}' has no closing ']'"),
            })?;
            let name = name.trim();
            if name.is_empty() {
                return Err(SyntaxError {
                    at,
                    message: "empty section name '[]'; name the job, e.g. [randread]".into(),
                });
            }
            sections.push(Section {
                name: name.to_string(),
                at,
                opts: Vec::new(),
            });
            continue;
        }
        let Some(section) = sections.last_mut() else {
            return Err(SyntaxError {
                at,
                message: format!(
                    "option '{line}' outside of a [] job section; start with [global] or [jobname]"
                ),
            });
        };
        option_line(line, &at, env, 0, &mut section.opts)?;
    }
    for s in &sections {
        if s.is_global() {
            globals += s.opts.len();
        } else {
            expanded += globals + s.opts.len();
        }
        if expanded > MAX_EXPANDED_OPTS {
            return Err(SyntaxError {
                at: s.at.clone(),
                message: format!(
                    "the job sections with their globals hold more than {MAX_EXPANDED_OPTS} \
                     options; this is not a job file fio or fsbench would run"
                ),
            });
        }
    }
    Ok(JobFile {
        path: path.to_path_buf(),
        sections,
    })
}

/// The meaningful part of a line: blanks trimmed, comments cut; `None` when nothing is left.
fn content(raw: &str) -> Option<&str> {
    let cut = raw.find([';', '#']).unwrap_or(raw.len());
    let line = raw[..cut].trim();
    (!line.is_empty()).then_some(line)
}

/// One line inside a section: an option or an `include`.
fn option_line(
    line: &str,
    at: &Loc,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    out: &mut Vec<Opt>,
) -> Result<(), SyntaxError> {
    let err = |message: String| SyntaxError {
        at: at.clone(),
        message,
    };
    if out.len() >= MAX_SECTION_OPTS {
        return Err(err(format!(
            "the section holds more than {MAX_SECTION_OPTS} options (includes counted)"
        )));
    }
    if let Some(rest) = line.strip_prefix("include")
        && (rest.is_empty() || rest.starts_with([' ', '\t']))
    {
        let name = rest.trim();
        if name.is_empty() {
            return Err(err("include needs a file name: include other.fio".into()));
        }
        return include(&expand(name, at, env)?, at, env, depth, out);
    }
    let (key, value) = match line.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim())),
        None => (line, None),
    };
    if key.is_empty() {
        return Err(err(format!("'{line}' has no option name before '='")));
    }
    if key.contains(char::is_whitespace) {
        return Err(err(format!(
            "'{key}' is not an option name (names have no blanks); write key=value"
        )));
    }
    out.push(Opt {
        key: canonical(key),
        written: key.to_string(),
        value: value.map(|v| expand(v, at, env)).transpose()?,
        at: at.clone(),
    });
    Ok(())
}

/// Read the options of an included file into the current section.
fn include(
    name: &str,
    at: &Loc,
    env: &dyn Fn(&str) -> Option<String>,
    depth: usize,
    out: &mut Vec<Opt>,
) -> Result<(), SyntaxError> {
    let err = |message: String| SyntaxError {
        at: at.clone(),
        message,
    };
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(err(format!(
            "include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH} (a cycle?)"
        )));
    }
    let given = Path::new(name);
    let beside = at.file.parent().map(|d| d.join(given));
    let path = match beside {
        Some(p) if given.is_relative() && p.exists() => p,
        _ => given.to_path_buf(),
    };
    let text = read_limited(&path)
        .map_err(|e| err(format!("cannot read included file {}: {e}", path.display())))?;
    for (i, raw) in text.lines().enumerate() {
        let here = Loc {
            file: path.clone(),
            line: i + 1,
        };
        let Some(line) = content(raw) else { continue };
        if line.starts_with('[') {
            return Err(SyntaxError {
                at: here,
                message: "an included file may hold options only, not sections (as in fio)".into(),
            });
        }
        option_line(line, &here, env, depth + 1, out)?;
    }
    Ok(())
}

/// Replace every `${VAR}` by the environment's value; an unset one is an error (fio would
/// pass the text on literally and fail later, or worse, not at all).
fn expand(v: &str, at: &Loc, env: &dyn Fn(&str) -> Option<String>) -> Result<String, SyntaxError> {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after.find('}').ok_or_else(|| SyntaxError {
            at: at.clone(),
            message: format!("'${{' without a closing '}}' in '{v}'"),
        })?;
        let name = &after[..end];
        let val = env(name).ok_or_else(|| SyntaxError {
            at: at.clone(),
            message: format!("${{{name}}} is not set in the environment; export {name}=… first"),
        })?;
        out.push_str(&val);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// An absolute size as fio reads it (`4k`, `10g`, `1MiB`, `512`; base 1024), `None` for
/// percentages, ranges, expressions and anything else fsbench does not need to understand.
pub fn size_bytes(v: &str) -> Option<u64> {
    let t = v.trim().to_ascii_lowercase();
    if let Some(hex) = t.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok();
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let shift = match suffix.trim() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => return None,
    };
    let bytes = n * (1u64 << shift) as f64;
    (bytes.is_finite() && bytes >= 0.0).then_some(bytes as u64)
}

/// A time as fio reads `runtime`/`ramp_time` (a bare number is seconds; `us`, `ms`, `s`,
/// `m`, `h`, `d`).
pub fn duration(v: &str) -> Option<Duration> {
    let t = v.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let secs = match suffix.trim() {
        "" | "s" | "sec" => n,
        "us" | "usec" => n / 1e6,
        "ms" | "msec" => n / 1e3,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return None,
    };
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// fio's rendering of a byte count (`64m`), exact.
pub fn fio_bytes(b: u64) -> String {
    crate::units::fio_size(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn p(text: &str) -> Result<JobFile, SyntaxError> {
        parse(text, Path::new("t.fio"), &no_env)
    }

    #[test]
    fn globals_comments_aliases_and_bare_keys() {
        let f = p("; header comment\n# another\n[global]\nblocksize=4k ; inline\nsize = 64m\n\n\
                   [a]\nrw=read\nnorandommap\n[global]\ndirect=1\n[b]\nreadwrite=write\ntimeout=5\n")
        .unwrap();
        let jobs = f.jobs();
        assert_eq!(jobs.len(), 2);
        let a = &jobs[0];
        assert_eq!(a.name, "a");
        assert_eq!(a.value("bs"), Some("4k"));
        assert_eq!(a.value("size"), Some("64m"));
        assert!(a.flag("norandommap"));
        assert!(!a.flag("direct"), "a later [global] does not reach back");
        let b = &jobs[1];
        assert!(b.flag("direct"));
        assert_eq!(b.value("rw"), Some("write"));
        assert_eq!(b.value("runtime"), Some("5"));
        assert_eq!(b.get("rw").unwrap().written, "readwrite");
        assert_eq!(b.get("rw").unwrap().render(), "readwrite=write");
        assert_eq!(b.get("bs").unwrap().at.line, 4);
        assert!(!b.flag("norandommap"));
    }

    #[test]
    fn later_options_win_and_flags_read_zero_as_off() {
        let f = p("[global]\nbs=4k\nstonewall\n[x]\nbs=8k\nstonewall=0\nnumjobs=3\n").unwrap();
        let j = &f.jobs()[0];
        assert_eq!(j.value("bs"), Some("8k"));
        assert!(!j.flag("stonewall"));
        assert_eq!(j.numjobs(), 3);
    }

    #[test]
    fn env_vars_are_expanded_and_unset_ones_refused_with_the_line() {
        let env = |k: &str| (k == "SIZE").then(|| "16m".to_string());
        let f = parse(
            "[j]\nsize=${SIZE}\nname=x${SIZE}y\n",
            Path::new("e.fio"),
            &env,
        )
        .unwrap();
        assert_eq!(f.jobs()[0].value("size"), Some("16m"));
        assert_eq!(f.jobs()[0].value("name"), Some("x16my"));
        let e = parse("[j]\n\nbs=${NOPE}\n", Path::new("e.fio"), &env).unwrap_err();
        assert_eq!(e.at.line, 3);
        assert!(
            e.to_string().starts_with("e.fio:3: ${NOPE} is not set"),
            "{e}"
        );
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = p("[ok]\nrw=read\n[broken\n").unwrap_err();
        assert_eq!(e.at.line, 3);
        assert!(e.message.contains("closing ']'"), "{e}");
        let e = p("bs=4k\n[a]\n").unwrap_err();
        assert_eq!(e.at.line, 1);
        assert!(e.message.contains("outside of a [] job section"), "{e}");
        let e = p("[a]\n=4k\n").unwrap_err();
        assert_eq!(e.at.line, 2);
        let e = p("[a]\nrw read\n").unwrap_err();
        assert!(e.message.contains("no blanks"), "{e}");
        let e = p("[]\n").unwrap_err();
        assert!(e.message.contains("empty section"), "{e}");
        let e = p("[a]\ninclude\n").unwrap_err();
        assert!(e.message.contains("include needs"), "{e}");
    }

    #[test]
    fn hostile_sizes_are_refused_not_read() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("main.fio");
        std::fs::write(&main, "[a]\ninclude /dev/zero\n").unwrap();
        let e = read(&main, &|_| None).unwrap_err().to_string();
        assert!(e.contains("larger than 1 MiB"), "{e}");
        // A file including itself twice per level would double at each of 8 levels.
        std::fs::write(&main, "[a]\ninclude main.fio\ninclude main.fio\n").unwrap();
        assert!(read(&main, &|_| None).is_err());
        // 1,000 globals before 1,000 sections: a million copied options.
        let mut text = String::from("[global]\n");
        for i in 0..1000 {
            text.push_str(&format!("x{i}=1\n"));
        }
        for i in 0..1000 {
            text.push_str(&format!("[j{i}]\n"));
        }
        let e = parse(&text, &main, &|_| None).unwrap_err().to_string();
        assert!(e.contains("more than 100000 options"), "{e}");
    }

    #[test]
    fn includes_read_options_relative_to_the_including_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("common.inc"), "# shared\nbs=16k\ndirect=1\n").unwrap();
        std::fs::write(d.path().join("sect.inc"), "[nope]\n").unwrap();
        let main = d.path().join("main.fio");
        std::fs::write(
            &main,
            "[a]\ninclude common.inc\nrw=read\n[b]\ninclude missing.inc\n",
        )
        .unwrap();
        let e = read(&main, &no_env).unwrap_err();
        assert_eq!(e.at.line, 5);
        assert!(e.message.contains("missing.inc"), "{e}");
        std::fs::write(&main, "[a]\ninclude common.inc\nrw=read\n").unwrap();
        let f = read(&main, &no_env).unwrap();
        let j = &f.jobs()[0];
        assert_eq!(j.value("bs"), Some("16k"));
        assert_eq!(j.get("bs").unwrap().at.line, 2, "line inside the include");
        assert!(j.get("bs").unwrap().at.file.ends_with("common.inc"));
        std::fs::write(&main, "[a]\ninclude sect.inc\n").unwrap();
        let e = read(&main, &no_env).unwrap_err();
        assert!(e.message.contains("options only"), "{e}");
        std::fs::write(d.path().join("loop.inc"), "include loop.inc\n").unwrap();
        std::fs::write(&main, "[a]\ninclude loop.inc\n").unwrap();
        assert!(read(&main, &no_env).unwrap_err().message.contains("cycle"));
        let e = read(&d.path().join("absent.fio"), &no_env).unwrap_err();
        assert!(e.to_string().contains("cannot read the job file"), "{e}");
    }

    #[test]
    fn sizes_and_times_read_like_fio() {
        assert_eq!(size_bytes("4k"), Some(4096));
        assert_eq!(size_bytes("10g"), Some(10 << 30));
        assert_eq!(size_bytes("1MiB"), Some(1 << 20));
        assert_eq!(size_bytes("512"), Some(512));
        assert_eq!(size_bytes("0x1000"), Some(4096));
        assert_eq!(size_bytes("50%"), None);
        assert_eq!(size_bytes("$(1024*1024)"), None);
        assert_eq!(duration("60"), Some(Duration::from_secs(60)));
        assert_eq!(duration("10s"), Some(Duration::from_secs(10)));
        assert_eq!(duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(duration("soon"), None);
        assert_eq!(canonical("BlockSize"), "bs");
        assert_eq!(canonical("wait_for_previous"), "stonewall");
        assert_eq!(canonical("iodepth"), "iodepth");
    }
}
