//! Flags of `fsbench record`.

use clap::ValueHint;
use std::path::PathBuf;

/// Flags of `fsbench record`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = "\
Examples:
  fsbench record --root /srv/app/data --out app.trace.gz -- ./run-my-app
  sudo fsbench record --root /var/lib/myapp -- myapp --import big.csv   # runs myapp as you
  fsbench record --root /var/lib/myapp --pid 4242 --for 60s --out svc.trace.gz
  fsbench run --replay app.trace.gz --fs ext4,xfs,btrfs

What is and is not replayed, the trace format and what capture costs: docs/replay.md.")]
pub struct RecordArgs {
    /// The directory whose files are recorded: calls on files under it are kept, paths
    /// relative to it; its state before and after is part of the trace (names, sizes, never
    /// contents).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub root: PathBuf,

    /// Where the trace goes (gzip-compressed when the name ends in .gz).
    #[arg(long, value_name = "FILE", default_value = "fsbench.trace.gz", value_hint = ValueHint::FilePath)]
    pub out: PathBuf,

    /// Replace every file and directory name with a stable token (n1, n2, …).
    #[arg(long)]
    pub anonymize: bool,

    /// The trace's name in reports (default: the command's program).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Attach to this running process (and the threads and children it starts) instead of
    /// starting a command; descriptors it already holds are recorded as opened at their
    /// position. It is never signalled: the capture detaches.
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,

    /// With --pid: detach after this long (e.g. 30s, 5m); default: at Ctrl-C.
    #[arg(long = "for", value_name = "LENGTH", requires = "pid", value_parser = crate::units::duration_arg)]
    pub for_: Option<std::time::Duration>,

    /// How calls are captured: ebpf (fsbench's own BPF program on the syscall tracepoints,
    /// about 5 %; needs root; bpftrace when this fsbench was built without clang), bpftrace
    /// (needs bpftrace too; about 15 %), strace (ptrace, several times slower), or auto (ebpf
    /// when usable here, else strace; the summary says which and why).
    #[arg(long, value_enum, default_value = "auto", value_name = "HOW")]
    pub capture: crate::workload::replay::record::Capture,

    /// The command to run and record, after `--`; it runs as the invoking user (under sudo:
    /// SUDO_USER).
    #[arg(last = true, required_unless_present = "pid", value_name = "COMMAND")]
    pub command: Vec<String>,
}
