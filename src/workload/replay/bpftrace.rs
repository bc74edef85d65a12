//! The eBPF capture's two ends in text: the bpftrace script `fsbench record --capture ebpf`
//! generates (one probe pair per recorded syscall, filtered to the recorded process tree) and
//! the parser of what it prints.
//!
//! The script keeps a map of the recorded threads (`@t`), seeded with the first process and
//! grown by `sched_process_fork`, so only the recorded tree pays for more than a map lookup.
//! Each call prints an `E` line at entry (timestamp, thread, process, call, integer
//! arguments), one `S` line per string argument (a path: read at entry, while the memory is
//! the caller's), and an `R` line at exit with the result. bpftrace reads one ring buffer per
//! CPU, so lines of different CPUs interleave out of time order: [`parse_output`] attaches
//! each `S` to its `E` (same probe, same ring, printed back to back) and sorts by timestamp.
//! A string longer than [`STRLEN`] - 1 bytes is cut by bpftrace (bpftrace 0.17 copies it onto
//! the 512-byte BPF stack); such paths are counted, not trusted.

use std::fmt::Write;

/// The longest string bpftrace copies (`BPFTRACE_STRLEN`; bpftrace 0.17's ceiling is 200).
pub const STRLEN: usize = 200;

/// The first line the script prints, from `BEGIN`, which bpftrace runs once every probe is
/// attached: the command may start then.
pub const READY: &str = "READY";

/// One recorded syscall: its tracepoint name and the entry arguments printed, integers first
/// (in this order), then strings.
pub struct Spec {
    /// The tracepoint's name (`sys_enter_<name>`), which is also the call's name in `E` lines.
    pub name: &'static str,
    /// Integer arguments (tracepoint field names, or a field of the struct one points to:
    /// `how->flags`).
    pub ints: &'static [&'static str],
    /// String arguments (paths).
    pub strs: &'static [&'static str],
    /// An extra predicate on the entry's arguments (`fcntl`: only the descriptor copies).
    pub filter: &'static str,
}

const fn s(
    name: &'static str,
    ints: &'static [&'static str],
    strs: &'static [&'static str],
) -> Spec {
    Spec {
        name,
        ints,
        strs,
        filter: "",
    }
}

/// The syscalls the eBPF capture records (x86-64 tracepoint names; ones this kernel lacks are
/// left out of the script).
pub const SPECS: &[Spec] = &[
    s("open", &["flags"], &["filename"]),
    s("openat", &["dfd", "flags"], &["filename"]),
    // openat2's flags are in the `struct open_how` its `how` points to (bpftrace reads it
    // through the kernel's BTF); its `resolve` restrictions are not recorded.
    s("openat2", &["dfd", "how->flags"], &["filename"]),
    s("creat", &[], &["pathname"]),
    s("close", &["fd"], &[]),
    s("read", &["fd"], &[]),
    s("write", &["fd"], &[]),
    s("readv", &["fd"], &[]),
    s("writev", &["fd"], &[]),
    s("pread64", &["fd", "pos"], &[]),
    s("pwrite64", &["fd", "pos"], &[]),
    s("preadv", &["fd", "pos_l"], &[]),
    s("pwritev", &["fd", "pos_l"], &[]),
    s("preadv2", &["fd", "pos_l"], &[]),
    s("pwritev2", &["fd", "pos_l"], &[]),
    s("fsync", &["fd"], &[]),
    s("fdatasync", &["fd"], &[]),
    s("syncfs", &["fd"], &[]),
    s("sync_file_range", &["fd", "offset", "nbytes"], &[]),
    s("lseek", &["fd"], &[]),
    s("ftruncate", &["fd", "length"], &[]),
    s("truncate", &["length"], &["path"]),
    s("fallocate", &["fd", "mode", "offset", "len"], &[]),
    s("mkdir", &[], &["pathname"]),
    s("mkdirat", &["dfd"], &["pathname"]),
    s("rmdir", &[], &["pathname"]),
    s("unlink", &[], &["pathname"]),
    s("unlinkat", &["dfd", "flag"], &["pathname"]),
    s("rename", &[], &["oldname", "newname"]),
    s("renameat", &["olddfd", "newdfd"], &["oldname", "newname"]),
    s(
        "renameat2",
        &["olddfd", "newdfd", "flags"],
        &["oldname", "newname"],
    ),
    s("link", &[], &["oldname", "newname"]),
    s("linkat", &["olddfd", "newdfd"], &["oldname", "newname"]),
    s("symlink", &[], &["oldname", "newname"]),
    s("symlinkat", &["newdfd"], &["oldname", "newname"]),
    s("newstat", &[], &["filename"]),
    s("newlstat", &[], &["filename"]),
    s("newfstat", &["fd"], &[]),
    s("newfstatat", &["dfd", "flag"], &["filename"]),
    s("statx", &["dfd", "flags"], &["filename"]),
    s("getdents64", &["fd"], &[]),
    s("copy_file_range", &["fd_in", "fd_out"], &[]),
    s("sendfile64", &["out_fd", "in_fd"], &[]),
    Spec {
        name: "mmap",
        ints: &["fd", "prot"],
        strs: &[],
        // Anonymous maps (fd -1, which bpftrace widens without its sign) are most of them and
        // never a file's.
        filter: "args->fd < 1048576",
    },
    s("io_uring_enter", &["fd"], &[]),
    s("dup", &["fildes"], &[]),
    s("dup2", &["oldfd", "newfd"], &[]),
    s("dup3", &["oldfd", "newfd", "flags"], &[]),
    Spec {
        name: "fcntl",
        ints: &["fd", "cmd"],
        strs: &[],
        // F_DUPFD and F_DUPFD_CLOEXEC: the calls that make a descriptor.
        filter: "(args->cmd == 0 || args->cmd == 1030)",
    },
    s("chdir", &[], &["filename"]),
    s("fchdir", &["fd"], &[]),
];

/// The script for the calls in `available` (tracepoint names this kernel has; `None`: all),
/// recording the threads `seeds` and every thread or process they start.
pub fn script(available: Option<&dyn Fn(&str) -> bool>, seeds: &[u32]) -> String {
    let mut s = String::from("BEGIN {");
    for t in seeds {
        let _ = write!(s, " @t[{t}] = 1;");
    }
    s.push_str(" printf(\"READY\\n\"); }\n");
    // Maps left at exit are printed by bpftrace: cleared, the output is the events alone.
    s.push_str("END { clear(@t); clear(@in); }\n");
    s.push_str(
        "tracepoint:sched:sched_process_fork /@t[tid]/ { @t[args->child_pid] = 1; \
         printf(\"F %llu %d %d %d\\n\", nsecs, tid, pid, args->child_pid); }\n",
    );
    s.push_str(
        "tracepoint:sched:sched_process_exec /@t[tid]/ { printf(\"X %llu %d %d\\n\", nsecs, \
         tid, pid); }\n",
    );
    s.push_str("tracepoint:sched:sched_process_exit /@t[tid]/ { delete(@t[tid]); }\n");
    for spec in SPECS {
        if available.is_some_and(|f| !f(spec.name)) {
            continue;
        }
        let filter = if spec.filter.is_empty() {
            String::new()
        } else {
            format!(" && {}", spec.filter)
        };
        let mut fmt = format!("E %llu %d %d {}", spec.name);
        let mut vals = String::from("nsecs, tid, pid");
        for i in spec.ints {
            fmt.push_str(" %lld");
            let _ = write!(vals, ", (int64)args->{i}");
        }
        let _ = write!(
            s,
            "tracepoint:syscalls:sys_enter_{n} /@t[tid]{filter}/ {{ @in[tid] = 1; \
             printf(\"{fmt}\\n\", {vals});",
            n = spec.name
        );
        for st in spec.strs {
            let _ = write!(s, " printf(\"S %d %s\\n\", tid, str(args->{st}));");
        }
        s.push_str(" }\n");
        let _ = writeln!(
            s,
            "tracepoint:syscalls:sys_exit_{n} /@in[tid]/ {{ delete(@in[tid]); \
             printf(\"R %llu %d %lld\\n\", nsecs, tid, args->ret); }}",
            n = spec.name
        );
    }
    s
}

/// One line of the script's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Rec {
    /// A call entered: `E ts tid pid name ints…`, with its `S` strings attached.
    Enter {
        /// Nanoseconds (monotonic clock).
        ts: u64,
        /// The thread.
        tid: u32,
        /// Its process (thread group).
        pid: u32,
        /// The call (tracepoint name).
        name: String,
        /// Integer arguments, as the [`Spec`] lists them.
        ints: Vec<i64>,
        /// String arguments.
        strs: Vec<String>,
    },
    /// A call returned: `R ts tid ret`.
    Ret {
        /// Nanoseconds.
        ts: u64,
        /// The thread.
        tid: u32,
        /// The raw result (`-errno` on failure).
        ret: i64,
    },
    /// A thread or process was created: `F ts tid pid child`.
    Fork {
        /// Nanoseconds.
        ts: u64,
        /// The creating thread.
        tid: u32,
        /// Its process.
        pid: u32,
        /// The new thread's id.
        child: u32,
    },
    /// A process ran exec: `X ts tid pid` (its close-on-exec descriptors are gone).
    Exec {
        /// Nanoseconds.
        ts: u64,
        /// The thread.
        tid: u32,
        /// Its process.
        pid: u32,
    },
}

impl Rec {
    /// When it happened (nanoseconds).
    pub fn ts(&self) -> u64 {
        match self {
            Rec::Enter { ts, .. } | Rec::Ret { ts, .. } | Rec::Fork { ts, .. } => *ts,
            Rec::Exec { ts, .. } => *ts,
        }
    }
}

/// What the output held besides the records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputNotes {
    /// Events bpftrace reported lost (`Lost N events`): the trace is incomplete.
    pub lost: u64,
    /// Lines not understood (skipped).
    pub unparsed: u64,
    /// Paths as long as bpftrace's string limit (probably cut).
    pub long_paths: u64,
    /// The `READY` line was seen.
    pub ready: bool,
}

/// Parse the whole output: records in time order (stable: equal timestamps keep the output's
/// order), and what else it said.
pub fn parse_output(text: &str) -> (Vec<Rec>, OutputNotes) {
    let mut recs: Vec<Rec> = Vec::new();
    let mut notes = OutputNotes::default();
    // The last `E` of each thread, to attach its `S` lines to.
    let mut last_enter: std::collections::HashMap<u32, usize> = Default::default();
    for line in text.lines() {
        if line == READY {
            notes.ready = true;
            continue;
        }
        if line.is_empty() || line.starts_with("Attaching ") {
            continue;
        }
        if let Some(n) = lost_count(line) {
            notes.lost += n;
            continue;
        }
        if let Some(rest) = line.strip_prefix("S ") {
            let (tid, path) = rest.split_once(' ').unwrap_or((rest, ""));
            let target = tid
                .parse::<u32>()
                .ok()
                .and_then(|t| last_enter.get(&t).copied());
            match target.and_then(|i| recs.get_mut(i)) {
                Some(Rec::Enter { strs, .. }) => {
                    if path.len() >= STRLEN - 1 {
                        notes.long_paths += 1;
                    }
                    strs.push(path.to_string());
                }
                _ => notes.unparsed += 1,
            }
            continue;
        }
        match parse_line(line) {
            Some(r) => {
                if let Rec::Enter { tid, .. } = &r {
                    last_enter.insert(*tid, recs.len());
                }
                recs.push(r);
            }
            None => notes.unparsed += 1,
        }
    }
    recs.sort_by_key(Rec::ts);
    (recs, notes)
}

/// `Lost 12 events` (bpftrace's word when a ring buffer overflowed).
fn lost_count(line: &str) -> Option<u64> {
    let rest = line.trim().strip_prefix("Lost ")?;
    let (n, tail) = rest.split_once(' ')?;
    tail.starts_with("event").then(|| n.parse().ok()).flatten()
}

/// One `E`, `R`, `F` or `X` line.
pub fn parse_line(line: &str) -> Option<Rec> {
    let mut w = line.split(' ');
    let kind = w.next()?;
    let mut num = || w.next().and_then(|x| x.parse::<i64>().ok());
    let rec = match kind {
        "E" => {
            let ts = num()? as u64;
            let tid = num()? as u32;
            let pid = num()? as u32;
            let mut rest = line.splitn(5, ' ').nth(4)?.split(' ');
            let name = rest.next()?.to_string();
            let ints = rest
                .map(|x| x.parse::<i64>().ok())
                .collect::<Option<Vec<_>>>()?;
            Rec::Enter {
                ts,
                tid,
                pid,
                name,
                ints,
                strs: Vec::new(),
            }
        }
        "R" => Rec::Ret {
            ts: num()? as u64,
            tid: num()? as u32,
            ret: num()?,
        },
        "F" => Rec::Fork {
            ts: num()? as u64,
            tid: num()? as u32,
            pid: num()? as u32,
            child: num()? as u32,
        },
        "X" => Rec::Exec {
            ts: num()? as u64,
            tid: num()? as u32,
            pid: num()? as u32,
        },
        _ => return None,
    };
    Some(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_has_a_probe_pair_per_available_call_and_follows_forks() {
        let only = |n: &str| n == "openat" || n == "renameat2";
        let s = script(Some(&only), &[42, 43]);
        assert!(s.starts_with("BEGIN { @t[42] = 1; @t[43] = 1;"));
        assert!(s.contains("sys_enter_openat /@t[tid]/"));
        assert!(s.contains("sys_exit_renameat2 /@in[tid]/"));
        assert!(!s.contains("sys_enter_write "));
        assert!(s.contains("@t[args->child_pid] = 1"));
        // Two strings, two S lines.
        let rename = s
            .lines()
            .find(|l| l.contains("sys_enter_renameat2"))
            .unwrap();
        assert_eq!(rename.matches("printf(\"S ").count(), 2);
        let all = script(None, &[1]);
        assert_eq!(all.matches("sys_enter_").count(), SPECS.len());
        assert!(all.contains("(args->cmd == 0 || args->cmd == 1030)"));
        assert!(
            all.contains("(int64)args->how->flags"),
            "openat2's flags are read"
        );
    }

    #[test]
    fn output_lines_parse_and_strings_join_their_entry_across_interleaved_cpus() {
        let out = "Attaching 104 probes...\nREADY\n\
            E 2000 11 10 renameat2 -100 -100 1\n\
            E 1500 12 10 write 3\n\
            S 11 a b\n\
            S 11 c\n\
            R 1600 12 4096\n\
            R 2100 11 0\n\
            F 1000 10 10 11\n\
            X 1100 11 11\n\
            Lost 7 events\n\
            garbage here\n";
        let (recs, notes) = parse_output(out);
        assert!(notes.ready);
        assert_eq!(notes.lost, 7);
        assert_eq!(notes.unparsed, 1);
        let ts: Vec<u64> = recs.iter().map(Rec::ts).collect();
        assert_eq!(ts, vec![1000, 1100, 1500, 1600, 2000, 2100]);
        assert_eq!(
            recs[4],
            Rec::Enter {
                ts: 2000,
                tid: 11,
                pid: 10,
                name: "renameat2".into(),
                ints: vec![-100, -100, 1],
                strs: vec!["a b".into(), "c".into()],
            }
        );
        assert_eq!(
            recs[3],
            Rec::Ret {
                ts: 1600,
                tid: 12,
                ret: 4096
            }
        );
    }

    #[test]
    fn a_cut_path_and_a_stray_string_are_counted() {
        let long = "x".repeat(STRLEN - 1);
        let (recs, notes) = parse_output(&format!("E 1 2 2 unlink\nS 2 {long}\nS 9 y\n"));
        assert_eq!(recs.len(), 1);
        assert_eq!(notes.long_paths, 1);
        assert_eq!(notes.unparsed, 1);
        assert_eq!(parse_line("E 1 2"), None);
        assert_eq!(parse_line("E 1 2 3 write x"), None);
    }
}
