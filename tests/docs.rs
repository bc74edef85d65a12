//! The docs cannot rot: every shell block of README.md and docs/*.md marked runnable is run.
//!
//! The marker is the fenced block's info string (docs/testing.md):
//! - `sh runnable` — run as written (after the substitutions below), as any user;
//! - `sh runnable root` — needs root and loop devices: gated by `tests/common`'s privileged
//!   gate (skipped without, failed under `FSBENCH_REQUIRE_PRIVILEGED=1`);
//! - `sh runnable mpi` — run only by a build with `--features mpi` (`.ci/run`'s; a build without
//!   the feature lists them as left to such a build);
//! - `sh no-run: REASON` — shown, not run (it wipes a disk, installs packages, …); listed.
//!
//! A block whose info string is `sh`, `bash`, `shell`, `console` or `zsh` without a marker
//! fails the test, so a new command cannot slip in unchecked. Each block runs as one
//! `bash -euo pipefail` script in a fresh scratch directory of its own, with `fsbench` on PATH.
//! That `fsbench` is this test binary under the name `fsbench` (a symlink): it rewrites the
//! arguments by [`SHORTEN`] and execs the real binary, so `fsbench run` finishes in seconds.
//! Blocks run four at a time (they mostly wait for devices to go quiet).
//!
//! Also checked: README.md stays under 300 lines, its test command is `.ci/run`'s, and every
//! relative link in the docs names a file that exists.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Text substitutions made in a block before it runs: (written, run as, why).
const TEXT: &[(&str, &str, &str)] = &[
    (
        "cargo run --release -- ",
        "fsbench ",
        "the binary cargo built for this test, from the same sources",
    ),
    (
        "cargo build --release --features mpi",
        "true",
        "this test's binary was built with --features mpi",
    ),
    (
        "target/release/fsbench",
        "fsbench",
        "the binary cargo built for this test",
    ),
    (
        "/mnt/shared",
        "$PWD/shared",
        "a shared mount stands in as a directory in the block's scratch directory",
    ),
];

/// How a flag of a subcommand is shortened: its value is replaced when given; with `add`,
/// it is also appended when absent (for `run`: only on an image target, see [`Add`]).
struct Shorten {
    sub: &'static str,
    flag: &'static str,
    value: &'static str,
    add: Add,
}

/// When a [`Shorten`] flag that the command does not give is appended.
#[derive(PartialEq)]
enum Add {
    /// Never: only a given value is replaced.
    Never,
    /// Always.
    Always,
    /// When the run formats an image (no `--dir`, `--device` or `--resume`).
    Image,
}

/// The shortening table (docs/testing.md prints the same).
const SHORTEN: &[Shorten] = &[
    sh("run", "--rounds", "1", Add::Always),
    sh("run", "--runtime", "1s", Add::Always),
    sh("run", "--ramp", "0s", Add::Always),
    sh("run", "--file-size", "16M", Add::Always),
    sh("run", "--corpus-copies", "1", Add::Always),
    sh("run", "--corpus-scale", "0.02", Add::Always),
    sh("run", "--quiet-window", "1s", Add::Image),
    sh("run", "--quiet-timeout", "10s", Add::Image),
    sh("run", "--image-size", "1G", Add::Image),
    sh("run", "--scratch-dir", "$FSBENCH_DOCS_SCRATCH", Add::Image),
    sh("io", "--runtime", "1s", Add::Never),
    sh("io", "--ramp", "0s", Add::Never),
    sh("meta", "--corpus-scale", "0.02", Add::Never),
    sh("meta", "--smallfiles", "500", Add::Never),
    sh("meta", "--fsmark-files", "100", Add::Never),
];

const fn sh(sub: &'static str, flag: &'static str, value: &'static str, add: Add) -> Shorten {
    Shorten {
        sub,
        flag,
        value,
        add,
    }
}

/// `fsbench run`'s filesystems when the command names none (ZFS left out: zfs-fuse is one
/// daemon per machine and its runs take several times longer; tests/run/full_run.rs covers ZFS), and
/// setups on ZFS are dropped from a given `--fs` for the same reason.
const DEFAULT_FS: &str = "ext4,xfs,btrfs";

/// `fsbench meta` workloads that take a corpus get these flags when they name a workload.
const META_WORKLOAD_FLAGS: &[(&str, &str)] = &[
    ("--corpus-scale", "0.02"),
    ("--smallfiles", "500"),
    ("--fsmark-files", "100"),
];

/// The environment variable naming the real binary, for the shim.
const REAL_VAR: &str = "FSBENCH_DOCS_REAL";

fn main() {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    if Path::new(&argv0)
        .file_name()
        .is_some_and(|n| n == "fsbench")
    {
        return shim();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        println!("docs: test");
        return;
    }
    // `cargo test NAME` passes NAME to every test binary: run only when it names this test.
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "docs".contains(f.as_str())) {
        return;
    }
    let failures = docs();
    if failures.is_empty() {
        println!("test result: ok. docs");
    } else {
        eprintln!("\ndocs test failed:");
        for f in &failures {
            eprintln!("  - {f}");
        }
        std::process::exit(101);
    }
}

/// Running as `fsbench`: rewrite the arguments by [`SHORTEN`] and exec the real binary.
fn shim() {
    let real = std::env::var_os(REAL_VAR).expect("FSBENCH_DOCS_REAL");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = shorten(
        &args,
        &std::env::var("FSBENCH_DOCS_SCRATCH").unwrap_or_default(),
    );
    let e = Command::new(real).args(&args).exec();
    eprintln!("fsbench (docs shim): {e}");
    std::process::exit(127);
}

/// The arguments of one fsbench command line after the shortening table.
fn shorten(args: &[String], scratch: &str) -> Vec<String> {
    let Some(sub) = args.first().map(String::as_str) else {
        return args.to_vec();
    };
    let rules: Vec<&Shorten> = SHORTEN.iter().filter(|r| r.sub == sub).collect();
    let value_of = |r: &Shorten| r.value.replace("$FSBENCH_DOCS_SCRATCH", scratch);
    let mut out = vec![sub.to_string()];
    let mut seen: Vec<&str> = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let a = &args[i];
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (a.as_str(), None),
        };
        if let Some(r) = rules.iter().find(|r| r.flag == flag) {
            seen.push(r.flag);
            out.push(r.flag.to_string());
            out.push(value_of(r));
            i += if inline.is_some() { 1 } else { 2 };
            continue;
        }
        if sub == "run" && flag == "--fs" {
            seen.push("--fs");
            let list = inline
                .map(str::to_string)
                .or_else(|| args.get(i + 1).cloned());
            out.push("--fs".into());
            out.push(drop_zfs(&list.unwrap_or_default()));
            i += if inline.is_some() { 1 } else { 2 };
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    let has = |f: &str| {
        args.iter()
            .any(|a| a == f || a.starts_with(&format!("{f}=")))
    };
    let image = sub == "run" && !has("--dir") && !has("--device") && !has("--resume");
    for r in &rules {
        let add = match r.add {
            Add::Never => false,
            Add::Always => true,
            Add::Image => image,
        };
        if add && !seen.contains(&r.flag) && !has("--resume") {
            out.push(r.flag.to_string());
            out.push(value_of(r));
        }
    }
    if image && !seen.contains(&"--fs") {
        out.push("--fs".into());
        out.push(DEFAULT_FS.into());
    }
    if sub == "meta" && has("--workload") {
        for (f, v) in META_WORKLOAD_FLAGS {
            if !has(f) {
                out.push(f.to_string());
                out.push(v.to_string());
            }
        }
    }
    out
}

/// `--fs` without the setups on ZFS (`zfs`, `NAME=zfs…`).
fn drop_zfs(list: &str) -> String {
    let kept: Vec<&str> = list
        .split(',')
        .filter(|s| {
            let fs = s.split_once('=').map_or(*s, |(_, v)| v);
            !(fs == "zfs" || fs.starts_with("zfs:"))
        })
        .collect();
    kept.join(",")
}

/// What a fenced block's info string says.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Runnable { root: bool, mpi: bool },
    NoRun(String),
    Unmarked,
    Other,
}

/// One fenced block of a Markdown file.
#[derive(Clone, Debug)]
struct Block {
    file: String,
    line: usize,
    kind: Kind,
    text: String,
}

fn kind(info: &str) -> Kind {
    let mut words = info.split_whitespace();
    let Some(lang) = words.next() else {
        return Kind::Other;
    };
    if !["sh", "bash", "shell", "console", "zsh"].contains(&lang) {
        return Kind::Other;
    }
    let rest: Vec<&str> = words.collect();
    match rest.first().copied() {
        Some("runnable") => Kind::Runnable {
            root: rest.contains(&"root"),
            mpi: rest.contains(&"mpi"),
        },
        Some(w) if w.starts_with("no-run") => Kind::NoRun(
            info.split_once("no-run")
                .map(|(_, r)| r.trim_start_matches(':').trim().to_string())
                .unwrap_or_default(),
        ),
        _ => Kind::Unmarked,
    }
}

fn blocks(root: &Path, rel: &str) -> Vec<Block> {
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    let mut out = Vec::new();
    let mut open: Option<(usize, Kind, String)> = None;
    for (n, line) in text.lines().enumerate() {
        match &mut open {
            None => {
                if let Some(info) = line.strip_prefix("```") {
                    open = Some((n + 1, kind(info.trim()), String::new()));
                }
            }
            Some((start, k, body)) => {
                if line.trim_end() == "```" {
                    out.push(Block {
                        file: rel.to_string(),
                        line: *start,
                        kind: k.clone(),
                        text: std::mem::take(body),
                    });
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    out
}

fn doc_files(root: &Path) -> Vec<String> {
    let mut files = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Relative links `](path)` or `](path#anchor)` that name no file.
fn broken_links(root: &Path, rel: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    let base = root.join(rel).parent().unwrap().to_path_buf();
    let mut bad = Vec::new();
    for (i, _) in text.match_indices("](") {
        let tail = &text[i + 2..];
        let Some(end) = tail.find(')') else { continue };
        let target = tail[..end].split('#').next().unwrap();
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        if !base.join(target).exists() {
            bad.push(format!("{rel}: link to {target}, which does not exist"));
        }
    }
    bad
}

/// The outcome of one runnable block.
struct Ran {
    block: Block,
    result: Result<Duration, String>,
    skipped: Option<String>,
}

fn docs() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut failures = shortening_checks();

    // README: five minutes' reading, and the same test command as CI.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = readme.lines().count();
    println!("docs: README.md has {lines} lines (at most 300)");
    if lines > 300 {
        failures.push(format!("README.md has {lines} lines, more than 300"));
    }
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    for cmd in ["cargo test --locked --release --no-fail-fast --features mpi"] {
        if !ci.contains(cmd) {
            failures.push(format!(".ci/run does not run `{cmd}`"));
        }
    }
    for said in ["bash .ci/run", "cargo test --locked --release"] {
        if !readme.contains(said) {
            failures.push(format!("README.md does not name the test command `{said}`"));
        }
    }

    let files = doc_files(&root);
    let mut all = Vec::new();
    for f in &files {
        failures.extend(broken_links(&root, f));
        all.extend(blocks(&root, f));
    }
    for b in all.iter().filter(|b| b.kind == Kind::Unmarked) {
        failures.push(format!(
            "{}:{}: a shell block without a marker: write `sh runnable` (run by this test) or \
             `sh no-run: why`",
            b.file, b.line
        ));
    }
    let mpi_build = cfg!(feature = "mpi");
    let mut todo = Vec::new();
    for b in &all {
        match &b.kind {
            Kind::NoRun(why) => {
                println!("docs: {}:{}: not run ({why}):", b.file, b.line);
                for l in b.text.lines() {
                    println!("    $ {l}");
                }
            }
            // A build with the feature runs every block; one without leaves the MPI blocks.
            Kind::Runnable { mpi: true, .. } if !mpi_build => {
                println!(
                    "docs: {}:{}: left to a build with --features mpi",
                    b.file, b.line
                );
            }
            Kind::Runnable { .. } => todo.push(b.clone()),
            _ => {}
        }
    }
    println!(
        "docs: {} file(s), {} runnable block(s) in this build{}",
        files.len(),
        todo.len(),
        if mpi_build { " (--features mpi)" } else { "" }
    );

    let shim_dir = common::scratch("fsbench-docs-shim-");
    std::os::unix::fs::symlink(
        std::env::current_exe().unwrap(),
        shim_dir.path().join("fsbench"),
    )
    .unwrap();
    // The long ones (a whole `fsbench run`) first, so the pool ends together.
    todo.sort_by_key(|b| !b.text.contains("fsbench run"));
    let started = Instant::now();
    let queue = Mutex::new(todo.into_iter());
    let done = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap().next();
                    let Some(b) = next else { break };
                    let ran = run_block(&root, shim_dir.path(), b);
                    done.lock().unwrap().push(ran);
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by(|a, b| (&a.block.file, a.block.line).cmp(&(&b.block.file, b.block.line)));
    let (mut ok, mut skipped) = (0, 0);
    for r in &done {
        let b = &r.block;
        match (&r.skipped, &r.result) {
            (Some(why), _) => {
                skipped += 1;
                println!("docs: {}:{}: skipped: {why}", b.file, b.line);
            }
            (None, Ok(t)) => {
                ok += 1;
                println!(
                    "docs: {}:{}: ran in {:.1} s:",
                    b.file,
                    b.line,
                    t.as_secs_f64()
                );
            }
            (None, Err(e)) => {
                println!("docs: {}:{}: FAILED:", b.file, b.line);
                failures.push(format!("{}:{}: {e}", b.file, b.line));
            }
        }
        for l in substituted(&b.text).lines() {
            println!("    $ {l}");
        }
    }
    println!(
        "docs: {ok} block(s) ran, {skipped} skipped, {} failed, in {:.0} s (four at a time)",
        done.len() - ok - skipped,
        started.elapsed().as_secs_f64()
    );
    if !done.is_empty() && ok > 0 {
        common::ran("docs::runnable_blocks");
    }
    failures
}

fn substituted(text: &str) -> String {
    TEXT.iter()
        .fold(text.to_string(), |t, (from, to, _)| t.replace(from, to))
}

/// Run one block in a scratch directory of its own; check it left nothing attached.
fn run_block(root: &Path, shim: &Path, block: Block) -> Ran {
    let Kind::Runnable {
        root: needs_root, ..
    } = block.kind
    else {
        unreachable!()
    };
    let name = format!("docs::{}:{}", block.file, block.line);
    let mut needs = common::privileged(&name).tools(&["bash", "jq", "man"]);
    if needs_root {
        needs = needs
            .loop_devices()
            .tools(&["mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "fio"]);
    }
    if matches!(block.kind, Kind::Runnable { mpi: true, .. }) {
        needs = needs.tools(&["mpirun"]);
    }
    if let Some(why) = needs.missing() {
        // Under FSBENCH_REQUIRE_PRIVILEGED=1 a missing prerequisite fails the block.
        let strict = common::strict();
        return Ran {
            block,
            result: if strict {
                Err(format!("{}=1 and {why}", common::REQUIRE_VAR))
            } else {
                Ok(Duration::ZERO)
            },
            skipped: (!strict).then_some(why),
        };
    }
    let dir = common::scratch("fsbench-docs-");
    let script = format!("set -euo pipefail\n{}", substituted(&block.text));
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let t = Instant::now();
    let out = Command::new("timeout")
        .args(["600", "bash", "-c", &script])
        .current_dir(dir.path())
        .env("PATH", path)
        .env(REAL_VAR, common::BIN)
        .env(common::STORE_VAR, common::TEST_STORE)
        .env("FSBENCH_DOCS_SCRATCH", dir.path())
        .env("FSBENCH_REPO", root)
        .env("COLUMNS", "100")
        .output();
    let elapsed = t.elapsed();
    let result = match out {
        Err(e) => Err(format!("bash: {e}")),
        Ok(o) if !o.status.success() => Err(format!(
            "exit {:?}\n--- stdout (tail) ---\n{}\n--- stderr (tail) ---\n{}",
            o.status.code(),
            tail(&common::stdout(&o)),
            tail(&common::stderr(&o))
        )),
        Ok(_) => {
            let left = common::leftovers(dir.path(), None);
            if left.is_empty() {
                Ok(elapsed)
            } else {
                Err(format!("left behind: {left:?}"))
            }
        }
    };
    Ran {
        block,
        result,
        skipped: None,
    }
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(25)..].join("\n")
}

/// The table applied to two command lines, checked before anything runs.
fn shortening_checks() -> Vec<String> {
    let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    let cases = [
        (
            "run --fs ext4,zfs,zfs-16k=zfs:recordsize=16K --rounds 3",
            "run --fs ext4 --rounds 1 --runtime 1s --ramp 0s --file-size 16M --corpus-copies 1 \
             --corpus-scale 0.02 --quiet-window 1s --quiet-timeout 10s --image-size 1G \
             --scratch-dir /S",
        ),
        (
            "run --dir d --only randread",
            "run --dir d --only randread --rounds 1 --runtime 1s --ramp 0s --file-size 16M \
             --corpus-copies 1 --corpus-scale 0.02",
        ),
        ("io --runtime=5s --size 64M", "io --runtime 1s --size 64M"),
    ];
    let mut bad = Vec::new();
    for (from, want) in cases {
        let want: Vec<String> = want.split_whitespace().map(String::from).collect();
        let got = shorten(&argv(from), "/S");
        if got != want {
            bad.push(format!(
                "shortening `{from}` gave {got:?}, expected {want:?}"
            ));
        }
    }
    bad
}
