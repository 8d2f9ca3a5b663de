//! The [`Sink`] contract and what every sink is told about the run.

use std::path::PathBuf;

use anyhow::Result;
use rocwasm_core::{Batch, SymbolTable};
use serde::{Deserialize, Serialize};

use crate::claims::OutputClaims;
use crate::names::OperationNames;

/// Who was profiled, where and when. One per process: traces of several
/// processes (ranks) are several runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMetadata {
    /// The profiled process's id: the API traces' `Process_Id` column,
    /// `rocpd_info_process.pid`, the JSON metadata's `pid`.
    pub pid: u32,
    /// Its parent's id (`rocpd_info_process.ppid`); 0 when unknown.
    pub ppid: u32,
    /// The host's name (`rocpd_info_node.hostname`); part of
    /// [`process_hash`](Self::process_hash).
    pub hostname: String,
    /// The profiled command line, program first.
    pub command: Vec<String>,
    /// Run start, in the same clock as the records (ns): rocpd's
    /// `init`/`start`, the JSON metadata's `init_time`. Part of
    /// [`process_hash`](Self::process_hash).
    pub start_ns: u64,
    /// Run end, same clock (ns): rocpd's `fini`/`end`, the JSON metadata's
    /// `fini_time`. May stay 0 until the run finishes; callers update it
    /// before [`Sink::finish`].
    pub end_ns: u64,
    /// MPI-style rank when one was found in the environment (the
    /// variables `%rank%` reads: Open MPI, MPICH/PMI, PMIx, Slurm).
    pub rank: Option<u32>,
    /// The batch scheduler's job id when one was found in the environment
    /// (the variables `%job%` reads: Slurm, PBS, LSF, Flux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

impl RunMetadata {
    /// Metadata of the calling process (pid, ppid, hostname, and the MPI
    /// rank and batch job id its environment names), for `command`.
    pub fn for_current_process(command: Vec<String>) -> Self {
        let process = rocwasm_plan::ProcessInfo::current();
        let first = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| process.var(n).map(str::trim).filter(|v| !v.is_empty()))
                .map(str::to_string)
        };
        let rank = first(rocwasm_plan::template::RANK_VARIABLES).and_then(|r| r.parse().ok());
        let job = first(rocwasm_plan::template::JOB_VARIABLES);
        Self {
            pid: process.pid,
            ppid: process.ppid,
            hostname: process.hostname.clone(),
            command,
            rank,
            job,
            ..Self::default()
        }
    }

    /// A 64-bit identity of this process on this host. Sinks that must keep
    /// runs apart when files are merged (Perfetto track uuids and sequence
    /// ids, rocpd guids) derive their ids from it.
    pub fn process_hash(&self) -> u64 {
        let mut h = Fnv::new();
        h.write(self.hostname.as_bytes());
        h.write(&[0]);
        h.write(&self.pid.to_le_bytes());
        h.write(&self.start_ns.to_le_bytes());
        h.finish()
    }
}

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
    /// Called once after the last batch: flush, write what needs the whole
    /// run (metadata, symbol tables, statistics) and return the paths of
    /// the files written.
    fn finish(&mut self, ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>>;
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
