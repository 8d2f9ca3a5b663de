//! Correlation ids: internal ids and their ancestry, async references and
//! retirement, and external ids pushed by tools.
//!
//! - **Internal ids** come from one counter per profiler ([`IdSource`]), one
//!   atomic add per id, as the SDK hands them out: ids are unique and dense
//!   (1, 2, 3, … across every thread, with no gaps), and the ids of one
//!   thread increase in call order. AMD's own validators require the dense
//!   range; threads drawing blocks of ids instead (what rocwasm did before)
//!   left gaps at every thread's last block. An id is drawn only for an
//!   event some context traces.
//! - Each thread keeps a stack of the traced calls it is inside ([`enter`]):
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
//!
//! Everything per thread sits in one thread-local without a destructor,
//! reached once on entering a call and once on leaving it (in a shared
//! library every thread-local access is a call into the dynamic loader's TLS
//! lookup, and one with a destructor adds a registration check).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Mutex;

use crate::buffer::chunks::{self, NO_SLOT};

/// The internal-id counter of one profiler.
pub(crate) struct IdSource {
    next: AtomicU64,
}

impl IdSource {
    pub(crate) fn new() -> IdSource {
        IdSource {
            next: AtomicU64::new(1),
        }
    }

    /// The next id: 1, 2, 3, … in the order threads ask.
    #[inline]
    fn draw(&self) -> u64 {
        self.next.fetch_add(1, Relaxed)
    }
}

#[derive(Clone, Copy)]
struct Frame {
    id: u64,
    has_children: bool,
}

/// Frames a thread keeps; calls nested deeper than this (never seen in
/// practice: HIP over HSA is three deep) are traced, but async work started
/// inside them is attributed to the deepest kept frame.
const MAX_DEPTH: usize = 32;

/// Where the thread is in its life (see [`ThreadState::usable`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Liveness {
    New,
    Live,
    /// The thread's thread-local destructors have run.
    Dead,
}

/// A thread's correlation state. It has no destructor, so it stays readable
/// while the thread's thread-locals are destroyed, and in a shared library
/// reaching it costs one TLS lookup with no registration check. Its fields
/// are cells, not one `RefCell`: a traced call keeps `&ThreadState` across
/// the call it wraps (see [`with_thread`]) while calls nested inside it
/// (HIP over HSA) use the same state.
pub(crate) struct ThreadState {
    liveness: Cell<Liveness>,
    /// `gettid()`, 0 until first needed.
    tid: Cell<u64>,
    /// Traced calls this thread is inside; the first [`MAX_DEPTH`] are kept.
    depth: Cell<usize>,
    frames: [Cell<Frame>; MAX_DEPTH],
    /// The thread's chunk slot index in every buffer (`buffer::chunks`),
    /// claimed when the thread becomes live and released at its teardown.
    slot: Cell<u32>,
}

impl ThreadState {
    /// False once the thread's thread-local destructors have run: a call
    /// then (from an `atexit` handler — glibc runs them after the exiting
    /// thread's TLS destructors — such as HIP's `__hip_module_dtor`) is not
    /// traced, because tool code on the way (plugin stages, sinks) may keep
    /// per-thread state of its own that is gone.
    #[inline]
    fn usable(&self) -> bool {
        match self.liveness.get() {
            Liveness::Live => true,
            Liveness::Dead => false,
            Liveness::New => self.first_use(),
        }
    }

    #[cold]
    fn first_use(&self) -> bool {
        // Registered on the thread's first traced call, before any
        // thread-local of the tool's code on the way is first used:
        // destructors run in reverse order, so this one runs last.
        let ok = TEARDOWN.try_with(|_| ()).is_ok();
        self.liveness
            .set(if ok { Liveness::Live } else { Liveness::Dead });
        if ok {
            self.slot.set(chunks::claim());
        }
        ok
    }

    #[inline]
    fn tid(&self) -> u64 {
        match self.tid.get() {
            0 => {
                let tid = crate::clock::thread_id();
                self.tid.set(tid);
                tid
            }
            tid => tid,
        }
    }

    /// The innermost kept frame.
    #[inline]
    fn top(&self) -> Option<&Cell<Frame>> {
        let kept = self.depth.get().min(MAX_DEPTH);
        kept.checked_sub(1).map(|i| &self.frames[i])
    }

    /// Enters a traced call with a new id from `ids`; `None` once the
    /// thread's thread-locals have been destroyed (see
    /// [`ThreadState::usable`]): the caller then makes the call untraced and
    /// must not call [`ThreadState::leave`].
    #[inline]
    pub(crate) fn enter(&self, ids: &IdSource) -> Option<Entered> {
        if !self.usable() {
            return None;
        }
        let id = ids.draw();
        let ancestor = self.top().map_or(0, |f| f.get().id);
        let depth = self.depth.get();
        if let Some(frame) = self.frames.get(depth) {
            frame.set(Frame {
                id,
                has_children: false,
            });
        }
        self.depth.set(depth + 1);
        Some(Entered {
            tid: self.tid(),
            id,
            ancestor,
            slot: self.slot.get(),
        })
    }

    /// Leaves the innermost traced call; returns whether it gained async
    /// children.
    #[inline]
    pub(crate) fn leave(&self) -> bool {
        let depth = self.depth.get().saturating_sub(1);
        self.depth.set(depth);
        self.frames.get(depth).is_some_and(|f| f.get().has_children)
    }
}

/// Marks the thread dead when its thread-local destructors run.
struct TeardownGuard;

impl Drop for TeardownGuard {
    fn drop(&mut self) {
        // THREAD has no destructor: still there.
        THREAD.with(|t| {
            t.liveness.set(Liveness::Dead);
            chunks::release(t.slot.replace(NO_SLOT));
        });
    }
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState {
            liveness: Cell::new(Liveness::New),
            tid: Cell::new(0),
            depth: Cell::new(0),
            frames: [const { Cell::new(Frame { id: 0, has_children: false }) }; MAX_DEPTH],
            slot: Cell::new(NO_SLOT),
        }
    };
    static TEARDOWN: TeardownGuard = const { TeardownGuard };
}

/// A traced call on this thread, as [`enter`] returns it.
pub(crate) struct Entered {
    pub tid: u64,
    pub id: u64,
    /// The enclosing traced call's id; 0 at top level.
    pub ancestor: u64,
    /// The thread's chunk slot (see [`producer_slot`]).
    pub slot: u32,
}

/// Runs `f` with the calling thread's state: one thread-local lookup for
/// everything a traced call does on entry and exit.
#[inline(always)]
pub(crate) fn with_thread<R>(f: impl FnOnce(&ThreadState) -> R) -> R {
    THREAD.with(f)
}

/// [`ThreadState::enter`] on the calling thread.
#[inline]
pub(crate) fn enter(ids: &IdSource) -> Option<Entered> {
    THREAD.with(|t| t.enter(ids))
}

/// [`ThreadState::leave`] on the calling thread.
#[inline]
pub(crate) fn leave() -> bool {
    THREAD.with(|t| t.leave())
}

/// The calling thread's chunk slot index for buffer pushes
/// (`buffer::chunks`); `NO_SLOT` past the thread's teardown.
pub(crate) fn producer_slot() -> u32 {
    THREAD.with(|t| if t.usable() { t.slot.get() } else { NO_SLOT })
}

/// A new id from `ids` for an event outside any call (an async operation
/// started where nothing is traced).
pub(crate) fn new_id(ids: &IdSource) -> u64 {
    ids.draw()
}

/// The id of the innermost traced call on this thread, if any.
pub(crate) fn current() -> Option<u64> {
    THREAD.with(|t| t.top().map(|f| f.get().id))
}

/// The innermost call an async child adopts: its id, whether this is its
/// first child, and its own ancestor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Adopted {
    pub id: u64,
    pub first: bool,
    pub ancestor: u64,
}

/// Marks the innermost call as having an async child and returns it.
pub(crate) fn adopt_child() -> Option<Adopted> {
    THREAD.with(|t| {
        let kept = t.depth.get().min(MAX_DEPTH);
        let top = t.top()?;
        let frame = top.get();
        top.set(Frame {
            has_children: true,
            ..frame
        });
        let ancestor = kept
            .checked_sub(2)
            .map_or(0, |below| t.frames[below].get().id);
        Some(Adopted {
            id: frame.id,
            first: !frame.has_children,
            ancestor,
        })
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
    /// Inline: every traced call asks, and most tools never push an id.
    #[inline]
    pub(crate) fn current(&self, thread: u64, main_thread: u64) -> u64 {
        if !self.used.load(Acquire) {
            return 0;
        }
        self.pushed(thread, main_thread)
    }

    #[cold]
    fn pushed(&self, thread: u64, main_thread: u64) -> u64 {
        let stacks = self.stacks();
        let top = |t: u64| stacks.get(&t).and_then(|s| s.last().copied());
        top(thread).or_else(|| top(main_thread)).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn frames_give_ancestors_and_children() {
        let ids = IdSource::new();
        assert_eq!(current(), None);
        let outer = enter(&ids).unwrap();
        assert_eq!((outer.id, outer.ancestor), (1, 0));
        assert_eq!(outer.tid, crate::clock::thread_id());
        let inner = enter(&ids).unwrap();
        assert_eq!((inner.id, inner.ancestor), (2, 1));
        let adopted = |id, first, ancestor| {
            Some(Adopted {
                id,
                first,
                ancestor,
            })
        };
        assert_eq!(adopt_child(), adopted(2, true, 1));
        assert_eq!(adopt_child(), adopted(2, false, 1));
        assert!(leave());
        assert_eq!(current(), Some(1));
        assert!(!leave());
        assert_eq!(adopt_child(), None);
    }

    #[test]
    fn calls_nested_deeper_than_kept_still_pair_up() {
        let ids = IdSource::new();
        let outer: Vec<_> = (0..MAX_DEPTH + 5).map(|_| enter(&ids).unwrap()).collect();
        // Async work deep inside goes to the deepest kept frame.
        assert_eq!(
            adopt_child(),
            Some(Adopted {
                id: outer[MAX_DEPTH - 1].id,
                first: true,
                ancestor: outer[MAX_DEPTH - 2].id,
            })
        );
        for _ in 0..5 {
            assert!(!leave());
        }
        assert!(leave(), "the deepest kept frame gained the child");
        for _ in 1..MAX_DEPTH {
            assert!(!leave());
        }
        assert_eq!(current(), None);
    }

    #[test]
    fn a_thread_in_teardown_is_not_traced() {
        struct LateCall(std::sync::Arc<IdSource>, std::sync::mpsc::Sender<bool>);
        impl Drop for LateCall {
            fn drop(&mut self) {
                let _ = self.1.send(enter(&self.0).is_some());
            }
        }
        thread_local! {
            static LATE: RefCell<Option<LateCall>> = const { RefCell::new(None) };
        }
        let ids = std::sync::Arc::new(IdSource::new());
        let (tx, rx) = std::sync::mpsc::channel();
        let ids2 = ids.clone();
        std::thread::spawn(move || {
            // Registered before the first traced call: destroyed after the
            // teardown guard, like an `atexit` handler after TLS destruction.
            LATE.with(|l| *l.borrow_mut() = Some(LateCall(ids2.clone(), tx)));
            let e = enter(&ids2).expect("a live thread traces");
            assert!(e.id >= 1);
            assert!(!leave());
        })
        .join()
        .unwrap();
        assert!(
            !rx.recv().unwrap(),
            "no tracing after the thread's teardown"
        );
    }

    #[test]
    fn ids_are_dense_unique_across_threads_and_increase_per_thread() {
        let ids = std::sync::Arc::new(IdSource::new());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let ids = ids.clone();
                std::thread::spawn(move || (0..1000).map(|_| new_id(&ids)).collect::<Vec<_>>())
            })
            .collect();
        let mut all = Vec::new();
        for t in threads {
            let mine = t.join().unwrap();
            assert!(mine.windows(2).all(|w| w[0] < w[1]), "per-thread order");
            all.extend(mine);
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "unique");
        assert_eq!(all, (1..=n as u64).collect::<Vec<_>>(), "dense: 1..=N");
        // A second profiler's ids start over.
        let other = IdSource::new();
        assert_eq!(new_id(&other), 1);
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
