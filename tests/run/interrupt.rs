//! Ctrl-C releases everything, and `--resume` completes the run.

use super::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn sigint_releases_everything_and_resume_completes() {
    let _serial = serial();
    if !privileged(
        "sigint_releases_everything_and_resume_completes",
        &["mkfs.ext4", "mkfs.xfs"],
    ) {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let child = bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4,xfs",
            "--image-size",
            "1G",
            "--file-size",
            "64M",
            "--runtime",
            "2s",
            "--ramp",
            "0s",
            "--rounds",
            "2",
            "--quiet-window",
            "1s",
            "--quiet-timeout",
            "20s",
            // The quick profile's full corpus is sized for a real run; a tenth keeps CI short.
            "--corpus-scale",
            "0.1",
            "--seed",
            "7",
        ])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until one setup-round is done and the next is under way, then interrupt.
    let journal = out.join("journal.jsonl");
    let t0 = Instant::now();
    loop {
        let j = std::fs::read_to_string(&journal).unwrap_or_default();
        let done = j.matches("\"round_done\"").count();
        if done >= 1
            && j.lines().count() > j.lines().position(|l| l.contains("round_done")).unwrap() + 2
        {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "run made no progress:\n{j}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "stderr:\n{}", stderr(&o));
    let left = leftovers(scratch.path(), pid, &[]);
    assert!(left.is_empty(), "left behind after SIGINT: {left:?}");
    assert!(journal.exists());
    let partial = load_results(&out);
    assert_eq!(partial["partial"], true);
    // Only the output directory remains in the scratch dir: the image is gone.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 1);

    let o = bin().arg("run").arg("--resume").arg(&out).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "resume failed:\n{err}");
    assert!(err.contains("already done"), "{err}");
    let r = load_results(&out);
    assert_eq!(r["partial"], false);
    assert_complete(&r, &["ext4", "xfs"], 2);
    let left = leftovers(scratch.path(), pid, &[]);
    assert!(left.is_empty(), "left behind after resume: {left:?}");
}
