//! The one number format of the statistics files, and CSV quoting.
//!
//! The rules are rocprofv3's (see the crate docs for where they come from):
//! integers plain; `AverageNs` and `StdDev` through [`format_ns`];
//! `Percentage` through [`format_percentage`]; text cells, the header's
//! included, always in double quotes.
//!
//! ```
//! use rocwasm_stats::{format_ns, format_percentage};
//! assert_eq!(format_ns(517_647.434), "517647.434000");
//! assert_eq!(format_ns(0.0), "0.00000000e+00");
//! assert_eq!(format_percentage(42.5612), "42.56");
//! assert_eq!(format_percentage(0.5), "0.5000");
//! assert_eq!(format_percentage(0.005), "5.000e-03");
//! ```

/// The columns of every statistics file, in order.
pub const COLUMNS: [&str; 8] = [
    "Name",
    "Calls",
    "TotalDurationNs",
    "AverageNs",
    "Percentage",
    "MinNs",
    "MaxNs",
    "StdDev",
];

/// `AverageNs` and `StdDev`: six decimals above 0.01, else scientific
/// notation with eight (`0.00000000e+00`).
pub fn format_ns(x: f64) -> String {
    if x > 0.01 {
        format!("{x:.6}")
    } else {
        scientific(x, 8)
    }
}

/// `Percentage`: two decimals from 1 up, four above 0.01, else scientific
/// notation with three (`5.000e-03`).
pub fn format_percentage(x: f64) -> String {
    if x >= 1.0 {
        format!("{x:.2}")
    } else if x > 0.01 {
        format!("{x:.4}")
    } else {
        scientific(x, 3)
    }
}

/// C's `%.<decimals>e`: Rust writes `5e-3`-style exponents, C a sign and at
/// least two digits (`5.000e-03`).
fn scientific(x: f64, decimals: usize) -> String {
    let rust = format!("{x:.decimals$e}");
    match rust.split_once('e') {
        Some((mantissa, exponent)) => {
            let (sign, digits) = match exponent.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exponent),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        // NaN and infinities have no exponent.
        None => rust,
    }
}

/// Appends `text` as a quoted CSV cell (a `"` inside doubled).
pub fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
}

/// The header line, newline included.
pub fn header_line() -> String {
    let mut line = String::new();
    for (i, column) in COLUMNS.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        push_quoted(&mut line, column);
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_switch_to_scientific_at_a_hundredth() {
        assert_eq!(format_ns(20.0), "20.000000");
        assert_eq!(format_ns(0.010_000_1), "0.010000");
        assert_eq!(format_ns(0.01), "1.00000000e-02");
        assert_eq!(format_ns(0.000_123_456_789), "1.23456789e-04");
        assert_eq!(format_ns(1e120), format!("{:.6}", 1e120));
    }

    #[test]
    fn percentages_have_three_precisions() {
        assert_eq!(format_percentage(100.0), "100.00");
        assert_eq!(format_percentage(1.0), "1.00");
        assert_eq!(format_percentage(0.999_99), "1.0000");
        assert_eq!(format_percentage(0.0123), "0.0123");
        assert_eq!(format_percentage(0.01), "1.000e-02");
        assert_eq!(format_percentage(0.0), "0.000e+00");
        assert_eq!(format_percentage(1.5e-120), "1.500e-120");
    }

    #[test]
    fn text_cells_are_always_quoted() {
        let mut s = String::new();
        push_quoted(&mut s, "say \"hi\", twice");
        assert_eq!(s, "\"say \"\"hi\"\", twice\"");
        assert_eq!(
            header_line(),
            "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"\n"
        );
    }
}
