//! Builds the native eBPF capture of `fsbench record` (src/workload/replay/bpf/capture.bpf.c)
//! with clang, when clang is installed and the target is x86-64; the program is embedded in
//! the binary and `cfg(fsbench_bpf)` says it is there. Without it fsbench still builds, and
//! `--capture ebpf` drives bpftrace instead (docs/replay.md). `FSBENCH_CLANG` names another
//! clang.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    const SRC: &str = "src/workload/replay/bpf/capture.bpf.c";
    println!("cargo::rustc-check-cfg=cfg(fsbench_bpf)");
    println!("cargo::rerun-if-changed={SRC}");
    println!("cargo::rerun-if-env-changed=FSBENCH_CLANG");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64") {
        println!(
            "cargo::warning=no native eBPF capture on this architecture: record uses bpftrace"
        );
        return;
    }
    let out =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("capture.bpf.o");
    let clang = std::env::var("FSBENCH_CLANG").unwrap_or_else(|_| "clang".into());
    // -g: the maps are declared through BTF, which the loader reads.
    let built = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-c", SRC, "-o"])
        .arg(&out)
        .status();
    match built {
        Ok(s) if s.success() => println!("cargo::rustc-cfg=fsbench_bpf"),
        Ok(s) => println!(
            "cargo::warning={clang} could not build {SRC} ({s}): record's eBPF capture uses bpftrace"
        ),
        Err(e) => println!(
            "cargo::warning=no {clang} ({e}): record's eBPF capture uses bpftrace (apt-get install clang)"
        ),
    }
}
