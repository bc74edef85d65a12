//! The module layering of docs/ARCHITECTURE.md ("Module map"), checked on the source: no
//! `crate::` path in a lower layer's code names a module of a higher layer. Test items (the
//! item a `#[cfg(test)]` marks: the test module, a test-only function, `mod` or statement;
//! [`code_lines`]) and comments are not counted; code after them is.
//!
//! `cargo test --test layering -- --nocapture` prints every upward edge it finds.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Layers, lowest first; a module may use its own layer and the ones below it.
/// Keep in step with the module map in docs/ARCHITECTURE.md.
const LAYERS: &[&[&str]] = &[
    &["units", "error", "Error", "Result", "metrics"],
    &["results", "stats", "cancel"],
    &["measure", "host"],
    &["engine", "fio", "fs", "scratch"],
    &["workload"],
    &["plan"],
    &["doctor", "runner"],
    &["mpi"],
    &["claims", "report", "history", "tune"],
    &["cli"],
    &["commands"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The crate's `src` directory and every `.rs` file below it, sorted.
fn source_files() -> (PathBuf, Vec<PathBuf>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    (src, files)
}

/// `src/plan/resolve.rs` → `plan`; `src/units.rs` → `units`.
fn owner(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// One `crate::` reference from one top-level module to another.
struct Edge {
    /// `src/file.rs:line`.
    at: String,
    from: String,
    to: String,
}

/// Every `crate::` edge between two top-level modules that have a layer (test modules and
/// comments left out).
fn edges() -> Vec<Edge> {
    let (src, files) = source_files();
    let mut all = Vec::new();
    for f in &files {
        let from = owner(&src, f);
        if layer(&from).is_none() {
            continue; // lib.rs, main.rs: the top
        }
        let text = std::fs::read_to_string(f).unwrap();
        let mut in_use_group = false;
        for (n, line) in code_lines(&text) {
            let code = line.split("//").next().unwrap_or("");
            let mut targets = BTreeSet::new();
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                if rest.starts_with('{') {
                    in_use_group = true;
                    rest = &rest[1..];
                    continue;
                }
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                targets.insert(name);
            }
            // `use crate::{a::X, b::Y};` spread over lines.
            if in_use_group {
                for word in
                    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                {
                    if let Some((m, _)) = word.split_once("::") {
                        targets.insert(m.to_string());
                    }
                }
                if code.contains("};") {
                    in_use_group = false;
                }
            }
            for t in targets {
                if t != from && layer(&t).is_some() {
                    all.push(Edge {
                        at: format!("src/{}:{}", f.strip_prefix(&src).unwrap().display(), n + 1),
                        from: from.clone(),
                        to: t,
                    });
                }
            }
        }
    }
    all
}

/// Every edge that points up, as `file:line: owner -> target`.
fn upward_edges() -> Vec<String> {
    edges()
        .into_iter()
        .filter(|e| layer(&e.to) > layer(&e.from))
        .map(|e| format!("{}: {} -> {}", e.at, e.from, e.to))
        .collect()
}

/// Pairs of top-level modules that use each other, directly or through others: each cycle
/// as its modules and one edge of each step (`a -> b (src/a/x.rs:3)`).
fn import_cycles(edges: &[Edge]) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut graph: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for e in edges {
        // Error/Result are re-exports of `error`.
        let to = match e.to.as_str() {
            "Error" | "Result" => "error",
            t => t,
        };
        if to != e.from {
            graph
                .entry(e.from.as_str())
                .or_default()
                .entry(to)
                .or_insert(&e.at);
        }
    }
    // A path from `to` back to `from` closes a cycle through the edge from → to.
    fn path<'a>(
        graph: &BTreeMap<&'a str, BTreeMap<&'a str, &'a str>>,
        from: &'a str,
        goal: &str,
        seen: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if from == goal {
            return Some(vec![from]);
        }
        if !seen.insert(from) {
            return None;
        }
        for next in graph.get(from).into_iter().flat_map(|m| m.keys()) {
            if let Some(mut p) = path(graph, next, goal, seen) {
                p.insert(0, from);
                return Some(p);
            }
        }
        None
    }
    let mut found = BTreeSet::new();
    let mut out = Vec::new();
    for (&from, tos) in &graph {
        for &to in tos.keys() {
            if let Some(back) = path(&graph, to, from, &mut BTreeSet::new()) {
                let mut members: Vec<&str> = back.clone();
                members.sort();
                members.dedup();
                if found.insert(members) {
                    let mut cycle = vec![from];
                    cycle.extend(back);
                    let steps: Vec<String> = cycle
                        .windows(2)
                        .map(|w| format!("{} -> {} ({})", w[0], w[1], graph[w[0]][w[1]]))
                        .collect();
                    out.push(steps.join(", "));
                }
            }
        }
    }
    out
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    let cycles = import_cycles(&edges());
    for c in &cycles {
        println!("cycle: {c}");
    }
    println!("{} import cycle(s)", cycles.len());
    assert!(
        cycles.is_empty(),
        "top-level modules that import each other (break the cycle: move the shared part \
         down, or let the higher module register a hook):\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_cycle_check_finds_a_planted_cycle() {
    let e = |from: &str, to: &str| Edge {
        at: format!("src/{from}.rs:1"),
        from: from.into(),
        to: to.into(),
    };
    let cycles = import_cycles(&[e("a", "b"), e("b", "c"), e("c", "a"), e("c", "d")]);
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert!(cycles[0].contains("c -> a"), "{cycles:?}");
    assert!(import_cycles(&[e("a", "b"), e("b", "c")]).is_empty());
}

#[test]
fn no_lower_layer_uses_a_higher_one() {
    let all = upward_edges();
    for b in &all {
        println!("{b}");
    }
    println!("{} upward edge(s)", all.len());
    assert!(
        all.is_empty(),
        "upward `crate::` edges (see docs/ARCHITECTURE.md, Module map):\n{}",
        all.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(m) = line.trim().strip_prefix("pub mod ") {
            let m = m.trim_end_matches(';');
            assert!(layer(m).is_some(), "module {m} has no layer in LAYERS");
        }
    }
}

/// Files that may hold `unsafe` besides `src/host/sys/` (docs/ARCHITECTURE.md, "unsafe"),
/// each with its reason; keep in step with that list.
const UNSAFE_ALLOWED: &[(&str, &str)] = &[
    (
        "engine/buffer.rs",
        "the engine's hot path: aligned buffer pool",
    ),
    (
        "engine/uring.rs",
        "the engine's hot path: io_uring submissions",
    ),
    (
        "engine/psync.rs",
        "the engine's hot path: pread/pwrite on pool buffers",
    ),
    (
        "workload/sqlite/vfs.rs",
        "SQLite's VFS is an FFI callback table",
    ),
    (
        "cancel.rs",
        "registering the signal handler: its async-signal safety is the closure's",
    ),
];

/// `unsafe` as a word in code (not in comments or strings that mention it).
fn mentions_unsafe(code: &str) -> bool {
    code.match_indices("unsafe").any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + "unsafe".len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !word(before) && !word(after) && code[..i].matches('"').count().is_multiple_of(2)
    })
}

#[test]
fn unsafe_lives_in_host_sys_the_hot_path_and_the_listed_exceptions() {
    let (src, files) = source_files();
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if rel.starts_with("host/sys/") || UNSAFE_ALLOWED.iter().any(|(p, _)| *p == rel) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if mentions_unsafe(code) {
                bad.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "`unsafe` outside src/host/sys/ and the allowed files (move the raw call into a safe \
         wrapper in host/sys, or list the file in UNSAFE_ALLOWED and docs/ARCHITECTURE.md):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_unsafe_scan_sees_unsafe_code_and_skips_words_and_strings() {
    assert!(mentions_unsafe("    let x = unsafe { f() };"));
    assert!(mentions_unsafe("unsafe impl Send for X {}"));
    assert!(!mentions_unsafe("let unsafe_ok = 1;"));
    assert!(!mentions_unsafe(r#"println!("no unsafe here");"#));
}

/// Filesystem names (and the mount types they show as) that only their drivers may match on.
const FS_NAMES: &[&str] = &["ext4", "xfs", "btrfs", "zfs", "fuse.zfs", "tmpfs"];

/// Files outside `src/fs` that may still compare a filesystem name, each with its reason;
/// a fact about a filesystem belongs in its driver (`fs::caps::Caps`, docs/ARCHITECTURE.md,
/// "How to add … a filesystem").
const FS_NAME_ALLOWED: &[(&str, &str)] = &[
    (
        "plan/resolve/select.rs",
        "DEFAULT_FS and default_fs: the default `--fs` selection, a policy over names (ZFS only in the kernel), not a driver's fact",
    ),
    (
        "doctor/install.rs",
        "`zfs` here is a program with no package (tool names), not the filesystem",
    ),
    (
        "doctor/checks.rs",
        "findings about the host: a target directory on tmpfs/ramfs (RAM, not a setup), and \
         the virtual-disk rotational flag whose cost the finding words for Btrfs's ssd mode",
    ),
];

/// Whether `code` compares or matches a filesystem name literal: `== "zfs"`, `"zfs" =>`,
/// `"zfs" | "fuse.zfs"`, or a list of two names (`["ext4", "xfs"].contains(..)`).
fn matches_fs_name(code: &str) -> bool {
    FS_NAMES.iter().any(|name| {
        let q = format!("\"{name}\"");
        code.match_indices(&q).any(|(i, _)| {
            let before = code[..i].trim_end();
            let after = code[i + q.len()..].trim_start();
            let other_name_after = after
                .strip_prefix(',')
                .map(str::trim_start)
                .is_some_and(|a| FS_NAMES.iter().any(|n| a.starts_with(&format!("\"{n}\""))));
            before.ends_with("==")
                || before.ends_with("!=")
                || (before.ends_with('|') && !before.ends_with("||"))
                || after.starts_with("==")
                || after.starts_with("!=")
                || after.starts_with("=>")
                || (after.starts_with('|') && !after.starts_with("||"))
                || other_name_after
        })
    })
}

/// Every line of code outside `src/fs` that `hit` matches (it returns what to print), as
/// `src/FILE:LINE: code` — except in the files `allowed` lists with their reasons; an
/// allowance no line needs any more is reported too, so each list only shrinks.
fn scan_outside_fs(
    list: &str,
    allowed: &[(&str, &str)],
    hit: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    let (src, files) = source_files();
    let mut bad = Vec::new();
    let mut allowed_used = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if rel.starts_with("fs/") {
            continue;
        }
        let is_allowed = allowed.iter().any(|(p, _)| *p == rel);
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in code_lines(&text) {
            let code = line.split("//").next().unwrap_or("");
            if let Some(what) = hit(code) {
                println!("src/{rel}:{}: {what}", n + 1);
                if is_allowed {
                    allowed_used.insert(rel.clone());
                } else {
                    bad.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    for (p, why) in allowed {
        if !allowed_used.contains(*p) {
            bad.push(format!(
                "{list} lists src/{p} ({why}), which no longer needs it"
            ));
        }
    }
    bad
}

#[test]
fn filesystem_names_are_matched_only_in_their_drivers() {
    let bad = scan_outside_fs("FS_NAME_ALLOWED", FS_NAME_ALLOWED, |code| {
        matches_fs_name(code).then(|| "matches a filesystem name".to_string())
    });
    assert!(
        bad.is_empty(),
        "a filesystem name is matched outside src/fs (make it a field of the driver's \
         fs::caps::Caps, or list the file in FS_NAME_ALLOWED with its reason):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_fs_name_scan_sees_comparisons_arms_and_lists_but_not_words() {
    assert!(matches_fs_name(r#"    if fs == "zfs" {"#));
    assert!(matches_fs_name(r#"        "btrfs" => {"#));
    assert!(matches_fs_name(r#"        "zfs" | "fuse.zfs" => {"#));
    assert!(matches_fs_name(
        r#"    if !["ext4", "xfs", "btrfs"].contains(&s) {"#
    ));
    assert!(matches_fs_name(r#"    online: pfs.fs() != "ext4","#));
    assert!(!matches_fs_name(r#"    argv(&["zfs", "get", "-Hp", &ds])"#));
    assert!(!matches_fs_name(
        r#"    tool("btrfs", ["btrfs-progs"; 4]),"#
    ));
    assert!(!matches_fs_name(r#"    if a || "zfs".len() > 0 {"#));
}

/// Where a metric's or a workload's meaning is read: from the registries, never from its
/// name. These are the directories whose code once guessed it (`ends_with("_merged")`,
/// `class_of`'s substrings of workload ids).
const NAME_FREE_DIRS: &[&str] = &["report/", "stats/", "claims/"];

/// Files under [`NAME_FREE_DIRS`] that are test modules as a whole (declared `#[cfg(test)]`
/// by their parent), so every line of theirs is test code.
const TEST_ONLY_FILES: &[&str] = &["claims/wording.rs"];

/// Every registered metric id and every workload id the registries ship or name.
fn registered_names() -> Vec<String> {
    let mut names: Vec<String> = fsbench::metrics::REGISTRY
        .iter()
        .map(|d| d.id.as_str().to_string())
        .collect();
    names.extend(
        fsbench::workload::registry::shipped()
            .into_iter()
            .map(|w| w.id),
    );
    names.extend(
        fsbench::workload::registry::headlines()
            .into_iter()
            .map(|h| h.workload.to_string()),
    );
    names
}

/// The literal of a name test in `code`: a registered name compared with `==`/`!=` or matched
/// as an arm, or a name or a part of one (`"_merged"`, `"cold"`) searched for with
/// `contains`/`starts_with`/`ends_with`/`strip_prefix`/`strip_suffix`; `None` when there is
/// none. Literals with other characters (paths, units with `/`, templates, sentences)
/// are not names.
fn name_test(code: &str, names: &[String]) -> Option<String> {
    let is_name_part = |lit: &str| {
        lit.len() >= 3
            && lit
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
            && names.iter().any(|n| n.contains(lit))
    };
    // A search may look for a part of a name; a comparison only matches a whole one (`kind !=
    // "device"` compares a target kind, though `device` is part of `device_write_bytes`).
    const SEARCHES: &[(&str, bool)] = &[
        (".contains(\"", true),
        (".starts_with(\"", true),
        (".ends_with(\"", true),
        (".strip_prefix(\"", true),
        (".strip_suffix(\"", true),
        ("== \"", false),
        ("!= \"", false),
    ];
    for (pat, part) in SEARCHES {
        for (i, _) in code.match_indices(pat) {
            let rest = &code[i + pat.len()..];
            let lit = &rest[..rest.find('"').unwrap_or(rest.len())];
            if (*part && is_name_part(lit)) || names.iter().any(|n| n == lit) {
                return Some(lit.to_string());
            }
        }
    }
    // `"randread" =>`, `"iops" | "read_iops"`: a whole name as a match arm.
    for (i, _) in code.match_indices('"') {
        let rest = &code[i + 1..];
        let Some(end) = rest.find('"') else { break };
        let lit = &rest[..end];
        let after = rest[end + 1..].trim_start();
        let arm = after.starts_with("=>") || (after.starts_with('|') && !after.starts_with("||"));
        if arm && names.iter().any(|n| n == lit) {
            return Some(lit.to_string());
        }
    }
    None
}

#[test]
fn report_stats_and_claims_read_meaning_from_the_registries_not_from_names() {
    let names = registered_names();
    assert!(names.iter().any(|n| n == "randread") && names.iter().any(|n| n == "iops"));
    let (src, files) = source_files();
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if !NAME_FREE_DIRS.iter().any(|d| rel.starts_with(d)) || TEST_ONLY_FILES.contains(&&*rel) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in code_lines(&text) {
            let code = line.split("//").next().unwrap_or("");
            if let Some(lit) = name_test(code, &names) {
                bad.push(format!("src/{rel}:{}: {lit:?}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a metric or workload name is tested outside a registry (read its metrics::MetricDef \
         or its workload kind's registry entry instead):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_name_scan_sees_comparisons_searches_and_arms_but_not_units_or_paths() {
    let names: Vec<String> = ["lat_p99_ms_merged", "find-cold", "randread", "iops"]
        .map(String::from)
        .to_vec();
    let hit = |code: &str| name_test(code, &names);
    assert_eq!(
        hit(r#"if id.ends_with("_merged") {"#).as_deref(),
        Some("_merged")
    );
    assert_eq!(hit(r#"w.contains("cold")"#).as_deref(), Some("cold"));
    assert_eq!(
        hit(r#"if r.workload == "randread" {"#).as_deref(),
        Some("randread")
    );
    assert_eq!(
        hit(r#"        "iops" | "read_iops" => 1.0,"#).as_deref(),
        Some("iops")
    );
    assert_eq!(hit(r#"if x.starts_with("/dev/") {"#), None);
    assert_eq!(hit(r#"if label.contains("{unit}") {"#), None);
    assert_eq!(hit(r#"unit != "bool""#), None);
    assert_eq!(
        hit(r#"t.kind != "cold""#),
        None,
        "a word that is only part of a name"
    );
    assert_eq!(hit(r#"if a || "iops".len() > 0 {"#), None);
}

/// The programs that belong to one filesystem: running one is a driver's job (`src/fs`).
const FS_TOOLS: &[&str] = &[
    "zpool",
    "zfs",
    "zdb",
    "zfs-fuse",
    "btrfs",
    "btrfstune",
    "tune2fs",
    "e2fsck",
    "resize2fs",
    "dumpe2fs",
    "debugfs",
];

/// Prefixes of programs that belong to one filesystem (`xfs_growfs`, `mkfs.ext4`).
const FS_TOOL_PREFIXES: &[&str] = &["xfs_", "mkfs.", "fsck."];

/// Files outside `src/fs` the scan below flags although they run no filesystem program, each
/// with its reason. The list only shrinks: issue 39 (item 1) moved every program a probe,
/// the measuring layer, the target's safety checks and the provenance ran into a driver
/// method of `src/fs`.
const FS_TOOL_ALLOWED: &[(&str, &str)] = &[];

/// The filesystem program `code` runs, if any: its name as the first word of an argv
/// (`argv(&["zpool", …])`, `vec!["btrfs", …]`, `Command::new("e2fsck")`). A name in a table
/// (`tool("btrfs", …)`, `("zpool", "zfs")`) or a look-up (`available("zpool")`) runs nothing.
fn runs_fs_tool(code: &str) -> Option<String> {
    let mut rest = code;
    let mut at = 0;
    while let Some(i) = rest.find('"') {
        let start = at + i + 1;
        let Some(len) = code[start..].find('"') else {
            break;
        };
        let word = &code[start..start + len];
        let before = code[..start - 1].trim_end();
        let is_tool =
            FS_TOOLS.contains(&word) || FS_TOOL_PREFIXES.iter().any(|p| word.starts_with(p));
        let first_word = before.ends_with('[') || before.ends_with("Command::new(");
        if is_tool && first_word {
            return Some(word.to_string());
        }
        at = start + len + 1;
        rest = &code[at..];
    }
    None
}

#[test]
fn filesystem_programs_run_only_in_their_drivers() {
    let bad = scan_outside_fs("FS_TOOL_ALLOWED", FS_TOOL_ALLOWED, |code| {
        runs_fs_tool(code).map(|tool| format!("runs {tool}"))
    });
    assert!(
        bad.is_empty(),
        "a filesystem's program is run outside src/fs (make it a method of its driver, \
         `fs::Filesystem`, with a default saying what is unsupported):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_fs_tool_scan_sees_argv_and_commands_but_not_tables_or_lookups() {
    assert_eq!(
        runs_fs_tool(r#"    run(&argv(&["zpool", "scrub", &pool]), t)?;"#).as_deref(),
        Some("zpool")
    );
    assert!(runs_fs_tool(r#"    let a = vec!["btrfs", "scrub", "start"];"#).is_some());
    assert!(runs_fs_tool(r#"    Command::new("e2fsck").arg("-fn")"#).is_some());
    assert!(runs_fs_tool(r#"    argv(&["xfs_growfs", "-D", &n, &m])"#).is_some());
    assert!(runs_fs_tool(r#"    tool("btrfs", ["btrfs-progs"; 4]),"#).is_none());
    assert!(runs_fs_tool(r#"    ("zpool", "zfs"),"#).is_none());
    assert!(runs_fs_tool(r#"    if !command::available("zpool") {"#).is_none());
    assert!(runs_fs_tool(r#"    argv(&["chattr", "+C", "zfs"])"#).is_none());
}

/// The files outside `src/fs` that may look a filesystem's driver up by its name
/// (`fs::driver(`, `caps::of(`), each with why it has a name and no driver at hand; everywhere
/// else the driver a setup resolved once (`SetupSpec::driver`, held by the round and handed
/// down as `StepContext::driver`) is passed. The list only shrinks.
const NAME_LOOKUP_ALLOWED: &[(&str, &str)] = &[
    (
        "plan/setup_syntax.rs",
        "--fs parsing: the user's word becomes a driver here",
    ),
    (
        "doctor/tools.rs",
        "the doctor's wants carry filesystems by name, as `fsbench doctor --fs` gives them",
    ),
    (
        "doctor/checks.rs",
        "the doctor's facts name filesystems as given, and serialize them so",
    ),
    (
        "plan/eta.rs",
        "an estimate is of a plan as data (`fsbench plan`, plan.json), before any driver is held",
    ),
    (
        "workload/probe/mod.rs",
        "a probe's stand-in filesystem, made by other tools, is known by its name",
    ),
];

#[test]
fn drivers_are_looked_up_by_name_only_where_none_is_held() {
    let bad = scan_outside_fs("NAME_LOOKUP_ALLOWED", NAME_LOOKUP_ALLOWED, |code| {
        (code.contains("fs::driver(") || code.contains("caps::of("))
            .then(|| "looks a driver up by name".to_string())
    });
    assert!(
        bad.is_empty(),
        "a filesystem's driver is looked up by name where a resolved one is at hand (pass the \
         round's driver down, `StepContext::driver`), or list the file in NAME_LOOKUP_ALLOWED \
         with its reason:\n{}",
        bad.join("\n")
    );
}

/// A function's length in lines, counted from its `fn` line to its closing brace (braces in
/// strings and comments ignored), for every function of [`code_lines`] (before, the rest of
/// a file after its first `#[cfg(test)]` went unmeasured: 75 functions of `fs/mod.rs`,
/// `runner/mod.rs`, `workload/registry.rs`, `claims/mod.rs`, `stats/mod.rs` and
/// `host/facts.rs`).
fn function_lengths() -> Vec<(usize, String)> {
    let (src, files) = source_files();
    let mut out = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in code_lines(&text) {
            if let Some(name) = fn_name(line)
                && let Some((end, true)) = item_end(&lines, i)
            {
                out.push((end - i + 1, format!("{rel}::{name}")));
            }
        }
    }
    out.sort_by(|a, b| b.cmp(a));
    out
}

/// The lines of `text` that are code outside tests, with their 0-based numbers. A test
/// attribute (`#[cfg(test)]`, `#[cfg(all(test, …))]`) leaves out only the item it marks — the
/// test module, a test-only function, `mod fake;`, `thread_local!` or statement — so the code
/// after it is still read (every scan here stopped at a file's first `#[cfg(test)]` before,
/// and did not see the rest of `fs/mod.rs`, `runner/mod.rs`, `workload/registry.rs`…).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test") {
            let item = (i + 1..lines.len())
                .find(|&j| !lines[j].trim_start().starts_with("#["))
                .unwrap_or(lines.len());
            i = item_end(&lines, item).map_or(lines.len(), |(end, _)| end + 1);
            continue;
        }
        out.push((i, lines[i]));
        i += 1;
    }
    out
}

#[test]
fn the_test_item_skip_leaves_out_only_the_marked_item() {
    let text = "fn a() {\n    #[cfg(test)]\n    if x {\n        y();\n    }\n    z();\n}\n\
                #[cfg(test)]\nmod fake;\n#[cfg(test)]\n#[allow(x)]\nfn t() {\n}\nfn b() {}\n\
                #[cfg(test)]\nmod tests {\n    fn c() {}\n}\nfn d() {}\n";
    let kept: Vec<usize> = code_lines(text).into_iter().map(|(i, _)| i).collect();
    assert_eq!(kept, [0, 5, 6, 13, 18]);
}

/// The line on which the item starting at line `start` ends, and whether it has a body: its
/// braces closed (`true`), or its `;` before any brace (`mod fake;`, a trait method's
/// declaration: `false`). `None` past the end of the file.
fn item_end(lines: &[&str], start: usize) -> Option<(usize, bool)> {
    let (mut depth, mut started) = (0i32, false);
    for (j, l) in lines.iter().enumerate().skip(start) {
        let code = strip_strings(l.split("//").next().unwrap_or(""));
        for c in code.chars() {
            match c {
                '{' => (depth, started) = (depth + 1, true),
                '}' => depth -= 1,
                _ => {}
            }
        }
        if !started && code.trim_end().ends_with(';') {
            return Some((j, false));
        }
        if started && depth <= 0 {
            return Some((j, true));
        }
    }
    None
}

/// The name of the function `line` declares (`pub(super) fn run_setup_round(`), if any.
fn fn_name(line: &str) -> Option<String> {
    let t = line.trim_start();
    let pos = t.find("fn ")?;
    let head = &t[..pos];
    let words_ok = head.split_whitespace().all(|w| {
        w == "pub" || w.starts_with("pub(") || ["const", "async", "unsafe", "extern"].contains(&w)
    });
    if !words_ok || !(pos == 0 || head.ends_with(' ')) {
        return None;
    }
    let name: String = t[pos + 3..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// `code` with the insides of string and char literals removed (their braces are not code).
fn strip_strings(code: &str) -> String {
    let mut out = String::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            while let Some(d) = chars.next() {
                match d {
                    '\\' => {
                        chars.next();
                    }
                    '"' => break,
                    _ => {}
                }
            }
        } else if c == '\'' && chars.clone().nth(1) == Some('\'') {
            chars.next();
            chars.next();
        } else {
            out.push(c);
        }
    }
    out
}

/// Functions allowed over [`MAX_FN_LINES`] (none since issue 39 split the last ones); an
/// entry needs a reason, and the list only shrinks.
const LONG_FN_ALLOWED: &[&str] = &[];

/// The longest a function outside tests may be.
const MAX_FN_LINES: usize = 150;

#[test]
fn no_function_grows_past_150_lines() {
    let lengths = function_lengths();
    println!("the longest functions (lines, file::name):");
    for (n, f) in lengths.iter().take(15) {
        println!("{n:5}  {f}");
    }
    let over: Vec<&(usize, String)> = lengths.iter().filter(|(n, _)| *n > MAX_FN_LINES).collect();
    println!(
        "{} over {MAX_FN_LINES} lines, {} over 100",
        over.len(),
        lengths.iter().filter(|(n, _)| *n > 100).count()
    );
    let mut bad: Vec<String> = over
        .iter()
        .filter(|(_, f)| !LONG_FN_ALLOWED.contains(&f.as_str()))
        .map(|(n, f)| format!("{f}: {n} lines (split it into named steps)"))
        .collect();
    for f in LONG_FN_ALLOWED {
        if !over.iter().any(|(_, g)| g == f) {
            bad.push(format!(
                "LONG_FN_ALLOWED lists {f}, which is now short: remove it"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
