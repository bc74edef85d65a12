//! `--device`: consent typed on a terminal or given with `--yes`, and preconditioning.

use super::*;
use common::LoopImage;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A blank loop device of the test's own (no signature, like a new disk), detached on drop;
/// its `name()` is what the prompt asks for, `checksum()` every byte of it.
fn blank_loop() -> LoopImage {
    LoopImage::spec(256 << 20)
        .file_name("blank.img")
        .attach()
        .unwrap_or_else(|e| panic!("losetup: {e}"))
}

/// A small, quick run on `dev` writing to `out`.
fn device_run_args(dev: &str, out: &Path) -> Vec<String> {
    let mut a: Vec<String> = [
        "run",
        "--device",
        dev,
        "--fs",
        "ext4",
        "--only",
        "seqread",
        "--file-size",
        "16M",
        "--rounds",
        "1",
    ]
    .iter()
    .chain(common::QUICK)
    .chain(&["--out"])
    .map(|s| s.to_string())
    .collect();
    a.push(out.display().to_string());
    a
}

/// How a run on a pseudo-terminal ended and everything it printed there.
struct PtyRun {
    code: Option<i32>,
    screen: String,
}

/// Run fsbench with a fresh pseudo-terminal as its controlling terminal (stdout and stderr
/// on it, as for a user at a console) while `stdin` arrives through a pipe; once the prompt
/// shows, `typed` is typed on the terminal (`\x04` at the start of a line is Ctrl-D: EOF).
fn run_on_pty(args: &[String], stdin: &[u8], typed: &[u8]) -> PtyRun {
    use std::ffi::CStr;
    use std::io::{Read, Write};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: plain libc pty calls on a descriptor we own; ptsname_r writes into `buf`.
    let (master, slave_path) = unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = std::fs::File::from(OwnedFd::from_raw_fd(m));
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, buf.as_mut_ptr(), buf.len()), 0);
        let path = CStr::from_ptr(buf.as_ptr()).to_str().unwrap().to_string();
        (master, path)
    };
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave_path)
        .unwrap();
    let mut cmd = bin();
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap());
    // SAFETY: setsid and ioctl are async-signal-safe; fd 2 is the pty slave by now.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(2, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    // Only the child may hold the slave, so reading the master ends (EIO) when it exits.
    drop(cmd);
    drop(slave);
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin).unwrap();
    drop(pipe);
    let screen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = {
        let screen = screen.clone();
        let mut m = master.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = m.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let shown = || String::from_utf8_lossy(&screen.lock().unwrap()).into_owned();
    let t0 = Instant::now();
    while !shown().contains("to continue: ") {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no prompt:\n{}",
            shown()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = (&master).write_all(typed);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fsbench did not finish:\n{}", shown());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    PtyRun {
        code: status.code(),
        screen: shown(),
    }
}

#[test]
fn a_script_without_yes_is_refused_before_anything_is_written() {
    let _serial = serial();
    if !privileged(
        "a_script_without_yes_is_refused_before_anything_is_written",
        &["cksum"],
    ) {
        return;
    }
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let lo = blank_loop();
    let before = lo.checksum();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    for extra in [&[][..], &["--force-wipe"][..]] {
        // `echo loopN | fsbench run --device /dev/loopN` without a controlling terminal.
        let mut cmd = bin();
        cmd.args(device_run_args(&lo.dev, &out))
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe; the child then has no controlling terminal.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{}", lo.name()).unwrap();
        drop(stdin);
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        println!("{extra:?}: exit {:?}: {err}", o.status.code());
        assert_refused(&o, &[&lo.dev, "pass --yes"]);
        assert_eq!(err.trim_end().lines().count(), 1, "one line:\n{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "fsbench: error: refusing to use {}: wiping it needs confirmation and there is \
                 no terminal to ask on; pass --yes to confirm non-interactively",
                lo.dev
            )
        );
        assert_eq!(lo.checksum(), before, "the device was written");
        assert!(!out.exists(), "{} was created", out.display());
    }
}

#[test]
fn typed_confirmation_on_a_terminal() {
    let _serial = serial();
    if !privileged("typed_confirmation_on_a_terminal", &["mkfs.ext4", "cksum"]) {
        return;
    }
    let lo = blank_loop();
    let before = lo.checksum();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let args = device_run_args(&lo.dev, &out);
    // stdin carries the right name each time: only what is typed on the terminal counts.
    let right = format!("{}\n", lo.name());
    for (case, typed, says) in [
        (
            "wrong name",
            &b"loop999\n"[..],
            "the confirmation did not match (typed \"loop999\"",
        ),
        (
            "empty line",
            &b"\n"[..],
            "the confirmation did not match (an empty line was typed",
        ),
        (
            "end of input",
            &b"\x04"[..],
            "no confirmation was typed (end of input)",
        ),
    ] {
        let r = run_on_pty(&args, right.as_bytes(), typed);
        println!("--- {case}: exit {:?}\n{}", r.code, r.screen.trim_end());
        assert_eq!(r.code, Some(2), "{case}:\n{}", r.screen);
        assert!(
            r.screen.contains(&format!(
                "Type the device name ({}) to continue: ",
                lo.name()
            )),
            "{case}: no prompt:\n{}",
            r.screen
        );
        assert!(
            r.screen
                .contains(&format!("refusing to use {}: {says}", lo.dev)),
            "{case}:\n{}",
            r.screen
        );
        assert_eq!(lo.checksum(), before, "{case}: the device was written");
        assert!(!out.exists(), "{case}: {} was created", out.display());
    }
    // The right name typed (and a wrong one on stdin): the run proceeds and wipes.
    let r = run_on_pty(&args, b"loop999\n", right.as_bytes());
    let tail: Vec<&str> = r.screen.trim_end().lines().rev().take(3).collect();
    println!(
        "--- right name: exit {:?}\n{}\n[…]\n{}",
        r.code,
        r.screen
            .lines()
            .find(|l| l.contains("to continue: "))
            .unwrap_or(""),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    assert_eq!(r.code, Some(0), "{}", r.screen);
    assert!(out.join("results.json").exists(), "{}", r.screen);
    assert_ne!(
        lo.checksum(),
        before,
        "the accepted run did not format the device"
    );
}

#[test]
fn precondition_and_steady_state_on_a_device() {
    // Refused before anything is touched where there is no device to condition.
    let o = bin()
        .args(["plan", "--fs", "ext4", "--precondition"])
        .output()
        .unwrap();
    assert_refused(&o, &["--precondition", "--device"]);
    let _serial = serial();
    if !privileged("precondition_and_steady_state_on_a_device", &["mkfs.ext4"]) {
        return;
    }
    let lo = blank_loop();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let mut args = device_run_args(&lo.dev, &out);
    // Loose criteria (3 rounds of 2 s within 50 %) so reads settle well before the limit.
    args.extend(
        [
            "--yes",
            "--precondition",
            "--steady-state",
            "3,50,50",
            "--steady-round",
            "2s",
            "--steady-max",
            "30s",
        ]
        .map(String::from),
    );
    let o = bin().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["message"].as_str())
        .collect();
    // SNIA's workload-independent part: the whole 256 MiB device twice, before the first mkfs.
    assert!(
        notes.iter().any(|n| n.starts_with(&format!(
            "preconditioned {} (256 MiB): 2 × its capacity in 128 KiB sequential writes",
            lo.dev
        )) && n.contains("pass 2 of 2")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(
            |n| n.starts_with("layout: preconditioned the 16 MiB data file")
                && n.contains("sequential fill 2 of 2")
                && n.contains("random overwrite")
        ),
        "{notes:?}"
    );
    let job = &r["workloads"][0]["params"]["job"];
    assert_eq!(job["steady"]["criteria"]["windows"], 3, "{job}");
    assert_eq!(job["steady"]["conditioning"], "preconditioned", "{job}");
    let metric = |name: &str| {
        r["samples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["metric"] == name)
            .map(|s| s["value"].as_f64().unwrap())
    };
    // Either it became steady (a note names the window) or a warning says it did not.
    let reached = metric("steady_reached").expect("steady_reached recorded");
    let warned = r["warnings"].as_array().unwrap().iter().any(|w| {
        w["message"]
            .as_str()
            .unwrap()
            .contains("steady state not reached")
    });
    if reached == 1.0 {
        assert!(metric("steady_at_s").is_some());
        assert!(
            notes
                .iter()
                .any(|n| n.contains("IOPS, MiB/s and latency are over seconds"))
        );
    } else {
        assert!(warned, "a missed steady state is a warning");
    }
}
