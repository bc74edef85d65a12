use super::registry::*;
use super::*;

const MIB: f64 = 1024.0 * 1024.0;

fn io_job(bs: f64) -> Shape {
    Shape {
        block_size: Some(bs),
        has_ops: true,
        has_bandwidth: true,
        has_seconds: false,
    }
}

#[test]
fn every_id_is_declared_once_with_a_label_and_unit() {
    let mut ids: Vec<&str> = REGISTRY.iter().map(|d| d.id.as_str()).collect();
    ids.sort_unstable();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "every id once");
    for d in REGISTRY {
        assert!(!d.label.is_empty() && !d.unit.is_empty(), "{}", d.id);
        if d.class == Class::Fact {
            assert_eq!(
                d.direction,
                Direction::Neutral,
                "a fact is never ranked: {}",
                d.id
            );
        }
    }
}

/// Emission sites use the registry's constants (the type system then checks them), and ids
/// built from parts are registered in every combination the workloads build.
#[test]
fn workloads_emit_registered_ids_only() {
    fn walk(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for d in ["workload", "runner", "commands", "mpi"] {
        walk(&src.join(d), &mut files);
    }
    assert!(files.len() > 10, "found the sources");
    for (path, text) in &files {
        let compact: String = text.split_whitespace().collect();
        assert!(
            !compact.contains("Metric::new(\"")
                && !compact.contains(",supported(\"")
                && !compact.contains("(supported(\""),
            "{}: a metric emitted as a string literal; use a metrics::registry constant",
            path.display()
        );
        // Ids built from parts go through MetricId::registered: check the parts here.
        for (pos, _) in compact.match_indices("MetricId::registered(&format!(\"") {
            let rest = &compact[pos + "MetricId::registered(&format!(\"".len()..];
            let pattern = &rest[..rest.find('"').unwrap()];
            let (var, tail) = pattern.split_once('}').expect("{prefix}_tail");
            let prefixes: &[&str] = match var.trim_start_matches('{') {
                "side" => &["read", "write"],
                "dir" => &["grow", "shrink"],
                other => panic!("{}: unknown id part {{{other}}}", path.display()),
            };
            for p in prefixes {
                let id = format!("{p}{tail}");
                assert!(
                    lookup(&id).is_some(),
                    "{}: {id} is not registered",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn sequential_jobs_are_judged_in_mib_s_and_random_ones_in_iops() {
    let seq = io_job(MIB);
    assert_eq!(role_in("bw_mib_s", &seq), Role::Measured);
    assert!(matches!(role_in("iops", &seq), Role::Derived(_)));
    // At 1 MiB the IOPS row repeats the MiB/s row: no row.
    assert_eq!(shown_in("iops", &seq), Shown::Hidden);
    assert_eq!(shown_in("bw_mib_s", &seq), Shown::Table);
    let rand = io_job(4096.0);
    assert_eq!(role_in("iops", &rand), Role::Measured);
    assert!(matches!(role_in("bw_mib_s", &rand), Role::Derived(_)));
    assert_eq!(shown_in("bw_mib_s", &rand), Shown::Details);
    assert_eq!(shown_in("iops", &rand), Shown::Table);
    // A size-based step (layout, compression): MiB/s is judged, its seconds follow from it.
    let layout = Shape {
        block_size: Some(MIB),
        has_ops: false,
        has_bandwidth: true,
        has_seconds: true,
    };
    assert_eq!(role_in("bw_mib_s", &layout), Role::Measured);
    assert!(matches!(role_in("seconds", &layout), Role::Derived(_)));
    assert_eq!(shown_in("seconds", &layout), Shown::Details);
    // A metadata step has no bandwidth: its time is judged.
    let untar = Shape {
        has_seconds: true,
        ..Shape::default()
    };
    assert_eq!(role_in("seconds", &untar), Role::Measured);
    assert!(matches!(role_in("ops_per_s", &untar), Role::Derived(_)));
    let rank = |id: &str, shape: &Shape| deciding_rank(id, role_in(id, shape));
    assert_eq!(rank("seconds", &untar).map(|r| r.0), Some(1));
    assert!(rank("ops_per_s", &untar).is_none());
    // A rate recorded without its time (older fsync-write files) is the measurement.
    assert_eq!(role_in("ops_per_s", &Shape::default()), Role::Measured);
    assert!(rank("iops", &seq).is_none());
    assert!(rank("bw_mib_s", &seq).is_some());
    assert!(deciding_rank("avail_bytes", Role::Fact).is_some());
    assert!(deciding_rank("inodes_total", Role::Fact).is_none());
}

#[test]
fn latency_is_lower_better_in_ms_and_facts_are_never_ranked() {
    for id in ["lat_p99_ms", "read_lat_p99_9_ms_merged", "lat_mean_ms"] {
        assert_eq!(direction(id), Direction::LowerIsBetter, "{id}");
        assert_eq!(def(id).unit, "ms");
        assert_eq!(direction(id).arrow(), "↓");
    }
    for id in [
        "inodes_total",
        "inodes_free",
        "inodes",
        "size_bytes",
        "entries",
        "bytes",
    ] {
        assert_eq!(direction(id), Direction::Neutral, "{id}");
        assert_eq!(def(id).class, Class::Fact, "{id}");
    }
    assert_eq!(direction("avail_bytes"), Direction::HigherIsBetter);
    assert_eq!(
        def("avail_bytes").role,
        Role::Fact,
        "fixed by mkfs: compare does not judge it"
    );
    // An unknown id (a newer fsbench, or an old one's) is a fact in words.
    assert_eq!(direction("iops_but_new"), Direction::Neutral);
    assert_eq!(def("iops_but_new").role, Role::Fact);
    assert_eq!(label("iops_but_new"), "iops but new");
}

#[test]
fn values_are_written_by_their_format() {
    assert_eq!(format_value("iops", 81449.4, "IOPS"), "81,449");
    assert_eq!(format_value("lat_p99_ms", 0.614, "ms"), "0.614");
    assert_eq!(format_value("seconds", 4.6, "s"), "4.60");
    assert_eq!(
        format_value("avail_bytes", 372.6 * 1024.0 * MIB, "bytes"),
        "372.6 GiB"
    );
    assert_eq!(format_value("supported", 1.0, "bool"), "yes");
    // Btrfs and ZFS have no fixed inode table: statvfs says 0.
    assert_eq!(format_value("inodes_total", 0.0, "count"), "no limit");
    assert_eq!(format_value("inodes_total", 524288.0, "count"), "524,288");
    // Unregistered ids fall back to their unit.
    assert_eq!(format_value("some_bytes", 2048.0, "bytes"), "2.0 KiB");
    assert_eq!(format_value("x", f64::NAN, "s"), "–");
    assert_eq!(format_with_unit("bw_mib_s", 2030.4, "MiB/s"), "2,030 MiB/s");
    assert_eq!(format_with_unit("inodes_total", 0.0, "count"), "no limit");
    assert_eq!(format_with_unit("size_bytes", 1024.0, "bytes"), "1.0 KiB");
    assert_eq!(
        format_with_unit("write_amplification", 1.15, "ratio"),
        "1.15×"
    );
    assert_eq!(unit_text("avail_bytes", "bytes"), "size");
    assert_eq!(unit_text("detected", "bool"), "yes/no");
    assert_eq!(unit_text("ops_per_s", "entries/s"), "entries/s");
}

#[test]
fn per_side_labels_read_as_words() {
    assert_eq!(
        label("read_lat_p99_ms"),
        "read p99 latency (median of rounds)"
    );
    assert_eq!(label("write_bw_mib_s"), "write bandwidth");
    assert_eq!(
        label("read_lat_p99_ms_merged"),
        "read p99 latency (all I/Os of all rounds)"
    );
    assert_eq!(MetricId::registered("read_iops"), READ_IOPS);
    assert!(std::panic::catch_unwind(|| MetricId::registered("read_nothing")).is_err());
}

#[test]
fn every_merged_tail_is_judged_on_a_per_round_percentile_of_its_side() {
    let tails: Vec<_> = merged_tails().collect();
    assert_eq!(
        tails.len(),
        9,
        "p50, p99, p99.9 for the job, its reads, its writes"
    );
    for (id, t) in tails {
        let per = t.per_round.def();
        assert_eq!(per.class, Class::Latency, "{id}");
        assert!(per.merged.is_none(), "{id}: its per-round form is a sample");
        assert_eq!(id.def().unit, per.unit, "{id}");
        assert!((0.0..1.0).contains(&t.quantile), "{id}");
        assert_eq!(merged_tail(&id).map(|x| x.per_round), Some(t.per_round));
    }
    assert!(merged_tail(&LAT_P99_MS).is_none());
    assert_eq!(
        merged_tail("read_lat_p99_ms_merged").map(|t| (t.side, t.quantile)),
        Some((Some("read"), 0.99))
    );
}
