//! The flag and plan-key table: every flag of `fsbench run` and `fsbench plan` and every
//! top-level plan-file key that is not a number, declared once with its help, its values, its
//! plan-file key, how it overrides the plan and where the resolved value is recorded. The
//! numbers are the parameter table's rows ([`super::params`]), which the rows here name
//! where a flag takes one. A flag a workload kind owns (`--image-archive`) is declared by the
//! kind and gets its row here at run time ([`kind_row`]).
//!
//! What reads the rows: each clap field of `cli/run.rs` (`help = K::ROW.help()`, a
//! suggesting parser from [`Knob::known`]) and the flags `cli/knob_flags.rs` generates from
//! [`plan_knobs`], the plan-file reader (a top-level key without a row here or in the
//! parameter table is refused with its line, [`unknown_key`]; the knobs both a plan file and
//! the flags give are read by their rows' keys, [`PlanValues`]), and
//! `docs/parameters.md` ([`markdown`]). A test in `cli/mod.rs` fails for a flag of `run` or
//! `plan` without a row in either table, and one here for a plan-file key `file.rs` reads
//! without one.

use super::params::{self as P, Param};
use crate::Error;
use std::time::Duration;

/// What a flag or key takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// Nothing: given means on.
    Switch,
    /// One value, written as the value name says (`DIR`, `FILE`).
    Text(&'static str),
    /// Several values (the flag repeated or comma-separated).
    List(&'static str),
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A TOML table or array of tables (plan files only).
    Table,
}

/// How a flag and a plan file's key combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// The flag, else the plan file, else the default.
    Over,
    /// On when the flag or the plan file turns it on.
    Either,
    /// A flag with no plan-file key.
    FlagOnly,
    /// A plan-file key with no flag.
    FileOnly,
    /// Its own rule, in words.
    Rule(&'static str),
}

impl Merge {
    /// The rule in words (docs/parameters.md).
    pub fn describe(&self) -> &'static str {
        match self {
            Merge::Over => "the flag, else the plan file, else the default",
            Merge::Either => "on when the flag or the plan file says so",
            Merge::FlagOnly => "flag only",
            Merge::FileOnly => "plan file only",
            Merge::Rule(r) => r,
        }
    }
}

/// One flag or plan-file key.
#[derive(Debug, Clone)]
pub struct Knob {
    /// Its name in messages and the docs.
    pub name: &'static str,
    /// The long flags that take it, in `run` and `plan` alike.
    pub flags: &'static [&'static str],
    /// Its top-level plan-file key.
    pub key: Option<&'static str>,
    /// What it takes.
    pub value: Value,
    /// What it does, as `--help` says it (its first paragraph; a long help may follow there).
    pub doc: &'static str,
    /// How the flag and the plan file combine.
    pub merge: Merge,
    /// Where the resolved value is recorded (`plan.json`, `results.json`).
    pub lands: &'static str,
    /// Values to suggest in completions (any other is still accepted and checked later).
    pub known: fn() -> Vec<String>,
}

fn nothing() -> Vec<String> {
    Vec::new()
}

impl Knob {
    const fn new(name: &'static str, value: Value, doc: &'static str) -> Knob {
        Knob {
            name,
            flags: &[],
            key: None,
            value,
            doc,
            merge: Merge::FlagOnly,
            lands: "",
            known: nothing,
        }
    }

    /// A flag or key that is on or off.
    pub const fn switch(name: &'static str, doc: &'static str) -> Knob {
        Knob::new(name, Value::Switch, doc)
    }

    /// A flag or key with one value written as `value_name` says.
    pub const fn text(name: &'static str, value_name: &'static str, doc: &'static str) -> Knob {
        Knob::new(name, Value::Text(value_name), doc)
    }

    /// A flag taking several values.
    pub const fn list(name: &'static str, value_name: &'static str, doc: &'static str) -> Knob {
        Knob::new(name, Value::List(value_name), doc)
    }

    /// A flag or key taking one of `names`.
    pub const fn choice(
        name: &'static str,
        names: &'static [&'static str],
        doc: &'static str,
    ) -> Knob {
        Knob::new(name, Value::Choice(names), doc)
    }

    /// A plan-file table.
    pub const fn table(name: &'static str, doc: &'static str) -> Knob {
        Knob::new(name, Value::Table, doc)
    }

    /// The flags that take it.
    pub const fn flags(mut self, flags: &'static [&'static str]) -> Knob {
        self.flags = flags;
        self
    }

    /// Its plan-file key.
    pub const fn key(mut self, key: &'static str) -> Knob {
        self.key = Some(key);
        self
    }

    /// How the flag and the plan file combine.
    pub const fn merge(mut self, merge: Merge) -> Knob {
        self.merge = merge;
        self
    }

    /// Where the resolved value is recorded.
    pub const fn lands(mut self, lands: &'static str) -> Knob {
        self.lands = lands;
        self
    }

    /// Values completions suggest.
    pub const fn known(mut self, known: fn() -> Vec<String>) -> Knob {
        self.known = known;
        self
    }

    /// `--help` text: the doc without its final period, as clap shows a doc comment's first
    /// paragraph.
    pub fn help(&self) -> String {
        match self.doc.strip_suffix('.') {
            Some(d) if !d.ends_with('.') => d.to_string(),
            _ => self.doc.to_string(),
        }
    }
}

fn profile_names() -> Vec<String> {
    super::profiles::names()
        .into_iter()
        .map(str::to_string)
        .collect()
}

fn workload_ids() -> Vec<String> {
    super::profiles::workload_ids()
}

/// Declares the rows as statics and [`ALL`] in declaration order.
macro_rules! knobs {
    ($($id:ident = $row:expr;)*) => {
        $(
            #[doc = concat!("Row `", stringify!($id), "` of the flag and plan-key table.")]
            pub static $id: Knob = $row;
        )*
        /// Every row, in the order declared (docs/parameters.md lists them so).
        pub static ALL: &[&Knob] = &[$(&$id),*];
    };
}

knobs! {
    // What to compare.
    FS = Knob::list("setups", "SETUPS", "Setups to compare: filesystems and variants NAME=FS[:key=value;…], comma-separated or repeated. Default: ext4, xfs and btrfs, and zfs when ZFS is in the kernel (zfs-fuse, user-space ZFS, only when named), each skipped when its tools are missing.").flags(&["--fs"]).key("fs").merge(Merge::Rule("the flag replaces the plan file's fs and [[setup]] setups")).lands("plan.json plan.setups; results.json setups");
    SETUP = Knob::table("setup tables", "[[setup]] tables: name, fs and the driver's keys, as --fs writes them").key("setup").merge(Merge::Rule("plan file only; --fs replaces them")).lands("plan.json plan.setups; results.json setups");
    AGE = Knob::text("age", "PROFILE[:AMOUNT]", "Age every setup without an `age=` key of its own after mkfs and before the workloads: PROFILE[:AMOUNT[:FULLNESS%]], profiles git, churn, overwrite, punch, AMOUNT the data written as a multiple of the capacity (default 1), FULLNESS the fullness aged around (default 75%). Fresh and aged side by side: --fs 'ext4,ext4-aged=ext4:age=churn'.").flags(&["--age"]).merge(Merge::Rule("every setup without its own age=; the plan file's aged_twins are then not added")).lands("plan.json plan.setups[].age; results.json setups");
    AGED_TWINS = Knob::text("aged twins", "PROFILE[:AMOUNT]", "Every setup also runs aged, as its twin NAME-aged with age=PROFILE[:AMOUNT] (docs/aging.md)").key("aged_twins").merge(Merge::Rule("plan file only; --age replaces it")).lands("plan.json plan.setups; results.json setups");
    PLAN = Knob::text("plan file", "FILE", "A TOML plan file (setups, workloads with parameters, sweeps, rounds, sizes).").flags(&["--plan"]).lands("plan.json plan.name");
    PROFILE = Knob::text("profile", "NAME", "A shipped profile (default: quick); --help lists what each one runs.").flags(&["--profile"]).known(profile_names).lands("plan.json plan.name");
    NAME = Knob::text("name", "TEXT", "The plan's name (default: the file's)").key("name").merge(Merge::FileOnly).lands("plan.json plan.name");
    DESCRIPTION = Knob::text("description", "TEXT", "One line saying what the plan is for").key("description").merge(Merge::FileOnly).lands("plan.json plan.description");
    // What to run.
    SUITE = Knob::choice("suite", &["standard"], "Start from the standard suite (else only the plan's [[workload]]s)").key("suite").merge(Merge::FileOnly).lands("plan.json plan.workloads");
    WORKLOAD = Knob::table("workload tables", "[[workload]] tables: id, kind and the kind's keys, sweeps; kind = \"fio-job\" with path = \"FILE.fio\"").key("workload").merge(Merge::Rule("plan file only; --only and --skip choose among them")).lands("plan.json plan.workloads; results.json workloads");
    ONLY = Knob::list("only", "IDS", "Run only these workload ids (comma-separated); also selects opt-in ones (probe-*, smallfiles, fsmark).").flags(&["--only"]).known(workload_ids).merge(Merge::Rule("chooses among the plan's workloads")).lands("plan.json plan.workloads[].record; results.json workloads");
    SKIP = Knob::list("skip", "IDS", "Skip these workload ids (comma-separated).").flags(&["--skip"]).known(workload_ids).merge(Merge::Rule("chooses among the plan's workloads")).lands("plan.json plan.workloads[].record; results.json workloads");
    CLAIMS_FOR = Knob::list("claims for", "WORKLOAD|CLASS", "Run only what these claims need (comma-separated): a claim id, a workload id, a contradiction group or a statement class (metadata, durability, tuning…; `fsbench claims` lists them). Keeps the plan's setups the claims name and the workloads they read.").flags(&["--claims-for"]).merge(Merge::Rule("narrows the plan's setups and workloads")).lands("plan.json plan.setups, plan.workloads");
    FIO_JOB = Knob::list("fio job files", "FILE.fio", "A fio job file (repeatable): every job section becomes a workload on every setup and round, with its files in fsbench's data directory (see docs/fio-jobs.md).").flags(&["--fio-job"]).merge(Merge::Rule("added to a plan file's kind = \"fio-job\" workloads; without --plan they replace the profile's workloads")).lands("plan.json plan.workloads[].fio_job; results.json workloads[].params.job_text");
    REPLAY = Knob::list("replayed traces", "FILE", "A trace `fsbench record` wrote (repeatable): each becomes a workload that recreates the recorded starting tree on every setup, drops caches and replays the calls as fast as possible (docs/replay.md). Without --plan and --profile the run is the setups and the traces. In a plan file: a [[workload]] with kind = \"replay\" and trace = \"FILE\".").flags(&["--replay"]).merge(Merge::Rule("added to the plan's workloads; without --plan and --profile they replace the profile's timed workloads")).lands("plan.json plan.workloads[].params.kind_params.replay; results.json workloads");
    ENGINE = Knob::choice("engine", &["fsbench", "native", "fio"], "Load generator for the I/O jobs [default: fsbench (alias native); --fio-job sections run with fio unless --engine native is given].").flags(&["--engine"]).lands("plan.json options.engine");
    // How long, until when.
    UNTIL_SETTLED = Knob::switch("until settled", "After --rounds, keep running interleaved rounds of the comparisons that are still open (a claim or a headline row not yet confirmed or refuted), until each is settled, --budget is spent or --max-rounds is reached. A settled verdict is wrong at most 10 % of the time however many rounds it took (docs/reports.md).").flags(&["--until-settled"]).key("until_settled").merge(Merge::Either).lands("plan.json plan.settle; results.json settle");
    ERROR = Knob::choice("error control", crate::results::ErrorControl::NAMES, "The error the run's decisions carry: per-question (each decision wrong at most 10 %, the default) or per-run (familywise: the chance that any decision of the run is wrong at most 10 %, Bonferroni over its questions; costs rounds, which `fsbench plan` shows).").flags(&["--error"]).key("error").merge(Merge::Over).lands("plan.json plan.error; results.json error, judgements.counts.error_control");
    WARMUP = Knob::switch("warm-up", "Run the first setup-round once more before round 1 and discard it, as hyperfine's --warmup does: on some hosts the run's very first minutes are slower (a new image file's blocks, services and binaries starting cold), and without a warm-up they land on whichever setup runs first. Costs one setup-round.").flags(&["--warmup"]).key("warmup").merge(Merge::Either).lands("plan.json plan.warmup; results.json notes");
    BY_SETUP = Knob::switch("by setup", "Run every step of one setup, then the next setup, on one image made anew for each. By default, on an image target, each step runs on every setup back to back, each setup on a sparse image of its own, so a ratio compares runs seconds apart rather than minutes (docs/reports.md); use this when the scratch directory cannot hold one image per setup.").flags(&["--by-setup"]).key("by_setup").merge(Merge::Either).lands("plan.json plan.by_step");
    STEADY_STATE = Knob::text("steady state", "N,RANGE,SLOPE", "Run each I/O job in rounds until its IOPS reach steady state, then measure only the steady rounds (the SNIA Solid State Storage Performance Test Specification's rule).").flags(&["--steady-state"]).key("steady_state").merge(Merge::Over).lands("plan.json plan.steady; results.json workloads[].params.job.steady, series");
    STEADY_QUICK = Knob::switch("steady quick", "With --steady-state: the quick mode, which judges one-second windows instead of rounds (N seconds within RANGE/SLOPE, at most --steady-max, default 5m). A short look at whether a job has settled; not SNIA's steady state, and never claimed as it.").flags(&["--steady-quick"]).key("steady_quick").merge(Merge::Rule("with steady_state, as one setting: the flags' --steady-state, else the plan file's")).lands("plan.json plan.steady.quick");
    PRECONDITION = Knob::switch("precondition", "Precondition a block device as SNIA's Performance Test Specification does, so an SSD is measured worn in rather than fresh: first 2 × its capacity in 128 KiB sequential writes (once, before anything else), then the workload-dependent part.").flags(&["--precondition"]).key("precondition").merge(Merge::Either).lands("plan.json plan.precondition, plan.precondition_device; results.json workloads[].params.job");
    // Where.
    DEVICE = Knob::list("device", "DEV", "Use this scratch block device; EVERYTHING ON IT IS DESTROYED. Repeat it for setups over several devices (raid=): each device gets every safety check, one question lists them all.").flags(&["--device"]).lands("plan.json options.target, options.multi; results.json target");
    DIR = Knob::text("directory", "PATH", "Benchmark this existing directory as it is (no mkfs; only fsbench's subdirectory is touched).").flags(&["--dir"]).lands("plan.json options.target; results.json target");
    SCRATCH_DIR = Knob::text("scratch directory", "DIR", "Directory for the image (warned about when it is tmpfs: then RAM is measured).").flags(&["--scratch-dir"]).lands("plan.json options.target");
    KEEP_IMAGE = Knob::switch("keep image", "Keep the image file afterwards.").flags(&["--keep-image"]).lands("plan.json options.target");
    FORCE_WIPE = Knob::switch("force wipe", "Wipe a device even when it carries a filesystem, partition table or RAID/LVM/ZFS signature.").flags(&["--force-wipe"]).lands("plan.json options.target");
    YES = Knob::switch("yes", "Consent to wipe --device without being asked; needed where there is no terminal (scripts, CI). Without it the device name must be typed on the terminal. Accepted in every target mode.").flags(&["--yes"]).lands("plan.json options.yes");
    // The corpus of the metadata workloads.
    CORPUS_FROM = Knob::text("corpus directory", "DIR", "Pack this real directory (e.g. /usr/share) as the corpus instead of the synthetic tree; it is read into memory once and never from the filesystem under test.").flags(&["--corpus-from"]).lands("plan.json plan.corpus.from_dir");
    CORPUS_FILE = Knob::text("corpus tar", "FILE.tar", "Use this tarball as the corpus (e.g. one written by `fsbench corpus`).").flags(&["--corpus-file"]).lands("plan.json plan.corpus.file");
    // Output and what happens around the run.
    OUT = Knob::text("output directory", "DIR", "Output directory (default: ./fsbench-results/<UTC timestamp>).").flags(&["--out"]).lands("plan.json options.out");
    RESUME = Knob::text("resume", "OUT", "Continue the run whose output directory is OUT, with its original options.").flags(&["--resume"]).merge(Merge::Rule("replaces every other flag by OUT/plan.json")).lands("OUT/plan.json, OUT/journal.jsonl");
    INSTALL_MISSING = Knob::switch("install missing", "Install the packages the setups need first (apt-get, dnf, zypper, pacman; root), so no filesystem is skipped for missing tools. `fsbench plan` only prints what it would install.").flags(&["--install-missing"]).lands("the host's packages; results.json host.tool_versions");
    JSON = Knob::switch("json", "Print results.json to stdout at the end.").flags(&["--json"]).lands("stdout");
    MPI = Knob::switch("mpi", "Run as one rank of an MPI job (under `mpirun`, with --dir; needs a build with `--features mpi`).").flags(&["--mpi"]).lands("results.json host.extra.mpi_*");
    EMIT_FIO = Knob::switch("emit fio", "Print only the equivalent fio command line of every I/O job.").flags(&["--emit-fio"]).merge(Merge::Rule("`fsbench plan` only (`run` refuses it)")).lands("stdout or --output");
    OUTPUT = Knob::text("output file", "FILE", "Write the plan (or, with --emit-fio, the fio commands) to this file instead of stdout.").flags(&["--output"]).merge(Merge::Rule("`fsbench plan` only")).lands("the file");
    STORE = Knob::text("history store", "URL", "The history store: a SQLite file path or postgresql://[user@]host[:port]/db (default: $FSBENCH_STORE, else /var/lib/fsbench/history.db for root, $XDG_DATA_HOME/fsbench/history.db otherwise). A URL with a password is refused: use PGPASSWORD, ~/.pgpass, PGSERVICE or --store-password-file.").flags(&["--store"]).lands("the history store (docs/history.md)");
    STORE_PASSWORD_FILE = Knob::text("store password file", "FILE", "Read the PostgreSQL store's password from the first line of this file.").flags(&["--store-password-file"]).lands("nowhere (read once)");
    NO_HISTORY = Knob::switch("no history", "Do not record this run in the history store.").flags(&["--no-history"]).lands("nothing recorded");
}

/// The row whose flags include `flag` (`--fs`).
pub fn by_flag(flag: &str) -> Option<&'static Knob> {
    ALL.iter().copied().find(|k| k.flags.contains(&flag))
}

/// The row of a flag a workload kind owns (`--image-archive`), made from what the kind
/// declares (`workload::api::KindFlag`): the kinds are below the plan, so their flags have no
/// static row here, and one declared in the kind's folder is listed with the others.
pub fn kind_row(f: &'static crate::workload::api::KindFlag) -> Knob {
    let name = f.flag().trim_start_matches("--");
    Knob::text(name, f.value_name, f.doc)
        .flags(f.flags)
        .merge(Merge::Rule(f.merge))
        .lands(f.lands)
}

/// The rows of every flag the workload kinds own, in registry order.
pub fn kind_rows() -> Vec<Knob> {
    crate::workload::registry::flags().map(kind_row).collect()
}

/// The row of top-level plan-file key `key`.
pub fn by_key(key: &str) -> Option<&'static Knob> {
    ALL.iter().copied().find(|k| k.key == Some(key))
}

/// Whether `key` (top level, or `table.key` one level down) is a plan-file key of a row here
/// or in the parameter table; a table with rows for its keys (`corpus`) is one too.
fn is_key(key: &str) -> bool {
    by_key(key).is_some()
        || P::by_key(key).is_some()
        || P::ALL.iter().any(|p| {
            p.key
                .is_some_and(|k| k.strip_prefix(key).is_some_and(|r| r.starts_with('.')))
        })
}

/// The first key of a plan file's table without a row (top level, and inside a table whose
/// keys have rows, such as `[corpus]`), with what is wrong: `("corpus.bogus", "unknown key
/// 'corpus.bogus'")`.
pub fn unknown_key(t: &toml::Table) -> Option<(String, String)> {
    for (k, v) in t {
        if !is_key(k) {
            return Some((k.clone(), format!("unknown key '{k}'")));
        }
        // A table of rows of its own (`corpus.copies`) rather than one row's (`workload`).
        if by_key(k).is_some() || P::by_key(k).is_some() {
            continue;
        }
        match v {
            toml::Value::Table(inner) => {
                if let Some(sub) = inner.keys().find(|s| !is_key(&format!("{k}.{s}"))) {
                    let key = format!("{k}.{sub}");
                    let msg = format!("unknown key '{key}'");
                    return Some((key, msg));
                }
            }
            other => {
                let msg = format!("'{k}' is a table ([{k}]), not {}", other.type_str());
                return Some((k.clone(), msg));
            }
        }
    }
    None
}

/// Every top-level plan-file key, in the tables' order (for "unknown key" messages).
pub fn plan_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    let from_params = P::ALL
        .iter()
        .filter_map(|p| p.key)
        .map(|k| k.split('.').next().unwrap_or(k));
    for k in ALL.iter().filter_map(|k| k.key).chain(from_params) {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys
}

/// How a flag's value goes over the plan file's: an option given wins, a switch turns on.
pub(crate) trait Over {
    /// The flag's value over the plan file's.
    fn over(&self, plan: &Self) -> Self;
}

impl<T: Clone> Over for Option<T> {
    fn over(&self, plan: &Self) -> Self {
        self.as_ref().or(plan.as_ref()).cloned()
    }
}

impl Over for bool {
    fn over(&self, plan: &Self) -> Self {
        *self || *plan
    }
}

/// The knobs both the flags and a plan file give, one line each beside its row, in three
/// groups: `switches` (`field = ROW`: on or off), `values` (`field: Option<T> = read(ROW)`,
/// `read` the [`Reader`] method that takes it from a plan file) and `by_hand` (values whose
/// flags are written by hand because they are several flags or shared with `fsbench io`:
/// `--steady-state` with `--steady-round`/`--steady-max`/`--steady-quick`, `--precondition`;
/// a test in `cli/knob_flags.rs` checks them against their rows). The list is expanded into
/// [`PlanValues`] (the field, read by its row's key, the override rule), into `cli`'s
/// `SwitchFlags` and `ValueFlags` (the flag, its help, value name and parser from its row, in
/// this order), and a switch or value marked `in plan` lands in the resolved [`super::Plan`]
/// as given ([`PlanGiven`], flattened into plan.json). So a new knob is its row, its line here
/// and the code that reads it. `$then` is called with the list after the tokens in braces (a
/// macro cannot name another's repetition otherwise).
macro_rules! plan_knobs {
    ($then:ident { $($pass:tt)* }) => {
        $then! {
            switches {
                /// Rounds until settled after `rounds` (`--until-settled`, `until_settled`).
                until_settled = UNTIL_SETTLED;
                /// A discarded setup-round before round 1 (`--warmup`, `warmup`).
                warmup = WARMUP in plan;
                /// Every step of one setup, then the next, on one image (`--by-setup`,
                /// `by_setup`).
                by_setup = BY_SETUP;
            }
            values {
                /// Rounds per setup; with `until_settled` the minimum (`--rounds`, `rounds`).
                rounds: Option<u32> = count(&P::ROUNDS);
                /// The error the run's decisions carry (`--error`, `error`).
                error: Option<crate::results::ErrorControl> = error_control(&ERROR);
                /// The wall time of an until-settled run (`--budget`, `budget`).
                budget: Option<Duration> = duration(&P::BUDGET);
                /// Rounds at most of an until-settled run (`--max-rounds`, `max_rounds`).
                max_rounds: Option<u32> = count(&P::MAX_ROUNDS);
                /// Measured time per I/O job (`--runtime`, `runtime`).
                runtime: Option<Duration> = duration(&P::RUNTIME);
                /// Warm-up per I/O job (`--ramp`, `ramp`).
                ramp: Option<Duration> = duration(&P::RAMP);
                /// The quiet wait's window after mkfs (`--quiet-window`, `quiet_window`).
                quiet_window: Option<Duration> = duration(&P::QUIET_WINDOW);
                /// Copies of the synthetic corpus (`--corpus-copies`, `[corpus] copies`).
                corpus_copies: Option<u32> = count(&P::CORPUS_COPIES);
                /// Scale of each corpus copy, 1.0 the full tree (`--corpus-scale`,
                /// `[corpus] scale`).
                corpus_scale: Option<f64> = real(&P::CORPUS_SCALE);
            }
            by_hand {
                /// Run the I/O jobs until steady (`--steady-state` with `--steady-round`,
                /// `--steady-max`, `--steady-quick`; the keys of the same names); from a plan
                /// file checked, from the flags checked when resolved.
                steady: Option<crate::engine::SteadySpec> = steady(&STEADY_STATE);
                /// Condition the device and the data file first (`--precondition`,
                /// `precondition`).
                precondition: bool = switch(&PRECONDITION);
            }
            $($pass)*
        }
    };
}
pub(crate) use plan_knobs;

/// Declares [`PlanGiven`] and [`PlanValues::in_plan`] from the knobs marked `in plan`, each
/// written `field [in plan]: Type;` (a muncher: the marked lines are gathered, the others
/// passed over).
macro_rules! in_plan {
    (@done [$($(#[doc = $doc:literal])* $field:ident: $ty:ty,)*]) => {
        /// The switches and values that land in the resolved plan as given (flattened into
        /// plan.json; a switch `false`, a value `None` when an older plan.json lacks it).
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct PlanGiven {
            $($(#[doc = $doc])* #[serde(default)] pub $field: $ty,)*
        }

        impl PlanValues {
            /// The knobs of these values that land in the plan as given.
            pub fn in_plan(&self) -> PlanGiven {
                PlanGiven { $($field: ::std::clone::Clone::clone(&self.$field),)* }
            }
        }
    };
    (@done [$($done:tt)*] $(#[doc = $doc:literal])* $field:ident in plan: $ty:ty; $($rest:tt)*) => {
        $crate::plan::knobs::in_plan!(@done [$($done)* $(#[doc = $doc])* $field: $ty,] $($rest)*);
    };
    (@done [$($done:tt)*] $(#[doc = $doc:literal])* $field:ident: $ty:ty; $($rest:tt)*) => {
        $crate::plan::knobs::in_plan!(@done [$($done)*] $($rest)*);
    };
}
pub(crate) use in_plan;

/// Declares [`PlanValues`] from the list [`plan_knobs`] hands it: each field once, with the
/// reader that takes it from a plan file by its row's key; the struct, the plan-file reading,
/// the override rule and [`PlanGiven`] are generated.
macro_rules! plan_values {
    (
        switches { $($(#[doc = $sdoc:literal])* $switch:ident = $srow:ident $(in $splan:ident)?;)* }
        values { $($(#[doc = $vdoc:literal])* $value:ident: $vty:ty = $vread:ident($vrow:expr) $(in $vplan:ident)?;)* }
        by_hand { $($(#[doc = $hdoc:literal])* $hand:ident: $hty:ty = $hread:ident($hrow:expr);)* }
    ) => {
        /// The values a plan file and the flags both give (`Overrides::values` from the flags,
        /// `PlanDraft::values` from the file); [`PlanValues::over`] is the one rule that
        /// combines them. `None`/`false`: not given.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct PlanValues {
            $($(#[doc = $vdoc])* pub $value: $vty,)*
            $($(#[doc = $hdoc])* pub $hand: $hty,)*
            $($(#[doc = $sdoc])* pub $switch: bool,)*
        }

        impl PlanValues {
            /// The values a plan file's table gives, each read by its row's key; a wrong type
            /// is refused naming `file:line` and the key.
            pub fn from_plan(r: &$crate::plan::knobs::Reader<'_>) -> $crate::Result<PlanValues> {
                Ok(PlanValues {
                    $($value: r.$vread($vrow)?,)*
                    $($hand: r.$hread($hrow)?,)*
                    $($switch: r.switch(&$srow)?,)*
                })
            }

            /// These values (the flags') over the plan file's: a value given wins, a switch
            /// given turns on.
            pub fn over(&self, plan: &PlanValues) -> PlanValues {
                PlanValues {
                    $($value: $crate::plan::knobs::Over::over(&self.$value, &plan.$value),)*
                    $($hand: $crate::plan::knobs::Over::over(&self.$hand, &plan.$hand),)*
                    $($switch: $crate::plan::knobs::Over::over(&self.$switch, &plan.$switch),)*
                }
            }
        }

        $crate::plan::knobs::in_plan!(@done []
            $($(#[doc = $sdoc])* $switch $(in $splan)?: bool;)*
            $($(#[doc = $vdoc])* $value $(in $vplan)?: $vty;)*
        );
    };
}
#[cfg(test)]
pub(crate) use plan_values;

plan_knobs!(plan_values {});

/// Reads values out of a plan file's table by their rows' keys; a wrong type names the file,
/// the line and the key.
pub struct Reader<'a> {
    table: &'a toml::Table,
    text: &'a str,
    origin: &'a str,
}

impl<'a> Reader<'a> {
    /// A reader of `table`, parsed from `text` of the plan file `origin` (`--plan p.toml`).
    pub fn new(table: &'a toml::Table, text: &'a str, origin: &'a str) -> Self {
        Reader {
            table,
            text,
            origin,
        }
    }

    /// The value at a dotted key (`corpus.scale`).
    fn get(&self, key: &str) -> Option<&'a toml::Value> {
        let mut segs = key.split('.');
        let mut v = self.table.get(segs.next()?)?;
        for s in segs {
            v = v.as_table()?.get(s)?;
        }
        Some(v)
    }

    /// An error naming `file:line` of `key` and the key.
    fn bad(&self, key: &str, msg: impl std::fmt::Display) -> Error {
        let at = match P::file::line_of_key(self.text, key) {
            Some(l) => format!("{}:{l}", self.origin),
            None => self.origin.to_string(),
        };
        Error::invalid(at, format!("{key}: {msg}"))
    }

    fn key_of(row: &Param) -> &'static str {
        row.key.expect("a plan value's row has a plan-file key")
    }

    /// A whole number (its range was checked with the parameter table before).
    pub(crate) fn count<T: TryFrom<i64>>(&self, row: &Param) -> crate::Result<Option<T>> {
        let key = Self::key_of(row);
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => T::try_from(*i)
                .map(Some)
                .map_err(|_| self.bad(key, format!("{i} is out of range; give {}", row.wanted()))),
            Some(other) => Err(self.bad(
                key,
                format!("expected a whole number, found {}", other.type_str()),
            )),
        }
    }

    /// A real number (an integer is one too).
    pub(crate) fn real(&self, row: &Param) -> crate::Result<Option<f64>> {
        let key = Self::key_of(row);
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::Float(f)) => Ok(Some(*f)),
            Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(other) => Err(self.bad(
                key,
                format!("expected a number, found {}", other.type_str()),
            )),
        }
    }

    /// A duration written as a string (`"30s"`).
    pub(crate) fn duration(&self, row: &Param) -> crate::Result<Option<Duration>> {
        let key = Self::key_of(row);
        self.string(key)?
            .map(|s| crate::units::parse_duration(s).map_err(|e| self.bad(key, e)))
            .transpose()
    }

    fn string(&self, key: &str) -> crate::Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.bad(
                key,
                format!("expected a string, found {}", other.type_str()),
            )),
        }
    }

    fn bool(&self, key: &str) -> crate::Result<bool> {
        match self.get(key) {
            None => Ok(false),
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(other) => Err(self.bad(
                key,
                format!("expected true or false, found {}", other.type_str()),
            )),
        }
    }

    /// `"per-question"`/`"per-run"`.
    pub(crate) fn error_control(
        &self,
        row: &Knob,
    ) -> crate::Result<Option<crate::results::ErrorControl>> {
        let key = row.key.expect("a plan value's row has a plan-file key");
        self.string(key)?
            .map(|s| {
                crate::results::ErrorControl::parse(s).ok_or_else(|| {
                    self.bad(
                        key,
                        format!(
                            "'{s}' is not one of {}",
                            crate::results::ErrorControl::NAMES.join(", ")
                        ),
                    )
                })
            })
            .transpose()
    }

    /// `true`/`false`.
    pub(crate) fn switch(&self, row: &Knob) -> crate::Result<bool> {
        self.bool(row.key.expect("a plan value's row has a plan-file key"))
    }

    /// `steady_state = "5,20,10"` with `steady_round`, `steady_max` and `steady_quick`,
    /// checked as one setting.
    pub(crate) fn steady(&self, row: &Knob) -> crate::Result<Option<crate::engine::SteadySpec>> {
        let key = row.key.expect("a plan value's row has a plan-file key");
        let max = self.duration(&P::STEADY_MAX)?;
        let round = self.duration(&P::STEADY_ROUND)?;
        let quick = self.bool(STEADY_QUICK.key.unwrap_or_default())?;
        match self.string(key)? {
            None if max.is_some() || round.is_some() || quick => Err(Error::invalid(
                self.origin,
                "steady_max, steady_round and steady_quick need steady_state (e.g. \"5,20,10\")",
            )),
            None => Ok(None),
            Some(c) => crate::engine::SteadySpec::parse(c, max, round, quick)
                .map(Some)
                .map_err(|e| {
                    Error::invalid(
                        self.origin,
                        format!("steady_state / steady_round / steady_max: {e}"),
                    )
                }),
        }
    }
}

/// The table as Markdown, the second part of `docs/parameters.md`.
pub fn markdown() -> String {
    let mut s = String::from(
        "\n# Flags and plan-file keys\n\n\
         Generated from `src/plan/knobs.rs`, with the table above. Every flag of `fsbench run` \
         and `fsbench plan` and every top-level plan-file key has a row in one of the two \
         tables (a test fails otherwise; a plan file with any other key is refused naming its \
         line). A number's range is its row above.\n\n\
         | name | flags | plan-file key | value | flag and plan file | recorded in | what it is |\n\
         |---|---|---|---|---|---|---|\n",
    );
    let code = |v: &[&str]| {
        v.iter()
            .map(|x| format!("`{x}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for k in ALL.iter().map(|k| (*k).clone()).chain(kind_rows()) {
        let value = match k.value {
            Value::Switch => "on/off".to_string(),
            Value::Text(n) => format!("`{n}`"),
            Value::List(n) => format!("`{n}`, several"),
            Value::Choice(names) => format!("one of {}", code(names)),
            Value::Table => "tables".to_string(),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            k.name,
            code(k.flags),
            k.key.map(|x| format!("`{x}`")).unwrap_or_default(),
            value.replace('|', "\\|"),
            k.merge.describe(),
            k.lands,
            k.doc.replace('|', "\\|")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_reachable_once_and_documented() {
        for k in ALL {
            assert!(!k.doc.is_empty() && !k.lands.is_empty(), "{}", k.name);
            for f in k.flags {
                assert_eq!(by_flag(f).map(|r| r.name), Some(k.name), "{f} twice");
                assert!(P::by_flag(f).is_none(), "{f} is also a parameter row");
            }
            if let Some(key) = k.key {
                assert_eq!(by_key(key).map(|r| r.name), Some(k.name), "{key} twice");
                assert!(P::by_key(key).is_none(), "{key} is also a parameter row");
            }
            assert!(
                k.flags.is_empty() || k.merge != Merge::FileOnly,
                "{}",
                k.name
            );
            assert!(k.key.is_some() || k.merge != Merge::FileOnly, "{}", k.name);
        }
    }

    /// Every key `plan/file.rs` reads has a row: a plan file with any other key is refused,
    /// and one with every row's key parses.
    #[test]
    fn the_plan_file_takes_exactly_the_rows_keys() {
        let e = super::super::file::parse("suite = \"standard\"\nbogus = 1\n", "--plan p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--plan p.toml:2: unknown key 'bogus'") && e.contains("rounds"),
            "{e}"
        );
        let e = super::super::file::parse("suite = \"standard\"\n[corpus]\ncopes = 1\n", "p")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown key 'corpus.copes'"), "{e}");
        let example = |key: &str| -> &str {
            match key {
                "fs" => "[\"ext4\"]",
                "setup" => "[{ name = \"x\", fs = \"xfs\" }]",
                "workload" => "[{ id = \"randread\" }]",
                "suite" => "\"standard\"",
                "until_settled" | "precondition" | "steady_quick" | "warmup" | "by_setup" => {
                    "false"
                }
                "aged_twins" => "\"churn\"",
                "error" => "\"per-run\"",
                "steady_state" => "\"5,20,10\"",
                "steady_round" => "\"2s\"",
                "steady_max" => "\"20s\"",
                _ => "\"x\"",
            }
        };
        let mut text = String::new();
        for k in plan_keys() {
            let v = match P::by_key(k) {
                Some(_) if k.starts_with("steady_") => example(k).to_string(),
                Some(p) => match p.unit {
                    P::Unit::Seconds => "\"2s\"".to_string(),
                    P::Unit::Bytes => "\"64M\"".to_string(),
                    P::Unit::Real => "0.5".to_string(),
                    _ => "3".to_string(),
                },
                None if k == "corpus" => "{ copies = 1, scale = 0.5 }".to_string(),
                None => example(k).to_string(),
            };
            text.push_str(&format!("{k} = {v}\n"));
        }
        let d =
            super::super::file::parse(&text, "every key").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(d.values.rounds, Some(3));
        assert_eq!(d.values.corpus_scale, Some(0.5));
        assert!(d.values.steady.is_some());
    }

    #[test]
    fn flags_win_over_the_plan_file_and_switches_only_turn_on() {
        let plan = PlanValues {
            rounds: Some(5),
            runtime: Some(Duration::from_secs(30)),
            precondition: true,
            ..Default::default()
        };
        let flags = PlanValues {
            rounds: Some(2),
            until_settled: true,
            ..Default::default()
        };
        let v = flags.over(&plan);
        assert_eq!(v.rounds, Some(2));
        assert_eq!(v.runtime, Some(Duration::from_secs(30)));
        assert!(v.until_settled && v.precondition);
        assert_eq!(PlanValues::default().over(&plan), plan);
    }

    #[test]
    fn a_wrong_type_names_the_line_and_key() {
        let e = super::super::file::parse("suite = \"standard\"\n\nruntime = 5\n", "--plan p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--plan p.toml:3: runtime: expected a string"),
            "{e}"
        );
        let e =
            super::super::file::parse("suite = \"standard\"\nrounds = \"3\"\n", "--plan p.toml")
                .unwrap_err()
                .to_string();
        assert!(
            e.starts_with("--plan p.toml:2: rounds: expected a whole number"),
            "{e}"
        );
    }
}
