//! `rocwasm merge`: several rocpd databases into one, as rocpd's `merge`.
//!
//! A rocpd database (schema 3) keeps each run in its own tables, suffixed
//! with the run's uuid (`rocpd_region_<uuid>`, see [`super::schema`]), and
//! plain views that union every run. Merging is therefore copying: each
//! input's per-run tables (and their indexes) move into the output under
//! the same names, with the DDL they were created with (columns, defaults,
//! foreign keys), their rows copied as they are; then the views are
//! recreated over every run. Ids stay per run and every row keeps its run's
//! `guid`, so no row of one process is confused with another's, and rocpd's
//! views — which join on `(id, guid)` — work across the merged file.
//!
//! Refused, with a sentence naming the file: an input that is not a rocpd
//! database (no per-run `rocpd_metadata_*` table), one with the plain names
//! as tables (no run suffix to keep runs apart), a run that two inputs both
//! hold (the same file given twice), and an output file that exists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::{Connection, OpenFlags};

use super::schema::{self, metadata};

/// What one merge did: per input, its runs and their rows per table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Each input, with its runs (suffixes) in the order they were copied.
    pub inputs: Vec<(PathBuf, Vec<String>)>,
    /// Rows copied per base table name, over every run.
    pub rows: BTreeMap<String, u64>,
}

/// Merges `inputs` into a new database at `output`. See the module docs.
pub fn merge(inputs: &[PathBuf], output: &Path) -> Result<MergeReport> {
    if inputs.is_empty() {
        bail!("nothing to merge: name at least one rocpd database");
    }
    if output.exists() {
        bail!(
            "{} exists; merge writes a new database (remove it or choose another -o)",
            output.display()
        );
    }
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut plans = Vec::new();
    for input in inputs {
        let suffixes = input_runs(input)?;
        for s in &suffixes {
            if let Some(first) = seen.insert(s.clone(), input.clone()) {
                bail!(
                    "run {} is in both {} and {}: each run can be merged once",
                    s.trim_start_matches('_'),
                    first.display(),
                    input.display()
                );
            }
        }
        plans.push((input.clone(), suffixes));
    }
    let result = write(&plans, output);
    if result.is_err() {
        // Leave no half-merged file behind.
        let _ = std::fs::remove_file(output);
    }
    result
}

/// The runs (suffixes) of one input; an error when it is not a rocpd
/// database with per-run tables.
fn input_runs(input: &Path) -> Result<Vec<String>> {
    let conn = Connection::open_with_flags(input, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("cannot open {}", input.display()))?;
    let suffixes = schema::run_suffixes(&conn)
        .with_context(|| format!("{} is not an SQLite database", input.display()))?;
    if suffixes.is_empty() {
        if schema::has_plain_tables(&conn)? {
            bail!(
                "{} keeps its run in tables without a run suffix ({}); merge needs per-run tables ({}_<uuid>, rocpd schema 3)",
                input.display(),
                metadata::TABLE,
                metadata::TABLE
            );
        }
        bail!(
            "{} is not a rocpd database (no {}_<uuid> table)",
            input.display(),
            metadata::TABLE
        );
    }
    Ok(suffixes)
}

fn write(plans: &[(PathBuf, Vec<String>)], output: &Path) -> Result<MergeReport> {
    let conn =
        Connection::open(output).with_context(|| format!("cannot create {}", output.display()))?;
    // Tables are created child-first by their DDL order; rows are copied
    // whole, so checks run once at the end (`foreign_key_check`).
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;",
    )?;
    let mut report = MergeReport::default();
    for (input, suffixes) in plans {
        copy_runs(&conn, input, suffixes, &mut report)
            .with_context(|| format!("merging {}", input.display()))?;
        report.inputs.push((input.clone(), suffixes.clone()));
    }
    schema::create_views(&conn)?;
    let broken: i64 = conn.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
        r.get(0)
    })?;
    if broken > 0 {
        bail!(
            "the merged database has {broken} row(s) whose foreign key does not resolve; the inputs were not consistent"
        );
    }
    conn.execute_batch("PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL;")?;
    Ok(report)
}

/// Copies every table and index of `suffixes` from `input` into `conn`.
fn copy_runs(
    conn: &Connection,
    input: &Path,
    suffixes: &[String],
    report: &mut MergeReport,
) -> Result<()> {
    conn.execute(
        "ATTACH DATABASE ?1 AS src",
        [input.to_string_lossy().as_ref()],
    )?;
    let copied = (|| -> Result<()> {
        let objects: Vec<(String, String, String)> = {
            let mut stmt = conn.prepare(
                "SELECT type, name, sql FROM src.sqlite_master \
                 WHERE type IN ('table', 'index') AND sql IS NOT NULL ORDER BY rowid",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        conn.execute_batch("BEGIN")?;
        for suffix in suffixes {
            let ours = objects
                .iter()
                .filter(|(_, name, _)| name.ends_with(suffix.as_str()));
            for (kind, name, sql) in ours {
                // The input's own DDL, held to one `CREATE TABLE`/`CREATE
                // INDEX` statement (`execute` refuses several): a crafted
                // database cannot make the merge run anything else.
                let create = sql.trim_start().to_ascii_uppercase();
                if !(create.starts_with("CREATE TABLE")
                    || create.starts_with("CREATE INDEX")
                    || create.starts_with("CREATE UNIQUE INDEX"))
                {
                    anyhow::bail!(
                        "{}: the schema of `{name}` is not a CREATE TABLE or CREATE INDEX statement",
                        input.display()
                    );
                }
                conn.execute(sql, [])?;
                if kind == "table" {
                    let n = conn.execute(
                        &format!("INSERT INTO main.\"{name}\" SELECT * FROM src.\"{name}\""),
                        [],
                    )?;
                    let base = &name[..name.len() - suffix.len()];
                    *report.rows.entry(base.to_string()).or_insert(0) += n as u64;
                }
            }
        }
        conn.execute_batch("COMMIT")?;
        Ok(())
    })();
    if copied.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    conn.execute_batch("DETACH DATABASE src")?;
    copied
}
