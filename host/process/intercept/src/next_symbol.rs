//! Finding "the real function" behind an interposer.
//!
//! An `LD_PRELOAD`ed definition of `hipMalloc` shadows the runtime's; the
//! runtime's is the *next* definition in the lookup order, which
//! `dlsym(RTLD_NEXT, "hipMalloc")` returns. It is resolved on first use and
//! cached in an atomic: resolving twice (two threads racing on the first call)
//! stores the same pointer twice, which is harmless.

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// The next definition of one symbol, resolved once.
pub struct NextFn {
    name: &'static CStr,
    ptr: AtomicPtr<c_void>,
    warned: AtomicBool,
}

impl NextFn {
    /// Unresolved: the lookup of `name` happens on the first [`get`](Self::get).
    pub const fn new(name: &'static CStr) -> Self {
        Self {
            name,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
            warned: AtomicBool::new(false),
        }
    }

    /// The address of the next definition, or null when no later object defines it.
    #[inline]
    pub fn get(&self) -> *mut c_void {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return p;
        }
        self.resolve()
    }

    #[cold]
    fn resolve(&self) -> *mut c_void {
        // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name has no
        // preconditions; it returns null when nothing later defines the name.
        let p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
        if p.is_null() {
            if !self.warned.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "rocwasm: no definition of {} after the tool library; the call fails",
                    self.name.to_string_lossy()
                );
            }
        } else {
            self.ptr.store(p, Ordering::Release);
        }
        p
    }
}

/// What an interposer returns when there is no real function to forward to
/// (the application reached our symbol without the runtime being loaded).
pub trait Missing {
    /// The value returned instead of the call's: an error status for status
    /// returns, zero, null, `false` or a zeroed struct otherwise.
    fn missing() -> Self;
}

/// `hipErrorSharedObjectInitFailed`: the closest HIP status for "runtime absent".
/// (`hiprtcResult` functions share the `i32` return; 303 is not one of its
/// values, which is still an error to the caller.)
impl Missing for i32 {
    fn missing() -> Self {
        303
    }
}

macro_rules! missing_zero {
    ($($t:ty),*) => {$(
        impl Missing for $t {
            fn missing() -> Self {
                0
            }
        }
    )*};
}
missing_zero!(u32, u64, i64);

impl Missing for () {
    fn missing() -> Self {}
}

impl Missing for bool {
    fn missing() -> Self {
        false
    }
}

impl<T> Missing for *const T {
    fn missing() -> Self {
        std::ptr::null()
    }
}

impl<T> Missing for *mut T {
    fn missing() -> Self {
        std::ptr::null_mut()
    }
}

impl Missing for crate::hip::types::HipChannelFormatDesc {
    fn missing() -> Self {
        Self::default()
    }
}
