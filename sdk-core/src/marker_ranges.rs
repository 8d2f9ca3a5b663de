//! The open marker ranges the engine keeps (`crate::Profiler`'s
//! `marker_*` methods): each thread's `roctxRangePushA` stack, and the
//! process's `roctxRangeStartA` ranges by roctx's range id.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;

/// A range begun and not ended yet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenRange {
    /// The interned message (the record's operation).
    pub(crate) message: u32,
    /// The correlation id drawn when it began.
    pub(crate) correlation_id: u64,
    /// The thread that began it.
    pub(crate) thread_id: u64,
    /// When it began.
    pub(crate) start: u64,
}

/// The process-wide ranges (`roctxRangeStartA`), by roctx's range id.
#[derive(Debug, Default)]
pub(crate) struct ProcessRanges(pub(crate) Mutex<HashMap<u64, OpenRange>>);

thread_local! {
    /// The calling thread's open `roctxRangePushA` ranges, one place per
    /// push (`None`: pushed while markers were not traced).
    pub(crate) static THREAD_RANGES: RefCell<Vec<Option<OpenRange>>> = const { RefCell::new(Vec::new()) };
}
