//! One row of the parameter table: a numeric flag or plan-file key, its range, unit and doc,
//! and the checks, clap value parsers and help text made from it.

use std::time::Duration;

/// What a parameter's number counts; decides how it is parsed and printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A whole number (rounds, jobs, copies).
    Count,
    /// A real number (a scale factor, a fraction).
    Real,
    /// A whole percentage, 0–100.
    Percent,
    /// Bytes, written as a size (`4k`, `16G`).
    Bytes,
    /// Seconds, written as a duration (`500ms`, `30s`, `2m`).
    Seconds,
}

/// One numeric parameter: where it is given (flags, plan-file key), what it may be, and why.
#[derive(Debug)]
pub struct Param {
    /// Name used in messages when neither flag nor key applies (`rounds`, `file_size (×RAM)`).
    pub name: &'static str,
    /// The command-line flags that take it (the same meaning wherever they appear).
    pub flags: &'static [&'static str],
    /// Its plan-file key: `rounds`, `corpus.scale`, `workload.iodepth` (a key of every
    /// `[[workload]]` table, sweep values included).
    pub key: Option<&'static str>,
    /// How the number is written.
    pub unit: Unit,
    /// Smallest value (in bytes or seconds for those units).
    pub min: f64,
    /// Whether `min` itself is excluded (scale: above 0).
    pub min_open: bool,
    /// Largest value.
    pub max: f64,
    /// Byte values must be a multiple of this (1: any).
    pub multiple: u64,
    /// What it is, as `--help` and the docs say it.
    pub doc: &'static str,
}

impl Param {
    const fn new(name: &'static str, unit: Unit, min: f64, max: f64, doc: &'static str) -> Param {
        Param {
            name,
            flags: &[],
            key: None,
            unit,
            min,
            min_open: false,
            max,
            multiple: 1,
            doc,
        }
    }

    /// A whole number from `min` to `max`.
    pub const fn count(name: &'static str, min: u64, max: u64, doc: &'static str) -> Param {
        Param::new(name, Unit::Count, min as f64, max as f64, doc)
    }

    /// A percentage, 0–100.
    pub const fn percent(name: &'static str, doc: &'static str) -> Param {
        Param::new(name, Unit::Percent, 0.0, 100.0, doc)
    }

    /// A real number above `min` (excluded) up to `max`.
    pub const fn above(name: &'static str, min: f64, max: f64, doc: &'static str) -> Param {
        let mut p = Param::new(name, Unit::Real, min, max, doc);
        p.min_open = true;
        p
    }

    /// A size from `min` to `max` bytes.
    pub const fn bytes(name: &'static str, min: u64, max: u64, doc: &'static str) -> Param {
        Param::new(name, Unit::Bytes, min as f64, max as f64, doc)
    }

    /// A duration from `min` to `max` seconds.
    pub const fn secs(name: &'static str, min: f64, max: f64, doc: &'static str) -> Param {
        Param::new(name, Unit::Seconds, min, max, doc)
    }

    /// The flags that take it.
    pub const fn flags(mut self, flags: &'static [&'static str]) -> Param {
        self.flags = flags;
        self
    }

    /// Its plan-file key.
    pub const fn key(mut self, key: &'static str) -> Param {
        self.key = Some(key);
        self
    }

    /// Byte values must be a multiple of `m`.
    pub const fn multiple_of(mut self, m: u64) -> Param {
        self.multiple = m;
        self
    }

    /// The range as people read it: `1–1,000`, `above 0, up to 100`, `512 B–256 MiB, a
    /// multiple of 512 B`, `0.1 s–24 h`.
    pub fn range_text(&self) -> String {
        let lo = self.show(self.min);
        let hi = self.show(self.max);
        let mut s = if self.min_open {
            format!("above {lo}, up to {hi}")
        } else {
            format!("{lo}–{hi}")
        };
        if self.unit == Unit::Percent {
            s.push_str(" %");
        }
        if self.unit == Unit::Bytes && self.multiple > 1 {
            s.push_str(&format!(
                ", a multiple of {}",
                self.show(self.multiple as f64)
            ));
        }
        s
    }

    /// The range as an instruction: `a value from 1 to 1,000`, `a value above 0, up to 100`.
    pub fn wanted(&self) -> String {
        let lo = self.show(self.min);
        let hi = self.show(self.max);
        let pct = if self.unit == Unit::Percent { " %" } else { "" };
        let mut s = if self.min_open {
            format!("a value above {lo}, up to {hi}{pct}")
        } else {
            format!("a value from {lo} to {hi}{pct}")
        };
        if self.unit == Unit::Bytes && self.multiple > 1 {
            s.push_str(&format!(
                ", a multiple of {}",
                self.show(self.multiple as f64)
            ));
        }
        s
    }

    /// A value of this parameter as people read it.
    pub fn show(&self, v: f64) -> String {
        match self.unit {
            Unit::Count if v >= u64::MAX as f64 => "2^64-1".to_string(),
            Unit::Count | Unit::Percent => group(v),
            Unit::Real => format!("{v}"),
            Unit::Bytes if v >= (1u64 << 50) as f64 => format!("{} PiB", v / (1u64 << 50) as f64),
            Unit::Bytes => crate::units::format_size(v as u64),
            Unit::Seconds => show_secs(v),
        }
    }

    /// `--help` text: the doc and the range.
    pub fn help(&self) -> String {
        format!("{} [{}]", self.doc, self.range_text())
    }

    /// `Err` says what is wrong with `v` (in the parameter's unit) and what to give instead.
    pub fn check(&self, v: f64) -> Result<(), String> {
        self.check_as(&self.show_given(v), v)
    }

    /// [`Param::check`] with the value shown as `label` (`rounds = 0` in a plan file).
    pub fn check_as(&self, label: &str, v: f64) -> Result<(), String> {
        let below = if self.min_open {
            v <= self.min
        } else {
            v < self.min
        };
        if v.is_nan() || below || v > self.max {
            return Err(format!(
                "{label} is out of range; give {} ({})",
                self.wanted(),
                lower_first(self.doc)
            ));
        }
        if self.unit == Unit::Bytes
            && self.multiple > 1
            && !(v as u64).is_multiple_of(self.multiple)
        {
            return Err(format!(
                "{label} is not a multiple of {} ({}); use e.g. {}",
                self.show(self.multiple as f64),
                self.doc,
                self.show(((v as u64 / self.multiple).max(1) * self.multiple) as f64)
            ));
        }
        Ok(())
    }

    /// A given value in messages: exact for counts, so `100000000` reads as typed.
    fn show_given(&self, v: f64) -> String {
        match self.unit {
            Unit::Count | Unit::Percent if v.fract() == 0.0 && v.abs() < 1e18 => {
                format!("{}", v as i64)
            }
            Unit::Bytes if v.fract() == 0.0 && (0.0..1e19).contains(&v) => {
                let b = v as u64;
                if b < 1024 {
                    format!("{b} B")
                } else {
                    format!("{} ({b} bytes)", crate::units::format_size(b))
                }
            }
            _ => self.show(v),
        }
    }

    /// Check a whole number.
    pub fn check_u64(&self, v: u64) -> Result<u64, String> {
        self.check(v as f64).map(|()| v)
    }

    /// Check a duration.
    pub fn check_duration(&self, d: Duration) -> Result<Duration, String> {
        self.check(d.as_secs_f64()).map(|()| d)
    }

    /// A clap value parser for a whole-number flag of type `T`.
    pub fn count_arg<T: TryFrom<u64>>(
        &'static self,
    ) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
        move |s: &str| {
            let t = s.trim().replace('_', "");
            let v: u64 = match t.parse::<u64>() {
                Ok(v) => v,
                Err(_) => match t.parse::<f64>() {
                    // A negative or fractional number gets the range, not a parse error.
                    Ok(f) => {
                        return self
                            .check(f)
                            .and(Err(format!("'{s}' is not a whole number")));
                    }
                    Err(_) => return Err(format!("'{s}' is not a number; {}", self.expect())),
                },
            };
            self.check_u64(v)?;
            T::try_from(v).map_err(|_| format!("{v} is too large; {}", self.expect()))
        }
    }

    /// A clap value parser for a real-number flag.
    pub fn real_arg(&'static self) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
        move |s: &str| {
            let v: f64 = s
                .trim()
                .parse()
                .map_err(|_| format!("'{s}' is not a number; {}", self.expect()))?;
            self.check(v).map(|()| v)
        }
    }

    /// A clap value parser for a size flag (`4k`, `16G`).
    pub fn size_arg(&'static self) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
        move |s: &str| {
            let v = crate::units::parse_size(s)?;
            self.check_u64(v)
        }
    }

    /// A clap value parser for a duration flag (`30s`).
    pub fn duration_arg(
        &'static self,
    ) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync {
        move |s: &str| {
            let d = crate::units::parse_duration(s)?;
            self.check_duration(d)
        }
    }

    fn expect(&self) -> String {
        format!("give {}", self.wanted())
    }
}

/// `Rounds per setup` → `rounds per setup` (a doc inside a sentence); acronyms stay.
fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match (c.next(), c.next()) {
        (Some(a), Some(b)) if a.is_ascii_uppercase() && b.is_ascii_lowercase() => {
            format!("{}{}", a.to_ascii_lowercase(), &s[1..])
        }
        _ => s.to_string(),
    }
}

/// `1,000`, `32,768`.
fn group(v: f64) -> String {
    if v.fract() != 0.0 || v.abs() >= 1e18 {
        return format!("{v}");
    }
    let digits = (v.abs() as u64).to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// `0 s`, `0.1 s`, `24 h`, `10 min`.
fn show_secs(v: f64) -> String {
    if v >= 3600.0 && (v / 3600.0).fract() == 0.0 {
        format!("{} h", v / 3600.0)
    } else if v >= 60.0 && (v / 60.0).fract() == 0.0 {
        format!("{} min", v / 60.0)
    } else if v < 1.0 && v > 0.0 {
        format!("{} ms", (v * 1000.0).round())
    } else {
        format!("{v} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static R: Param = Param::count("rounds", 1, 1_000, "rounds per setup");
    static BS: Param = Param::bytes("bs", 512, 256 << 20, "block size").multiple_of(512);
    static S: Param = Param::above("scale", 0.0, 100.0, "corpus scale");
    static T: Param = Param::secs("runtime", 0.1, 86_400.0, "measured time");

    #[test]
    fn ranges_read_as_written() {
        assert_eq!(R.range_text(), "1–1,000");
        assert_eq!(BS.range_text(), "512 B–256 MiB, a multiple of 512 B");
        assert_eq!(S.range_text(), "above 0, up to 100");
        assert_eq!(T.range_text(), "100 ms–24 h");
    }

    #[test]
    fn out_of_range_names_the_value_and_the_range() {
        let e = R.check_u64(100_000_000).unwrap_err();
        assert!(
            e.starts_with("100000000 is out of range; give a value from 1 to 1,000 (rounds"),
            "{e}"
        );
        assert!(R.check_u64(0).is_err() && R.check_u64(1).is_ok() && R.check_u64(1000).is_ok());
        assert!(S.check(0.0).is_err() && S.check(f64::NAN).is_err() && S.check(1e9).is_err());
        let e = BS.check(1000.0).unwrap_err();
        assert!(
            e.contains("not a multiple of 512 B") && e.contains("use e.g. 512 B"),
            "{e}"
        );
        assert!(T.check_duration(Duration::ZERO).is_err());
    }

    #[test]
    fn clap_parsers_check_the_range() {
        let p = R.count_arg::<u32>();
        assert_eq!(p("3"), Ok(3));
        assert!(p("0").unwrap_err().contains("from 1 to 1,000"));
        assert!(p("-1").unwrap_err().contains("out of range"));
        assert!(p("1.5").unwrap_err().contains("whole number"));
        assert!(p("x").unwrap_err().contains("not a number"));
        assert!(
            p("99999999999999999999")
                .unwrap_err()
                .contains("out of range")
        );
        assert_eq!(BS.size_arg()("4k"), Ok(4096));
        assert!(T.duration_arg()("0s").is_err());
        assert!(S.real_arg()("nan").is_err() && S.real_arg()("inf").is_err());
    }
}
