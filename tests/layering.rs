//! The module layering of docs/ARCHITECTURE.md ("Module map"), checked on the source: no
//! `crate::` path in a lower layer's code names a module of a higher layer. Test modules
//! (`#[cfg(test)]` to the end of a file) and comments are not counted.
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
    &["engine", "fio", "fs", "target"],
    &["workload"],
    &["plan"],
    &["doctor", "runner"],
    &["mpi"],
    &["claims", "report", "history"],
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
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
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
        "plan/resolve.rs",
        "DEFAULT_FS: the default `--fs` selection, a policy list of names, not a match",
    ),
    (
        "host/packages.rs",
        "`zfs` and `zpool` here are programs (tool → package), not the filesystem",
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
    (
        "report/compare/provenance.rs",
        "TOOL_FS: which recorded tool version concerns which setup (to move into the drivers)",
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

#[test]
fn filesystem_names_are_matched_only_in_their_drivers() {
    let (src, files) = source_files();
    let mut bad = Vec::new();
    let mut allowed_used = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if rel.starts_with("fs/") {
            continue;
        }
        let allowed = FS_NAME_ALLOWED.iter().any(|(p, _)| *p == rel);
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            let code = line.split("//").next().unwrap_or("");
            if matches_fs_name(code) {
                if allowed {
                    allowed_used.insert(rel.clone());
                } else {
                    bad.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    // An allowance nothing needs any more goes, so the list only shrinks.
    for (p, why) in FS_NAME_ALLOWED {
        if !allowed_used.contains(*p) {
            bad.push(format!(
                "FS_NAME_ALLOWED lists src/{p} ({why}), which no longer needs it"
            ));
        }
    }
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
