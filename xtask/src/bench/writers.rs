//! Output writers: the `writers` bench's rate per format, the default
//! formats together, the record journal, rocpd against raw SQLite, and
//! each format's size on disk.

use std::process::Command;

use anyhow::Result;

use super::artifacts::Built;
use super::command::{or_unmeasured, output};
use super::parse;
use super::sizes::Sizes;
use super::table::{Quantity, Row, Target};

/// Each format, its name in the table, and its rate target on one core
/// (issue 32: CSV and Parquet 10 M records/s, JSON and Perfetto 5 M; rocpd
/// against raw SQLite instead, [`WRITER_ROCPD_RAW`]).
const FORMATS: [(&str, &str, Option<f64>); 5] = [
    ("csv", "CSV", Some(10e6)),
    ("json", "JSON", Some(5e6)),
    ("rocpd", "rocpd (SQLite)", None),
    ("pftrace", "Perfetto", Some(5e6)),
    ("parquet", "Parquet", Some(10e6)),
];

const WRITER_ROCPD_RAW: &str =
    "writer rocpd (SQLite) vs raw SQLite inserts of the same rows (same pragmas, 64 rows a statement)";

/// The formats whose size on disk is compared with CSV's.
const SIZED: [(&str, &str); 2] = [("parquet", "Parquet"), ("rocpd", "rocpd (SQLite)")];

fn size_figure(name: &str) -> String {
    format!("size on disk per 1 M records: {name} vs CSV")
}

fn writer_figure(name: &str) -> String {
    format!("writer {name} vs no format (statistics only)")
}

const WRITERS_TOGETHER: &str =
    "writers CSV + rocpd + Perfetto together (default outputs) vs rocpd alone";
const WRITERS_JOURNAL: &str =
    "record journal (what the application writes) vs default outputs written as batches come";

pub(super) fn rows(built: &Built, sizes: &Sizes) -> Vec<Row> {
    let measured = (|| {
        let out = output(
            Command::new(built.bench("writers")?)
                .args(["--json", "--records", &sizes.writer_records.to_string()])
                .args(["--runs", &sizes.writer_runs.to_string()]),
        )?;
        let v = parse::json(&out, "writers")?;
        let rate = |k: &str| parse::number(&v, &format!("/records_per_s/{k}"), "writers");
        let none = rate("none")?;
        let size = |k: &str| {
            parse::number(&v, &format!("/bytes_per_million_records/{k}"), "writers")
                .map(Quantity::BytesPerMillion)
        };
        let mut rows = FORMATS
            .iter()
            .map(|(key, name, target)| {
                let row = Row::measured(
                    writer_figure(name),
                    Quantity::PerSec(rate(key)?),
                    Some(Quantity::PerSec(none)),
                );
                Ok(match target {
                    Some(t) => row.target(Target::MinPerSec(*t)),
                    None => row,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // One measured rate against another.
        let versus = |figure: &str, ours: &str, reference: &str| -> Result<Row> {
            Ok(Row::measured(
                figure,
                Quantity::PerSec(rate(ours)?),
                Some(Quantity::PerSec(rate(reference)?)),
            ))
        };
        rows.push(versus(WRITER_ROCPD_RAW, "rocpd", "sqlite")?.target(Target::MaxRatio(1.3)));
        rows.push(versus(WRITERS_TOGETHER, "default", "rocpd")?);
        rows.push(versus(WRITERS_JOURNAL, "journal", "default")?.target(Target::MinPerSec(10e6)));
        for (key, name) in SIZED {
            rows.push(Row::measured(
                size_figure(name),
                size(key)?,
                Some(size("csv")?),
            ));
        }
        Ok(rows)
    })();
    let targets = [Target::MinPerSec(10e6)];
    let five = [Target::MinPerSec(5e6)];
    let raw = [Target::MaxRatio(1.3)];
    let mut figures: Vec<(String, &[Target])> = FORMATS
        .iter()
        .map(|(_, n, t)| {
            let t: &[Target] = match t {
                Some(x) if *x >= 10e6 => &targets,
                Some(_) => &five,
                None => &[],
            };
            (writer_figure(n), t)
        })
        .collect();
    figures.push((WRITER_ROCPD_RAW.to_string(), &raw[..]));
    figures.push((WRITERS_TOGETHER.to_string(), &[][..]));
    figures.push((WRITERS_JOURNAL.to_string(), &targets[..]));
    figures.extend(SIZED.iter().map(|(_, n)| (size_figure(n), &[][..])));
    let figures: Vec<(&str, &[Target])> = figures.iter().map(|(f, t)| (f.as_str(), *t)).collect();
    or_unmeasured(measured, &figures)
}
