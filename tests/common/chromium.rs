//! Headless Chromium for the page tests: screenshots (decoded, so a test can look at pixels)
//! and the page's layout (where elements sit, read from the DOM after Chromium laid it out).
//!
//! The reports carry no script, so any console line Chromium prints is a bug and fails the
//! test. `FSBENCH_SCREENSHOT_DIR=DIR` keeps the screenshots a test names with [`Shot::keep`].

use std::path::Path;

/// The Chromium binary on PATH, if any.
pub fn find() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Flags every headless run shares: no sandbox (root), no network, no first-run noise.
fn headless(chromium: &str, width: u32, height: u32) -> (std::process::Command, tempfile::TempDir) {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg(format!("--window-size={width},{height}"));
    (cmd, profile)
}

/// Fail on anything the page's console or loader reported.
fn assert_clean_console(stderr: &str) {
    for bad in [
        "Uncaught",
        ":CONSOLE",
        "Failed to load resource",
        "net::ERR_",
    ] {
        assert!(!stderr.contains(bad), "console error ({bad}):\n{stderr}");
    }
}

/// A decoded screenshot: width, height, RGB(A) pixels and channels per pixel.
pub struct Shot {
    pub width: u32,
    pub height: u32,
    px: Vec<u8>,
    channels: usize,
}

impl Shot {
    /// Fraction of pixels in rows `y0..y1` that are saturated colour (chart bars, forest
    /// intervals), as opposed to text, rules and backgrounds, which are grey or pastel.
    pub fn colour_fraction(&self, y0: u32, y1: u32) -> f64 {
        self.fraction(y0, y1, |c| {
            c[0].max(c[1]).max(c[2]) - c[0].min(c[1]).min(c[2]) > 90
        })
    }

    /// Fraction of pixels in rows `y0..y1` that carry ink of any hue (text, marks, bars), as
    /// opposed to the white or pastel page and its light grid lines.
    pub fn ink_fraction(&self, y0: u32, y1: u32) -> f64 {
        self.fraction(y0, y1, |c| c[0].min(c[1]).min(c[2]) < 200)
    }

    /// Fraction of pixels in rows `y0..y1` for which `hit` holds.
    fn fraction(&self, y0: u32, y1: u32, hit: impl Fn(&[u8]) -> bool) -> f64 {
        let row = self.width as usize * self.channels;
        let mut n = 0usize;
        let mut total = 0usize;
        for y in y0..y1.min(self.height) {
            for c in self.px[y as usize * row..(y as usize + 1) * row].chunks(self.channels) {
                total += 1;
                if hit(c) {
                    n += 1;
                }
            }
        }
        n as f64 / total.max(1) as f64
    }

    /// Rows `y0..y0 + height` (clamped to the shot) as a shot of their own.
    pub fn rows(&self, y0: u32, height: u32) -> Shot {
        let y0 = y0.min(self.height);
        let y1 = (y0 + height).min(self.height);
        let row = self.width as usize * self.channels;
        Shot {
            width: self.width,
            height: y1 - y0,
            px: self.px[y0 as usize * row..y1 as usize * row].to_vec(),
            channels: self.channels,
        }
    }

    /// Write it as PNG to `FSBENCH_SCREENSHOT_DIR/name` when that variable is set.
    pub fn keep(&self, name: &str) {
        let Some(dir) = std::env::var_os("FSBENCH_SCREENSHOT_DIR") else {
            return;
        };
        let path = Path::new(&dir).join(name);
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        enc.set_color(if self.channels == 4 {
            png::ColorType::Rgba
        } else {
            png::ColorType::Rgb
        });
        enc.set_depth(png::BitDepth::Eight);
        enc.write_header()
            .unwrap()
            .write_image_data(&self.px)
            .unwrap();
    }
}

/// Screenshot `html` at `width`×`height` in headless Chromium; the console must stay clean.
pub fn screenshot(chromium: &str, html: &Path, width: u32, height: u32) -> Shot {
    let png = html.with_extension("png");
    let (mut cmd, _profile) = headless(chromium, width, height);
    let out = cmd
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(png.exists(), "no screenshot; chromium said:\n{stderr}");
    assert_clean_console(&stderr);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    let shot = Shot {
        width: info.width,
        height: info.height,
        channels: info.color_type.samples(),
        px: buf,
    };
    assert_eq!((shot.width, shot.height), (width, height));
    shot
}

/// Where one element sits on the laid-out page, in CSS pixels from the top of the page.
#[derive(Debug, Clone)]
pub struct Rect {
    pub top: f64,
    pub bottom: f64,
    pub left: f64,
    pub right: f64,
    /// Its `aria-label`, else its text (trimmed, at most 160 characters).
    pub text: String,
}

/// The script added to a copy of the page: after layout it writes, for each selector, the
/// boxes of the matching elements into a `<pre>` that `--dump-dom` then prints.
const LAYOUT_SCRIPT: &str = r#"addEventListener('load', () => {
  const out = { width: innerWidth, found: {} };
  for (const sel of FSB_SELECTORS) {
    out.found[sel] = [...document.querySelectorAll(sel)].map(e => {
      const b = e.getBoundingClientRect();
      const text = (e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 160);
      return [b.top + scrollY, b.bottom + scrollY, b.left, b.right, text];
    });
  }
  const pre = document.createElement('pre');
  pre.id = 'fsb-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});"#;

/// Lay `html` out at `width` (the height does not change the layout: no page uses `vh`) and
/// return the boxes of the elements each CSS selector matches, in document order.
pub fn layout(chromium: &str, html: &Path, width: u32, selectors: &[&str]) -> Vec<Vec<Rect>> {
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("</body>"), "{html:?} has no </body>");
    let script = format!(
        "<script>const FSB_SELECTORS = {};\n{LAYOUT_SCRIPT}</script></body>",
        serde_json::to_string(selectors).unwrap()
    );
    let probe = html.with_extension("layout.html");
    std::fs::write(&probe, page.replacen("</body>", &script, 1)).unwrap();
    let (mut cmd, _profile) = headless(chromium, width, 1000);
    let out = cmd
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_clean_console(&stderr);
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"fsb-layout\">")
        .unwrap_or_else(|| panic!("no layout in the dumped DOM; chromium said:\n{stderr}"))
        + "<pre id=\"fsb-layout\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    // A text node is serialized with <, > and & escaped.
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["width"].as_u64(), Some(width as u64), "viewport width");
    selectors
        .iter()
        .map(|sel| {
            v["found"][*sel]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| Rect {
                    top: b[0].as_f64().unwrap(),
                    bottom: b[1].as_f64().unwrap(),
                    left: b[2].as_f64().unwrap(),
                    right: b[3].as_f64().unwrap(),
                    text: b[4].as_str().unwrap().to_string(),
                })
                .collect()
        })
        .collect()
}
