//! Who writes which file of a run's output directory: [`OutputClaims`].
//!
//! A run's output directory has several writers: the host's sinks (CSV
//! traces, `results.json`, `results.db`, `results.pftrace`, the statistics
//! files) and every chain stage granted `output`. Nothing stopped two of
//! them from writing the same name — `rocwasm run --kernel-trace --stats`
//! had the host's statistics sink and the `kernel-stats` plugin both write
//! `kernel_stats.csv`, and whichever finished last silently won.
//!
//! Now every writer *claims* a file before it first writes it, in one
//! registry per run:
//!
//! - the first claim of a path records its producer;
//! - the same producer claiming again is fine (a plugin appending to its own
//!   file, a sink reopening its own);
//! - another producer's claim is **refused** with a [`ClaimRefused`] that
//!   names the file and both producers, e.g. `kernel_trace.csv: already
//!   written by the host's CSV sink; stage `recorder` may not write it too`.
//!   The refused writer writes nothing, and the registry keeps the refusal so
//!   that the run reports it ([`OutputClaims::take_report`]; `Outputs::finish`
//!   lists each one among the output errors). Never silent.
//!
//! One host output defers instead of being refused: the statistics files.
//! The stock statistics stages compute them with the same `rocwasm-stats`
//! code, so when a stage has already written one, its file stands and the
//! host's statistics sink writes no second copy ([`OutputClaims::claim_or_defer`],
//! listed with the stage among the run's files written). That is how `--stats`, which adds those
//! stages *and* turns the host's statistics sink on, writes each file once.
//!
//! Paths are compared by their canonical directory plus file name, so
//! `out/./x.csv` and `/abs/out/x.csv` are the same file. The registry is per
//! process: ranks writing into one directory are not checked against each
//! other (their file names differ by `%pid%` or `%rank%` anyway).
//!
//! # Why this lives in `rocwasm-formats`
//!
//! The registry is about a run's files, and most claimants are the sinks of
//! this crate. The other claimant, the Wasm plugin host (`rocwasm-plugin-host`),
//! must not depend on this crate — output formats, SQLite and protobuf have
//! no place in the sandbox host — and `rocwasm-core` is the SDK's model, not
//! a home for host plumbing. So the runtime declares only what it needs, a
//! claim *function* (`rocwasm_plugin_host::OutputClaim`), and whoever wires a run
//! together (the in-process tool, `rocwasm replay`) hands it
//! [`OutputClaims::for_stages`]. Dependencies stay one-way: the glue knows
//! both crates, neither knows the other.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Who writes a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Producer {
    /// A host sink, by what it writes: `"CSV"`, `"JSON"`, `"rocpd"`,
    /// `"Perfetto"`, `"statistics"`.
    Sink(&'static str),
    /// A chain stage, by its name in the chain.
    Stage(String),
}

impl fmt::Display for Producer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Producer::Sink(what) => write!(f, "the host's {what} sink"),
            Producer::Stage(name) => write!(f, "stage `{name}`"),
        }
    }
}

/// A claim refused: `path` is already `holder`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRefused {
    /// The file, as its claimant named it.
    pub path: PathBuf,
    /// Who claimed it first.
    pub holder: Producer,
    /// Who was refused.
    pub claimant: Producer,
}

impl fmt::Display for ClaimRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The file name only: the message also goes to the plugin, which has
        // no business learning the host's directory layout.
        let file = self
            .path
            .file_name()
            .unwrap_or(self.path.as_os_str())
            .to_string_lossy();
        write!(
            f,
            "{file}: already written by {}; {} may not write it too",
            self.holder, self.claimant
        )
    }
}

impl std::error::Error for ClaimRefused {}

/// What [`OutputClaims::claim_or_defer`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The file is the claimant's: write it.
    Granted,
    /// A stage wrote it first; it stands, and the claimant writes nothing.
    LeftTo(Producer),
}

/// What a run's claims came to, for its report.
#[derive(Debug, Default)]
pub struct ClaimReport {
    /// Each refused claim once (the first of repeated attempts).
    pub refusals: Vec<ClaimRefused>,
    /// The files a host output left to the stage that wrote them, with
    /// that stage: the designed outcome, not a problem, so no sentence of
    /// its own: the run's list of files written names the stage
    /// (`kernel_stats.csv (stage `kernel-stats`)`).
    pub left_to_stages: Vec<(PathBuf, Producer)>,
}

#[derive(Debug, Default)]
struct Registry {
    holders: BTreeMap<PathBuf, Producer>,
    refusals: Vec<ClaimRefused>,
    left_to_stages: Vec<(PathBuf, Producer)>,
}

/// The registry of a run's output files: canonical path → producer. Cheap
/// to clone; clones share the registry. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct OutputClaims {
    registry: Arc<Mutex<Registry>>,
}

impl OutputClaims {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `by` as the producer of `path`, or refuses: see the module
    /// docs. A refusal is also kept for [`OutputClaims::take_report`].
    pub fn claim(&self, path: &Path, by: &Producer) -> Result<(), ClaimRefused> {
        let key = canonical(path);
        let mut registry = self.lock();
        match registry.holders.get(&key) {
            None => {
                registry.holders.insert(key, by.clone());
                Ok(())
            }
            Some(holder) if holder == by => Ok(()),
            Some(holder) => {
                let refused = ClaimRefused {
                    path: path.to_path_buf(),
                    holder: holder.clone(),
                    claimant: by.clone(),
                };
                let again = registry.refusals.iter().any(|r| {
                    r.claimant == refused.claimant && canonical(&r.path) == canonical(path)
                });
                if !again {
                    registry.refusals.push(refused.clone());
                }
                Err(refused)
            }
        }
    }

    /// [`OutputClaims::claim`] for a host output that duplicates what a
    /// stage may compute (the statistics files): a file a *stage* already
    /// holds is left to it (listed once in the run's report, with the
    /// stage), instead of being refused. Another sink holding it is still a
    /// refusal.
    pub fn claim_or_defer(&self, path: &Path, by: &Producer) -> Result<Claim, ClaimRefused> {
        if let Some(stage @ Producer::Stage(_)) = self.holder(path) {
            if &stage != by {
                let mut registry = self.lock();
                if !registry.left_to_stages.iter().any(|(p, _)| p == path) {
                    registry
                        .left_to_stages
                        .push((path.to_path_buf(), stage.clone()));
                }
                return Ok(Claim::LeftTo(stage));
            }
        }
        self.claim(path, by).map(|()| Claim::Granted)
    }

    /// Who holds `path`, if anyone.
    pub fn holder(&self, path: &Path) -> Option<Producer> {
        self.lock().holders.get(&canonical(path)).cloned()
    }

    /// The claim function the plugin runtime takes
    /// (`rocwasm_plugin_host::OutputClaim`): claims `path` for the stage named
    /// by the second argument; a refusal comes back as its sentence.
    pub fn for_stages(&self) -> impl Fn(&Path, &str) -> Result<(), String> + Send + Sync + 'static {
        let claims = self.clone();
        move |path, stage| {
            claims
                .claim(path, &Producer::Stage(stage.to_string()))
                .map_err(|refused| refused.to_string())
        }
    }

    /// The files stages hold, with the stage's name, in path order (a
    /// journaled process hands them to its launcher, whose registry then
    /// knows them: [`OutputClaims::claim`] with [`Producer::Stage`]).
    pub fn stage_files(&self) -> Vec<(PathBuf, String)> {
        self.lock()
            .holders
            .iter()
            .filter_map(|(path, by)| match by {
                Producer::Stage(name) => Some((path.clone(), name.clone())),
                Producer::Sink(_) => None,
            })
            .collect()
    }

    /// The refusals and the files left to stages so far, taken out of the
    /// registry (so each is reported once); the claims themselves stay.
    pub fn take_report(&self) -> ClaimReport {
        let mut registry = self.lock();
        ClaimReport {
            refusals: std::mem::take(&mut registry.refusals),
            left_to_stages: std::mem::take(&mut registry.left_to_stages),
        }
    }
}

/// The registry's key for `path`: its directory resolved (symlinks, `.`,
/// `..`) when it exists, then the file name.
fn canonical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|dir| dir.join(name))
            .unwrap_or(absolute),
        _ => absolute,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: Producer = Producer::Sink("statistics");

    fn stage(name: &str) -> Producer {
        Producer::Stage(name.to_string())
    }

    #[test]
    fn a_second_producer_is_refused_with_both_named_and_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let claims = OutputClaims::new();
        let file = dir.path().join("kernel_stats.csv");
        claims.claim(&file, &STATS).unwrap();
        // The same producer again: fine.
        claims.claim(&file, &STATS).unwrap();
        // The same file by another spelling, by a stage: refused.
        let other_spelling = dir.path().join(".").join("kernel_stats.csv");
        let refused = claims
            .claim(&other_spelling, &stage("kernel-stats"))
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "kernel_stats.csv: already written by the host's statistics sink; \
             stage `kernel-stats` may not write it too"
        );
        assert_eq!(claims.holder(&file), Some(STATS));
        // Asking again is refused again, but reported once.
        assert!(claims.claim(&file, &stage("kernel-stats")).is_err());
        let report = claims.take_report();
        assert_eq!(report.refusals, [refused]);
        assert!(claims.take_report().refusals.is_empty(), "taken");
        // Other files and other directories are unaffected.
        claims
            .claim(
                &dir.path().join("hip_api_stats.csv"),
                &stage("kernel-stats"),
            )
            .unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        claims
            .claim(&sub.join("kernel_stats.csv"), &stage("kernel-stats"))
            .unwrap();
    }

    #[test]
    fn the_statistics_sink_defers_to_a_stage_but_not_to_another_sink() {
        let dir = tempfile::tempdir().unwrap();
        let claims = OutputClaims::new();
        let kernel = dir.path().join("kernel_stats.csv");
        claims.claim(&kernel, &stage("kernel-stats")).unwrap();
        assert_eq!(
            claims.claim_or_defer(&kernel, &STATS),
            Ok(Claim::LeftTo(stage("kernel-stats")))
        );
        assert_eq!(claims.holder(&kernel), Some(stage("kernel-stats")));
        let domain = dir.path().join("domain_stats.csv");
        assert_eq!(claims.claim_or_defer(&domain, &STATS), Ok(Claim::Granted));
        let trace = dir.path().join("kernel_trace.csv");
        claims.claim(&trace, &Producer::Sink("CSV")).unwrap();
        let refused = claims.claim_or_defer(&trace, &STATS).unwrap_err();
        assert_eq!(refused.holder, Producer::Sink("CSV"));
        // Asked again (a second flush), still one entry.
        assert_eq!(
            claims.claim_or_defer(&kernel, &STATS),
            Ok(Claim::LeftTo(stage("kernel-stats")))
        );
        let report = claims.take_report();
        assert_eq!(
            report.left_to_stages,
            [(kernel.clone(), stage("kernel-stats"))]
        );
        assert_eq!(report.refusals, [refused]);
    }

    #[test]
    fn stages_claim_through_the_runtimes_function() {
        let dir = tempfile::tempdir().unwrap();
        let claims = OutputClaims::new();
        let trace = dir.path().join("kernel_trace.csv");
        claims.claim(&trace, &Producer::Sink("CSV")).unwrap();
        let claim = claims.for_stages();
        assert_eq!(
            claim(&trace, "recorder"),
            Err("kernel_trace.csv: already written by the host's CSV sink; \
                 stage `recorder` may not write it too"
                .to_string())
        );
        assert_eq!(claim(&dir.path().join("recorder.json"), "recorder"), Ok(()));
        assert_eq!(claims.take_report().refusals.len(), 1);
    }
}
