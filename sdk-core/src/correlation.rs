//! Correlation ids: internal ids and their ancestry, async references and
//! retirement, and external ids pushed by tools.
//!
//! - **Internal ids** come from one global counter (in the profiler). Each
//!   thread keeps a stack of the traced calls it is inside ([`push_frame`]):
//!   the top of the stack is the `ancestor` of the next call, and the id an
//!   async operation (a kernel launch, an async copy) inherits.
//! - **Retirement.** An id is retired — a CORRELATION_ID_RETIREMENT record —
//!   once nothing refers to it any more: its call has returned and every async
//!   child has completed. Calls without async children (the vast majority)
//!   retire at return without touching any shared state; only ids that gained
//!   a child enter the [`Pending`] table.
//! - **External ids** are per context and per thread ([`ExternalIds`]): a
//!   stack per thread; a thread with an empty stack uses the main thread's
//!   top; no value at all is 0.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::Mutex;

struct Frame {
    id: u64,
    has_children: bool,
}

thread_local! {
    static STACK: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Enters a traced call with internal id `id`; returns its ancestor (0 at top level).
pub(crate) fn push_frame(id: u64) -> u64 {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        let ancestor = s.last().map_or(0, |f| f.id);
        s.push(Frame {
            id,
            has_children: false,
        });
        ancestor
    })
}

/// Leaves the innermost traced call; returns whether it gained async children.
pub(crate) fn pop_frame() -> bool {
    STACK.with(|s| s.borrow_mut().pop().is_some_and(|f| f.has_children))
}

/// The id of the innermost traced call on this thread, if any.
pub(crate) fn current() -> Option<u64> {
    STACK.with(|s| s.borrow().last().map(|f| f.id))
}

/// Marks the innermost call as having an async child; returns its id and
/// whether this is its first child.
pub(crate) fn adopt_child() -> Option<(u64, bool)> {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        let top = s.last_mut()?;
        let first = !top.has_children;
        top.has_children = true;
        Some((top.id, first))
    })
}

/// Outstanding references of ids that have async children.
#[derive(Default)]
pub(crate) struct Pending {
    refs: Mutex<HashMap<u64, u32>>,
}

impl Pending {
    fn refs(&self) -> std::sync::MutexGuard<'_, HashMap<u64, u32>> {
        self.refs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a reference for a new child of `id`. For the first child of a call
    /// that is still running, the call's own reference is added too.
    pub(crate) fn add_child(&self, id: u64, parent_running: bool) {
        *self.refs().entry(id).or_insert(0) += 1 + u32::from(parent_running);
    }

    /// Drops one reference; true when it was the last (retire the id now).
    pub(crate) fn release(&self, id: u64) -> bool {
        let mut refs = self.refs();
        match refs.get_mut(&id) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                refs.remove(&id);
                true
            }
            // Not tracked: nothing else refers to it.
            None => true,
        }
    }

    #[cfg(test)]
    pub(crate) fn outstanding(&self) -> usize {
        self.refs().len()
    }
}

/// External correlation ids of one context.
#[derive(Default)]
pub(crate) struct ExternalIds {
    /// False until the first push: then lookups skip the lock entirely.
    used: AtomicBool,
    stacks: Mutex<HashMap<u64, Vec<u64>>>,
}

impl ExternalIds {
    fn stacks(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Vec<u64>>> {
        self.stacks.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn push(&self, thread: u64, value: u64) {
        self.used.store(true, Release);
        self.stacks().entry(thread).or_default().push(value);
    }

    /// Pops `thread`'s top; an empty stack gives 0.
    pub(crate) fn pop(&self, thread: u64) -> u64 {
        self.stacks()
            .get_mut(&thread)
            .and_then(Vec::pop)
            .unwrap_or(0)
    }

    /// The value for `thread`: its top, else the main thread's top, else 0.
    pub(crate) fn current(&self, thread: u64, main_thread: u64) -> u64 {
        if !self.used.load(Acquire) {
            return 0;
        }
        let stacks = self.stacks();
        let top = |t: u64| stacks.get(&t).and_then(|s| s.last().copied());
        top(thread).or_else(|| top(main_thread)).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_give_ancestors_and_children() {
        assert_eq!(current(), None);
        assert_eq!(push_frame(10), 0);
        assert_eq!(push_frame(11), 10);
        assert_eq!(adopt_child(), Some((11, true)));
        assert_eq!(adopt_child(), Some((11, false)));
        assert!(pop_frame());
        assert_eq!(current(), Some(10));
        assert!(!pop_frame());
        assert_eq!(adopt_child(), None);
    }

    #[test]
    fn pending_releases_after_the_last_reference() {
        let p = Pending::default();
        p.add_child(7, true); // call + child 1
        p.add_child(7, false); // child 2
        assert!(!p.release(7)); // call returns
        assert!(!p.release(7)); // child 1
        assert!(p.release(7)); // child 2: retire
        assert_eq!(p.outstanding(), 0);
        assert!(p.release(8), "an untracked id has no other references");
    }

    #[test]
    fn external_ids_fall_back_to_the_main_thread() {
        let e = ExternalIds::default();
        assert_eq!(e.current(5, 1), 0);
        e.push(1, 100);
        assert_eq!(e.current(5, 1), 100);
        e.push(5, 200);
        e.push(5, 201);
        assert_eq!(e.current(5, 1), 201);
        assert_eq!(e.pop(5), 201);
        assert_eq!(e.pop(5), 200);
        assert_eq!(e.current(5, 1), 100);
        assert_eq!(e.pop(5), 0);
        assert_eq!(e.pop(1), 100);
        assert_eq!(e.current(5, 1), 0);
    }
}
