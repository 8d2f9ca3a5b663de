//! The bench table: rows, their quantities and targets, and how they print.
//!
//! Every row is either measured (our value and, when there is one, a
//! reference measured in the same run) or `not measured: <reason>`; nothing
//! here ever makes a number up. The ratio is always *our cost over the
//! reference's*: time over time, or the reference's rate over ours, so 1.0
//! means "as fast as the reference" and 2.0 "twice the time".

use std::fmt;

/// A measured figure with its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// Nanoseconds (per call, per record).
    Ns(f64),
    /// Milliseconds.
    Ms(f64),
    /// Records per second.
    PerSec(f64),
    /// Bytes on disk per million records, shown in MiB.
    BytesPerMillion(f64),
    /// Bytes (a file's size), shown in KiB or MiB.
    Bytes(f64),
    /// A count per item (e.g. Wasm instructions per record).
    Count(f64),
}

impl Quantity {
    /// Seconds per item: what the ratio compares.
    fn cost(self) -> f64 {
        match self {
            Quantity::Ns(ns) => ns * 1e-9,
            Quantity::Ms(ms) => ms * 1e-3,
            Quantity::PerSec(r) => 1.0 / r,
            Quantity::BytesPerMillion(b) | Quantity::Bytes(b) => b,
            Quantity::Count(c) => c,
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Quantity::Ns(ns) => write!(f, "{ns:.1} ns"),
            Quantity::Ms(ms) if ms < 10.0 => write!(f, "{ms:.2} ms"),
            Quantity::Ms(ms) => write!(f, "{ms:.0} ms"),
            Quantity::PerSec(r) if r >= 1e6 => write!(f, "{:.1} M/s", r / 1e6),
            Quantity::PerSec(r) => write!(f, "{:.0} k/s", r / 1e3),
            Quantity::BytesPerMillion(b) => {
                write!(f, "{:.1} MiB / M records", b / f64::from(1 << 20))
            }
            Quantity::Bytes(b) if b >= f64::from(1 << 20) => {
                write!(f, "{:.1} MiB", b / f64::from(1 << 20))
            }
            Quantity::Bytes(b) => write!(f, "{:.0} KiB", b / 1024.0),
            Quantity::Count(c) => write!(f, "{c:.1}"),
        }
    }
}

/// What a row should reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Our cost at most this many times the reference's.
    MaxRatio(f64),
    /// Our value at most this many milliseconds.
    MaxMs(f64),
    /// Our rate at least this many records per second.
    MinPerSec(f64),
    /// Our size at most this many bytes.
    MaxBytes(f64),
}

impl Target {
    /// Whether `row` meets the target (`None` when it cannot be told).
    fn met(self, ours: Quantity, reference: Option<Quantity>) -> Option<bool> {
        match (self, ours, reference) {
            (Target::MaxRatio(x), _, Some(r)) => Some(ours.cost() / r.cost() <= x),
            (Target::MaxMs(x), Quantity::Ms(o), _) => Some(o <= x),
            (Target::MinPerSec(x), Quantity::PerSec(o), _) => Some(o >= x),
            (Target::MaxBytes(x), Quantity::Bytes(o), _) => Some(o <= x),
            _ => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Target::MaxRatio(x) => write!(f, "≤ {x}×"),
            Target::MaxMs(x) => write!(f, "≤ {x} ms"),
            Target::MinPerSec(x) if x >= 1e6 => write!(f, "≥ {} M/s", x / 1e6),
            Target::MinPerSec(x) => write!(f, "≥ {x}/s"),
            Target::MaxBytes(x) => write!(f, "≤ {} MiB", x / (1024.0 * 1024.0)),
        }
    }
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What is measured, and against what.
    pub figure: String,
    /// Our value and the reference's, or why the row has none.
    pub value: Result<(Quantity, Option<Quantity>), String>,
    /// What the row should reach (empty: no target set).
    pub targets: Vec<Target>,
}

impl Row {
    /// A measured row.
    pub fn measured(figure: impl Into<String>, ours: Quantity, reference: Option<Quantity>) -> Row {
        Row {
            figure: figure.into(),
            value: Ok((ours, reference)),
            targets: Vec::new(),
        }
    }

    /// A row that could not be measured, and why.
    pub fn not_measured(figure: impl Into<String>, why: impl Into<String>) -> Row {
        Row {
            figure: figure.into(),
            value: Err(why.into()),
            targets: Vec::new(),
        }
    }

    /// The same row with a target.
    pub fn target(mut self, t: Target) -> Row {
        self.targets.push(t);
        self
    }

    /// Our cost over the reference's.
    pub fn ratio(&self) -> Option<f64> {
        match self.value {
            Ok((ours, Some(r))) => Some(ours.cost() / r.cost()),
            _ => None,
        }
    }

    /// The five cells: figure, ours, reference, ratio, target.
    pub fn cells(&self) -> [String; 5] {
        let targets = |verdicts: Option<(Quantity, Option<Quantity>)>| {
            if self.targets.is_empty() {
                return "—".to_string();
            }
            let each: Vec<String> = self
                .targets
                .iter()
                .map(|t| match verdicts.and_then(|(o, r)| t.met(o, r)) {
                    Some(true) => format!("{t} met"),
                    Some(false) => format!("{t} **missed**"),
                    None => t.to_string(),
                })
                .collect();
            each.join("; ")
        };
        match &self.value {
            Ok((ours, reference)) => {
                let mut ours_cell = ours.to_string();
                if let (Quantity::Ns(o), Some(Quantity::Ns(r))) = (ours, reference) {
                    ours_cell = format!("{ours_cell} ({:+.1})", o - r);
                }
                [
                    self.figure.clone(),
                    ours_cell,
                    reference.map_or_else(|| "—".into(), |r| r.to_string()),
                    self.ratio().map_or_else(|| "—".into(), ratio),
                    targets(Some((*ours, *reference))),
                ]
            }
            Err(why) => [
                self.figure.clone(),
                format!("not measured: {why}"),
                "—".into(),
                "—".into(),
                targets(None),
            ],
        }
    }
}

/// A ratio with two decimals, or three below 0.1.
fn ratio(x: f64) -> String {
    if x < 0.1 {
        format!("{x:.3}×")
    } else {
        format!("{x:.2}×")
    }
}

/// A count of records as people write it: `200 k`, `1 M`, `1.5 M`.
pub fn count(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{} M", n as f64 / 1e6)
    } else if n >= 1000 {
        format!("{} k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

/// The column headings.
pub const HEADINGS: [&str; 5] = [
    "figure",
    "our value",
    "reference (same run)",
    "ratio",
    "target",
];

/// The rows as one Markdown table, columns padded to line up.
pub fn render(rows: &[Row]) -> String {
    let cells: Vec<[String; 5]> = rows.iter().map(Row::cells).collect();
    let mut width = HEADINGS.map(|h| h.chars().count());
    for r in &cells {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(width)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(&HEADINGS.map(String::from));
    let rule: Vec<String> = width.iter().map(|&w| "-".repeat(w)).collect();
    out.push_str(&format!("|-{}-|\n", rule.join("-|-")));
    for r in &cells {
        out.push_str(&line(r));
    }
    out
}

/// The median of `v` (the upper one for an even count); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_print_in_their_units() {
        assert_eq!(Quantity::Ns(36.54).to_string(), "36.5 ns");
        assert_eq!(Quantity::Ms(3.456).to_string(), "3.46 ms");
        assert_eq!(Quantity::Ms(812.4).to_string(), "812 ms");
        assert_eq!(Quantity::PerSec(198.4e6).to_string(), "198.4 M/s");
        assert_eq!(Quantity::PerSec(750e3).to_string(), "750 k/s");
    }

    #[test]
    fn the_ratio_is_our_cost_over_the_reference() {
        let ns = Row::measured("a", Quantity::Ns(80.0), Some(Quantity::Ns(40.0)));
        assert_eq!(ns.ratio(), Some(2.0));
        // Rates: half the reference's rate is twice its cost.
        let rate = Row::measured("b", Quantity::PerSec(100e6), Some(Quantity::PerSec(200e6)));
        assert_eq!(rate.ratio(), Some(2.0));
        assert_eq!(Row::measured("c", Quantity::Ms(1.0), None).ratio(), None);
        assert_eq!(Row::not_measured("d", "no bench").ratio(), None);
    }

    #[test]
    fn targets_say_whether_they_are_met() {
        let row = Row::measured("hip", Quantity::Ns(62.0), Some(Quantity::Ns(40.0)))
            .target(Target::MaxMs(25.0))
            .target(Target::MaxRatio(1.5));
        let cells = row.cells();
        assert_eq!(cells[1], "62.0 ns (+22.0)");
        assert_eq!(cells[2], "40.0 ns");
        assert_eq!(cells[3], "1.55×");
        // A target that does not apply to the row's quantity cannot be told.
        assert_eq!(cells[4], "≤ 25 ms; ≤ 1.5× **missed**");
        let rate = Row::measured("w", Quantity::PerSec(9e6), Some(Quantity::PerSec(50e6)))
            .target(Target::MinPerSec(10e6));
        assert_eq!(rate.cells()[4], "≥ 10 M/s **missed**");
        let load = Row::measured("l", Quantity::Ms(4.0), None).target(Target::MaxMs(5.0));
        assert_eq!(load.cells()[3..], ["—".to_string(), "≤ 5 ms met".into()]);
    }

    #[test]
    fn an_unmeasured_row_says_why_and_keeps_its_target() {
        let row = Row::not_measured("e2e", "no bench yet").target(Target::MaxRatio(1.5));
        assert_eq!(
            row.cells(),
            [
                "e2e".to_string(),
                "not measured: no bench yet".into(),
                "—".into(),
                "—".into(),
                "≤ 1.5×".into()
            ]
        );
    }

    #[test]
    fn the_table_lines_up_as_markdown() {
        let rows = [
            Row::measured("short", Quantity::Ns(1.0), None),
            Row::not_measured("a much longer figure name", "why"),
        ];
        let text = render(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("| figure "));
        assert!(lines[1].starts_with("|--") && lines[1].ends_with("-|"));
        let widths: Vec<usize> = lines.iter().map(|l| l.chars().count()).collect();
        assert!(widths.iter().all(|&w| w == widths[0]), "{text}");
        // The cell boundaries sit at the same columns on every line.
        let bars = |l: &str| -> Vec<usize> {
            l.chars()
                .enumerate()
                .filter(|&(_, c)| c == '|')
                .map(|(i, _)| i)
                .collect()
        };
        assert!(
            lines[2..].iter().all(|l| bars(l) == bars(lines[0])),
            "{text}"
        );
        assert!(lines[3].contains("| not measured: why "));
    }

    #[test]
    fn small_ratios_and_counts() {
        assert_eq!(ratio(0.0032), "0.003×");
        assert_eq!(ratio(1.234), "1.23×");
        assert_eq!(count(200_000), "200 k");
        assert_eq!(count(1_000_000), "1 M");
        assert_eq!(count(1_500_000), "1.5 M");
        assert_eq!(count(256), "256");
    }

    #[test]
    fn median_takes_the_middle() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(3.0));
        assert_eq!(median(&[]), None);
    }
}
