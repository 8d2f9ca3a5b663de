//! Dispatch tables the way ROCm ≥ 6.1's `libamdhip64` has them, opt in.
//!
//! A 6.x runtime's exported HIP functions call through two tables — the
//! compiler table and the runtime table, `{size, function pointers}` in the
//! slot order of clr's `hip_api_trace.hpp` — and rocprofiler-register hands
//! both to a tool's `rocprofiler_set_api_table` before they are used, so the
//! tool can replace slots. This library's exports always jump through such
//! tables (`build.rs` generates them in the 6.2 layout: 9 compiler slots,
//! 452 runtime slots), holding the implementations.
//!
//! With `ROCWASM_SIM_HIP_TABLES=1` the library also registers them, when it
//! is loaded, the way rocprofiler-register passes them on: only if a tool is
//! present — a visible `rocprofiler_configure`, or `ROCP_TOOL_LIBRARIES` or
//! `ROCPROFILER_REGISTER_LIBRARY` set, unless `ROCPROFILER_REGISTER_FORCE_LOAD`
//! says otherwise — to the `rocprofiler_set_api_table` among the loaded
//! objects (a preloaded tool defines it), with `"hip_compiler"` and `"hip"`.
//! Otherwise nobody sees the tables and the library behaves as the 5.2 one.

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_void, CStr};

/// `{size, slots…}`: the first word is the table's size in bytes (covering
/// itself), the rest function addresses; a tool may rewrite slots while the
/// library registers them.
#[repr(C)]
pub(crate) struct Table<const N: usize>(UnsafeCell<[*const (); N]>);

// SAFETY: slots are written only during registration (the library's
// constructor, before any other thread can call into HIP) and read by the
// exported thunks afterwards.
unsafe impl<const N: usize> Sync for Table<N> {}

impl<const N: usize> Table<N> {
    pub(crate) const fn new(words: [*const (); N]) -> Self {
        Table(UnsafeCell::new(words))
    }

    fn as_ptr(&self) -> *mut c_void {
        self.0.get() as *mut c_void
    }
}

/// What a slot of a function this 5.2-era library does not export holds.
pub(crate) extern "C" fn not_in_this_runtime() -> crate::error::hipError_t {
    crate::error::unsupported("a ROCm 6.x-only function")
}

type SetApiTable = unsafe extern "C" fn(*const c_char, u64, u64, *mut *mut c_void, u64) -> i32;

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// The version rocprofiler-register passes for HIP 6.2.0 (major·10000 + minor·100 + patch).
const HIP_VERSION: u64 = 60200;

/// rocprofiler-register's test for "a tool is present".
fn tool_present() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let default = set("ROCP_TOOL_LIBRARIES") || set("ROCPROFILER_REGISTER_LIBRARY");
    let forced = match std::env::var("ROCPROFILER_REGISTER_FORCE_LOAD").as_deref() {
        Ok("1" | "on" | "ON" | "true" | "TRUE" | "yes" | "YES") => true,
        Ok("0" | "off" | "OFF" | "false" | "FALSE" | "no" | "NO") => false,
        _ => default,
    };
    // SAFETY: RTLD_DEFAULT (null) searches every loaded object; the name is
    // NUL-terminated.
    let configure = unsafe { dlsym(std::ptr::null_mut(), c"rocprofiler_configure".as_ptr()) };
    forced || !configure.is_null()
}

extern "C" fn register_tables() {
    if std::env::var("ROCWASM_SIM_HIP_TABLES").as_deref() != Ok("1") || !tool_present() {
        return;
    }
    let name = c"rocprofiler_set_api_table";
    // SAFETY: RTLD_DEFAULT (null) searches every loaded object; the name is
    // NUL-terminated.
    let found = unsafe { dlsym(std::ptr::null_mut(), name.as_ptr()) };
    if found.is_null() {
        return;
    }
    // SAFETY: the symbol is rocprofiler-register's tool entry point, whose C
    // signature `SetApiTable` restates.
    let set: SetApiTable = unsafe { std::mem::transmute(found) };
    let tables: [(&CStr, *mut c_void); 2] = [
        (c"hip_compiler", crate::stubs::COMPILER_TABLE.as_ptr()),
        (c"hip", crate::stubs::RUNTIME_TABLE.as_ptr()),
    ];
    for (library, table) in tables {
        let mut list = [table];
        // SAFETY: one live table of the named library, as the entry point expects.
        unsafe { set(library.as_ptr(), HIP_VERSION, 0, list.as_mut_ptr(), 1) };
    }
}

/// Runs [`register_tables`] when the library is loaded (after relocation,
/// before the program's constructors register its kernels).
#[used]
#[link_section = ".init_array"]
static REGISTER_AT_LOAD: extern "C" fn() = register_tables;
