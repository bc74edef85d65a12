//! The HTML pages of real runs in headless Chromium: two short `fsbench run`s as root on loop
//! images (ext4 and XFS, 4K random read and untar, 3 rounds each), then the first run's
//! report.html and the compare page of the two, each laid out at 1280×1000. Within the first
//! screen there must be an SVG chart and the verdict (the verdict per workload class; on the
//! compare page the forest plot's verdict words), checked on the laid-out DOM and on the
//! screenshot's pixels. The runs are shared by the tests and made once.
//!
//! Needs root, loop devices, mkfs.ext4, mkfs.xfs and Chromium; otherwise each test prints
//! `skipped:`, or fails under `FSBENCH_REQUIRE_PRIVILEGED=1` ([`common`]).
//! `FSBENCH_SCREENSHOT_DIR=docs` keeps `report-run.png`, `report-latency.png` and
//! `compare-run.png` (the screenshots in docs/running.md and docs/tools.md); [`RUNS_VAR`] points the tests at two earlier
//! runs instead.

mod common;

use common::chromium::{self, Rect};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The first screen: Chromium's window at the size.
const SCREEN: (u32, u32) = (1280, 1000);

/// Root, loop devices, the two mkfs tools and Chromium, or skip.
fn prerequisites(test: &str) -> Option<&'static str> {
    common::privileged(&format!("html_live::{test}"))
        .loop_devices()
        .tools(&["mkfs.ext4", "mkfs.xfs"])
        .chromium()
        .ok()
        .then(|| chromium::find().unwrap())
}

/// Output directories of the two runs (A, B).
struct Runs {
    a: PathBuf,
    b: PathBuf,
}

/// Set to `A:B` (two output directories of earlier runs) to check, and screenshot, those
/// instead of making two short runs: how the docs' screenshots are made from fuller runs.
const RUNS_VAR: &str = "FSBENCH_HTML_LIVE_RUNS";

/// The two runs, made by the first test that asks (the other waits). They live under the
/// test target's scratch directory, which is emptied first, so nothing accumulates.
fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        if let Some(given) = std::env::var_os(RUNS_VAR) {
            let given = given.to_string_lossy().into_owned();
            let (a, b) = given
                .split_once(':')
                .unwrap_or_else(|| panic!("{RUNS_VAR}={given}: expected A:B"));
            return Runs {
                a: PathBuf::from(a),
                b: PathBuf::from(b),
            };
        }
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html_live");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let runs = Runs {
            a: root.join("a"),
            b: root.join("b"),
        };
        real_run(&runs.a);
        real_run(&runs.b);
        runs
    })
}

/// One short real run into `out`: its image is gone afterwards and no loop device of it is
/// left attached.
fn real_run(out: &Path) {
    let scratch = tempfile::tempdir().unwrap();
    let o = common::bin()
        .args([
            "run",
            "--yes",
            "--fs",
            "ext4,xfs",
            "--only",
            "randread,untar",
        ])
        .args(["--rounds", "3", "--image-size", "1G", "--file-size", "64M"])
        .args(["--runtime", "2s", "--ramp", "0s", "--seed", "42"])
        .args(["--quiet-window", "1s", "--quiet-timeout", "20s"])
        // A tenth of the quick profile's corpus: the page's shape, not the untar, is tested.
        .args(["--corpus-scale", "0.1"])
        .arg("--scratch-dir")
        .arg(scratch.path())
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "fsbench run failed: {:?}\n{err}",
        o.status
    );
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    let scratch_name = scratch.path().to_string_lossy().into_owned();
    assert!(
        !String::from_utf8_lossy(&loops.stdout).contains(&scratch_name),
        "a loop device of the run is still attached"
    );
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        0,
        "the run left its image behind"
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["partial"], false, "{err}");
}

/// The boxes matching each selector on `html` laid out at the screen's width.
fn boxes(chromium: &str, html: &Path, selectors: &[&str]) -> Vec<Vec<Rect>> {
    chromium::layout(chromium, html, SCREEN.0, selectors)
}

/// `r` lies entirely within the first screen and has a real size.
fn on_first_screen(r: &Rect) -> bool {
    r.top >= 0.0
        && r.bottom <= SCREEN.1 as f64
        && r.bottom - r.top > 20.0
        && r.right - r.left > 200.0
}

#[test]
fn real_run_report_opens_with_verdict_and_a_chart_in_chromium() {
    let Some(chromium) = prerequisites("real_run_report_opens_with_verdict_and_a_chart") else {
        return;
    };
    let out = &runs().a;
    // Named for the screenshot it becomes in docs/.
    let html = out.join("report-run.html");
    std::fs::copy(out.join("report.html"), &html).unwrap();
    let found = boxes(
        chromium,
        &html,
        &[
            "h2",
            "ul.verdict li",
            "svg.chart",
            "svg.chart[aria-label*='latency per second']",
        ],
    );
    let (h2, verdict, charts, latency) = (&found[0], &found[1], &found[2], &found[3]);
    let heading = h2
        .iter()
        .find(|h| h.text == "Verdict per workload class")
        .unwrap_or_else(|| panic!("no verdict heading among {h2:?}"));
    assert!(on_first_screen(heading), "verdict heading at {heading:?}");
    // The verdict itself: a line per workload class the run measured, naming a setup.
    for class in ["Small files and metadata", "Random I/O", "Databases"] {
        let line = verdict
            .iter()
            .find(|l| l.text.starts_with(class))
            .unwrap_or_else(|| panic!("no verdict for {class} in {verdict:?}"));
        assert!(on_first_screen(line), "{class}: {line:?}");
        assert!(
            line.text.contains("ext4") || line.text.contains("xfs"),
            "{line:?}"
        );
    }
    let chart = charts
        .iter()
        .find(|c| on_first_screen(c))
        .unwrap_or_else(|| panic!("no chart within the first screen: {charts:?}"));
    // The screenshot agrees: the chart's rows carry its bars' colour.
    let shot = chromium::screenshot(chromium, &html, SCREEN.0, SCREEN.1);
    let colour = shot.colour_fraction(chart.top as u32, chart.bottom as u32);
    assert!(
        colour > 0.02,
        "chart {chart:?} shows no colour: {colour:.4}"
    );
    shot.keep("report-run.png");
    // The latency-over-time chart (per-second p50/p99) of the random reads, drawn with a line.
    let lat = latency
        .first()
        .unwrap_or_else(|| panic!("no latency-over-time chart among {charts:?}"));
    let page = std::fs::read_to_string(&html).unwrap();
    let svg = &page[page.find("p50/p99 latency per second").unwrap()..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    assert!(svg.matches("<circle").count() >= 2, "no points: {svg}");
    // Its screen: 1000 rows of a taller screenshot, from its section's heading down, or lower
    // when the section is taller than a screen, so that the whole chart is on it.
    let heading = h2.iter().rev().find(|h| h.top <= lat.top).unwrap();
    let y0 =
        (heading.top.max(20.0) as u32 - 20).max((lat.bottom as u32 + 30).saturating_sub(SCREEN.1));
    let tall = chromium::screenshot(chromium, &html, SCREEN.0, y0 + SCREEN.1);
    let screen = tall.rows(y0, SCREEN.1);
    let rel = (lat.top as u32 - y0, lat.bottom as u32 - y0);
    assert!(
        rel.1 < SCREEN.1,
        "latency chart {lat:?} not on its screen from {y0}"
    );
    let colour = screen.colour_fraction(rel.0, rel.1);
    assert!(colour > 0.002, "latency chart {lat:?}: colour {colour:.4}");
    screen.keep("report-latency.png");
}

#[test]
fn compare_page_of_two_real_runs_opens_with_its_forest_plot_in_chromium() {
    let Some(chromium) = prerequisites("compare_page_of_two_real_runs_opens_with_its_forest_plot")
    else {
        return;
    };
    let runs = runs();
    let o = common::bin()
        .arg("compare")
        .arg(runs.a.join("results.json"))
        .arg(runs.b.join("results.json"))
        .args(["--format", "html"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = runs.b.join("compare-run.html");
    std::fs::write(&html, &o.stdout).unwrap();
    let found = boxes(chromium, &html, &["svg.forest", "svg.forest text", "table"]);
    let (forest, texts, tables) = (&found[0], &found[1], &found[2]);
    let plot = forest.first().expect("no forest plot");
    assert!(
        plot.top < SCREEN.1 as f64 && plot.right - plot.left > 600.0,
        "forest plot at {plot:?}"
    );
    assert!(
        tables.iter().all(|t| t.top > plot.bottom),
        "a table comes before the forest plot"
    );
    // Three rounds a side: the rows are judged, and their verdict words are on the first
    // screen (which words depends on this host's noise).
    let words = ["equivalent", "not separated", "better", "worse", "changed"];
    let verdicts: Vec<&Rect> = texts
        .iter()
        .filter(|t| words.iter().any(|w| t.text.ends_with(w)))
        .filter(|t| t.bottom <= SCREEN.1 as f64)
        .collect();
    assert!(
        verdicts.len() >= 3,
        "judged verdicts on the first screen: {verdicts:?}"
    );
    let shot = chromium::screenshot(chromium, &html, SCREEN.0, SCREEN.1);
    let ink = shot.ink_fraction(plot.top as u32, SCREEN.1);
    assert!(ink > 0.002, "the forest plot draws nothing: {ink:.4}");
    // Saturated colour marks a row that was separated or shown equivalent; "not separated"
    // is grey. Which rows those are depends on this host's noise, so colour is required only
    // when a verdict on the first screen says it should be there.
    let coloured = ["equivalent", "better", "worse", "changed"];
    let colour = shot.colour_fraction(plot.top as u32, SCREEN.1);
    if verdicts
        .iter()
        .any(|t| coloured.iter().any(|w| t.text.ends_with(w)))
    {
        assert!(
            colour > 0.0,
            "coloured verdicts {verdicts:?} but no colour drawn"
        );
    }
    shot.keep("compare-run.png");
}
