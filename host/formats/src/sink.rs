//! The [`Sink`] contract and what every sink is told about the run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rocwasm_core::{Batch, SymbolTable};

use crate::names::OperationNames;
use rocwasm_plan::claims::{OutputClaims, Producer};

pub use rocwasm_journal::{CallArg, CallArgs, RunMetadata};

/// What a sink may consult while writing: the run, its symbols (agents, code
/// objects, kernel names) and the operation names. Symbols grow during a live
/// run, so sinks look names up when they need them and again at finish.
#[derive(Clone, Copy)]
pub struct SinkContext<'a> {
    /// The run being written.
    pub meta: &'a RunMetadata,
    /// Agents, code objects and kernel symbols registered so far; records
    /// refer to them by id.
    pub symbols: &'a SymbolTable,
    /// Names of the operation numbers in the records, per kind.
    pub names: &'a OperationNames,
}

impl SinkContext<'_> {
    /// The name of operation `op` of `kind`, as files print it: for
    /// `MARKER_CORE_RANGE_API`, the marker's message the symbol table
    /// interned; else [`OperationNames::name`].
    pub fn op_name(&self, kind: u32, op: u32) -> std::sync::Arc<str> {
        if kind == rocwasm_core::BufferTracingKind::MarkerCoreRangeApi as u32 {
            if let Some(message) = self.symbols.marker(op) {
                return message;
            }
        }
        self.names.name(kind, op)
    }
}

/// A native output: receives every batch of a run in delivery order.
///
/// Life cycle: `begin` once, `write_batch` for each batch, `finish` once;
/// `finish` returns the files written. An error from any call is final for
/// that sink (the caller reports it and drops the sink; other sinks go on).
///
/// A sink claims each file in the run's [`OutputClaims`] before it first
/// writes it, and writes nothing to a file whose claim is refused (the
/// registry reports the refusal). On its own a sink has a registry of its
/// own; [`Outputs`](crate::Outputs) gives all its sinks the run's.
pub trait Sink: Send {
    /// A short name for messages (`csv`, `rocpd`, …).
    fn name(&self) -> &'static str;
    /// Claim files in `claims`, the run's registry, from now on.
    fn set_claims(&mut self, claims: &OutputClaims);
    /// Called once before the first batch: create the output directory,
    /// claim and open files that exist from the start.
    fn begin(&mut self, ctx: &SinkContext<'_>) -> Result<()>;
    /// Writes one batch; batches arrive in delivery order, which is not
    /// timestamp order.
    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()>;
    /// Claims now every file that `batch` will make this sink write, when
    /// the batch itself reaches it only later, from a spool
    /// ([`WriteTiming::AtEnd`](crate::WriteTiming::AtEnd)): the first
    /// producer of a name keeps it, so a sink writing at the end must not
    /// lose a file to a stage that writes the same name before the run
    /// ends. A sink that claims all its files in `begin` has nothing to do.
    fn claim_for(&mut self, _batch: &Batch) -> Result<()> {
        Ok(())
    }
    /// The arguments of API calls whose records come in a later batch (a
    /// live run journals them when its outputs write arguments: rocpd's
    /// `rocpd_arg`). A sink that writes no arguments ignores them.
    fn call_args(&mut self, _args: &[CallArgs]) {}
    /// Called once after the last batch: flush, write what needs the whole
    /// run (metadata, symbol tables, statistics) and return the paths of
    /// the files written.
    fn finish(&mut self, ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>>;
    /// What the user should know of records this sink had no place for
    /// (its format has no file for their kind), one sentence each; asked
    /// after [`Self::finish`]. Nothing is left out without a word.
    fn notes(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// Claims `path` for the sink `who` in the run's registry and, when the
/// claim is granted, creates the file's folder and opens it with `open`.
/// `Ok(None)`: another producer has the name (the registry has said so,
/// once) and the sink writes nothing there. The five format sinks claim
/// their files through here, so none is created before it is claimed
/// (the statistics sink defers its claims: `claim_or_defer`).
pub(crate) fn claim_file<T>(
    claims: &OutputClaims,
    path: &Path,
    who: &'static str,
    open: impl FnOnce(&Path) -> Result<T>,
) -> Result<Option<T>> {
    if claims.claim(path, &Producer::Sink(who)).is_err() {
        return Ok(None);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    open(path).map(Some)
}

/// FNV-1a, 64 bit: a stable hash (unlike `DefaultHasher`, which may change
/// between Rust releases) for ids that end up in files.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

/// Hashes a list of integers under a seed (ids derived from a process hash).
pub(crate) fn hash_ids(seed: u64, ids: &[u64]) -> u64 {
    let mut h = Fnv::new();
    h.write(&seed.to_le_bytes());
    for id in ids {
        h.write(&id.to_le_bytes());
    }
    h.finish()
}
