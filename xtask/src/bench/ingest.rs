//! Replay ingest: the `ingest` bench's replay of a rocpd database
//! against raw rusqlite and the sqlite3 CLI.

use std::process::Command;

use super::artifacts::Built;
use super::command::{or_unmeasured, output};
use super::parse;
use super::sizes::Sizes;
use super::table::{self, Quantity, Row};

pub(super) fn rows(built: &Built, sizes: &Sizes) -> Vec<Row> {
    let n = sizes.ingest_records;
    let figure = format!(
        "replay ingest, {} records: replay vs raw rusqlite",
        table::count(n)
    );
    let cli_figure = "replay ingest vs sqlite3 CLI (> /dev/null)";
    let measured = (|| {
        let out = output(
            Command::new(built.bench("ingest")?)
                .arg("--bench")
                .env("INGEST_RECORDS", n.to_string()),
        )?;
        let ingest = parse::ingest(&out)?;
        let mut rows = vec![Row::measured(
            figure.clone(),
            Quantity::PerSec(ingest.replay),
            Some(Quantity::PerSec(ingest.rusqlite)),
        )];
        rows.push(match ingest.sqlite3_cli {
            Some(cli) => Row::measured(
                cli_figure,
                Quantity::PerSec(ingest.replay),
                Some(Quantity::PerSec(cli)),
            ),
            None => Row::not_measured(cli_figure, "sqlite3 is not installed"),
        });
        Ok(rows)
    })();
    or_unmeasured(measured, &[(&figure, &[]), (cli_figure, &[])])
}
