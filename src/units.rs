//! Parsing and printing of sizes (`4k`, `16GiB`) and durations (`10s`, `500ms`), fio-style.
//!
//! Sizes use binary multiples for every suffix (`k` = 1024), as fio does by default, so that
//! `--bs 4k` means 4096 bytes whatever the case of the suffix.

use std::time::Duration;

/// A plan file's size value: a positive integer (bytes) or a string [`parse_size`] reads.
pub fn toml_size(v: &toml::Value) -> Result<u64, String> {
    match v {
        toml::Value::Integer(i) if *i > 0 => Ok(*i as u64),
        toml::Value::String(s) => parse_size(s),
        other => Err(format!("{other} is not a size")),
    }
}

/// Parse a size such as `4096`, `4k`, `4K`, `4KiB`, `1M`, `1.5G`, `16GiB`, `2T`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(
            "empty size; write a number with an optional suffix such as 4k, 1M or 16G".into(),
        );
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a size; write e.g. 4k, 1M, 16G"))?;
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "'{text}': unknown size suffix '{other}'; use k, M, G or T (binary multiples)"
            ));
        }
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("'{text}' is out of range"));
    }
    Ok(bytes.round() as u64)
}

/// Parse a duration such as `10s`, `2m`, `500ms`, `1.5s`, `1h`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration; write e.g. 10s, 500ms, 2m"))?;
    let secs = match suffix.trim() {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "'{text}': unknown duration unit '{other}'; use ms, s, m or h"
            ));
        }
    };
    // try_: a finite value beyond u64 seconds (`1e20s`) would panic in from_secs_f64 (found
    // by tests/fuzz.rs).
    Duration::try_from_secs_f64(secs).map_err(|_| format!("'{text}' is out of range"))
}

/// Format bytes with a binary suffix, e.g. `16 GiB`, `4 KiB`, `1.5 MiB` (whole values
/// without a decimal).
pub fn format_size(bytes: u64) -> String {
    format_binary(bytes as f64, true)
}

/// The one byte formatter: `value` bytes in B/KiB/MiB/GiB/TiB with one decimal; with
/// `trim_whole` a whole number prints without it (`16 GiB`, as sizes are written), without
/// it every scaled value keeps it (`372.0 GiB`, as report columns align).
pub fn format_binary(value: f64, trim_whole: bool) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = value;
    let mut i = 0;
    while v.abs() >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else if trim_whole && (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as i64, UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// Format a size the way fio's command line accepts it (`4k`, `16g`, or plain bytes).
pub fn fio_size(bytes: u64) -> String {
    for (shift, s) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= (1 << shift) && bytes.is_multiple_of(1 << shift) {
            return format!("{}{s}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// clap value parser for sizes.
pub fn size_arg(text: &str) -> Result<u64, String> {
    parse_size(text)
}

/// clap value parser for durations.
pub fn duration_arg(text: &str) -> Result<Duration, String> {
    parse_duration(text)
}

/// `1 h 02 min`, `8 min 30 s`, `45 s`, `0.3 s`.
pub fn format_duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s < 10 && d.subsec_millis() != 0 {
        return format!("{:.1} s", d.as_secs_f64());
    }
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("16G").unwrap(), 16 << 30);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert!(parse_size("3q").is_err());
        assert!(parse_size("").is_err());
        assert_eq!(fio_size(16 << 30), "16g");
        assert_eq!(fio_size(4096), "4k");
        assert_eq!(fio_size(1000), "1000");
        assert_eq!(format_size(16 << 30), "16 GiB");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("3 weeks").is_err());
    }
}
