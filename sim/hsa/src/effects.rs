//! Kernel effects: host functions that stand in for kernels, so that an
//! application's result checks pass without a GPU.
//!
//! When a dispatch executes, the scenario's `effect_for(kernel name)` picks
//! one (see `sim-scenario`):
//!
//! - built-in `vector_add` (the default for names containing `vector_add` or
//!   `vectorAdd`): reads the kernarg segment as `(const float* a, const
//!   float* b, float* c, int n)` at offsets 0, 8, 16, 24 and computes
//!   `c[i] = a[i] + b[i]` for `i < min(n, work-items)` (`n` = work-items if
//!   the segment is shorter than 28 bytes). All three ranges must lie inside
//!   memory allocated through the runtime, else the effect is skipped with a
//!   warning — a bad pointer is reported, never dereferenced;
//! - built-in `none`: nothing;
//! - `library` + `symbol`: `void symbol(const void* kernarg, const uint32_t
//!   grid[3], const uint16_t workgroup[3])` from a shared library, loaded once.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::ffi::hsa_kernel_dispatch_packet_t;
use crate::memory;

type HostKernel = unsafe extern "C" fn(*const u8, *const u32, *const u16);

pub fn run(name: &str, p: &hsa_kernel_dispatch_packet_t, kernarg_size: u32) {
    let Some(effect) = crate::runtime::get().scenario.effect_for(name) else {
        return;
    };
    match (effect.builtin.as_deref(), &effect.library, &effect.symbol) {
        (Some("vector_add"), _, _) => vector_add(name, p, kernarg_size),
        (Some("none"), _, _) => {}
        (None, Some(library), Some(symbol)) => call_library(library, symbol, p),
        _ => eprintln!(
            "sim-hsa: effect for {name:?} is neither a known built-in nor library+symbol; ignored"
        ),
    }
}

fn read<T: Copy>(base: *const u8, offset: usize) -> T {
    // SAFETY: callers check that `offset + size_of::<T>()` is within the
    // kernarg segment the application filled for this dispatch.
    unsafe { std::ptr::read_unaligned(base.add(offset).cast::<T>()) }
}

fn vector_add(name: &str, p: &hsa_kernel_dispatch_packet_t, kernarg_size: u32) {
    let kernarg = p.kernarg_address as *const u8;
    if kernarg.is_null() || kernarg_size < 24 {
        eprintln!("sim-hsa: vector_add effect for {name}: kernarg segment too small ({kernarg_size} bytes)");
        return;
    }
    let items = u64::from(p.grid_size_x.max(1))
        * u64::from(p.grid_size_y.max(1))
        * u64::from(p.grid_size_z.max(1));
    let n = if kernarg_size >= 28 {
        read::<i32>(kernarg, 24).max(0) as u64
    } else {
        items
    };
    let n = n.min(items) as usize;
    let (a, b, c) = (
        read::<usize>(kernarg, 0),
        read::<usize>(kernarg, 8),
        read::<usize>(kernarg, 16),
    );
    let bytes = n * 4;
    if n == 0 {
        return;
    }
    if ![a, b, c].iter().all(|&ptr| memory::contains(ptr, bytes)) {
        eprintln!(
            "sim-hsa: vector_add effect for {name}: pointers outside runtime allocations; skipped"
        );
        return;
    }
    // SAFETY: the three ranges were checked to lie inside live allocations
    // of the runtime; `c` may alias `a` or `b`, so we read before writing
    // each element through raw pointers instead of slices.
    unsafe {
        let (a, b, c) = (a as *const f32, b as *const f32, c as *mut f32);
        for i in 0..n {
            c.add(i).write(a.add(i).read() + b.add(i).read());
        }
    }
}

fn call_library(library: &str, symbol: &str, p: &hsa_kernel_dispatch_packet_t) {
    static LIBS: Mutex<Option<HashMap<(String, String), HostKernel>>> = Mutex::new(None);
    let mut libs = LIBS.lock().unwrap_or_else(|e| e.into_inner());
    let libs = libs.get_or_insert_with(HashMap::new);
    let key = (library.to_string(), symbol.to_string());
    let f = match libs.get(&key) {
        Some(f) => *f,
        None => {
            // SAFETY: loading a library the scenario names runs its
            // initialisers; the scenario is trusted like the application.
            let loaded = unsafe { libloading::Library::new(library) }.and_then(|lib| {
                // SAFETY: the scenario documents the symbol's C signature.
                let f = unsafe { lib.get::<HostKernel>(symbol.as_bytes()) }.map(|s| *s);
                std::mem::forget(lib); // keep it loaded for the process
                f
            });
            match loaded {
                Ok(f) => *libs.entry(key).or_insert(f),
                Err(e) => {
                    eprintln!("sim-hsa: effect {library}:{symbol}: {e}");
                    return;
                }
            }
        }
    };
    let grid = [p.grid_size_x, p.grid_size_y, p.grid_size_z];
    let workgroup = [p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z];
    // SAFETY: the host function has the documented signature; the arrays
    // live for the duration of the call.
    unsafe {
        f(
            p.kernarg_address as *const u8,
            grid.as_ptr(),
            workgroup.as_ptr(),
        )
    };
}
