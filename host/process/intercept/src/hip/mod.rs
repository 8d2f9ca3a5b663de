//! HIP interposition by `LD_PRELOAD`.
//!
//! Every `hip*`/`__hip*` function Debian's ROCm 5.2 `libamdhip64.so.5` exports
//! (399) has an exported twin here, generated from the real headers by
//! `cargo xtask gen-intercept` into `generated.rs` (see `xtask/src/intercept.rs`
//! for how signatures are derived and why the file is checked in). An
//! unversioned definition in a preloaded library satisfies the application's
//! versioned references (`hipMalloc@hip_4.2`), so every call the program makes
//! lands here first and is forwarded to the next definition.
//!
//! On ROCm ≥ 6.1 the same generated signatures also wrap the runtime's
//! dispatch-table slots (`by_table`, installed by `crate::register`), and a
//! function whose slot is wrapped is traced there instead.
//!
//! No HIP function is variadic, so every wrapper is an ordinary typed
//! function; there are no raw trampolines.

#[macro_use]
mod interpose;
pub mod kernels;
/// The slot order of HIP's dispatch tables (in `rocwasm-ids`).
pub use rocwasm_ids::hip_table as table_slots;
pub mod types;

#[allow(unused_imports)]
use std::ffi::{c_char, c_void};

// The generated list calls `hip_interposers!`, which expands to the wrappers.
include!("generated.rs");

/// Set once HIP's RUNTIME_INITIALIZATION was recorded.
static HIP_ANNOUNCED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Called by every traced HIP runtime call: the first one made while a
/// session is live records HIP's RUNTIME_INITIALIZATION (the SDK records it
/// when it wraps HIP's dispatch table, before the program's first HIP
/// call), so a tool hears that HIP is up before it sees a HIP runtime
/// record. Not from compiler calls (`__hipRegisterFunction`, …): they run
/// during the program's static initialisation, and the version query
/// initialises the runtime.
#[inline]
pub fn runtime_up() {
    if !HIP_ANNOUNCED.load(std::sync::atomic::Ordering::Relaxed) {
        announce();
    }
}

#[cold]
fn announce() {
    let Some(s) = crate::session::active() else {
        return;
    };
    if HIP_ANNOUNCED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return;
    }
    s.runtime_initialized(rocwasm_core::RuntimeLibrary::Hip, runtime_version());
}

/// HIP's version as the SDK reports runtimes' (10000·major + 100·minor +
/// patch), from the runtime's own `hipRuntimeGetVersion` (`HIP_VERSION`:
/// 10⁷·major + 10⁵·minor + patch), called untraced; 0 if it cannot say.
fn runtime_version() -> u64 {
    static NEXT: crate::next_symbol::NextFn =
        crate::next_symbol::NextFn::new(c"hipRuntimeGetVersion");
    // The runtime's own function: its table slot's original when the slot
    // is wrapped (its export would come back through the wrapper), else the
    // next definition of the symbol.
    let saved = by_table::hipRuntimeGetVersion::ORIGINAL.load(std::sync::atomic::Ordering::Acquire);
    let f = if saved.is_null() { NEXT.get() } else { saved };
    if f.is_null() {
        return 0;
    }
    // SAFETY: `f` is the runtime's `hipError_t hipRuntimeGetVersion(int*)`.
    let get: unsafe extern "C" fn(*mut i32) -> i32 = unsafe { std::mem::transmute(f) };
    let mut v = 0i32;
    // SAFETY: `v` is a writable int for the call.
    if unsafe { get(&mut v) } != 0 || v <= 0 {
        return 0;
    }
    let v = v as u64;
    let (major, minor, patch) = (v / 10_000_000, v / 100_000 % 100, v % 100_000);
    10_000 * major + 100 * minor + patch
}
