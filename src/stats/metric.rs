//! How to name workloads for people. What a metric means (direction, label, unit, format) is
//! the metric registry's ([`crate::metrics`]).

/// Human name of a standard workload; unknown ids are shown as they are.
pub fn workload_label(id: &str) -> String {
    let known = match id {
        "layout" => "Lay out the test file",
        "seqread" => "Sequential read",
        "seqwrite" => "Sequential write",
        "randread" => "Random read",
        "randwrite" => "Random write",
        "randrw70" => "70/30 random mix",
        "fsync-write" => "Write + fsync",
        "untar" => "Untar the corpus",
        "find-cold" => "find over the tree, cold cache",
        "find-warm" => "find over the tree, warm cache (caches could not be dropped)",
        "rm-tree" => "rm -rf the tree",
        "mkfs" => "mkfs / zpool create",
        "usable-space" => "Usable space (df)",
        _ => "",
    };
    if known.is_empty() {
        id.to_string()
    } else {
        known.to_string()
    }
}

/// Short verb-ish name used in recommendations (`rm -rf`, `untar`).
pub fn workload_short(id: &str) -> String {
    match id {
        "rm-tree" => "rm -rf".into(),
        "find-cold" => "cold find".into(),
        "find-warm" => "warm find".into(),
        "fsync-write" => "write+fsync".into(),
        "randrw70" => "70/30 mix".into(),
        "usable-space" => "usable space".into(),
        other => other.into(),
    }
}
