//! Box-drawn text tables that fit a terminal width: long labels wrap, long setup names wrap
//! in the header, and when the columns still do not fit the setups are split over several
//! tables that each repeat the label column.

/// Display width: every character the reports use (digits, –, ★, ≈, ↑, box lines) is one
/// column wide.
pub fn width(s: &str) -> usize {
    s.chars().count()
}

/// Wrap `text` to lines of at most `w` columns, at spaces when possible, else mid-word
/// (setup names such as `btrfs-zstd-ssd` have no spaces; they break after a `-` when one fits).
pub fn wrap(text: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        loop {
            let sep = usize::from(!cur.is_empty());
            if width(&cur) + sep + width(&word) <= w {
                if sep == 1 {
                    cur.push(' ');
                }
                cur.push_str(&word);
                break;
            }
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
                continue;
            }
            // A word longer than the line: cut after the last `-` that fits, else at `w`.
            let chars: Vec<char> = word.chars().collect();
            let cut = chars[..w]
                .iter()
                .rposition(|c| *c == '-')
                .map(|i| i + 1)
                .filter(|&i| i > 1)
                .unwrap_or(w);
            lines.push(chars[..cut].iter().collect());
            word = chars[cut..].iter().collect();
            if word.is_empty() {
                break;
            }
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Total width of a table with these column widths (`│ a │ b │`).
fn total(w: &[usize]) -> usize {
    1 + w.iter().map(|n| n + 3).sum::<usize>()
}

/// Narrowest a label column may become before the table is split instead.
const MIN_LABEL: usize = 14;

/// Draw `header` + `rows` (column 0 = label, left-aligned; the rest right-aligned) within
/// `max_width` columns.
pub fn render(header: &[String], rows: &[Vec<String>], max_width: usize) -> String {
    let cols = header.len();
    let natural: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .map(|r| width(&r[i]))
                .chain([width(&header[i])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut w = natural.clone();
    if total(&w) > max_width {
        // Setup columns: as wide as their values; the header name wraps (at least 8 wide).
        for i in 1..cols {
            let data = rows.iter().map(|r| width(&r[i])).max().unwrap_or(0);
            w[i] = data.max(8).min(natural[i]);
        }
    }
    if total(&w) > max_width {
        let rest = total(&w) - w[0];
        w[0] = max_width
            .saturating_sub(rest)
            .max(MIN_LABEL)
            .min(natural[0]);
    }
    if total(&w) <= max_width || cols <= 2 {
        return draw(header, rows, &w, &(0..cols).collect::<Vec<_>>());
    }
    // Split the setups over several tables, each with the label column.
    let mut out = String::new();
    let mut group: Vec<usize> = vec![0];
    for i in 1..cols {
        let mut next: Vec<usize> = group.iter().map(|&c| w[c]).collect();
        next.push(w[i]);
        if group.len() > 1 && total(&next) > max_width {
            out.push_str(&draw(header, rows, &w, &group));
            group = vec![0];
        }
        group.push(i);
    }
    out.push_str(&draw(header, rows, &w, &group));
    out
}

/// Draw the columns `pick` of the table with widths `w` (cells wrap to their column).
fn draw(header: &[String], rows: &[Vec<String>], w: &[usize], pick: &[usize]) -> String {
    let rule = |l: char, m: char, r: char| {
        let parts: Vec<String> = pick.iter().map(|&i| "─".repeat(w[i] + 2)).collect();
        format!("{l}{}{r}\n", parts.join(&m.to_string()))
    };
    let line = |cells: &[String], is_header: bool| {
        let wrapped: Vec<Vec<String>> = pick.iter().map(|&i| wrap(&cells[i], w[i])).collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        let mut s = String::new();
        for k in 0..height {
            s.push('│');
            for (j, &i) in pick.iter().enumerate() {
                let cell = wrapped[j].get(k).map(String::as_str).unwrap_or("");
                let pad = " ".repeat(w[i].saturating_sub(width(cell)));
                // Labels and headers left-aligned, numbers right-aligned so magnitudes line up.
                if i == 0 || is_header {
                    s.push_str(&format!(" {cell}{pad} │"));
                } else {
                    s.push_str(&format!(" {pad}{cell} │"));
                }
            }
            s.push('\n');
        }
        s
    };
    let mut out = rule('┌', '┬', '┐');
    out.push_str(&line(header, true));
    out.push_str(&rule('├', '┼', '┤'));
    for r in rows {
        out.push_str(&line(r, false));
    }
    out.push_str(&rule('└', '┴', '┘'));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_then_dashes() {
        assert_eq!(wrap("find over the tree", 10), ["find over", "the tree"]);
        assert_eq!(wrap("btrfs-zstd-ssd", 8), ["btrfs-", "zstd-ssd"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), [""]);
    }

    #[test]
    fn splits_when_wrapping_is_not_enough() {
        let header: Vec<String> = ["Test", "a", "b", "c"].map(String::from).to_vec();
        let rows = vec![
            ["x", "123456789012345", "123456789012345", "123456789012345"]
                .map(String::from)
                .to_vec(),
        ];
        let out = render(&header, &rows, 50);
        assert!(out.lines().all(|l| width(l) <= 50), "{out}");
        assert_eq!(out.matches('┌').count(), 2, "{out}");
        assert!(out.contains("123456789012345"));
    }
}
