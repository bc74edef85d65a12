//! `fsbench completions` and `fsbench man`: generated from the live clap definitions, so every
//! subcommand (including ones added later) must appear. Issue 24.

mod common;

use clap::CommandFactory;
use common::bin;
use std::process::Command;

fn stdout(args: &[&str]) -> String {
    let o = bin().args(args).output().unwrap();
    assert!(
        o.status.success(),
        "fsbench {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Visible subcommands, from the same definitions the binary uses.
fn subcommands() -> Vec<String> {
    fsbench::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

#[test]
fn bash_completion_names_every_subcommand_and_the_hinted_values() {
    let script = stdout(&["completions", "bash"]);
    let subs = subcommands();
    assert!(subs.len() >= 9, "{subs:?}");
    for s in &subs {
        assert!(
            script.contains(&format!("fsbench,{s})")),
            "bash script lacks subcommand {s}"
        );
    }
    assert!(script.contains("--only"), "bash script lacks --only");
    // Known profiles and workload ids are offered; plan files may add more, so they are
    // suggestions, not a closed list.
    assert!(script.contains("quick standard vps nvme"));
    for id in ["randwrite", "fsync-write", "randread-qd128", "par8-write"] {
        assert!(script.contains(id), "bash script lacks workload id {id}");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let s = stdout(&["completions", shell]);
        assert!(s.contains("only") && s.contains("scratch-dir"), "{shell}");
    }
    let zsh = stdout(&["completions", "zsh"]);
    assert!(
        zsh.contains(":DIR:_files -/"),
        "--scratch-dir completes directories"
    );
}

#[test]
fn comma_lists_and_unknown_ids_still_reach_fsbench_own_checks() {
    let o = bin()
        .args(["plan", "--fs", "ext4", "--only", "randread,randwrite"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("Workloads: randread, randwrite"));
    let o = bin()
        .args(["plan", "--fs", "ext4", "--only", "randread,nosuch"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--only: unknown workload id 'nosuch'"));
}

#[test]
fn man_pages_for_every_subcommand_render_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let listed = stdout(&["man", "--out-dir", dir.path().to_str().unwrap()]);
    let mut want: Vec<String> = subcommands()
        .iter()
        .map(|s| format!("fsbench-{s}.1"))
        .collect();
    want.push("fsbench.1".into());
    // Nested subcommands get pages of their own.
    for h in ["check", "export", "import", "list", "show", "trend"] {
        want.push(format!("fsbench-history-{h}.1"));
    }
    want.push("fsbench-plan-tune.1".into());
    want.sort();
    let mut got: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(listed.lines().count(), want.len(), "{listed}");
    let main = std::fs::read_to_string(dir.path().join("fsbench.1")).unwrap();
    assert_eq!(main, stdout(&["man"]), "`fsbench man` prints fsbench.1");
    for s in subcommands() {
        assert!(main.contains(&s), "fsbench.1 lists {s}");
    }
    let groff_present = Command::new("groff").arg("--version").output().is_ok();
    if !groff_present {
        println!("skipped: groff is not installed (rendering not checked)");
        return;
    }
    for page in &want {
        let o = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
            .arg(dir.path().join(page))
            .output()
            .unwrap();
        assert!(o.status.success(), "{page}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.trim().is_empty(), "{page}: groff warns: {err}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("NAME") && text.contains("SYNOPSIS"), "{page}");
    }
    let run = std::fs::read_to_string(dir.path().join("fsbench-run.1")).unwrap();
    assert!(run.contains("\\-\\-scratch\\-dir") && run.contains("\\-\\-only"));
}
