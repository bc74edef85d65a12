//! Writing values for people, by the metric's [`Format`] (the unit decides only for ids the
//! registry does not know): thousands separators for counts, three significant digits for small
//! quantities, binary units for bytes, yes/no, "no limit".

use super::{Format, lookup};

/// The format of an unregistered metric, from its recorded unit.
pub(super) fn by_unit(unit: &str) -> Format {
    match unit {
        "bytes" | "B" => Format::Bytes,
        "bool" => Format::YesNo,
        _ => Format::Number,
    }
}

/// A value of metric `id` (recorded in `unit`) as people read it.
pub fn format_value(id: &(impl AsRef<str> + ?Sized), value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "–".into();
    }
    let format = lookup(id).map_or_else(|| by_unit(unit), |d| d.format);
    match format {
        Format::Bytes => format_bytes(value),
        Format::YesNo => if value >= 0.5 { "yes" } else { "no" }.into(),
        Format::Limit if value == 0.0 => "no limit".into(),
        Format::Limit | Format::Number => format_number(value),
    }
}

/// A value with its unit when the text does not already say it (`0.614 ms`, `2,030 MiB/s`,
/// but `7.4 GiB`, `yes`, `no limit`).
pub fn format_with_unit(id: &(impl AsRef<str> + ?Sized), value: f64, unit: &str) -> String {
    let text = format_value(id, value, unit);
    let format = lookup(id).map_or_else(|| by_unit(unit), |d| d.format);
    match format {
        Format::Bytes | Format::YesNo => text,
        Format::Limit if value == 0.0 => text,
        _ if unit.is_empty() || !value.is_finite() => text,
        // A dimensionless factor reads as one: "1.15×", not "1.15 ratio".
        _ if unit == "ratio" || unit == "x" => format!("{text}×"),
        _ => format!("{text} {unit}"),
    }
}

/// Bytes as GiB/MiB/KiB with one decimal (`372.6 GiB`), through the one byte formatter.
pub fn format_bytes(value: f64) -> String {
    crate::units::format_binary(value, false)
}

/// A plain number: integers with separators from 1,000 up, three significant digits below.
pub fn format_number(value: f64) -> String {
    let a = value.abs();
    if a >= 1000.0 {
        thousands(value.round() as i64)
    } else if a >= 100.0 {
        format!("{value:.0}")
    } else if a >= 10.0 {
        format!("{value:.1}")
    } else if a >= 1.0 || a == 0.0 {
        format!("{value:.2}")
    } else if a >= 0.01 {
        format!("{value:.3}")
    } else {
        format!("{value:.2e}")
    }
}

fn thousands(v: i64) -> String {
    let s = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 { format!("-{out}") } else { out }
}
