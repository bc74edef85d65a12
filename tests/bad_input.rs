//! Issue 31's table, run through the real binary: each hand-typed plan file that was accepted
//! (or spun forever) is now an exit-2 error naming `file:line`, the key, its range and what
//! to give; the same for flags; `-o/--output` on every command that writes a document. No
//! root, nothing is created (`fsbench plan` only).

mod common;

use std::path::Path;
use std::process::Output;

fn fsbench(args: &[&str]) -> Output {
    common::bin().args(args).output().unwrap()
}

fn refused(o: &Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{e}");
    e
}

fn plan_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn the_issue_table_is_refused_with_what_to_change() {
    let d = tempfile::tempdir().unwrap();
    for (name, text, want) in [
        (
            "r1.toml",
            "suite = \"standard\"\nrounds = 100000000\n",
            ":2: rounds = 100000000 is out of range; give a value from 1 to 1,000",
        ),
        (
            "r2.toml",
            "suite = \"standard\"\nrounds = 0\n",
            ":2: rounds = 0 is out of range; give a value from 1 to 1,000",
        ),
        (
            "r3.toml",
            "suite = \"standard\"\n[corpus]\nscale = 1e9\n",
            ":3: corpus.scale = 1000000000.0 is out of range; give a value above 0, up to 100",
        ),
        (
            "r4.toml",
            "suite = \"standard\"\n[corpus]\ncopies = 0\n",
            ":3: corpus.copies = 0 is out of range; give a value from 1 to 1,000",
        ),
        (
            "r5.toml",
            "[[workload]]\nid = \"x\"\nrw = \"randread\"\niodepth = 100000\n",
            ":4: iodepth = 100000 is out of range; give a value from 1 to 32,768",
        ),
        (
            "r6.toml",
            "[[workload]]\nid = \"x\"\nrw = \"randread\"\nbs = 1000\n",
            ":4: bs = 1000 is not a multiple of 512 B",
        ),
    ] {
        let p = plan_file(d.path(), name, text);
        let e = refused(&fsbench(&["plan", "--plan", &p, "--fs", "ext4"]));
        assert!(e.contains(&format!("--plan {p}{want}")), "{name}: {e}");
    }
}

#[test]
fn flags_take_their_range_from_the_table() {
    for (args, want) in [
        (
            &["plan", "--rounds", "0"][..],
            "give a value from 1 to 1,000",
        ),
        (
            &["plan", "--corpus-copies", "0"],
            "give a value from 1 to 1,000",
        ),
        (&["plan", "--corpus-scale", "nan"], "above 0, up to 100"),
        (&["plan", "--runtime", "0s"], "from 100 ms to 24 h"),
        (&["plan", "--file-size", "1000xram"], "up to 64"),
        (
            &["io", "--filename", "/nonexistent/f", "--iodepth", "100000"],
            "1 to 32,768",
        ),
        (
            &["io", "--filename", "/nonexistent/f", "--bs", "1000"],
            "multiple of 512 B",
        ),
    ] {
        let e = refused(&fsbench(args));
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // A whole plan too large to list, and a corpus that cannot fit on the image.
    let e = refused(&fsbench(&[
        "plan",
        "--profile",
        "nvme",
        "--rounds",
        "1000",
        "--fs",
        "ext4,xfs,btrfs,zfs",
    ]));
    assert!(e.contains("steps") && e.contains("fewer rounds"), "{e}");
    let e = refused(&fsbench(&[
        "plan",
        "--corpus-copies",
        "100",
        "--corpus-scale",
        "1",
    ]));
    assert!(e.contains("more than half of the 8 GiB"), "{e}");
    let help = String::from_utf8(fsbench(&["plan", "--help"]).stdout).unwrap();
    assert!(help.contains("[1–1,000]"), "{help}");
}

#[test]
fn mkfs_words_a_shell_would_expand_are_refused() {
    let e = refused(&fsbench(&["plan", "--fs", "e=ext4:mkfs=-L $HOSTNAME"]));
    assert!(e.contains("single quotes"), "{e}");
    let o = fsbench(&["plan", "--fs", "e=ext4:mkfs=-L '$HOSTNAME'", "--emit-fio"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn every_document_command_takes_output() {
    let d = tempfile::tempdir().unwrap();
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/results-sample.json"
    );
    let cmp = d.path().join("cmp.md");
    let fio = d.path().join("fio.sh");
    let plan = d.path().join("plan.txt");
    let rep = d.path().join("rep.md");
    for (args, file, want) in [
        (
            vec!["compare", sample, sample, "--format", "md", "-o"],
            &cmp,
            "# fsbench compare",
        ),
        (
            vec!["plan", "--fs", "ext4", "--emit-fio", "--output"],
            &fio,
            "fio --name=",
        ),
        (vec!["plan", "--fs", "ext4", "-o"], &plan, "Estimated time"),
        (vec!["report", sample, "--format", "md", "-o"], &rep, "#"),
    ] {
        let mut a = args.clone();
        let f = file.display().to_string();
        a.push(&f);
        let o = fsbench(&a);
        assert!(
            o.status.success(),
            "{a:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{a:?} wrote to stdout too");
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains(want), "{a:?}: {text}");
    }
}
