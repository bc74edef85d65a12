//! Who ran where: the host's and the device's identity, from a results file, so that a run is
//! compared with the last one of the *same* device. [`enrich`] adds what only the live machine
//! knows (serial, WWN, the image's backing disk, the machine id) to the copy the store keeps.

use crate::host::sysfs::{self, DevNum};
use crate::results::Results;
use std::path::Path;

/// The device a run measured, as the store records it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Device {
    /// What identifies it across runs (serial or WWN when known, else model and size).
    pub key: String,
    /// One line for people.
    pub label: String,
    /// `image`, `device` or `dir`.
    pub kind: String,
    /// Model (for an image: of the disk holding it).
    pub model: String,
    /// Serial number, when the kernel reports one.
    pub serial: String,
    /// World-wide name, when the kernel reports one.
    pub wwn: String,
    /// Size of what was formatted, bytes.
    pub size: u64,
    /// For an image: the block device (or filesystem) holding the file.
    pub backing: String,
}

/// Add the live identity of the host and target to `r.host.extra` / `r.target.extra`
/// (`machine_id`, `serial`, `wwn`, `backing_device`, `backing_model`, `backing_serial`,
/// `backing_wwn`), where not already there.
pub fn enrich(r: &mut Results) {
    if let Ok(id) = std::fs::read_to_string("/etc/machine-id") {
        r.host
            .extra
            .entry("machine_id".into())
            .or_insert_with(|| id.trim().to_string());
    }
    let x = &mut r.target.extra;
    match r.target.kind.as_str() {
        "device" => {
            if let Some(dev) = x.get("device_number").and_then(|d| DevNum::parse(d))
                && let Some(sys) = dev.sysfs_dir()
            {
                let disk = sysfs::whole_disk(&sys);
                for (k, v) in disk_ids(&disk) {
                    x.entry(k.into()).or_insert(v);
                }
            }
        }
        "image" | "dir" | "file" => {
            let probe = Path::new(&r.target.path);
            let probe = if probe.exists() {
                probe.to_path_buf()
            } else {
                probe.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            if let Ok(meta) = std::fs::metadata(&probe) {
                use std::os::unix::fs::MetadataExt;
                let dev = DevNum::from_dev(meta.dev());
                x.entry("backing_device_number".into())
                    .or_insert_with(|| dev.to_string());
                if let Some(sys) = dev.sysfs_dir() {
                    let disk = sysfs::whole_disk(&sys);
                    x.entry("backing_device".into())
                        .or_insert_with(|| sysfs::kernel_name(&disk));
                    for (k, v) in disk_ids(&disk) {
                        x.entry(format!("backing_{k}")).or_insert(v);
                    }
                }
            }
        }
        _ => {}
    }
}

/// `model`, `serial`, `wwn` of a whole disk's sysfs directory, where present.
fn disk_ids(disk: &Path) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let read = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| sysfs::read_attr(disk, n).filter(|v| !v.is_empty()))
    };
    if let Some(m) = read(&["device/model"]) {
        out.push(("model", m));
    }
    if let Some(s) = read(&["serial", "device/serial"]) {
        out.push(("serial", s));
    }
    if let Some(w) = read(&["wwid", "device/wwid"]) {
        out.push(("wwn", w));
    }
    out
}

/// The device identity recorded in a results file (after [`enrich`], or as an old file has
/// it).
pub fn device(r: &Results) -> Device {
    let t = &r.target;
    let x = |k: &str| t.extra.get(k).cloned().unwrap_or_default();
    let kind = t.kind.clone();
    let size = t.size_bytes;
    let size_text = crate::units::format_size(size);
    match kind.as_str() {
        "device" => {
            let (serial, wwn) = (x("serial"), x("wwn"));
            let id = first(&[&wwn, &serial]).unwrap_or_else(|| format!("{}|{size}", t.model));
            Device {
                key: format!("device|{id}"),
                label: format!("{} {size_text} ({})", t.model, t.path),
                model: t.model.clone(),
                kind,
                serial,
                wwn,
                size,
                backing: String::new(),
            }
        }
        "image" => {
            let (serial, wwn) = (x("backing_serial"), x("backing_wwn"));
            let disk = first(&[&wwn, &serial, &x("backing_model"), &x("backing_device")])
                .unwrap_or_else(|| x("backing_fs"));
            let backing = first(&[&x("backing_device"), &x("backing_fs")]).unwrap_or_default();
            Device {
                key: format!("image|{size}|{disk}"),
                label: format!("image {size_text} on {backing}"),
                model: x("backing_model"),
                kind,
                serial,
                wwn,
                size,
                backing,
            }
        }
        _ => {
            let source = first(&[&x("mount_source"), &t.path]).unwrap_or_default();
            // A file and a directory on one filesystem are one disk: one key, the one older
            // records of `fsbench io` (which called its file a dir) have.
            let keyed = if kind == "file" { "dir" } else { kind.as_str() };
            Device {
                key: format!("{keyed}|{source}|{}", x("fs_type")),
                label: format!("{kind} {} ({})", t.path, x("fs_type")),
                model: t.model.clone(),
                kind,
                size,
                backing: source,
                ..Default::default()
            }
        }
    }
}

fn first(candidates: &[&String]) -> Option<String> {
    candidates
        .iter()
        .find(|s| !s.is_empty())
        .map(|s| s.to_string())
}

/// A short stable hash of what was planned: every workload with its parameters and every
/// setup with its options (FNV-1a over their JSON; the same plan hashes the same on any host).
pub fn plan_hash(r: &Results) -> String {
    let workloads: Vec<_> = r
        .workloads
        .iter()
        .map(|w| serde_json::json!([w.id, w.kind, w.params]))
        .collect();
    let setups: Vec<_> = r
        .setups
        .iter()
        .map(|s| serde_json::json!([s.name, s.fs, s.options]))
        .collect();
    let text = serde_json::json!([workloads, setups]).to_string();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_known_by_its_wwn_then_serial() {
        let mut r = Results::new();
        r.target.kind = "device".into();
        r.target.model = "Samsung SSD".into();
        r.target.size_bytes = 1 << 30;
        r.target.extra.insert("serial".into(), "S1".into());
        assert_eq!(device(&r).key, "device|S1");
        r.target.extra.insert("wwn".into(), "eui.1".into());
        assert_eq!(device(&r).key, "device|eui.1");
    }

    #[test]
    fn an_image_is_known_by_size_and_backing_disk() {
        let mut r = Results::new();
        r.target.kind = "image".into();
        r.target.size_bytes = 1 << 30;
        r.target.extra.insert("backing_fs".into(), "ext4".into());
        assert_eq!(device(&r).key, format!("image|{}|ext4", 1u64 << 30));
        r.target.extra.insert("backing_serial".into(), "X9".into());
        assert_eq!(device(&r).key, format!("image|{}|X9", 1u64 << 30));
    }

    #[test]
    fn the_plan_hash_follows_the_plan_not_the_numbers() {
        let mut a = Results::new();
        a.workloads.push(crate::results::WorkloadInfo {
            id: "randread".into(),
            ..Default::default()
        });
        let mut b = a.clone();
        b.samples.push(Default::default());
        assert_eq!(plan_hash(&a), plan_hash(&b));
        b.workloads[0].id = "randwrite".into();
        assert_ne!(plan_hash(&a), plan_hash(&b));
    }
}
