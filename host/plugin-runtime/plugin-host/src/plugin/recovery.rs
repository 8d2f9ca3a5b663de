//! A failed call, handled: the poisoned instance is dropped with its store,
//! one [`FailureReport`] is filed and the stage's [`FailurePolicy`] applied.
//!
//! A fresh instance comes from the pre-linked `InstancePre` and a new store;
//! it is `configure`d and `init`ed again (its profiler setup replayed, see
//! `crate::host::profiler`). Its in-memory state is gone: a restarted
//! analysis counts from zero. Its report counts the records lost to the
//! failure (`records_missed`), and its `fini` tables say how many of the
//! records offered to the stage the final instance never saw.
//!
//! A restart waits out its backoff. Records that arrive meanwhile from the
//! running application are missed; a batch handed over by a caller that can
//! wait ([`Pace::Caller`]: `Chain::deliver`, i.e. replay) waits instead, so
//! a replay loses only the batch that failed.

use std::time::{Duration, Instant};

use super::instance::{default_tool_info, export, lifecycle, new_store};
use super::{Health, Pace, Plugin};
use crate::failure::{Aborted, Failed, FailureAction, FailureCause, FailurePolicy, FailureReport};
use crate::host::SetupMode;

impl Plugin {
    /// True when the plugin can take a call now (reviving it if its wait
    /// is over; at [`Pace::Caller`], after waiting it out).
    pub(super) fn ready(&mut self, pace: Pace) -> bool {
        match self.health {
            Health::Live => self.instance.is_some(),
            Health::Waiting { until } => {
                let now = Instant::now();
                if now < until {
                    if pace == Pace::Live {
                        return false;
                    }
                    std::thread::sleep(until - now);
                }
                self.revive()
            }
            _ => false,
        }
    }

    /// Adds `records` the plugin could not take to the open report.
    pub(super) fn miss(&mut self, records: u64) {
        if let Some(i) = self.open_report {
            self.failures.add_missed(i, records);
        }
    }

    pub(super) fn close_report(&mut self) {
        self.open_report = None;
    }

    /// Applies the policy after a failed call that lost `records`.
    pub(super) fn fail(&mut self, failed: Failed, records: u64) -> Result<(), Aborted> {
        self.instance = None;
        let action = match self.spec.failure {
            FailurePolicy::Skip => FailureAction::Skipped,
            FailurePolicy::Disable => FailureAction::Disabled,
            FailurePolicy::Restart { max, .. } if self.restarts < max => FailureAction::Restarted {
                attempt: self.restarts + 1,
            },
            FailurePolicy::Restart { .. } => FailureAction::Disabled,
            FailurePolicy::Abort => FailureAction::Aborted,
        };
        self.record(failed, action, records)
    }

    /// A life-cycle failure: the plugin never started, so it is disabled
    /// (or the run aborted), never restarted.
    pub(super) fn fail_for_good(&mut self, failed: Failed) -> Result<(), Aborted> {
        self.instance = None;
        let action = if self.spec.failure == FailurePolicy::Abort {
            FailureAction::Aborted
        } else {
            FailureAction::Disabled
        };
        self.record(failed, action, 0)
    }

    fn record(
        &mut self,
        failed: Failed,
        action: FailureAction,
        records: u64,
    ) -> Result<(), Aborted> {
        let report = FailureReport {
            plugin: self.name.to_string(),
            export: failed.export,
            cause: failed.cause,
            action,
            policy: self.spec.failure,
            records_missed: records,
            backtrace: failed.backtrace,
        };
        let index = self.failures.push(report.clone());
        match action {
            FailureAction::Skipped => {
                self.open_report = Some(index);
                self.health = Health::Waiting {
                    until: Instant::now(),
                };
            }
            FailureAction::Restarted { attempt } => {
                self.restarts = attempt;
                let backoff = match self.spec.failure {
                    FailurePolicy::Restart { backoff, .. } => backoff,
                    _ => Duration::ZERO,
                };
                let delay = backoff.saturating_mul(1 << (attempt - 1).min(16));
                self.open_report = Some(index);
                self.health = Health::Waiting {
                    until: Instant::now() + delay,
                };
            }
            FailureAction::Disabled => {
                self.open_report = Some(index);
                self.health = Health::Disabled;
            }
            FailureAction::Aborted => {
                self.open_report = Some(index);
                self.health = Health::Disabled;
                return Err(Aborted(Box::new(report)));
            }
            // Not from a failed call (see `Plugin::refused`).
            FailureAction::Refused => {}
        }
        Ok(())
    }

    /// A fresh store and instance, configured and initialised again. On
    /// failure the plugin is disabled (a plugin that cannot start again is
    /// not retried in a loop).
    fn revive(&mut self) -> bool {
        let profiler = self.store.data().profiler.for_restart();
        let output = self.store.data_mut().output.take();
        let store = new_store(
            &self.runtime,
            &self.compiled,
            &self.spec,
            &self.env,
            profiler,
            output,
        );
        let result = store
            .map_err(|e| Failed {
                cause: FailureCause::Instantiate(format!("{e:#}")),
                export: None,
                backtrace: Vec::new(),
            })
            .and_then(|store| {
                self.store = store;
                self.taken = 0;
                let inst = self.instantiate()?;
                self.instance = Some(inst);
                let info = self
                    .tool_info
                    .clone()
                    .unwrap_or_else(|| default_tool_info(&self.name));
                let ok = self.call(export::CONFIGURE, self.spec.limits.deadline, |s, i| {
                    lifecycle(i).call_configure(s, &info)
                })?;
                if !ok {
                    let cause = FailureCause::InitFailed("configure declined on restart".into());
                    return Err(Failed::returned(cause, export::CONFIGURE));
                }
                self.store.data_mut().profiler.mode = SetupMode::Replay { next: 0 };
                let r = self.call(export::INIT, self.spec.limits.deadline, |s, i| {
                    lifecycle(i).call_init(s)
                });
                self.store.data_mut().profiler.mode = SetupMode::Locked;
                r?.map_err(|e| Failed::returned(FailureCause::InitFailed(e), export::INIT))
            });
        match result {
            Ok(()) => {
                self.health = Health::Live;
                self.close_report();
                true
            }
            Err(failed) => {
                let _ = self.fail_for_good(failed);
                false
            }
        }
    }
}
