//! [`RunMetadata`]: who a profiled process is, where and when; the
//! journal's first frame carries it, and every sink writes it.

use std::collections::BTreeMap;
use std::hash::Hasher;

use serde::{Deserialize, Serialize};

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
    /// What measured the process's records: `builtin` or
    /// `rocprofiler-sdk` (`rocwasm_plan::Backend::name`); `None` when the
    /// source does not say (a rocprofv3 recording).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back_end: Option<String>,
    /// The process's environment at its start (`rocpd_info_process.environment`,
    /// as rocprofv3 writes it); empty when the source did not record it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub environment: BTreeMap<String, String>,
}

impl RunMetadata {
    /// Metadata of the calling process (pid, ppid, hostname, its
    /// environment and the MPI rank and batch job id it names), for
    /// `command`.
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
            environment: process
                .vars
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            ..Self::default()
        }
    }

    /// Takes the MPI rank and the batch job id from [`Self::environment`]
    /// (the variables `%rank%` and `%job%` read) where the metadata has
    /// none: a recording (a rocpd database) keeps the environment, not the
    /// rank.
    pub fn rank_and_job_from_environment(&mut self) {
        let first = |names: &[&str]| {
            names.iter().find_map(|n| {
                self.environment
                    .get(*n)
                    .map(|v| v.trim())
                    .filter(|v| !v.is_empty())
                    .map(str::to_string)
            })
        };
        if self.rank.is_none() {
            self.rank = first(rocwasm_plan::template::RANK_VARIABLES).and_then(|r| r.parse().ok());
        }
        if self.job.is_none() {
            self.job = first(rocwasm_plan::template::JOB_VARIABLES);
        }
    }

    /// A 64-bit identity of this process on this host. Sinks that must keep
    /// runs apart when files are merged (Perfetto track uuids and sequence
    /// ids, rocpd guids) derive their ids from it.
    pub fn process_hash(&self) -> u64 {
        // FNV-1a (the `fnv` crate): stable across Rust releases, unlike
        // `DefaultHasher`, for ids that end up in files.
        let mut h = fnv::FnvHasher::default();
        h.write(self.hostname.as_bytes());
        h.write(&[0]);
        h.write(&self.pid.to_le_bytes());
        h.write(&self.start_ns.to_le_bytes());
        h.finish()
    }
}
