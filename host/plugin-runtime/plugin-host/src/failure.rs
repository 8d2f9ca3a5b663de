//! Failure containment: what a plugin failure is, what the stage does about
//! it, and the one report every failure produces.
//!
//! A trap, a deadline overrun or a memory-cap hit *poisons* the plugin's
//! instance: a component instance that trapped must not be entered again, so
//! the instance is dropped with its store (and its memory). Nothing outside
//! the plugin is affected; the stage's [`FailurePolicy`] decides what comes next.
//!
//! `classify` (a child module) tells which [`FailureCause`] a wasmtime error
//! is, with the guest's backtrace.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use rocwasm_plan::FailurePolicy;

mod classify;

pub(crate) use classify::{classify, CallResult, Failed};

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
    /// More than the host's caps accept: output past the stage's quota
    /// (`Limits::output_bytes`), summary tables past [`crate::summary_caps`].
    /// Says what was refused or cut; the rest was kept.
    Oversized(String),
    /// The plugin asked for a service its stage is not granted (callback
    /// tracing, external-correlation requests); the verb answered `error`.
    NotGranted(String),
    /// A fresh instance could not be created (restart).
    Instantiate(String),
    /// `take-partial` or `merge-partial` (WIT 0.3.1's `merge`) returned an
    /// error: the plugin's text. The partial's records are missing from
    /// the merged result.
    PartialRefused(String),
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
            FailureCause::Oversized(e) => write!(f, "over the host's cap: {e}"),
            FailureCause::NotGranted(e) => write!(f, "not granted: {e}"),
            FailureCause::Instantiate(e) => write!(f, "could not instantiate: {e}"),
            FailureCause::PartialRefused(e) => write!(f, "partial result refused: {e}"),
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
    /// The host refused what went over one of its caps (the output quota,
    /// the summary caps); the plugin was not stopped and its policy not
    /// applied. Reported once per stage and cap.
    Refused,
}

/// As a report says it: `skipped (a fresh instance takes the next call)`,
/// `disabled for the rest of the run`, `restarted (attempt 1)`, `run aborted`.
impl fmt::Display for FailureAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureAction::Skipped => f.write_str("skipped (a fresh instance takes the next call)"),
            FailureAction::Disabled => f.write_str("disabled for the rest of the run"),
            FailureAction::Restarted { attempt } => write!(f, "restarted (attempt {attempt})"),
            FailureAction::Aborted => f.write_str("run aborted"),
            FailureAction::Refused => f.write_str("refused by the host, the plugin runs on"),
        }
    }
}

/// One failure of one plugin, reported exactly once (here and as a `warn!`).
///
/// Its [`Display`](fmt::Display) is one sentence naming the stage, the
/// export that failed, why and what the stage did about it, followed (when
/// wasmtime captured one) by the guest's Wasm backtrace, one indented line
/// per frame:
///
/// ```text
/// plugin `trap` failed in `deliver-batch`: trap: wasm `unreachable` instruction executed; restarted (attempt 1 of 3); 10 record(s) missed
///   wasm backtrace:
///     0: trap.wasm!rust_panic
///     …
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureReport {
    /// The stage name.
    pub plugin: String,
    /// The export that was running (`configure`, `init`, `deliver-batch`,
    /// `transform-batch`, `on-callback`, `on-external-correlation-request`,
    /// `fini`); `None` when the failure came from making an instance.
    pub export: Option<&'static str>,
    /// Why the call failed.
    pub cause: FailureCause,
    /// What the stage did about it.
    pub action: FailureAction,
    /// The stage's policy (says how many restarts a `restart` allows).
    pub policy: FailurePolicy,
    /// Records the plugin did not see because of this failure: the failed
    /// call's records plus, while disabled or waiting to restart, every
    /// record delivered to the chain that the stage would have received.
    pub records_missed: u64,
    /// The guest's Wasm backtrace at the failure, innermost frame first, one
    /// frame a line (`module!function`); empty when the failure has none
    /// (`init` returning an error, a malformed reply).
    pub backtrace: Vec<String>,
}

impl FailureReport {
    /// The action as the sentence says it, with the restart budget:
    /// `restarted (attempt 1 of 3)`.
    fn action_text(&self) -> String {
        match (self.action, self.policy) {
            (FailureAction::Restarted { attempt }, FailurePolicy::Restart { max, .. }) => {
                format!("restarted (attempt {attempt} of {max})")
            }
            (action, _) => action.to_string(),
        }
    }
}

impl fmt::Display for FailureReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plugin `{}` failed", self.plugin)?;
        if let Some(export) = self.export {
            write!(f, " in `{export}`")?;
        }
        write!(
            f,
            ": {}; {}; {} record(s) missed",
            self.cause,
            self.action_text(),
            self.records_missed
        )?;
        if !self.backtrace.is_empty() {
            f.write_str("\n  wasm backtrace:")?;
            for (i, frame) in self.backtrace.iter().enumerate() {
                write!(f, "\n    {i}: {frame}")?;
            }
        }
        Ok(())
    }
}

/// The run must stop: a plugin with the `abort` policy failed. Carries
/// that failure's report. Returned by every plugin call that can fail, up
/// through the stage to the chain, which turns it into the run's error.
#[derive(Debug, Clone)]
pub(crate) struct Aborted(pub Box<FailureReport>);

/// The run's failure reports, shared by every plugin of a chain.
#[derive(Debug, Clone, Default)]
pub struct FailureLog(Arc<Mutex<Vec<FailureReport>>>);

impl FailureLog {
    /// Records a new failure and returns its index (to add missed records later).
    pub(crate) fn push(&self, report: FailureReport) -> usize {
        tracing::warn!(plugin = %report.plugin, export = report.export.unwrap_or("-"),
                       cause = %report.cause, action = %report.action, "plugin failure");
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

#[cfg(test)]
mod tests {
    use super::*;

    fn report(action: FailureAction, policy: FailurePolicy) -> FailureReport {
        FailureReport {
            plugin: "stats".into(),
            export: Some("deliver-batch"),
            cause: FailureCause::Deadline(Duration::from_millis(5)),
            action,
            policy,
            records_missed: 7,
            backtrace: vec!["stats.wasm!spin".into(), "stats.wasm!deliver".into()],
        }
    }

    #[test]
    fn a_report_is_a_sentence_then_the_backtrace() {
        let restart = FailurePolicy::Restart {
            max: 3,
            backoff: Duration::ZERO,
        };
        let r = report(FailureAction::Restarted { attempt: 1 }, restart);
        assert_eq!(
            r.to_string(),
            "plugin `stats` failed in `deliver-batch`: deadline of 5ms exceeded; \
             restarted (attempt 1 of 3); 7 record(s) missed\n  wasm backtrace:\n    \
             0: stats.wasm!spin\n    1: stats.wasm!deliver"
        );
        let mut r = report(FailureAction::Skipped, FailurePolicy::Skip);
        r.export = None;
        r.backtrace.clear();
        assert_eq!(
            r.to_string(),
            "plugin `stats` failed: deadline of 5ms exceeded; skipped (a fresh instance \
             takes the next call); 7 record(s) missed"
        );
    }
}
