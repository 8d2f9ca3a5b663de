//! Plugin delivery: the `deliver` bench's Wasm delivery into kernel-stats
//! against the same loop compiled natively (`native_stats`), and the
//! `call_floor` bench's cost of a delivery before the plugin's code runs.

use std::process::Command;

use anyhow::{Context, Result};

use super::artifacts::Built;
use super::command::{or_unmeasured, output};
use super::parse;
use super::table::{Quantity, Row, Target};

/// Delivery batch sizes.
const BATCHES: [u64; 3] = [256, 4096, 65536];

/// The deliver bench's rows measured, by its `columns sent` label:
/// kernel-stats as built on 0.2.0 (the fixture), as shipped (0.3.1, the
/// Rust SDK), and its aggregation on raw 0.3.0 bindings.
const PATHS: [(&str, &str); 3] = [
    (
        "0.2.0: kernel_id,start,end",
        "kernel-stats (WIT 0.2.0, 3 of 64 lists)",
    ),
    (
        "0.3.1: packed, 3 columns",
        "kernel-stats on WIT 0.3.1 (one packed buffer, the Rust SDK)",
    ),
    (
        "0.3.0: same, raw bindings",
        "kernel-stats' loop on raw WIT 0.3.0 bindings",
    ),
];

fn delivery_figure(path: &str, n: u64) -> String {
    format!("delivery into {path}, batches of {n}: Wasm vs native loop")
}

/// Issue 32's and 46's: the Wasm delivery within 3× of the native loop at
/// 256 records a batch (the call's fixed cost counts most there), 1.5× at
/// 4096: targets of the 0.3.0 path, which was designed for them; the
/// 0.2.0 rows stay as the reference they improve on.
fn delivery_targets(label: &str, n: u64) -> Vec<Target> {
    if label != "0.3.1: packed, 3 columns" {
        return Vec::new();
    }
    match n {
        256 => vec![Target::MaxRatio(3.0)],
        4096 => vec![Target::MaxRatio(1.5)],
        _ => Vec::new(),
    }
}

pub(super) fn rows(built: &Built) -> Vec<Row> {
    let measured = (|| {
        let mut cmd = Command::new(built.bench("deliver")?);
        let mut native = Command::new(built.bench("native_stats")?);
        native.arg("--json");
        cmd.arg("--only-projected");
        for n in BATCHES {
            cmd.args(["--records", &n.to_string()]);
            native.args(["--records", &n.to_string()]);
        }
        let wasm = parse::deliver_rows(&output(&mut cmd)?)?;
        let native = parse::json(&output(&mut native)?, "native_stats")?;
        let mut rows = Vec::new();
        for (label, path) in PATHS {
            for (i, &n) in BATCHES.iter().enumerate() {
                let row = wasm
                    .iter()
                    .find(|r| r.records == n && r.columns == label)
                    .with_context(|| {
                        format!("the deliver bench printed no `{label}` row for {n} records")
                    })?;
                let reference = parse::number(
                    &native,
                    &format!("/sizes/{i}/records_per_s"),
                    "native_stats",
                )?;
                let mut r = Row::measured(
                    delivery_figure(path, n),
                    Quantity::PerSec(row.per_sec),
                    Some(Quantity::PerSec(reference)),
                );
                r.targets = delivery_targets(label, n);
                rows.push(r);
            }
        }
        Ok(rows)
    })();
    let figures: Vec<(String, Vec<Target>)> = PATHS
        .iter()
        .flat_map(|(label, path)| {
            BATCHES
                .iter()
                .map(move |&n| (delivery_figure(path, n), delivery_targets(label, n)))
        })
        .collect();
    let figures: Vec<(&str, &[Target])> = figures
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_slice()))
        .collect();
    or_unmeasured(measured, &figures)
}

/// The records per batch of the floor rows: the 256 of the delivery target.
const FLOOR_RECORDS: u64 = 256;

const FLOOR_SHAPE: &str =
    "delivery floor, 256 records in 3 of 64 columns, empty component: 64 lists (the WIT's batch) vs the 3 lists alone";
const FLOOR_OPTIONS: &str =
    "delivery floor, same: 64 option<list> fields (61 none) vs the 3 lists alone";
const FLOOR_NATIVE: &str =
    "delivery floor, same: the 3 lists alone vs the native kernel-stats loop on 256 records";

/// What any delivery of 256 records costs before the plugin's code runs,
/// by the batch's shape, and the cheapest shape against the native loop:
/// the measured floor under the 256-record delivery target.
pub(super) fn floor_rows(built: &Built) -> Vec<Row> {
    let measured = (|| {
        let mut cmd = Command::new(built.bench("call_floor")?);
        cmd.args(["--records", &FLOOR_RECORDS.to_string()]);
        let rows = parse::call_floor_rows(&output(&mut cmd)?)?;
        let ns = |args: &str| -> Result<f64> {
            rows.iter()
                .find(|(n, a, _)| *n == FLOOR_RECORDS && a == args)
                .map(|r| r.2)
                .with_context(|| format!("the call_floor bench printed no `{args}` row"))
        };
        let mut native = Command::new(built.bench("native_stats")?);
        native.args(["--json", "--records", &FLOOR_RECORDS.to_string()]);
        let native = parse::json(&output(&mut native)?, "native_stats")?;
        let native_rate = parse::number(&native, "/sizes/0/records_per_s", "native_stats")?;
        let three = ns("3 lists")?;
        Ok(vec![
            Row::measured(
                FLOOR_SHAPE,
                Quantity::Ns(ns("64 lists")?),
                Some(Quantity::Ns(three)),
            ),
            Row::measured(
                FLOOR_OPTIONS,
                Quantity::Ns(ns("64 option lists")?),
                Some(Quantity::Ns(three)),
            ),
            Row::measured(
                FLOOR_NATIVE,
                Quantity::Ns(three),
                Some(Quantity::Ns(FLOOR_RECORDS as f64 / native_rate * 1e9)),
            ),
        ])
    })();
    or_unmeasured(
        measured,
        &[
            (FLOOR_SHAPE, &[]),
            (FLOOR_OPTIONS, &[]),
            (FLOOR_NATIVE, &[]),
        ],
    )
}
