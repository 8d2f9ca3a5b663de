//! Selection: the engine's one gate for kernel dispatches, the roctx
//! ranges a dispatch can be renamed after, and the gate of every delivery
//! ([`RecordGate`]: rocprofv3's `-P/--collection-period`).
//!
//! rocprofv3's kernel options (`--kernel-include-regex`,
//! `--kernel-exclude-regex`, `--kernel-iteration-range`, `--kernel-rename`)
//! decide per dispatch whether it is recorded at all and under which
//! name. The engine asks a [`DispatchFilter`] (installed once with
//! [`crate::Profiler::set_dispatch_filter`]) when a dispatch completes,
//! *before* writing it to any context's buffer, so every consumer — the
//! sinks, the plugin chain, a plugin's own context — sees the same
//! dispatches. A replayed recording passes through the same filter
//! ([`crate::Profiler::select_dispatches`]).
//!
//! The filter's rules live with whoever installs it (the pipeline); the
//! engine only knows the question. What it keeps for the rename is the
//! innermost roctx range (`roctxRangePushA`/`roctxRangePop`) of each
//! thread, fed by interception through [`push_range`] and [`pop_range`],
//! and read at launch ([`innermost_range`]).
//!
//! A [`RecordGate`] (installed once with
//! [`crate::Profiler::set_record_gate`]) sees every batch a buffer
//! delivers, of every context, before its sink does, and drops the records
//! outside collection by their timestamps; a replay passes each recorded
//! batch through it ([`crate::Profiler::gate_batch`]).
//!
//! [`Regions`] is rocprofv3's `--selected-regions`: once enabled
//! ([`crate::Profiler::enable_selected_regions`]) the engine starts paused,
//! `roctxProfilerResume` opens collection and `roctxProfilerPause` closes it
//! again, for the whole process (as rocprofv3, whatever thread id the
//! application passes). The producer entry points check one relaxed atomic
//! flag on the application thread: while closed, an event some context
//! traces (an API call, a memory allocation, …) is not recorded, only
//! counted; a kernel dispatch or memory copy launched while closed is not
//! recorded either, and counted when it completes (so one count is one
//! record that would have been written by one context). The pause and
//! resume calls themselves (`MARKER_CONTROL_API`) are always recorded, as
//! rocprofv3 writes them, so a trace shows where its regions lie; code
//! objects and kernel symbols are not events and are always tracked.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::batch::{Batch, KernelDispatch};
use crate::symbols::SymbolTable;

/// Decides which kernel dispatches are recorded. See the module docs.
pub trait DispatchFilter: Send + Sync {
    /// One completed dispatch. `region` is the innermost roctx range
    /// enclosing its launch on the launching thread (`None` outside any, or
    /// unknown, as in a replay). The filter may rewrite `kernel_id` (a
    /// renamed kernel, see [`SymbolTable::renamed_kernel`]); `false` drops the
    /// dispatch from every context.
    fn select(
        &self,
        dispatch: &mut KernelDispatch,
        region: Option<&str>,
        symbols: &SymbolTable,
    ) -> bool;

    /// True when the filter reads `region`: only then does the engine keep
    /// each launch's enclosing range.
    fn wants_regions(&self) -> bool;
}

/// Decides which records of every delivery are kept. See the module docs.
pub trait RecordGate: Send + Sync {
    /// Drops from `batch` the records outside collection.
    fn gate(&self, batch: &mut Batch);
}

/// The state of `--selected-regions`. See the module docs.
#[derive(Debug, Default)]
pub struct Regions {
    /// True once `--selected-regions` is on: pause and resume then switch
    /// [`Regions::closed`].
    enabled: AtomicBool,
    /// True while collection is paused (the one flag producers read).
    closed: AtomicBool,
    /// Events not recorded because collection was paused.
    dropped: AtomicU64,
    /// `roctxProfilerResume` calls that opened collection.
    resumed: AtomicU64,
    /// `roctxProfilerPause` calls that closed it.
    paused: AtomicU64,
}

/// What `--selected-regions` did in a run ([`crate::Profiler::regions_report`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegionsReport {
    /// Events not recorded because collection was paused.
    pub dropped: u64,
    /// Regions opened (`roctxProfilerResume` while paused).
    pub resumed: u64,
    /// Regions closed (`roctxProfilerPause` while collecting).
    pub paused: u64,
}

impl Regions {
    /// Turns `--selected-regions` on: collection starts paused.
    pub(crate) fn enable(&self) {
        self.closed.store(true, Relaxed);
        self.enabled.store(true, Relaxed);
    }

    /// True while events are not recorded. One relaxed load: the cost on an
    /// application thread.
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Relaxed)
    }

    /// Counts one event not recorded.
    #[cold]
    pub(crate) fn drop_one(&self) {
        self.dropped.fetch_add(1, Relaxed);
    }

    /// `roctxProfilerResume`/`roctxProfilerPause` (`open`): switches
    /// collection when `--selected-regions` is on; a resume while collecting
    /// or a pause while paused changes nothing (the roctx contract).
    pub(crate) fn switch(&self, open: bool) {
        if !self.enabled.load(Relaxed) {
            return;
        }
        if self.closed.swap(!open, Relaxed) == open {
            let n = if open { &self.resumed } else { &self.paused };
            n.fetch_add(1, Relaxed);
        }
    }

    /// `None` when `--selected-regions` is off.
    pub(crate) fn report(&self) -> Option<RegionsReport> {
        self.enabled.load(Relaxed).then(|| RegionsReport {
            dropped: self.dropped.load(Relaxed),
            resumed: self.resumed.load(Relaxed),
            paused: self.paused.load(Relaxed),
        })
    }
}

thread_local! {
    static RANGES: RefCell<Vec<Arc<str>>> = const { RefCell::new(Vec::new()) };
}

/// `roctxRangePushA(name)` on the calling thread.
pub fn push_range(name: &str) {
    RANGES.with(|r| r.borrow_mut().push(Arc::from(name)));
}

/// `roctxRangePop()` on the calling thread (popping an empty stack is a
/// no-op, as roctx returns an error and changes nothing).
pub fn pop_range() {
    RANGES.with(|r| {
        r.borrow_mut().pop();
    });
}

/// The calling thread's innermost pushed range.
pub fn innermost_range() -> Option<Arc<str>> {
    RANGES.with(|r| r.borrow().last().cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_start_paused_and_count_only_real_switches() {
        let r = Regions::default();
        r.switch(true);
        assert!(
            !r.is_closed() && r.report().is_none(),
            "off: nothing changes"
        );
        r.enable();
        assert!(r.is_closed());
        r.switch(false);
        r.switch(true);
        r.switch(true);
        assert!(!r.is_closed());
        r.drop_one();
        r.switch(false);
        assert!(r.is_closed());
        assert_eq!(
            r.report(),
            Some(RegionsReport {
                dropped: 1,
                resumed: 1,
                paused: 1
            })
        );
    }

    #[test]
    fn ranges_nest_per_thread() {
        assert_eq!(innermost_range(), None);
        push_range("outer");
        push_range("inner");
        assert_eq!(innermost_range().as_deref(), Some("inner"));
        std::thread::spawn(|| assert_eq!(innermost_range(), None))
            .join()
            .unwrap();
        pop_range();
        assert_eq!(innermost_range().as_deref(), Some("outer"));
        pop_range();
        pop_range();
        assert_eq!(innermost_range(), None);
    }
}
