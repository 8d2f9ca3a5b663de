//! Human units for sizes (`"256MiB"`) and durations (`"500ms"`).
//!
//! Sizes accept `B`, decimal `KB`/`MB`/`GB`/`TB` (powers of 1000) and binary
//! `KiB`/`MiB`/`GiB`/`TiB` (powers of 1024), case-insensitive, with an
//! optional space and an optional fraction (`"1.5GiB"`); a bare integer in
//! TOML (not a string) counts bytes. Durations accept `ns`, `us` (or `µs`),
//! `ms`, `s`, `min` and `h`, and always need a unit: `deadline = 500` would
//! be ambiguous.

use std::time::Duration;

const SIZE_UNITS: &[(&str, u64)] = &[
    ("b", 1),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("tb", 1_000_000_000_000),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
];

const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The size units, for error messages.
pub const SIZE_UNIT_NAMES: &str = "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
/// The duration units, for error messages.
pub const DURATION_UNIT_NAMES: &str = "ns, us, ms, s, min, h";

/// Parses `"4MiB"`, `"1.5 GB"`, `"512B"` into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (value, unit) = split_number(text)?;
    let Some(&(_, scale)) = SIZE_UNITS
        .iter()
        .find(|(u, _)| u.eq_ignore_ascii_case(unit))
    else {
        return Err(unit_error(text, unit, "size", SIZE_UNIT_NAMES));
    };
    scale_number(value, scale).ok_or_else(|| format!("size `{text}` is too large"))
}

/// Parses `"500ms"`, `"2s"`, `"1.5min"` into a [`Duration`].
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (value, unit) = split_number(text)?;
    let Some(&(_, scale)) = DURATION_UNITS
        .iter()
        .find(|(u, _)| *u == unit.to_lowercase())
    else {
        return Err(unit_error(text, unit, "duration", DURATION_UNIT_NAMES));
    };
    scale_number(value, scale)
        .map(Duration::from_nanos)
        .ok_or_else(|| format!("duration `{text}` is too large"))
}

/// Renders a byte count the way people write it back: `4MiB`, `1500B`.
pub fn format_size(bytes: u64) -> String {
    for (unit, scale) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    format!("{bytes}B")
}

/// Renders a duration compactly: `500ms`, `2s`, `250us`.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    for (unit, scale) in [
        ("h", 3_600_000_000_000u128),
        ("min", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if ns >= scale && ns.is_multiple_of(scale) {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// Splits `"1.5 GiB"` into (`"1.5"`, `"GiB"`).
fn split_number(text: &str) -> Result<(&str, &str), String> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (&t[..end], t[end..].trim_start());
    if number.is_empty()
        || number.starts_with('.')
        || number.ends_with('.')
        || number.matches('.').count() > 1
    {
        return Err(format!("`{text}` does not start with a number"));
    }
    if unit.is_empty() {
        return Err(format!("`{text}` has no unit"));
    }
    Ok((number, unit))
}

/// `number × scale`, exact for integers, truncated to whole units for fractions.
fn scale_number(number: &str, scale: u64) -> Option<u64> {
    match number.split_once('.') {
        None => number.parse::<u64>().ok()?.checked_mul(scale),
        Some((whole, frac)) => {
            let whole = whole.parse::<u64>().ok()?.checked_mul(scale)?;
            let digits = frac.len().min(18) as u32;
            let frac_value: u128 = frac[..digits as usize].parse().ok()?;
            let part = frac_value * scale as u128 / 10u128.pow(digits);
            whole.checked_add(u64::try_from(part).ok()?)
        }
    }
}

fn unit_error(text: &str, unit: &str, what: &str, units: &str) -> String {
    format!("unknown {what} unit `{unit}` in `{text}` (expected one of: {units})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("4 KB"), Ok(4000));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("10b"), Ok(10));
        assert!(parse_size("12 parsecs")
            .unwrap_err()
            .contains("unknown size unit `parsecs`"));
        assert!(parse_size("MiB")
            .unwrap_err()
            .contains("does not start with a number"));
        assert!(parse_size("12").unwrap_err().contains("has no unit"));
        assert!(parse_size("99999999999TiB")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2 s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5min"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert!(parse_duration("5 fortnights")
            .unwrap_err()
            .contains("unknown duration unit"));
    }

    #[test]
    fn formatting_round_trips() {
        assert_eq!(format_size(256 << 20), "256MiB");
        assert_eq!(format_size(1500), "1500B");
        assert_eq!(format_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(format_duration(Duration::from_secs(120)), "2min");
        assert_eq!(parse_size(&format_size(3 << 30)), Ok(3 << 30));
    }
}
