//! `merge` (WIT 0.3.1): a *part*'s partial result, taken instead of
//! `fini`, and partials folded into a *reducer* (see `wit/worlds.wit`).
//!
//! A partial carries the record counts of the instance that took it, so a
//! reducer's `fini` tables say, as any stage's do, how many of the records
//! offered to all its parts no instance saw (failures on a part).

use super::instance::{export, Instance};
use super::{Health, Pace, Plugin};
use crate::failure::{Aborted, FailureCause};

/// One instance's partial result: the plugin's own bytes, and what they
/// cover.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Partial {
    /// What `take-partial` returned.
    pub bytes: Vec<u8>,
    /// Records offered to the stage over the parts this partial covers.
    pub offered: u64,
    /// Of those, the records the instances took without failing.
    pub taken: u64,
}

/// What ending a part gave for one stage.
#[derive(Debug, Clone)]
pub enum PartEnd {
    /// Its partial result, to merge.
    Partial(Partial),
    /// The stage does not export `merge`: its `fini` ran and these are the
    /// part's own tables, which cannot be merged.
    Tables(Vec<crate::SummaryTable>),
    /// It exports `merge` but no partial could be taken (the stage had
    /// failed for good, declined, or `take-partial` failed): why. The
    /// failure is in the chain's reports too.
    Lost(String),
}

impl Plugin {
    /// True when the component exports `merge`.
    pub(crate) fn mergeable(&self) -> bool {
        self.compiled.mergeable()
    }

    /// Ends the stage as a part: `take-partial` instead of `fini` when the
    /// component exports `merge`, else `fini`.
    pub(crate) fn end_part(&mut self) -> Result<PartEnd, Aborted> {
        if !self.mergeable() {
            return self.fini().map(PartEnd::Tables);
        }
        if !self.ready(Pace::Live) {
            self.close_report();
            return Ok(PartEnd::Lost(format!(
                "stage `{}` had no live instance to take a partial from",
                self.name
            )));
        }
        let r = self.call(export::TAKE_PARTIAL, self.spec.limits.deadline, |s, i| {
            match i {
                Instance::Legacy(l) => l.take_partial(s),
                _ => None,
            }
            .unwrap_or_else(|| Err(wasmtime::format_err!("the component exports no `merge`")))
        });
        self.health = Health::Finished;
        self.instance = None;
        match r {
            Ok(Ok(bytes)) => Ok(PartEnd::Partial(Partial {
                bytes,
                offered: self.offered,
                taken: self.taken,
            })),
            Ok(Err(msg)) => {
                let why = format!("`take-partial` returned an error: {msg}");
                self.refused(FailureCause::PartialRefused(msg), export::TAKE_PARTIAL);
                Ok(PartEnd::Lost(why))
            }
            Err(failed) => {
                let why = format!("`take-partial` failed: {}", failed.cause);
                self.fail(failed, 0)?;
                self.health = Health::Finished;
                Ok(PartEnd::Lost(why))
            }
        }
    }

    /// Folds `partial` into this instance (`merge-partial`). `Ok(Err(why))`
    /// when nothing was folded: the plugin refused it (reported; the
    /// instance runs on) or the call failed (a failure: the stage's policy
    /// applies). Either way the partial's records count as offered and
    /// missed.
    pub(crate) fn merge_partial(
        &mut self,
        partial: &Partial,
    ) -> Result<Result<(), String>, Aborted> {
        if !self.mergeable() {
            return Ok(Err(format!(
                "stage `{}`'s plugin does not export `merge`",
                self.name
            )));
        }
        if !self.ready(Pace::Caller) {
            return Ok(Err(format!("stage `{}` has no live instance", self.name)));
        }
        let bytes = partial.bytes.as_slice();
        let r = self.call(export::MERGE_PARTIAL, self.spec.limits.deadline, |s, i| {
            match i {
                Instance::Legacy(l) => l.merge_partial(s, bytes),
                _ => None,
            }
            .unwrap_or_else(|| Err(wasmtime::format_err!("the component exports no `merge`")))
        });
        match r {
            Ok(Ok(())) => {
                self.offered += partial.offered;
                self.taken += partial.taken;
                Ok(Ok(()))
            }
            Ok(Err(msg)) => {
                // The plugin said no and its state is intact: the
                // partial's records are missed, the instance runs on.
                let why = format!("`merge-partial` refused a partial: {msg}");
                self.offered += partial.offered;
                self.refused(FailureCause::PartialRefused(msg), export::MERGE_PARTIAL);
                Ok(Err(why))
            }
            Err(failed) => {
                let why = format!("`merge-partial` failed: {}", failed.cause);
                self.offered += partial.offered;
                self.fail(failed, partial.taken)?;
                Ok(Err(why))
            }
        }
    }
}
