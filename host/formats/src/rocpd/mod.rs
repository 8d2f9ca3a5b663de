//! rocpd SQLite output (schema version 3).
//!
//! Each run adds its own set of tables (`rocpd_region_<uuid>`, …) to the
//! database file and recreates the plain views (`rocpd_region`, …) as the
//! `UNION ALL` of every run, so ranks or repeated runs that write the same
//! file merge into one database (see [`schema`]); [`merge`] combines
//! separate files the same way (`rocwasm merge`).
//!
//! The tables, their columns and the values below are [`schema`]'s, which
//! the reader of `replay` uses too. Mapping from batches:
//! - API calls → `rocpd_region` (name = function name) with an event whose
//!   category is the kind name (`HIP_RUNTIME_API`, …) and which holds the
//!   correlation id, and the call's arguments (when the run journaled them,
//!   [`Sink::call_args`]) → `rocpd_arg`, one row per argument;
//! - kernel dispatches → `rocpd_kernel_dispatch` (`kernel_id` = the run's
//!   kernel id, also the `rocpd_info_kernel_symbol` row id; `region_name_id`
//!   = the empty string: rocwasm has no kernel-rename regions yet);
//! - memory copies → `rocpd_memory_copy` (name = direction);
//! - allocations and scratch events → `rocpd_memory_allocate` with
//!   `level` REAL/VIRTUAL or SCRATCH ([`schema::MemoryOperation`]).
//!
//! Every id references the row rocpd's views join on (the table in
//! [`schema`]'s docs): the process row's `id` is the OS pid and a thread
//! row's `id` the OS thread id, as rocprofv3 writes them; every agent,
//! queue, stream, kernel and code object a record refers to gets a row
//! (described ones from the symbol table, the others a placeholder), so
//! the finished file passes `PRAGMA foreign_key_check`. Events hold the
//! internal correlation id in `stack_id` and the external one in
//! `correlation_id`; scratch flags go to the row's `extdata`
//! ([`schema::EventExtdata`]).
//!
//! Kernel symbols: a symbol known only from HIP's host-side registration
//! (`code_object_id` 0) takes the code object and kernel object of the HSA
//! loader's symbol of the same name, which is the one dispatches refer to;
//! it is written only when a dispatch refers to it or the loader reported
//! no such kernel (then under a placeholder code object row).
//!
//! Speed: one transaction per batch, rows written 64 to a statement
//! (`rows`), string ids cached by kind and operation, ids assigned
//! by the writer rather than read back, `synchronous = OFF` while writing (a crashed
//! run's database is not worth an fsync per batch).
//!
//! The writer, in the order a run's rows are written: the sink (here)
//! opens the file and adds the run's tables, metadata and node row; `run`
//! holds the run's state (connection, string and thread rows, event ids);
//! `records` maps each batch to rows, which `inserts` (through `rows`)
//! writes; `info` writes the info tables at the end.

mod info;
mod inserts;
pub mod merge;
pub(crate) mod reader;
mod records;
mod rows;
mod run;
pub mod schema;

use std::path::PathBuf;

use anyhow::{Context, Result};
use rocwasm_core::Batch;
use rusqlite::{params, Connection, OptionalExtension};

use inserts::RECORD_TABLES;
use run::Run;
use schema::{insert_sql, metadata};

use crate::paths::output_path;
use crate::sink::claim_file;
use crate::sink::{hash_ids, CallArgs, Sink, SinkContext};
use crate::unfiled::Unfiled;
use rocwasm_plan::claims::OutputClaims;

/// Writes (or adds a run to) a rocpd database. See the module docs.
pub struct RocpdSink {
    path: PathBuf,
    run: Option<Run>,
    claims: OutputClaims,
    /// The claim of the file was refused: write nothing.
    refused: bool,
    /// Records rocpd has no table for: see [`Sink::notes`].
    unfiled: Unfiled,
    /// API calls whose arguments came and whose record never did (a
    /// filter left it out): said in [`Sink::notes`].
    args_without_record: usize,
}

impl RocpdSink {
    /// The database is `<dir>/[<name>_]results.db`.
    pub fn new(dir: impl Into<PathBuf>, name: Option<String>) -> Self {
        Self {
            path: output_path(&dir.into(), name.as_deref(), "results.db"),
            run: None,
            claims: OutputClaims::new(),
            refused: false,
            unfiled: Unfiled::default(),
            args_without_record: 0,
        }
    }

    /// A sink writing exactly `path` (which may already hold other runs).
    pub fn at_path(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            run: None,
            claims: OutputClaims::new(),
            refused: false,
            unfiled: Unfiled::default(),
            args_without_record: 0,
        }
    }

    fn run(&mut self) -> Result<&mut Run> {
        self.run.as_mut().context("rocpd sink used before begin()")
    }
}

/// A run's uuid: 128 bits from the process identity and the current time, so
/// two runs of the same pid (or two hosts) never collide.
fn new_uuid(seed: u64) -> [u8; 16] {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let hi = hash_ids(seed, &[now, 1]);
    let lo = hash_ids(seed, &[now, 2, std::process::id() as u64]);
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&hi.to_be_bytes());
    b[8..].copy_from_slice(&lo.to_be_bytes());
    b
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Sink for RocpdSink {
    fn name(&self) -> &'static str {
        "rocpd"
    }

    fn set_claims(&mut self, claims: &OutputClaims) {
        self.claims = claims.clone();
    }

    fn begin(&mut self, ctx: &SinkContext<'_>) -> Result<()> {
        let opened = claim_file(&self.claims, &self.path, "rocpd", |p| {
            Connection::open(p).with_context(|| format!("opening {}", p.display()))
        })?;
        let Some(conn) = opened else {
            self.refused = true;
            return Ok(());
        };
        conn.set_prepared_statement_cache_capacity(rows::statement_cache_capacity(RECORD_TABLES));
        // Records come before the symbols they refer to (those are complete
        // only at the end): foreign keys are declared, and checked by the
        // tests on the finished file, but not enforced while writing.
        conn.execute_batch(
            "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY; PRAGMA foreign_keys = OFF;",
        )?;
        let uuid = new_uuid(ctx.meta.process_hash());
        let h = hex(&uuid);
        let suffix = format!("_{h}");
        let guid = format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        );
        conn.execute_batch("BEGIN")?;
        schema::create_run_tables(&conn, &suffix, &guid)?;
        let sql = insert_sql(metadata::TABLE, &suffix, &[metadata::TAG, metadata::VALUE]);
        for (tag, value) in [
            ("schema_version", "3"),
            ("uuid", suffix.as_str()),
            ("guid", guid.as_str()),
        ] {
            conn.execute(&sql, params![tag, value])?;
        }
        info::write_node(&conn, &suffix, ctx)?;
        schema::create_views(&conn)?;
        conn.execute_batch("COMMIT")?;
        self.run = Some(Run::new(conn, suffix, ctx)?);
        Ok(())
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        if self.refused {
            return Ok(());
        }
        // Every table by name: one the schema gains fails to compile here
        // until rocpd writes it (`Run::write_batch`: API calls, dispatches,
        // copies, allocations and scratch memory) or counts it as left out.
        let Batch {
            api_calls: _,
            kernel_dispatches: _,
            memory_copies: _,
            memory_allocations: _,
            scratch_memory: _,
            retirements,
            runtime_initializations,
            counter_samples: _,
        } = batch;
        self.unfiled
            .count_unplaced(retirements, runtime_initializations);
        let path = self.path.clone();
        let run = self.run()?;
        run.conn.execute_batch("BEGIN")?;
        match run.write_batch(batch, ctx) {
            Ok(()) => run
                .conn
                .execute_batch("COMMIT")
                .with_context(|| format!("writing {}", path.display())),
            Err(e) => {
                let _ = run.conn.execute_batch("ROLLBACK");
                Err(e.context(format!("writing {}", path.display())))
            }
        }
    }

    fn call_args(&mut self, args: &[CallArgs]) {
        if let Some(run) = self.run.as_mut() {
            for a in args {
                run.call_args.insert(a.correlation_id, a.args.clone());
            }
        }
    }

    fn notes(&mut self) -> Vec<String> {
        let mut notes = self.unfiled.take_notes("rocpd");
        if self.args_without_record > 0 {
            notes.push(format!(
                "the arguments of {} API call(s) are not in rocpd_arg: their records never reached \
                 the rocpd output (a filter, such as a collection period, left them out)",
                self.args_without_record
            ));
        }
        notes
    }

    fn finish(&mut self, ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        if self.refused {
            return Ok(Vec::new());
        }
        let path = self.path.clone();
        let mut run = self
            .run
            .take()
            .context("rocpd sink finished before begin()")?;
        self.args_without_record = run.call_args.len();
        run.conn.execute_batch("BEGIN")?;
        run.write_info(ctx)
            .with_context(|| format!("writing {}", path.display()))?;
        run.conn.execute_batch("COMMIT")?;
        // Leave a self-contained file behind (no journal, default durability).
        run.conn
            .execute_batch("PRAGMA synchronous = FULL; PRAGMA journal_mode = DELETE;")?;
        let _: Option<i64> = run
            .conn
            .query_row("PRAGMA schema_version", [], |r| r.get(0))
            .optional()?;
        Ok(vec![path])
    }
}
