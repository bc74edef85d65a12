//! Fuzz targets that run on stable Rust inside `cargo test` (issue 31): the plan-file parser
//! (and the resolver behind it), the fio job-file parser, the `--fs` variant parser and its
//! mkfs word splitter, the results.json loader with everything `report` and `compare`
//! do with a loaded file, and `fsbench record`'s trace reader and strace parser.
//!
//! Each target mutates its seed corpus (`tests/fuzz/corpus/TARGET/`) with a seeded
//! generator for a fixed number of cases (`FSBENCH_FUZZ_CASES` raises it; nothing is bounded
//! by time), calls the code under `catch_unwind`, and fails on a panic after writing the input
//! to `target/fuzz-crashes/TARGET-N`. Inputs that once crashed are kept, minimized, in
//! `tests/fuzz/regressions/TARGET/` and run first. Unbounded loops and allocations are kept
//! out by the code's own limits (plan and results size limits, the parameter table, the job
//! file's section and option limits), which these inputs exercise: a case that hung would
//! hang the test.

use fsbench::fio::jobfile::{self, LoadOptions, rebase::Place};
use fsbench::host::facts::HostFacts;
use fsbench::plan::{Overrides, resolve};
use fsbench::results::Results;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

fn cases(default: usize) -> usize {
    std::env::var("FSBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn dir(kind: &str, target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz")
        .join(kind)
        .join(target)
}

/// The seed corpus of a target; a `.txt` file holds one input per line.
fn seeds(target: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir("corpus", target))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        if f.extension().is_some_and(|e| e == "txt") {
            out.extend(text.lines().map(str::to_string));
        } else {
            out.push(text);
        }
    }
    assert!(!out.is_empty(), "no seeds for {target}");
    out
}

fn regressions(target: &str) -> Vec<(PathBuf, String)> {
    let Ok(rd) = std::fs::read_dir(dir("regressions", target)) else {
        return Vec::new();
    };
    let mut v: Vec<(PathBuf, String)> = rd
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    v.sort();
    v
}

/// Tokens that break parsers: quotes, escapes, huge and odd numbers, deep nesting, control
/// characters, long runs.
const HOSTILE: &[&str] = &[
    "'",
    "\"",
    "\\",
    "\n",
    "\r\n",
    "\t",
    "\0",
    "$",
    "`",
    "$(id)",
    "*",
    "[",
    "]",
    "{",
    "}",
    "=",
    ",",
    ";",
    ":",
    "#",
    "-1",
    "0",
    "1e9",
    "1e999",
    "-0.0",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967296",
    "100000000",
    "1e-300",
    "0x10",
    "1_000",
    "4xram",
    "1000000xram",
    "16E",
    "999999999T",
    "[[workload]]",
    "[global]",
    "include ",
    "${HOME}",
    "[[setup]]",
    "[corpus]",
    "\u{202e}",
    "\u{a0}",
    "é",
    "\u{feff}",
    "null",
    "true",
    "[]",
    "{}",
    "[[[[[[[[",
    "]]]]]]]]",
];

/// One mutation of `seed`: splice hostile tokens, delete, duplicate or truncate.
fn mutate(r: &mut Xoshiro256PlusPlus, seed: &str) -> String {
    let mut s: Vec<char> = seed.chars().collect();
    let n = 1 + (r.next_u32() % 6) as usize;
    for _ in 0..n {
        let at = if s.is_empty() {
            0
        } else {
            (r.next_u64() % (s.len() as u64 + 1)) as usize
        };
        match r.next_u32() % 8 {
            0..=2 => {
                let t = HOSTILE[(r.next_u32() as usize) % HOSTILE.len()];
                s.splice(at..at, t.chars());
            }
            3 if !s.is_empty() => {
                let len = (r.next_u32() % 16) as usize;
                let end = (at + len).min(s.len());
                s.drain(at..end);
            }
            4 if !s.is_empty() => {
                // Duplicate a slice a few times (giant arrays, repeated sections).
                let len = 1 + (r.next_u32() % 64) as usize;
                let end = (at + len).min(s.len());
                let piece: Vec<char> = s[at.min(end)..end].to_vec();
                for _ in 0..(1 + r.next_u32() % 8) {
                    s.splice(at..at, piece.iter().copied());
                }
            }
            5 => s.truncate(at),
            6 => {
                // Replace a run of digits by a hostile number.
                if let Some(p) = s[at.min(s.len())..].iter().position(|c| c.is_ascii_digit()) {
                    let p = at + p;
                    let end = s[p..]
                        .iter()
                        .position(|c| !c.is_ascii_digit())
                        .map_or(s.len(), |e| p + e);
                    let t = HOSTILE[20 + (r.next_u32() as usize) % 26];
                    s.splice(p..end, t.chars());
                }
            }
            _ => {
                let c = char::from_u32(r.next_u32() % 0x3000).unwrap_or('?');
                s.insert(at, c);
            }
        }
    }
    s.into_iter().collect()
}

/// Replace one node of a JSON document by a hostile value: negative, huge, fractional where
/// counts go, empty or giant strings and arrays, deep nesting, wrong types.
fn mutate_json(r: &mut Xoshiro256PlusPlus, seed: &str) -> String {
    use serde_json::{Value, json};
    let Ok(mut doc) = serde_json::from_str::<Value>(seed) else {
        return mutate(r, seed);
    };
    fn count(v: &Value) -> usize {
        1 + match v {
            Value::Array(a) => a.iter().map(count).sum(),
            Value::Object(o) => o.values().map(count).sum(),
            _ => 0,
        }
    }
    fn nth<'a>(v: &'a mut Value, n: &mut usize) -> Option<&'a mut Value> {
        if *n == 0 {
            return Some(v);
        }
        *n -= 1;
        match v {
            Value::Array(a) => a.iter_mut().find_map(|x| nth(x, n)),
            Value::Object(o) => o.values_mut().find_map(|x| nth(x, n)),
            _ => None,
        }
    }
    for _ in 0..(1 + r.next_u32() % 4) {
        let total = count(&doc);
        let mut k = (r.next_u64() % total as u64) as usize;
        let Some(node) = nth(&mut doc, &mut k) else {
            continue;
        };
        // Mostly a value of the same type (so the file still loads and the numbers reach the
        // statistics and the renderers), sometimes a wrong type or deep nesting.
        let pick = r.next_u32();
        *node = match node.take() {
            _ if pick.is_multiple_of(16) => (0..200).fold(json!(1), |acc, _| json!([acc])),
            Value::Number(_) => [
                json!(-1),
                json!(0),
                json!(1e308),
                json!(-1e308),
                json!(u64::MAX),
                json!(i64::MIN),
                json!(0.5),
                json!(-0.0),
                json!(1e-308),
                json!(4294967296u64),
            ][(pick as usize / 16) % 10]
                .clone(),
            Value::String(t) => match (pick / 16) % 5 {
                0 => json!(""),
                1 => json!("\u{202e}x\u{0}|<b>&\n\"".repeat(1 + (pick as usize >> 8) % 2000)),
                2 => json!(format!("{t}{t}")),
                3 => json!("NaN"),
                _ => json!(t.chars().rev().collect::<String>()),
            },
            Value::Array(mut a) => match (pick / 16) % 4 {
                0 => json!([]),
                1 if !a.is_empty() => {
                    let x = a[(pick as usize >> 8) % a.len()].clone();
                    a.extend(std::iter::repeat_n(x, 1 + (pick as usize >> 12) % 2000));
                    Value::Array(a)
                }
                2 => {
                    a.truncate((pick as usize >> 8) % (a.len() + 1));
                    Value::Array(a)
                }
                _ => {
                    a.reverse();
                    Value::Array(a)
                }
            },
            Value::Object(mut o) => {
                if !o.is_empty() {
                    let k = o
                        .keys()
                        .nth((pick as usize >> 4) % o.len())
                        .cloned()
                        .unwrap();
                    o.remove(&k);
                }
                Value::Object(o)
            }
            Value::Bool(b) => json!(!b),
            Value::Null => json!(0),
        };
    }
    let text = serde_json::to_string(&doc).unwrap();
    if r.next_u32().is_multiple_of(6) {
        mutate(r, &text)
    } else {
        text
    }
}

/// [`fuzz_with`] and the text mutator.
fn fuzz(target: &str, n: usize, f: impl Fn(&str) -> bool) -> (usize, usize) {
    fuzz_with(target, n, mutate, f)
}

/// Run `f` on the regressions, then `n` mutated seeds; a panic fails the test with the
/// input saved. Returns (executions, accepted).
fn fuzz_with(
    target: &str,
    n: usize,
    mutate: fn(&mut Xoshiro256PlusPlus, &str) -> String,
    f: impl Fn(&str) -> bool,
) -> (usize, usize) {
    let crash = |input: &str, i: usize, why: &str| -> ! {
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-crashes");
        std::fs::create_dir_all(&out).unwrap();
        let p = out.join(format!("{target}-{i}"));
        std::fs::write(&p, input).unwrap();
        panic!(
            "fuzz {target}: case {i} panicked ({why}); input saved in {}",
            p.display()
        );
    };
    let mut execs = 0;
    let mut accepted = 0;
    for (p, input) in regressions(target) {
        execs += 1;
        if catch_unwind(AssertUnwindSafe(|| f(&input))).is_err() {
            crash(&input, 0, &format!("regression {}", p.display()));
        }
    }
    let seeds = seeds(target);
    let mut r = Xoshiro256PlusPlus::seed_from_u64(0xf5be_0031 ^ target.len() as u64);
    for i in 0..n {
        let seed = &seeds[i % seeds.len()];
        let mut input = mutate(&mut r, seed);
        // Now and then a mutation of a mutation: further from the valid inputs.
        if r.next_u32().is_multiple_of(4) {
            input = mutate(&mut r, &input);
        }
        execs += 1;
        match catch_unwind(AssertUnwindSafe(|| f(&input))) {
            Ok(true) => accepted += 1,
            Ok(false) => {}
            Err(_) => crash(&input, i + 1, "mutated seed"),
        }
    }
    eprintln!("fuzz {target}: {execs} executions, {accepted} accepted, 0 crashes");
    (execs, accepted)
}

fn host() -> HostFacts {
    HostFacts {
        ram_bytes: 4 << 30,
        target_bytes: Some(20 << 30),
        scratch_free: None,
        target_in_ram: None,
        device: None,
        tools: BTreeSet::from(["fio".to_string()]),
        dirs: BTreeSet::new(),
        files: BTreeSet::new(),
        footprints: Default::default(),
        now: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        random_seed: 42,
        md: false,
        kernel_zfs: false,
    }
}

/// The plan-file parser, the resolver and what `fsbench plan` computes from the result
/// (every setup-round, the ETA): an accepted plan must be cheap to expand.
#[test]
fn fuzz_plan_file() {
    let (execs, _) = fuzz("plan", cases(3000), |text| {
        if fsbench::plan::file::parse(text, "--plan fuzz.toml").is_err() {
            return false;
        }
        let o = Overrides {
            plan: Some("fuzz.toml".into()),
            ..Overrides::default()
        };
        let Ok(src) = resolve::Source::new(&o, Some(text)) else {
            return false;
        };
        let Ok(inv) = resolve::resolve(&src, &o, &host(), vec![]) else {
            return false;
        };
        let rounds = inv.plan.setup_rounds();
        assert!(rounds.len() <= 100_000);
        let eta = fsbench::plan::eta::total(&inv.plan, true);
        assert!(eta.as_secs_f64().is_finite());
        true
    });
    assert!(execs >= 3000);
}

/// The fio job-file parser and the preparation a run does with it (rebase, caps).
#[test]
fn fuzz_fio_job_file() {
    let opts = LoadOptions {
        place: Place::DataDir,
        budget: Some(1 << 30),
        runtime: Some(Duration::from_secs(1)),
        ramp: None,
        native: false,
    };
    let native = LoadOptions {
        native: true,
        ..opts.clone()
    };
    let path = Path::new("/nonexistent/fuzz.fio");
    let (execs, _) = fuzz("fio", cases(3000), |text| {
        let Ok(file) = jobfile::parse::parse(text, path, &|_| None) else {
            return false;
        };
        let _ = jobfile::prepare(path, &file, &native);
        jobfile::prepare(path, &file, &opts).is_ok()
    });
    assert!(execs >= 3000);
}

/// `--fs`: the variant parser that feeds the safety guard.
#[test]
fn fuzz_variant() {
    let (execs, _) = fuzz("variant", cases(4000), |text| {
        fsbench::plan::setup_syntax::parse_fs_list(&[text.to_string()]).is_ok()
    });
    assert!(execs >= 4000);
}

/// The loader of `report` and `compare`, then what they render from a loaded file.
#[test]
fn fuzz_results_json() {
    use fsbench::report::{Format, Report, compare, exporter};
    let (execs, _) = fuzz_with("results", cases(400), mutate_json, |text| {
        let Ok(r) = Results::from_json(text, "fuzz.json") else {
            return false;
        };
        let report = Report::new(&r);
        for f in [
            Format::Table,
            Format::Md,
            Format::Csv,
            Format::Json,
            Format::Html,
        ] {
            let _ = exporter(f).render(&report);
        }
        let opts = compare::Options::default();
        if let Ok(c) = compare::compare(&r, &r, "a", "b", &opts) {
            let _ = compare::render_text(&c);
            let _ = compare::render_markdown(&c);
            let _ = compare::render_json(&c);
            let _ = compare::render_html(&c);
        }
        let _ = compare::split::split_rounds(&r);
        true
    });
    assert!(execs >= 400);
}

/// A results file over the size limit is refused before it is parsed.
#[test]
fn results_over_the_size_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.json");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(fsbench::results::MAX_RESULTS_BYTES + 1).unwrap();
    let e = Results::load(&p).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
    // Deep nesting is a parse error, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(Results::from_json(&deep, "deep.json").is_err());
}

/// The trace reader (`--replay`'s input): any input is read to its end or refused with a
/// line and a problem, never a panic; an accepted trace has its trailer.
#[test]
fn fuzz_trace_reader() {
    use fsbench::workload::replay::trace::TraceReader;
    let (execs, accepted) = fuzz("trace", cases(400), |text| {
        let bytes = text.as_bytes().to_vec();
        let Ok(mut r) = TraceReader::from_reader(std::io::Cursor::new(bytes)) else {
            return false;
        };
        match r.check_all() {
            Ok(_) => {
                assert!(r.trailer.is_some());
                true
            }
            Err(e) => {
                assert!(e.line >= 1 && !e.problem.is_empty(), "{e:?}");
                false
            }
        }
    });
    assert!(execs >= 400 && accepted > 0, "{execs} {accepted}");
}

/// strace's output as `fsbench record` parses it: any session becomes events or skipped
/// lines, never a panic; every path an event names is relative and below the root.
#[test]
fn fuzz_strace_parser() {
    use fsbench::workload::replay::strace::Parser;
    use fsbench::workload::replay::trace::check_rel;
    let (execs, _) = fuzz("strace", cases(400), |text| {
        let mut p = Parser::new(
            Path::new("/tmp/stt"),
            Path::new("/tmp/stt"),
            Default::default(),
        );
        let mut n = 0;
        for line in text.lines() {
            for e in p.feed(line) {
                for path in [&e.p, &e.p2].into_iter().flatten() {
                    assert!(check_rel(path).is_ok(), "{path:?} from {line:?}");
                }
                n += 1;
            }
        }
        p.finish(0);
        n > 0
    });
    assert!(execs >= 400);
}
