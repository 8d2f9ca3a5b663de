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
//! `roctxProfilerPause(tid)` / `roctxProfilerResume(tid)` (MARKER_CONTROL_API)
//! pause and resume the engine's collection when the run asks for
//! `--selected-regions` (`rocwasm_core::selection`), for the whole process
//! whatever `tid` says, as rocprofv3; the calls themselves are always
//! recorded, so the trace shows where the regions lie.

use std::ffi::{c_char, CStr};

use rocwasm_core::{selection, BufferTracingKind};

use crate::next_symbol::NextFn;
use crate::tracer::{api_call, ApiOp};

macro_rules! roctx {
    ($($kind:ident $name:ident($($arg:ident: $ty:ty = $cty:literal),*) -> $ret:ty = $missing:expr $(=> $hook:expr)?;)*) => {$(
        #[doc = concat!(
            "Interposer for roctx's `", stringify!($name), "`: traced as a `", stringify!($kind),
            "` call, then forwarded to the next definition; without one, returns `",
            stringify!($missing), "`."
        )]
        #[no_mangle]
        #[allow(non_snake_case, clippy::missing_safety_doc, clippy::unused_unit)]
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
            $($hook;)?
            // SAFETY: the next definition of this roctx function, same C signature.
            let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(next) };
            api_call(&OP, &|_a: &mut crate::call_arguments::ArgList| { $(_a.push(stringify!($arg), $cty, &$arg);)* }, || {
                // SAFETY: the caller's arguments, passed on unchanged.
                unsafe { real($($arg),*) }
            })
        }
    )*};
}

roctx! {
    MarkerCoreApi roctxMarkA(message: *const c_char = "const char *") -> () = ();
    MarkerCoreApi roctxRangePushA(message: *const c_char = "const char *") -> i32 = -1 => push_range(message);
    MarkerCoreApi roctxRangePop() -> i32 = -1 => selection::pop_range();
    MarkerCoreApi roctxRangeStartA(message: *const c_char = "const char *") -> u64 = 0;
    MarkerCoreApi roctxRangeStop(id: u64 = "roctx_range_id_t") -> () = ();
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

/// `roctxRangePushA(message)`: the message onto the thread's range stack
/// (a null message pushes an empty name, so pops stay paired).
fn push_range(message: *const c_char) {
    let name = if message.is_null() {
        String::new()
    } else {
        // SAFETY: roctx's contract: `message` is a NUL-terminated string,
        // valid for the duration of the call.
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    selection::push_range(&name);
}
