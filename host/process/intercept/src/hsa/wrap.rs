//! Typed wrappers for every slot of the core and AMD-extension tables.
//!
//! `generated.rs` (from `hsa_api_trace.h` by `cargo xtask gen-intercept`)
//! lists each table's slots in order with their C signatures;
//! [`hsa_tables!`] makes, per table, a module with
//!
//! - one `extern "C"` wrapper per slot, traced as operation = slot number
//!   (the sdk-core registry numbers HSA operations by 1-based slot),
//! - `install(&Table)`: saves the originals and writes the wrappers, slot by
//!   slot, each bounds-checked against the table's `minor_id`,
//! - re-exported from [`crate::hsa::originals`] (made from the same list):
//!   `SAVED`, the runtime's original function of every slot, and
//!   `original(slot)`, what the tool itself calls (never traced), with
//!   `slot`, `NAMES` and `SLOTS`. [`crate::hsa::rt`] uses them there,
//!   without depending on the wrappers.
//!
//! A handful of slots do more than trace ([`around_hsa!`]): queue creation
//! becomes an intercept queue, async copies get timed, executables report
//! their code objects and kernels, pool allocations become allocation records.

use std::ffi::{c_char, c_void};

macro_rules! hsa_tables {
    ($(
        $table:ident {
            $($slot:literal fn $name:ident($($arg:ident: $ty:ty = $cty:literal),* $(,)?) -> $ret:ty = $cret:literal;)*
        }
    )*) => {$(
        #[doc = concat!(
            "The HSA `", stringify!($table), "` table's wrappers, one per slot, and their ",
            "`install`; traced as ", table_kind_name!($table), "."
        )]
        #[allow(non_snake_case, non_upper_case_globals, clippy::missing_safety_doc, unused_variables)]
        pub mod $table {
            use super::*;
            use std::sync::atomic::Ordering;

            pub use $crate::hsa::originals::$table::{original, slot, NAMES, SAVED, SLOTS};

            /// Saves each slot's original and installs the wrapper; returns how
            /// many slots are wrapped. Installing into a table twice changes
            /// nothing the second time: a ROCm ≥ 6.2 runtime hands the same
            /// table to `OnLoad` and, through rocprofiler-register, to
            /// `rocprofiler_set_api_table`, and a wrapper saved as its own
            /// original would call itself.
            pub fn install(table: &$crate::hsa::table::Table) -> usize {
                let mut wrapped = 0;
                $(
                    if let Some(orig) = table.get($slot) {
                        if orig == $name as *mut c_void {
                            wrapped += 1;
                        } else if !orig.is_null() {
                            SAVED[$slot].store(orig, Ordering::Release);
                            if table.set($slot, $name as *mut c_void) {
                                wrapped += 1;
                            }
                        }
                    }
                )*
                wrapped
            }

            $(
                #[doc = concat!(
                    "Wrapper for slot ", $slot, ", `", stringify!($name), "`: traced as operation ",
                    $slot, " of ", table_kind_name!($table), " and forwarded to the saved original ",
                    "(the slots the module docs list do more around the call); with no saved ",
                    "original, returns [`Missing::missing`](crate::next_symbol::Missing) without a call."
                )]
                #[doc = ""]
                #[doc = concat!("Returns `", $cret, "`. ", params_doc_heading!($($arg)*))]
                $(#[doc = concat!("- `", stringify!($arg), "`: `", $cty, "`")])*
                pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                    static OP: $crate::tracer::ApiOp =
                        $crate::tracer::ApiOp::with_id(table_kind!($table), stringify!($name), $slot);
                    let next = SAVED[$slot].load(Ordering::Acquire);
                    if next.is_null() {
                        return <$ret as $crate::next_symbol::Missing>::missing();
                    }
                    // SAFETY: `next` is the runtime's function of this slot,
                    // whose signature the generator read from hsa_api_trace.h.
                    let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(next) };
                    let r = $crate::tracer::api_call(
                        &OP,
                        &|_a: &mut $crate::call_arguments::ArgList| { $(_a.push(stringify!($arg), $cty, &$arg);)* },
                        // SAFETY: forwarding (or specially handling) the caller's arguments.
                        || unsafe { around_hsa!($name, real, ($($arg),*)) },
                    );
                    after_hsa!($name, r, ($($arg),*));
                    r
                }
            )*
        }
    )*};
}

/// The slots that need more than tracing; the last arm just forwards.
macro_rules! around_hsa {
    (hsa_queue_create, $real:ident, ($agent:ident, $size:ident, $ty:ident, $cb:ident, $data:ident, $ps:ident, $gs:ident, $q:ident)) => {
        $crate::hsa::queue::create($real, $agent, $size, $ty, $cb, $data, $ps, $gs, $q)
    };
    (hsa_queue_destroy, $real:ident, ($q:ident)) => {{
        $crate::hsa::queue::forget($q);
        $real($q)
    }};
    (hsa_executable_freeze, $real:ident, ($exe:ident, $opts:ident)) => {{
        let r = $real($exe, $opts);
        if r == 0 {
            $crate::hsa::loader::on_freeze($exe);
        }
        r
    }};
    (hsa_executable_destroy, $real:ident, ($exe:ident)) => {{
        $crate::hsa::loader::on_destroy($exe);
        $real($exe)
    }};
    (hsa_amd_memory_async_copy, $real:ident, ($dst:ident, $dst_agent:ident, $src:ident, $src_agent:ident, $size:ident, $n:ident, $deps:ident, $sig:ident)) => {
        $crate::hsa::copy::async_copy($real, $dst, $dst_agent, $src, $src_agent, $size, $n, $deps, $sig)
    };
    (hsa_amd_memory_async_copy_rect, $real:ident, ($dst:ident, $dst_off:ident, $src:ident, $src_off:ident, $range:ident, $agent:ident, $dir:ident, $n:ident, $deps:ident, $sig:ident)) => {
        $crate::hsa::copy::async_copy_rect(
            $real, $dst, $dst_off, $src, $src_off, $range, $agent, $dir, $n, $deps, $sig,
        )
    };
    (hsa_amd_memory_pool_allocate, $real:ident, ($pool:ident, $size:ident, $flags:ident, $ptr:ident)) => {{
        let start = $crate::hsa::memory::start();
        let r = $real($pool, $size, $flags, $ptr);
        if r == 0 {
            $crate::hsa::memory::allocated($pool, $size, $ptr, start);
        }
        r
    }};
    (hsa_amd_memory_pool_free, $real:ident, ($ptr:ident)) => {{
        $crate::hsa::memory::freed($ptr);
        $real($ptr)
    }};
    ($other:ident, $real:ident, ($($a:ident),*)) => {
        $real($($a),*)
    };
}

#[allow(unused_imports)]
use crate::hsa::table::Table;

/// Work after a slot's call returned, outside its traced frame (so that
/// anything it starts belongs to the enclosing call, e.g. the HIP launch).
macro_rules! after_hsa {
    // Packet slots reserved on intercept queues: note each on the reserving
    // (launching) thread, before the packet can be visible to anyone.
    (hsa_queue_add_write_index_scacq_screl, $r:ident, ($q:ident, $n:ident)) => {
        $crate::hsa::queue::on_reserve($q, $r, $n)
    };
    (hsa_queue_cas_write_index_scacq_screl, $r:ident, ($q:ident, $expected:ident, $value:ident)) => {
        if $r == $expected {
            $crate::hsa::queue::on_reserve($q, $expected, $value.saturating_sub($expected))
        }
    };
    (hsa_queue_add_write_index_scacquire, $r:ident, ($q:ident, $n:ident)) => {
        $crate::hsa::queue::on_reserve($q, $r, $n)
    };
    (hsa_queue_cas_write_index_scacquire, $r:ident, ($q:ident, $expected:ident, $value:ident)) => {
        if $r == $expected {
            $crate::hsa::queue::on_reserve($q, $expected, $value.saturating_sub($expected))
        }
    };
    (hsa_queue_add_write_index_relaxed, $r:ident, ($q:ident, $n:ident)) => {
        $crate::hsa::queue::on_reserve($q, $r, $n)
    };
    (hsa_queue_cas_write_index_relaxed, $r:ident, ($q:ident, $expected:ident, $value:ident)) => {
        if $r == $expected {
            $crate::hsa::queue::on_reserve($q, $expected, $value.saturating_sub($expected))
        }
    };
    (hsa_queue_add_write_index_screlease, $r:ident, ($q:ident, $n:ident)) => {
        $crate::hsa::queue::on_reserve($q, $r, $n)
    };
    (hsa_queue_cas_write_index_screlease, $r:ident, ($q:ident, $expected:ident, $value:ident)) => {
        if $r == $expected {
            $crate::hsa::queue::on_reserve($q, $expected, $value.saturating_sub($expected))
        }
    };
    ($other:ident, $r:ident, ($($a:ident),*)) => {};
}

/// The tracing kind of each generated table module.
macro_rules! table_kind {
    (core_api) => {
        rocwasm_core::BufferTracingKind::HsaCoreApi
    };
    (amd_ext_api) => {
        rocwasm_core::BufferTracingKind::HsaAmdExtApi
    };
}

/// [`table_kind!`]'s name as a literal, for the generated docs (`concat!`
/// takes no `BufferTracingKind::name()` call).
macro_rules! table_kind_name {
    (core_api) => {
        "`HSA_CORE_API`"
    };
    (amd_ext_api) => {
        "`HSA_AMD_EXT_API`"
    };
}

include!("generated.rs");
