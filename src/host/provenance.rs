//! Provenance of the machine: kernel, CPU, RAM, distribution, virtualization, tool versions.
//!
//! A result is only comparable with another when we know where it was measured, so this is
//! recorded with every run. Everything here is cheap (a few /proc and /etc reads, one short
//! `--version` call per tool) and nothing is fatal: an unknown value is left empty or absent.

use crate::host::command;
use crate::results::HostInfo;
use std::collections::BTreeMap;
use std::time::Duration;

/// The tools besides the filesystems' whose versions a comparison depends on; each
/// filesystem driver names its own (`fs::provenance::tool_versions` asks them all).
pub const DEFAULT_TOOLS: &[&str] = &["fio"];

/// `major.minor` of a kernel release (`6.18.0-1-amd64` → (6, 18)).
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// `major.minor` of the running kernel (`uname -r`).
pub fn running_kernel() -> Option<(u32, u32)> {
    kernel_version(&rustix::system::uname().release().to_string_lossy())
}

/// How long one `--version` call may take before the tool is recorded as absent (3 s was
/// seen to expire for fio while the test suite's threads kept both CPUs busy).
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// Describe this machine. `tool_versions` is left empty: fill it with [`tool_versions`] for the
/// tools the run actually uses (that spawns processes; this function only reads files).
pub fn host_info() -> HostInfo {
    let uname = rustix::system::uname();
    let cpuinfo = read("/proc/cpuinfo");
    let cpus = super::sys::online_cpus().unwrap_or_else(|| cpu_count(&cpuinfo));
    let model = cpu_model(&cpuinfo).unwrap_or_else(|| "unknown CPU".to_string());
    let mut extra = BTreeMap::new();
    extra.insert(
        "arch".to_string(),
        uname.machine().to_string_lossy().into_owned(),
    );
    extra.insert(
        "kernel_build".to_string(),
        uname.version().to_string_lossy().into_owned(),
    );
    if let Some(distro) = os_release_name(&read("/etc/os-release")) {
        extra.insert("distribution".to_string(), distro);
    }
    if let Some(virt) = virtualization(&cpuinfo) {
        extra.insert("virtualization".to_string(), virt);
    }
    HostInfo {
        kernel: uname.release().to_string_lossy().into_owned(),
        cpu: format!("{model} ({cpus} CPUs)"),
        cpus,
        ram_bytes: super::sys::ram_bytes(),
        hostname: uname.nodename().to_string_lossy().into_owned(),
        tool_versions: BTreeMap::new(),
        extra,
    }
}

/// Version of each tool that is installed, keyed by the tool's name; missing tools are absent.
pub fn tool_versions(tools: &[&str]) -> BTreeMap<String, String> {
    tools
        .iter()
        .filter_map(|&tool| tool_version(tool).map(|v| (tool.to_string(), v)))
        .collect()
}

/// Version of one tool (`TOOL --version`), or None when it is not installed or does not say.
fn tool_version(tool: &str) -> Option<String> {
    version_of(tool, &[&[tool, "--version"]])
}

/// Version of `tool` as the first of `asks` (argvs, tried in order) that exits 0 tells it;
/// None when the tool is not installed or none says.
pub fn version_of(tool: &str, asks: &[&[&str]]) -> Option<String> {
    if !command::available(tool) {
        return None;
    }
    asks.iter().find_map(|argv| {
        let out = command::run_unchecked(&command::argv(argv), VERSION_TIMEOUT).ok()?;
        if out.status != Some(0) {
            return None;
        }
        parse_version(&out.combined())
    })
}

/// The version in a tool's banner: the first token part that starts with a digit (at the token's
/// start or after `-`/`v`) and contains a dot: `mke2fs 1.47.0 (5-Feb-2023)` → `1.47.0`,
/// `btrfs-progs v6.2` → `6.2`, `fio-3.33` → `3.33`, `zfs-2.1.5-1` → `2.1.5-1`. A leading
/// `zfs-fuse` is kept so its versions cannot be mistaken for OpenZFS's. Falls back to the first
/// non-empty line.
pub fn parse_version(text: &str) -> Option<String> {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    for line in text.lines() {
        for token in line.split_whitespace() {
            let bytes = token.as_bytes();
            let start = (0..bytes.len()).find(|&i| {
                bytes[i].is_ascii_digit() && (i == 0 || matches!(bytes[i - 1], b'-' | b'v'))
            });
            let Some(start) = start else { continue };
            let version = token[start..].trim_end_matches([',', ';', ')']);
            if !version.contains('.') {
                continue;
            }
            return Some(if line.trim_start().starts_with("zfs-fuse ") {
                format!("zfs-fuse {version}")
            } else {
                version.to_string()
            });
        }
    }
    Some(first.to_string())
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `model name` of the first CPU (x86), else `Model`/`Hardware`/`cpu model` (ARM, MIPS…).
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "Hardware", "cpu model", "cpu"] {
        let found = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Number of `processor` entries in /proc/cpuinfo (fallback when sysconf fails).
fn cpu_count(cpuinfo: &str) -> u32 {
    cpuinfo
        .lines()
        .filter(|l| l.split(':').next().map(str::trim) == Some("processor"))
        .count() as u32
}

/// `PRETTY_NAME` (else `NAME VERSION_ID`) from os-release.
pub fn os_release_name(text: &str) -> Option<String> {
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.strip_prefix('=')?;
            let v = v.trim().trim_matches('"').trim_matches('\'');
            (!v.is_empty()).then(|| v.to_string())
        })
    };
    get("PRETTY_NAME").or_else(|| {
        let name = get("NAME")?;
        Some(match get("VERSION_ID") {
            Some(v) => format!("{name} {v}"),
            None => name,
        })
    })
}

/// Container and/or VM, from cheap hints: container marker files, the CPU's `hypervisor`
/// flag, and the DMI vendor when sysfs exposes it.
fn virtualization(cpuinfo: &str) -> Option<String> {
    let container = if std::path::Path::new("/.dockerenv").exists() {
        Some("docker".to_string())
    } else if std::path::Path::new("/run/.containerenv").exists() {
        Some("podman".to_string())
    } else {
        None
    };
    let vendor = read("/sys/class/dmi/id/sys_vendor");
    let hyper = read("/sys/hypervisor/type");
    describe_virtualization(container, has_hypervisor_flag(cpuinfo), &vendor, &hyper)
}

/// Whether the CPU flags include `hypervisor` (set by every common hypervisor on x86).
fn has_hypervisor_flag(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .take(1)
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
}

/// Combine the hints into e.g. `container (docker), vm (QEMU)`.
fn describe_virtualization(
    container: Option<String>,
    hypervisor_flag: bool,
    dmi_vendor: &str,
    hypervisor_type: &str,
) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(c) = container {
        parts.push(format!("container ({c})"));
    }
    let vendor = [hypervisor_type.trim(), dmi_vendor.trim()]
        .into_iter()
        .find(|v| !v.is_empty());
    if hypervisor_flag || !hypervisor_type.trim().is_empty() {
        parts.push(match vendor {
            Some(v) => format!("vm ({v})"),
            None => "vm".to_string(),
        });
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_real_banners() {
        assert_eq!(
            parse_version("mke2fs 1.47.0 (5-Feb-2023)\n\tUsing EXT2FS Library version 1.47.0\n")
                .unwrap(),
            "1.47.0"
        );
        assert_eq!(parse_version("mkfs.xfs version 6.1.0\n").unwrap(), "6.1.0");
        assert_eq!(
            parse_version("mkfs.btrfs, part of btrfs-progs v6.2\n").unwrap(),
            "6.2"
        );
        assert_eq!(parse_version("fio-3.33\n").unwrap(), "3.33");
        assert_eq!(
            parse_version("zfs-2.1.5-1ubuntu6\nzfs-kmod-2.1.5-1ubuntu6\n").unwrap(),
            "2.1.5-1ubuntu6"
        );
        assert_eq!(
            parse_version("zfs-fuse 0.7.0-25+b1").unwrap(),
            "zfs-fuse 0.7.0-25+b1"
        );
        assert_eq!(parse_version("0.7.0-25+b1").unwrap(), "0.7.0-25+b1");
        assert_eq!(
            parse_version("sometool (no version)\n").unwrap(),
            "sometool (no version)"
        );
        assert_eq!(parse_version("\n  \n"), None);
    }

    #[test]
    fn cpu_mem_and_distribution() {
        let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu hypervisor sse\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n";
        assert_eq!(cpu_model(cpuinfo).unwrap(), "AMD EPYC");
        assert_eq!(cpu_count(cpuinfo), 2);
        assert!(has_hypervisor_flag(cpuinfo));
        assert!(!has_hypervisor_flag("flags : fpu sse\n"));
        assert_eq!(
            cpu_model("processor : 0\nModel : Raspberry Pi 4\n").unwrap(),
            "Raspberry Pi 4"
        );

        assert_eq!(
            os_release_name(
                "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
            )
            .unwrap(),
            "Debian GNU/Linux 12 (bookworm)"
        );
        assert_eq!(
            os_release_name("NAME=Alpine\nVERSION_ID=3.20.1\n").unwrap(),
            "Alpine 3.20.1"
        );
        assert_eq!(os_release_name(""), None);
    }

    #[test]
    fn virtualization_hints() {
        assert_eq!(
            describe_virtualization(Some("docker".into()), true, "", ""),
            Some("container (docker), vm".into())
        );
        assert_eq!(
            describe_virtualization(None, true, "QEMU\n", ""),
            Some("vm (QEMU)".into())
        );
        assert_eq!(
            describe_virtualization(None, false, "", "xen\n"),
            Some("vm (xen)".into())
        );
        assert_eq!(describe_virtualization(None, false, "Dell Inc.", ""), None);
    }

    #[test]
    fn this_host() {
        let h = host_info();
        assert!(!h.kernel.is_empty());
        assert!(h.cpus >= 1);
        assert!(h.ram_bytes > 0);
        assert!(h.cpu.contains("CPUs"), "{}", h.cpu);
        // Absent tools are left out, never an error.
        let v = tool_versions(&["no-such-tool-xyz"]);
        assert!(v.is_empty());
        let v = tool_versions(DEFAULT_TOOLS);
        if command::available("fio") {
            let fio = &v["fio"];
            assert!(fio.starts_with(|c: char| c.is_ascii_digit()), "{fio}");
        }
        eprintln!("{h:#?}\n{v:#?}");
    }
}
