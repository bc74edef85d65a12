//! The plan-file side of the table: every key with a row is checked wherever it appears (top
//! level, `[corpus]`, each `[[workload]]`, a sweep's values), and a refusal names `file:line`.
//! Values that are not numbers of the row's kind are left to the plan parser, which says what
//! it expected.

use super::{ALL, FILE_SIZE_RAM, Param, SWEEP_VALUES, Unit};
use crate::Error;
use toml::de::{DeTable, DeValue};

/// Check every numeric key of the plan `t` (parsed from `text`); `origin` is `--plan FILE`.
pub fn check(t: &toml::Table, text: &str, origin: &str) -> crate::Result<()> {
    let lines = Lines::new(text);
    for p in ALL {
        let Some(key) = p.key else { continue };
        if let Some(rest) = key.strip_prefix("workload.") {
            let Some(toml::Value::Array(ws)) = t.get("workload") else {
                continue;
            };
            for (i, w) in ws.iter().enumerate() {
                let Some(w) = w.as_table() else { continue };
                if rest == "sweep.values" {
                    let n = w
                        .get("sweep")
                        .and_then(|s| s.get("values"))
                        .and_then(|v| v.as_array())
                        .map_or(0, Vec::len);
                    if n > 0 {
                        let path = [Seg::Key("workload"), Seg::Index(i), Seg::Key("sweep")];
                        one(
                            &SWEEP_VALUES,
                            &(n as i64).into(),
                            key,
                            &lines,
                            &path,
                            origin,
                        )?;
                    }
                    continue;
                }
                if let Some(v) = w.get(rest) {
                    let path = [Seg::Key("workload"), Seg::Index(i), Seg::Key(rest)];
                    one(p, v, rest, &lines, &path, origin)?;
                }
                // A sweep over this key: each of its values is checked.
                let sweep = w.get("sweep").and_then(|s| s.as_table());
                if let Some(s) = sweep
                    && s.get("param").and_then(|p| p.as_str()) == Some(rest)
                    && let Some(vals) = s.get("values").and_then(|v| v.as_array())
                {
                    for (j, v) in vals.iter().enumerate() {
                        let path = [
                            Seg::Key("workload"),
                            Seg::Index(i),
                            Seg::Key("sweep"),
                            Seg::Key("values"),
                            Seg::Index(j),
                        ];
                        one(
                            p,
                            v,
                            &format!("sweep value of {rest}"),
                            &lines,
                            &path,
                            origin,
                        )?;
                    }
                }
            }
            continue;
        }
        let segs: Vec<&str> = key.split('.').collect();
        let mut cur = Some(t);
        let mut value = None;
        for (n, s) in segs.iter().enumerate() {
            let Some(table) = cur else { break };
            match table.get(*s) {
                Some(v) if n + 1 == segs.len() => value = Some(v),
                Some(toml::Value::Table(next)) => cur = Some(next),
                _ => cur = None,
            }
        }
        if let Some(v) = value {
            let path: Vec<Seg> = segs.iter().map(|s| Seg::Key(s)).collect();
            one(p, v, key, &lines, &path, origin)?;
        }
    }
    Ok(())
}

/// 1-based line of a plan file's value at a dotted key (`corpus.scale`), for messages about
/// other keys than the table's numbers.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let path: Vec<Seg<'_>> = key.split('.').map(Seg::Key).collect();
    Lines::new(text).line_of(&path)
}

/// Check one value of row `p`, written as `shown` at `path`.
fn one(
    p: &Param,
    v: &toml::Value,
    shown: &str,
    lines: &Lines<'_>,
    path: &[Seg<'_>],
    origin: &str,
) -> crate::Result<()> {
    let (row, number) = match number(p, v) {
        Some(x) => x,
        None => return Ok(()),
    };
    row.check_as(&format!("{shown} = {v}"), number)
        .map_err(|why| {
            let at = match lines.line_of(path) {
                Some(l) => format!("{origin}:{l}"),
                None => origin.to_string(),
            };
            Error::invalid(at, why)
        })
}

/// The value as a number in the row's unit (and the row that judges it: `file_size =
/// "4xram"` is judged as a RAM multiple); `None` when it is not a number of that kind.
fn number<'p>(p: &'p Param, v: &toml::Value) -> Option<(&'p Param, f64)> {
    let n = match (p.unit, v) {
        (Unit::Count | Unit::Percent, toml::Value::Integer(i)) => *i as f64,
        (Unit::Real, toml::Value::Integer(i)) => *i as f64,
        (Unit::Real, toml::Value::Float(f)) => *f,
        (Unit::Bytes, toml::Value::Integer(i)) => *i as f64,
        (Unit::Bytes, toml::Value::String(s)) => {
            let t = s.trim().to_ascii_lowercase();
            if let Some(f) = t.strip_suffix("xram") {
                let f: f64 = f.trim().parse().ok()?;
                return Some((&FILE_SIZE_RAM, f));
            }
            crate::units::parse_size(&t).ok()? as f64
        }
        (Unit::Seconds, toml::Value::String(s)) => {
            crate::units::parse_duration(s).ok()?.as_secs_f64()
        }
        _ => return None,
    };
    Some((p, n))
}

/// One step of a path into the document.
#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Line numbers of the plan file's values, from the spans of toml's own parse.
struct Lines<'a> {
    text: &'a str,
    doc: Option<DeTable<'a>>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            text,
            doc: DeTable::parse(text).ok().map(|t| t.into_inner()),
        }
    }

    /// 1-based line of the value at `path`.
    fn line_of(&self, path: &[Seg<'_>]) -> Option<usize> {
        let mut table = self.doc.as_ref()?;
        let mut span = None;
        let mut value: Option<&DeValue<'_>> = None;
        for seg in path {
            let (s, v) = match (seg, value) {
                (Seg::Key(k), None) => table
                    .iter()
                    .find(|(name, _)| name.get_ref().as_ref() == *k)
                    .map(|(_, v)| (v.span(), v.get_ref()))?,
                (Seg::Key(k), Some(DeValue::Table(t))) => t
                    .iter()
                    .find(|(name, _)| name.get_ref().as_ref() == *k)
                    .map(|(_, v)| (v.span(), v.get_ref()))?,
                (Seg::Index(i), Some(DeValue::Array(a))) => {
                    a.get(*i).map(|v| (v.span(), v.get_ref()))?
                }
                _ => return span.map(|s: std::ops::Range<usize>| self.line(s.start)),
            };
            span = Some(s);
            if let DeValue::Table(t) = v {
                table = t;
            }
            value = Some(v);
        }
        span.map(|s| self.line(s.start))
    }

    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        let t: toml::Table = toml::from_str(text).unwrap();
        check(&t, text, "--plan p.toml").unwrap_err().to_string()
    }

    #[test]
    fn names_file_line_key_and_range() {
        let e = err("suite = \"standard\"\nrounds = 100000000\n");
        assert!(
            e.starts_with(
                "--plan p.toml:2: rounds = 100000000 is out of range; give a value from 1 to 1,000"
            ),
            "{e}"
        );
        let e = err("suite = \"standard\"\n\n[corpus]\nscale = 1e9\n");
        assert!(
            e.starts_with("--plan p.toml:4: corpus.scale = 1000000000"),
            "{e}"
        );
        assert!(e.contains("above 0, up to 100"), "{e}");
        let e = err("[corpus]\ncopies = 0\n");
        assert!(e.starts_with("--plan p.toml:2: corpus.copies = 0"), "{e}");
        let e = err(
            "[[workload]]\nid='a'\nrw='read'\n\n[[workload]]\nid='b'\nrw='read'\niodepth = 100000\n",
        );
        assert!(e.starts_with("--plan p.toml:8: iodepth = 100000"), "{e}");
        assert!(e.contains("from 1 to 32,768"), "{e}");
    }

    #[test]
    fn sweeps_units_and_inline_tables() {
        let e = err(
            "[[workload]]\nid='a'\nrw='read'\nsweep = { param = 'numjobs', values = [1, 5000] }\n",
        );
        assert!(
            e.starts_with("--plan p.toml:4: sweep value of numjobs = 5000"),
            "{e}"
        );
        let e = err("corpus = { copies = 2000 }\n");
        assert!(
            e.starts_with("--plan p.toml:1: corpus.copies = 2000"),
            "{e}"
        );
        let e = err("file_size = \"1000xram\"\n");
        assert!(e.contains("above 0, up to 64"), "{e}");
        let e = err("runtime = \"0s\"\n");
        assert!(e.contains("runtime = \"0s\""), "{e}");
        let e = err("[[workload]]\nid='a'\nrw='read'\nbs = 1000\n");
        assert!(e.contains("multiple of 512 B"), "{e}");
        let e = err("[[workload]]\nid='a'\nrw='read'\nnumjobs = -3\n");
        assert!(e.contains("numjobs = -3 is out of range"), "{e}");
        let t: toml::Table = toml::from_str("rounds = 3\nfile_size = \"4xram\"").unwrap();
        assert!(check(&t, "", "p").is_ok());
    }
}
