//! The eBPF capture's two ends in text: the bpftrace script `fsbench record --capture ebpf`
//! generates (one probe pair per recorded syscall, filtered to the recorded process tree) and
//! the parser of what it prints.
//!
//! The script keeps a map of the recorded threads (`@t`), seeded with the first process and
//! grown by `sched_process_fork`, so only the recorded tree pays for more than a map lookup.
//! A call prints once, from its exit: the entry keeps its time and arguments (integers, and
//! the addresses of its paths) in a per-thread map of its own (`@a_<call>`), and the exit
//! prints a `C` line (entry and exit times, thread, process, result, call, integer
//! arguments) followed by one `S` line per path, read then: the kernel has just copied the
//! path, so its page is in memory (read at entry, a page the program had not touched yet
//! arrived empty). One line per call instead of an entry and a return halves the events
//! bpftrace's reader formats, which is most of the capture's cost (docs/replay.md). bpftrace
//! reads one ring buffer per CPU, so lines of different CPUs interleave out of time order:
//! [`parse_output`] attaches each `S` to its call (same probe, same ring, printed back to
//! back) and sorts by timestamp. A string longer than [`STRLEN`] - 1 bytes is cut by
//! bpftrace (bpftrace 0.17 copies it onto the 512-byte BPF stack); such paths are counted,
//! not trusted. The parser also reads the `E`/`R` pairs (an entry line, a return line) the
//! script printed before.

use std::fmt::Write;

/// The longest string bpftrace copies (`BPFTRACE_STRLEN`; bpftrace 0.17's ceiling is 200).
pub const STRLEN: usize = 200;

/// The first line the script prints, from `BEGIN`, which bpftrace runs once every probe is
/// attached: the command may start then.
pub const READY: &str = "READY";

/// Lines `BEGIN` prints after [`READY`] (each [`FILLER`]), so that bpftrace's fully buffered
/// output (`-B full`: one write per buffer, not per line) reaches the pipe at once: 100 lines
/// of 64 bytes fill more than its 4 KiB buffer. The parser skips them.
pub const FILLER_LINES: usize = 100;

/// One of the lines after [`READY`]; `#` marks a line the parser skips.
pub const FILLER: &str = "# the lines before the first event fill bpftrace's output buffer";

/// One recorded syscall: its tracepoint name and the entry arguments printed, integers first
/// (in this order), then strings.
#[derive(Debug)]
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

/// The calls that may read or write at the descriptor's position (`preadv2`/`pwritev2` with
/// offset -1). An `lseek` matters to the trace only through the position such a call uses
/// (it is not a trace event), and most are not followed by one (PostgreSQL's `lseek(fd, 0,
/// SEEK_END)` for a relation's size, three quarters of pgbench's calls): the script keeps a
/// successful `lseek`'s line per process and descriptor (`@pos`) and prints it only before
/// the next of these calls on that descriptor, dropping it at `close` and when the number is
/// given to a new descriptor. An `lseek` followed by no such call is not printed at all.
pub const POSITIONED: &[&str] = &["read", "write", "readv", "writev", "preadv2", "pwritev2"];

/// The calls whose result is a new descriptor (a kept `lseek` of an earlier descriptor of
/// that number is dropped).
pub const NEW_FD: &[&str] = &[
    "open", "openat", "openat2", "creat", "dup", "dup2", "dup3", "fcntl",
];

/// The script for the calls in `available` (tracepoint names this kernel has; `None`: all),
/// recording the threads `seeds` and every thread or process they start.
pub fn script(available: Option<&dyn Fn(&str) -> bool>, seeds: &[u32]) -> String {
    let specs: Vec<&Spec> = SPECS
        .iter()
        .filter(|spec| available.is_none_or(|f| f(spec.name)))
        .collect();
    let mut s = String::from("BEGIN {");
    for t in seeds {
        let _ = write!(s, " @t[{t}] = 1;");
    }
    let _ = writeln!(
        s,
        " printf(\"{READY}\\n\"); unroll({FILLER_LINES}) {{ printf(\"{FILLER}\\n\"); }} }}"
    );
    // Maps left at exit are printed by bpftrace: cleared, the output is the events alone.
    // `@pos` exists only with lseek's probes (bpftrace refuses a map never assigned).
    let seeks = specs.iter().any(|spec| spec.name == "lseek");
    s.push_str("END { clear(@t); clear(@in);");
    if seeks {
        s.push_str(" clear(@pos);");
    }
    for spec in &specs {
        let _ = write!(s, " clear(@a_{});", spec.name);
    }
    s.push_str(" }\n");
    s.push_str(
        "tracepoint:sched:sched_process_fork /@t[tid]/ { @t[args->child_pid] = 1; \
         printf(\"F %llu %d %d %d\\n\", nsecs, tid, pid, args->child_pid); }\n",
    );
    s.push_str(
        "tracepoint:sched:sched_process_exec /@t[tid]/ { printf(\"X %llu %d %d\\n\", nsecs, \
         tid, pid); }\n",
    );
    s.push_str("tracepoint:sched:sched_process_exit /@t[tid]/ { delete(@t[tid]); }\n");
    for spec in specs {
        probes(&mut s, spec, seeks);
    }
    s
}

/// The probe pair of one call: the entry keeps its time and arguments in `@a_<call>[tid]`,
/// the exit prints them with the result (a `C` line, then an `S` line per path); `seeks`:
/// lseek is recorded, its lines kept in `@pos` ([`POSITIONED`]).
fn probes(s: &mut String, spec: &Spec, seeks: bool) {
    let n = spec.name;
    let filter = if spec.filter.is_empty() {
        String::new()
    } else {
        format!(" && {}", spec.filter)
    };
    let mut kept = String::from("nsecs");
    for i in spec.ints {
        let _ = write!(kept, ", (int64)args->{i}");
    }
    for st in spec.strs {
        let _ = write!(kept, ", (uint64)args->{st}");
    }
    let _ = writeln!(
        s,
        "tracepoint:syscalls:sys_enter_{n} /@t[tid]{filter}/ {{ @in[tid] = 1; \
         @a_{n}[tid] = ({kept}); }}"
    );
    let mut fmt = format!("C %llu %llu %d %d %lld {n}");
    for _ in spec.ints {
        fmt.push_str(" %lld");
    }
    // A call without paths copies its tuple to the stack once; one with paths reads the map
    // for each field, since two 200-byte strings and the tuple would not fit the 512-byte
    // BPF stack.
    let field = |k: usize| {
        if spec.strs.is_empty() {
            format!("$e.{k}")
        } else {
            format!("@a_{n}[tid].{k}")
        }
    };
    let mut vals = format!("{}, nsecs, tid, pid, args->ret", field(0));
    for k in 1..=spec.ints.len() {
        let _ = write!(vals, ", {}", field(k));
    }
    let _ = write!(
        s,
        "tracepoint:syscalls:sys_exit_{n} /@in[tid]/ {{ delete(@in[tid]);"
    );
    if spec.strs.is_empty() {
        let _ = write!(s, " $e = @a_{n}[tid]; delete(@a_{n}[tid]);");
    }
    if n == "lseek" {
        // Kept, not printed: see [`POSITIONED`].
        s.push_str(" if (args->ret >= 0) { @pos[pid, $e.1] = ($e.0, nsecs, tid, args->ret); } }\n");
        return;
    }
    if seeks && POSITIONED.contains(&n) {
        s.push_str(
            " $p = @pos[pid, $e.1]; if ($p.1) { printf(\"C %llu %llu %d %d %lld lseek %lld\\n\", \
             $p.0, $p.1, $p.2, pid, $p.3, $e.1); delete(@pos[pid, $e.1]); }",
        );
    }
    let _ = write!(s, " printf(\"{fmt}\\n\", {vals});");
    if seeks && n == "close" {
        s.push_str(" delete(@pos[pid, $e.1]);");
    }
    if seeks && NEW_FD.contains(&n) {
        s.push_str(" if (args->ret >= 0) { delete(@pos[pid, (int64)args->ret]); }");
    }
    for k in 0..spec.strs.len() {
        let at = field(1 + spec.ints.len() + k);
        let _ = write!(s, " printf(\"S %d %s\\n\", tid, str({at}));");
    }
    if !spec.strs.is_empty() {
        let _ = write!(s, " delete(@a_{n}[tid]);");
    }
    s.push_str(" }\n");
}

/// One line of the script's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Rec {
    /// A call entered: `E ts tid pid name ints…` or a `C` line's entry half, with its `S`
    /// strings attached.
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
    /// A call returned: `R ts tid ret`, or a `C` line's return half.
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
        if line.is_empty() || line.starts_with("Attaching ") || line.starts_with('#') {
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
        if let Some(rest) = line.strip_prefix("C ") {
            match parse_call(rest) {
                Some((enter, ret)) => {
                    if let Rec::Enter { tid, .. } = &enter {
                        last_enter.insert(*tid, recs.len());
                    }
                    recs.push(enter);
                    recs.push(ret);
                }
                None => notes.unparsed += 1,
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

/// A `C` line after its `C `: `entry-ts exit-ts tid pid ret name ints…`, as the entry and
/// the return it stands for.
fn parse_call(rest: &str) -> Option<(Rec, Rec)> {
    let mut w = rest.split(' ');
    let mut num = || w.next().and_then(|x| x.parse::<i64>().ok());
    let (ts, end, tid, pid, ret) = (num()? as u64, num()? as u64, num()?, num()?, num()?);
    let enter = entry(ts, tid as u32, pid as u32, w)?;
    Some((
        enter,
        Rec::Ret {
            ts: end,
            tid: tid as u32,
            ret,
        },
    ))
}

/// The entry of an `E` or `C` line: the call's name and integer arguments from `words`.
fn entry<'a>(ts: u64, tid: u32, pid: u32, mut words: impl Iterator<Item = &'a str>) -> Option<Rec> {
    let name = words.next()?.to_string();
    let ints = words
        .map(|x| x.parse::<i64>().ok())
        .collect::<Option<Vec<_>>>()?;
    Some(Rec::Enter {
        ts,
        tid,
        pid,
        name,
        ints,
        strs: Vec::new(),
    })
}

/// `Lost 12 events` (bpftrace's word when a ring buffer overflowed).
fn lost_count(line: &str) -> Option<u64> {
    let rest = line.trim().strip_prefix("Lost ")?;
    let (n, tail) = rest.split_once(' ')?;
    tail.starts_with("event").then(|| n.parse().ok()).flatten()
}

/// One `E`, `R`, `F` or `X` line (`E` and `R`: the script's earlier form, a line at entry
/// and one at return).
pub fn parse_line(line: &str) -> Option<Rec> {
    let mut w = line.split(' ');
    let kind = w.next()?;
    let mut num = || w.next().and_then(|x| x.parse::<i64>().ok());
    let rec = match kind {
        "E" => {
            let (ts, tid, pid) = (num()? as u64, num()? as u32, num()? as u32);
            entry(ts, tid, pid, w)?
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
        // One line per call, from the exit; two strings, two S lines, read there.
        let line = |probe: &str| s.lines().find(|l| l.contains(probe)).unwrap();
        assert!(!line("sys_enter_renameat2").contains("printf"));
        assert!(line("sys_enter_renameat2").contains("(uint64)args->newname"));
        assert_eq!(line("sys_exit_renameat2").matches("printf(\"S ").count(), 2);
        assert_eq!(line("sys_exit_openat").matches("printf(\"C ").count(), 1);
        assert!(s.contains("clear(@a_openat); clear(@a_renameat2);"));
        // The output buffer is filled once READY is printed.
        assert!(s.contains(&format!("unroll({FILLER_LINES})")));
        assert!(FILLER_LINES * (FILLER.len() + 1) > 4096);
        // Without lseek's probes no `@pos` (bpftrace refuses a map never assigned).
        assert!(!s.contains("@pos"));
        let all = script(None, &[1]);
        let line = |probe: &str| all.lines().find(|l| l.contains(probe)).unwrap();
        assert!(!line("sys_exit_lseek").contains("printf"));
        assert!(line("sys_exit_lseek").contains("@pos[pid, $e.1] = "));
        assert!(line("sys_exit_read ").contains("%lld lseek %lld"));
        assert!(!line("sys_exit_pread64").contains("@pos"));
        assert!(line("sys_exit_close").contains("delete(@pos[pid, $e.1])"));
        assert!(line("sys_exit_dup2").contains("delete(@pos[pid, (int64)args->ret])"));
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
    fn a_call_line_is_its_entry_and_return_and_takes_the_strings_after_it() {
        let two_lines = "E 2000 11 10 renameat2 -100 -100 1\n\
            E 1500 12 10 pwrite64 3 8192\n\
            S 11 a b\n\
            S 11 c\n\
            R 1600 12 4096\n\
            R 2100 11 0\n";
        let one_line = "READY\n# filler\n\
            C 2000 2100 11 10 0 renameat2 -100 -100 1\n\
            C 1500 1600 12 10 4096 pwrite64 3 8192\n\
            S 11 a b\n\
            S 11 c\n\
            C 1700 1800 12 10 x close 3\n";
        let (recs, notes) = parse_output(one_line);
        assert!(notes.ready);
        assert_eq!(
            notes.unparsed, 1,
            "the close with a result that is no number"
        );
        assert_eq!(recs.len(), 4);
        assert_eq!(recs, parse_output(two_lines).0);
        assert!(matches!(&recs[2], Rec::Enter { strs, .. } if strs == &["a b", "c"]));
    }

    #[test]
    fn a_kept_lseek_printed_before_a_read_gives_the_read_its_offset() {
        use crate::workload::replay::fdtable::FdTable;
        use crate::workload::replay::strace::Parser;
        use std::path::Path;
        let out = "READY\n\
            C 1 2 7 7 3 openat -100 0\nS 7 /r/f\n\
            C 3 4 7 7 10 read 3\n\
            C 5 6 7 7 100 lseek 3\n\
            C 7 8 7 7 10 read 3\n";
        let (recs, _) = parse_output(out);
        let mut t = FdTable::new(Path::new("/"));
        let sizes = [("f".to_string(), 1000)].into_iter().collect();
        let mut p = Parser::new(Path::new("/r"), Path::new("/"), sizes);
        let reads: Vec<_> = recs
            .into_iter()
            .filter_map(|r| t.feed(r))
            .flat_map(|(tid, ts, c)| p.feed_call(tid, ts, &c))
            .filter(|e| e.n.is_some())
            .map(|e| (e.o, e.n))
            .collect();
        assert_eq!(reads, vec![(Some(0), Some(10)), (Some(100), Some(10))]);
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
