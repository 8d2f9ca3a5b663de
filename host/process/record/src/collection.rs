//! [`CollectionGate`]: rocprofv3's `-P/--collection-period` applied to a
//! run.
//!
//! The plan's [`CollectionPlan`] becomes the engine's
//! [`rocwasm_core::RecordGate`], set before the first record: every
//! delivery of every buffer (the sinks', the chain's, a plugin's own) keeps
//! only the records whose start and end lie inside one collection window,
//! measured from the run's start (a live run's session start; a replay's
//! recorded start; a recording that does not say when it started, as
//! rocprofv3's CSV files, counts from the earliest timestamp of the first
//! batch read). A replay passes each recorded batch through the same
//! gate ([`rocwasm_core::Profiler::gate_batch`]). What was dropped is
//! counted and reported at the end ([`CollectionGate::report`]).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use rocwasm_core::{Batch, Profiler, RecordGate, RegionsReport};
use rocwasm_plan::{CollectionPlan, KernelOptionError, Windows};

/// The record gate of one run. See the module documentation.
pub struct CollectionGate {
    plan: CollectionPlan,
    /// The windows, once the run's start is known.
    windows: OnceLock<Windows>,
    /// The windows counted from 0, for a start learnt from the first batch.
    unplaced: Windows,
    seen: AtomicU64,
    dropped: AtomicU64,
}

impl CollectionGate {
    /// Applies `plan` to `profiler` for a run that started at `origin`
    /// (ns; 0: unknown, learnt from the first batch): its gate when a period is set (returned, for the report).
    /// Fails on a bad value, naming the option and value.
    pub fn install(
        plan: &CollectionPlan,
        origin: u64,
        profiler: &Profiler,
    ) -> Result<Option<Arc<CollectionGate>>, KernelOptionError> {
        let Some(unplaced) = plan.windows(0)? else {
            return Ok(None);
        };
        let windows = OnceLock::new();
        if origin != 0 {
            let _ = windows.set(unplaced.with_origin(origin));
        }
        let gate = Arc::new(CollectionGate {
            plan: plan.clone(),
            windows,
            unplaced,
            seen: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        });
        // A fresh engine has no gate yet: this cannot be refused.
        let _ = profiler.set_record_gate(gate.clone());
        Ok(Some(gate))
    }

    /// One line for the run's summary: what was kept and what was dropped.
    pub fn report(&self) -> String {
        let (seen, dropped) = (self.seen.load(Relaxed), self.dropped.load(Relaxed));
        let mut line = format!(
            "collection period kept {} of {seen} record(s)",
            seen - dropped
        );
        if dropped > 0 {
            line.push_str(&format!(
                "; dropped {dropped} outside {} `{}`",
                CollectionPlan::PERIOD,
                self.plan.period.as_deref().unwrap_or_default()
            ));
            if let Some(unit) = &self.plan.period_unit {
                line.push_str(&format!(" ({} {unit})", CollectionPlan::UNIT));
            }
        }
        line
    }
}

impl RecordGate for CollectionGate {
    fn gate(&self, batch: &mut Batch) {
        if batch.is_empty() {
            return;
        }
        self.seen.fetch_add(batch.len() as u64, Relaxed);
        let windows = self
            .windows
            .get_or_init(|| self.unplaced.with_origin(batch.earliest().unwrap_or(0)));
        let dropped = batch.retain_spans(|start, end| windows.contains(start, end));
        self.dropped.fetch_add(dropped, Relaxed);
    }
}

/// One line for the run's summary about `--selected-regions`: the regions
/// recorded and what was dropped outside them.
pub fn regions_report(r: &RegionsReport) -> String {
    let mut line = format!(
        "--selected-regions recorded {} region(s) between roctxProfilerResume and roctxProfilerPause; dropped {} event(s) outside them",
        r.resumed, r.dropped
    );
    if r.resumed == 0 {
        line.push_str(" (the application never called roctxProfilerResume: nothing but the pause/resume calls was recorded)");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::KernelDispatch;

    #[test]
    fn keeps_records_inside_the_windows_and_reports_the_rest() {
        let p = Profiler::new();
        let plan = CollectionPlan {
            period: Some("10:10:1".into()),
            period_unit: Some("nsec".into()),
            ..Default::default()
        };
        let gate = CollectionGate::install(&plan, 1000, &p).unwrap().unwrap();
        let mut b = Batch::default();
        for (start, end) in [(1005, 1006), (1010, 1015), (1015, 1021), (1019, 1020)] {
            b.kernel_dispatches.push(KernelDispatch {
                start,
                end,
                ..KernelDispatch::default()
            });
        }
        p.gate_batch(&mut b);
        assert_eq!(b.kernel_dispatches.start, [1010, 1019]);
        assert_eq!(
            gate.report(),
            "collection period kept 2 of 4 record(s); dropped 2 outside \
             --collection-period `10:10:1` (--collection-period-unit nsec)"
        );
        assert!(CollectionGate::install(&CollectionPlan::default(), 0, &p)
            .unwrap()
            .is_none());
    }
}
