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

use std::cell::RefCell;
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
