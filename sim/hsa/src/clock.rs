//! The virtual clock: one timeline per queue (and one for the copy engine).
//!
//! A timeline is a cursor in ticks (virtual nanoseconds). Scheduling work of
//! duration `d` that may not start before `earliest` gives
//! `start = max(cursor, earliest)`, `end = start + d`, and moves the cursor
//! to `end`. Each queue has its own timeline, so times depend only on the
//! order of packets within the queue and on the (equally deterministic)
//! times of the signals a barrier waits for — not on thread scheduling.
//! With `[clock] follow_host = true`, `start` is also at least the host's
//! current tick.

use std::sync::Mutex;

pub struct Timeline {
    cursor: Mutex<u64>,
}

impl Timeline {
    pub fn new(start: u64) -> Self {
        Self {
            cursor: Mutex::new(start),
        }
    }

    /// Reserves `[start, end)` for work of `duration` ticks.
    pub fn schedule(&self, earliest: u64, duration: u64) -> (u64, u64) {
        let rt = crate::runtime::get();
        let host = if rt.scenario.clock.follow_host {
            rt.now_ticks()
        } else {
            0
        };
        let mut cursor = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        let start = (*cursor).max(earliest).max(host);
        let end = start.saturating_add(duration);
        *cursor = end;
        (start, end)
    }
}
