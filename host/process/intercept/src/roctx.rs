//! roctx markers by `LD_PRELOAD` interposition.
//!
//! Legacy `libroctx64.so.4` (version node ROCTX_4.1) and ROCm ≥ 6.2's
//! `librocprofiler-sdk-roctx.so.1` export the same five names, so
//! interposing them works with both. Each call is a MARKER_CORE_API record;
//! callback subscribers get the message as an argument, which is how a
//! plugin (the correlation tagger) follows ranges. Push and pop also keep
//! the thread's range stack in the engine (`rocwasm_core::selection`), the
//! names `--kernel-rename` gives dispatches.
//!
//! What the application marked, as rocprofv3's `--marker-trace` records it
//! (`MARKER_CORE_RANGE_API`: a mark, a push…pop range of a thread, a
//! start…stop range of the process, named by the message), is the
//! engine's (`Profiler::marker_*`); when no context records that kind it
//! costs one relaxed load.
//!
//! `roctxProfilerPause(tid)` / `roctxProfilerResume(tid)` (MARKER_CONTROL_API)
//! pause and resume the engine's collection when the run asks for
//! `--selected-regions` (`rocwasm_core::selection`), for the whole process
//! whatever `tid` says, as rocprofv3; the calls themselves are always
//! recorded, so the trace shows where the regions lie.

use std::ffi::{c_char, CStr};

use rocwasm_core::{selection, BufferTracingKind, Domain};

use crate::next_symbol::NextFn;
use crate::tracer::{api_call, ApiOp};

macro_rules! roctx {
    ($($kind:ident $name:ident($($arg:ident: $ty:ty = $cty:literal),*) -> $ret:ty = $missing:expr $(=> $hook:stmt)? $(, then $after:expr)?;)*) => {$(
        #[doc = concat!(
            "Interposer for roctx's `", stringify!($name), "`: traced as a `", stringify!($kind),
            "` call, then forwarded to the next definition; without one, returns `",
            stringify!($missing), "`."
        )]
        #[no_mangle]
        #[allow(non_snake_case, clippy::missing_safety_doc, clippy::unused_unit, redundant_semicolons)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            static NEXT: NextFn = NextFn::new(match CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                Ok(c) => c,
                Err(_) => panic!("symbol names have no NUL"),
            });
            static OP: ApiOp = ApiOp::new(BufferTracingKind::$kind, stringify!($name));
            let next = NEXT.get();
            if next.is_null() {
                return $missing;
            }
            // SAFETY: the next definition of this roctx function, same C signature.
            let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(next) };
            // The hooks run inside the traced call: a marker record takes
            // the call's correlation id when the call itself is traced.
            api_call(&OP, &|_a: &mut crate::call_arguments::ArgList| { $(_a.push(stringify!($arg), $cty, &$arg);)* }, || {
                $($hook;)?
                // SAFETY: the caller's arguments, passed on unchanged.
                let ret = unsafe { real($($arg),*) };
                $(($after)(ret);)?
                ret
            })
        }
    )*};
}

roctx! {
    MarkerCoreApi roctxMarkA(message: *const c_char = "const char *") -> () = () => mark(message);
    MarkerCoreApi roctxRangePushA(message: *const c_char = "const char *") -> i32 = -1 => push_range(message);
    MarkerCoreApi roctxRangePop() -> i32 = -1 => pop_range();
    MarkerCoreApi roctxRangeStartA(message: *const c_char = "const char *") -> u64 = 0
        => let start = markers().map(|_| rocwasm_core::clock::now()), then |id| start_range(message, id, start);
    MarkerCoreApi roctxRangeStop(id: u64 = "roctx_range_id_t") -> () = () => stop_range(id);
    MarkerControlApi roctxProfilerPause(tid: u64 = "roctx_thread_id_t") -> i32 = -1 => collect(false);
    MarkerControlApi roctxProfilerResume(tid: u64 = "roctx_thread_id_t") -> i32 = -1 => collect(true);
}

/// `roctxProfilerResume` (`true`) / `roctxProfilerPause` (`false`): one
/// relaxed store in the engine, and only with `--selected-regions`.
fn collect(on: bool) {
    if let Some(s) = crate::session::active() {
        s.set_collecting(on);
    }
}

/// The engine when some context records markers as rocprofv3 does
/// (`MARKER_CORE_RANGE_API`): one relaxed load otherwise.
fn markers() -> Option<&'static rocwasm_core::Profiler> {
    crate::session::active()
        .map(|s| s.profiler())
        .filter(|p| p.is_tracing(Domain::MarkerCoreRangeApi))
}

/// The text of a roctx message, borrowed for the duration of the call (a
/// null message is an empty text, so pops stay paired).
fn text<'call>(message: *const c_char) -> std::borrow::Cow<'call, str> {
    if message.is_null() {
        return "".into();
    }
    // SAFETY: roctx's contract: `message` is a NUL-terminated string, valid
    // for the duration of the call; every caller below uses the text only
    // inside the interposed call (the engine copies what it keeps).
    let s = unsafe { CStr::from_ptr(message) };
    s.to_string_lossy()
}

/// `roctxMarkA(message)`: a mark.
fn mark(message: *const c_char) {
    if let Some(p) = markers() {
        p.marker_mark(&text(message));
    }
}

/// `roctxRangePushA(message)`: the message onto the thread's range stack
/// (`--kernel-rename`) and the engine's open thread ranges (a place on
/// that stack even untraced, so every pop closes its own push).
fn push_range(message: *const c_char) {
    let name = text(message);
    selection::push_range(&name);
    if let Some(s) = crate::session::active() {
        s.profiler().marker_push(&name);
    }
}

/// `roctxRangePop()`: the thread's innermost range ends.
fn pop_range() {
    selection::pop_range();
    if let Some(s) = crate::session::active() {
        s.profiler().marker_pop();
    }
}

/// `roctxRangeStartA(message)` returned range `id`; it began at `start`,
/// taken when markers were traced.
fn start_range(message: *const c_char, id: u64, start: Option<u64>) {
    if let (Some(p), Some(start)) = (markers(), start) {
        p.marker_start(&text(message), id, start);
    }
}

/// `roctxRangeStop(id)`: that process range ends.
fn stop_range(id: u64) {
    if let Some(p) = crate::session::active() {
        p.profiler().marker_stop(id);
    }
}
