//! Kernel names from the HIP side: the host stub → device name table.
//!
//! A `<<<>>>` program registers every kernel at start-up with
//! `__hipRegisterFunction(modules, host_fn, device_fn, device_name, …)`, even
//! with no GPU. `hipLaunchKernel(host_fn, …)` later names the kernel by its
//! host stub. Keeping the table lets dispatch records be named even when no
//! code-object tracing happens (the real ROCm 5.2 library without a device),
//! and lets the launch path say which kernel a dispatch belongs to.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::sync::{Arc, OnceLock, RwLock};

use rocwasm_core::HostRegistration;

/// One registered kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostKernel {
    /// The host stub's address (what `hipLaunchKernel` receives).
    pub host_fn: usize,
    /// The device symbol name as registered (mangled for C++ kernels).
    pub mangled: String,
    /// The demangled name, or `mangled` when it is not a C++ name.
    pub demangled: String,
    /// Its id in the symbol table (host registrations have code object 0).
    pub symbol_id: u64,
    /// The rest of what the program registered.
    pub registered: HostRegistration,
}

/// Reads the registration's optional arguments.
///
/// # Safety
/// Each pointer is null or valid for reading three `u32`s (`tid`, `bid`,
/// `blockDim`, `gridDim`) or one `i32` (`wsize`).
pub unsafe fn registration(
    modules: u64,
    thread_limit: u32,
    tid: *mut std::ffi::c_void,
    bid: *mut std::ffi::c_void,
    block_dim: *mut std::ffi::c_void,
    grid_dim: *mut std::ffi::c_void,
    wsize: *mut std::ffi::c_void,
) -> HostRegistration {
    let dim3 = |p: *mut std::ffi::c_void| {
        if p.is_null() {
            [0; 3]
        } else {
            // SAFETY: the caller's guarantee: three readable u32s.
            unsafe { *(p as *const [u32; 3]) }
        }
    };
    HostRegistration {
        modules,
        thread_limit,
        thread_ids: dim3(tid),
        block_ids: dim3(bid),
        block_dims: dim3(block_dim),
        grid_dims: dim3(grid_dim),
        workgroup_size: if wsize.is_null() {
            0
        } else {
            // SAFETY: the caller's guarantee: a readable i32.
            u64::try_from(unsafe { *(wsize as *const i32) }).unwrap_or(0)
        },
    }
}

/// Kernel symbol ids, shared with code-object tracing so ids never collide.
pub static KERNEL_IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn table() -> &'static RwLock<HashMap<usize, Arc<HostKernel>>> {
    static T: OnceLock<RwLock<HashMap<usize, Arc<HostKernel>>>> = OnceLock::new();
    T.get_or_init(Default::default)
}

/// Records a registration; `name` is the device name, `fallback` the device
/// function string (clang passes the mangled name in both).
pub fn register(
    host_fn: usize,
    name: *const c_char,
    fallback: *const c_char,
    registered: HostRegistration,
) {
    let pick = if name.is_null() { fallback } else { name };
    if pick.is_null() {
        return;
    }
    // SAFETY: the compiler-generated registration passes NUL-terminated
    // string literals that live as long as the program image.
    let mangled = unsafe { CStr::from_ptr(pick) }
        .to_string_lossy()
        .into_owned();
    let symbol_id = KERNEL_IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let kernel = Arc::new(HostKernel {
        symbol_id,
        host_fn,
        demangled: demangle(&mangled),
        mangled,
        registered,
    });
    table()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(host_fn, kernel.clone());
    if let Some(listener) = LISTENER.get() {
        listener(&kernel);
    }
}

/// Who hears of registrations from now on (the running session, which
/// imports the earlier ones itself). Set once; the first listener stays.
static LISTENER: OnceLock<fn(&HostKernel)> = OnceLock::new();

/// Calls `listener` for every registration from now on.
pub fn on_register(listener: fn(&HostKernel)) {
    let _ = LISTENER.set(listener);
}

/// The kernel registered for `host_fn`.
pub fn lookup(host_fn: usize) -> Option<Arc<HostKernel>> {
    table()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&host_fn)
        .cloned()
}

/// The registration of the device function named `name` (its symbol
/// name, as the code object's loader reports it), if the program made one.
pub fn by_device_name(name: &str) -> Option<Arc<HostKernel>> {
    let name = name.strip_suffix(".kd").unwrap_or(name);
    table()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .filter(|k| k.mangled == name)
        .min_by_key(|k| k.symbol_id)
        .cloned()
}

/// Every registration so far, in no particular order.
pub fn all() -> Vec<Arc<HostKernel>> {
    table()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .cloned()
        .collect()
}

pub use rocwasm_core::demangle;

thread_local! {
    static LAUNCHING: Cell<usize> = const { Cell::new(0) };
}

/// Marks, for the duration of a launch call, which host stub this thread is
/// launching. Nested launches restore the outer value.
pub struct LaunchNote {
    previous: usize,
}

impl LaunchNote {
    /// Notes `host_fn` as this thread's current launch until the returned
    /// guard drops.
    pub fn set(host_fn: usize) -> Self {
        let previous = LAUNCHING.with(|c| c.replace(host_fn));
        Self { previous }
    }
}

impl Drop for LaunchNote {
    fn drop(&mut self) {
        LAUNCHING.with(|c| c.set(self.previous));
    }
}

/// The kernel this thread is launching right now, if a HIP launch is on the stack.
pub fn current_launch() -> Option<Arc<HostKernel>> {
    let f = LAUNCHING.with(|c| c.get());
    (f != 0).then(|| lookup(f)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cxx_and_keeps_c_names() {
        assert_eq!(
            demangle("_Z9vectorAddPKfS0_Pfi"),
            "vectorAdd(float const*, float const*, float*, int)"
        );
        assert_eq!(demangle("plain_kernel"), "plain_kernel");
        assert_eq!(demangle("_Zgarbage"), "_Zgarbage");
    }

    #[test]
    fn registration_and_launch_notes() {
        let name = c"_Z6kernelv";
        register(
            0x1234,
            name.as_ptr(),
            std::ptr::null(),
            HostRegistration::default(),
        );
        assert_eq!(by_device_name("_Z6kernelv.kd").unwrap().host_fn, 0x1234);
        let k = lookup(0x1234).unwrap();
        assert_eq!(
            (k.mangled.as_str(), k.demangled.as_str()),
            ("_Z6kernelv", "kernel()")
        );
        assert!(current_launch().is_none());
        {
            let _n = LaunchNote::set(0x1234);
            assert_eq!(current_launch().unwrap().host_fn, 0x1234);
        }
        assert!(current_launch().is_none());
    }
}
