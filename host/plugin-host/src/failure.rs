//! Failure containment: what a plugin failure is, what the stage does about
//! it, and the one report every failure produces.
//!
//! A trap, a deadline overrun or a memory-cap hit *poisons* the plugin's
//! instance: a component instance that trapped must not be entered again, so
//! the instance is dropped with its store (and its memory). Nothing outside
//! the plugin is affected; the stage's [`FailurePolicy`] decides what comes next.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use rocwasm_plan::FailurePolicy;

/// Why a plugin call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureCause {
    /// The call ran past its deadline and was interrupted.
    Deadline(Duration),
    /// The guest asked for more linear memory than its cap allows.
    MemoryCap {
        /// The cap in bytes (the stage's `Limits::memory_bytes`).
        limit: usize,
        /// The linear memory, in bytes, the store would have held.
        requested: usize,
    },
    /// The guest's call stack overflowed (deep recursion).
    StackOverflow,
    /// Any other trap (`unreachable`, a Rust panic, out-of-bounds access …).
    Trap(String),
    /// `init` returned an error.
    InitFailed(String),
    /// A transform returned columns of unequal length.
    MalformedReply(String),
    /// A fresh instance could not be created (restart).
    Instantiate(String),
}

impl fmt::Display for FailureCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureCause::Deadline(d) => write!(f, "deadline of {d:?} exceeded"),
            FailureCause::MemoryCap { limit, requested } => {
                write!(
                    f,
                    "memory cap of {limit} bytes hit (asked for {requested} bytes)"
                )
            }
            FailureCause::StackOverflow => f.write_str("call stack exhausted"),
            FailureCause::Trap(t) => write!(f, "trap: {t}"),
            FailureCause::InitFailed(e) => write!(f, "init failed: {e}"),
            FailureCause::MalformedReply(e) => write!(f, "malformed reply: {e}"),
            FailureCause::Instantiate(e) => write!(f, "could not instantiate: {e}"),
        }
    }
}

/// What the stage did about a failure: its [`FailurePolicy`], applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureAction {
    /// `skip`: the failed call's records are lost; a fresh instance takes
    /// the next call.
    Skipped,
    /// `disable` (or `restart` with its restarts used up, or a failure in
    /// the life cycle): the plugin is never called again.
    Disabled,
    /// `restart`: a fresh instance is made after the backoff.
    Restarted {
        /// Which restart this is, from 1 up to the policy's `max`.
        attempt: u32,
    },
    /// `abort`: the run stops; the chain returns this report as its error.
    Aborted,
}

/// One failure of one plugin, reported exactly once (here and as a `warn!`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureReport {
    /// The stage name.
    pub plugin: String,
    /// Why the call failed.
    pub cause: FailureCause,
    /// What the stage did about it.
    pub action: FailureAction,
    /// Records the plugin did not see because of this failure: the failed
    /// call's records plus, while disabled or waiting to restart, every
    /// record delivered to the chain that the stage would have received.
    pub records_missed: u64,
}

impl fmt::Display for FailureReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "plugin `{}`: {} → {:?}; {} record(s) missed",
            self.plugin, self.cause, self.action, self.records_missed
        )
    }
}

/// The run must stop: a plugin with the `abort` policy failed. Carries
/// that failure's report. Returned by every plugin call that can fail, up
/// through the stage to the chain, which turns it into the run's error.
#[derive(Debug, Clone)]
pub(crate) struct Aborted(pub FailureReport);

/// The run's failure reports, shared by every plugin of a chain.
#[derive(Debug, Clone, Default)]
pub struct FailureLog(Arc<Mutex<Vec<FailureReport>>>);

impl FailureLog {
    /// Records a new failure and returns its index (to add missed records later).
    pub(crate) fn push(&self, report: FailureReport) -> usize {
        tracing::warn!(plugin = %report.plugin, cause = %report.cause, action = ?report.action,
                       "plugin failure");
        let mut v = self.lock();
        v.push(report);
        v.len() - 1
    }

    pub(crate) fn add_missed(&self, index: usize, records: u64) {
        if let Some(r) = self.lock().get_mut(index) {
            r.records_missed += records;
        }
    }

    /// Every report so far, in the order the failures happened.
    pub fn reports(&self) -> Vec<FailureReport> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<FailureReport>> {
        // A panic while holding this lock cannot leave the Vec inconsistent.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
