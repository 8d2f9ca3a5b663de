//! The macro that turns each generated signature into an exported interposer
//! and a dispatch-table wrapper.
//!
//! For `runtime fn hipMalloc(ptr: *mut c_void = "void **", size: usize = "size_t") -> i32 = "hipError_t";`
//! it emits
//!
//! ```ignore
//! #[no_mangle]
//! pub unsafe extern "C" fn hipMalloc(ptr: *mut c_void, size: usize) -> i32 { … }
//! pub mod by_table { pub mod hipMalloc { static ORIGINAL; fn traced(…); extern "C" fn from_table(…) } }
//! ```
//!
//! The exported function finds the next definition (once) and forwards
//! through `traced`, i.e. [`crate::tracer::api_call`], which does nothing but
//! the call when tracing is off. `from_table` is what a ROCm ≥ 6.1 runtime's
//! dispatch-table slot is replaced with (`crate::register`): it forwards to
//! the slot's saved `ORIGINAL` through the same `traced`. Once a function's
//! slot is wrapped, its exported twin only forwards: the runtime's exported
//! function calls through the table, where the call is traced once.
//! A few functions need more than tracing (kernel registration, the kernel a
//! launch names): [`around!`] adds that, matched by name.

/// See the module docs. `compiler` functions are the HIP_COMPILER_API kind,
/// `runtime` ones HIP_RUNTIME_API.
macro_rules! hip_interposers {
    ($(
        $kind:ident fn $name:ident($($arg:ident: $ty:ty = $cty:literal),* $(,)?) -> $ret:ty = $cret:literal;
    )*) => {
        $(
            #[doc = concat!(
                "Interposer for HIP's `", stringify!($name), "` (", hip_kind_name!($kind), "): ",
                "forwards to the next definition of the symbol, traced here unless the ",
                "function's dispatch-table slot is wrapped (then [`by_table::", stringify!($name),
                "::from_table`] traces the call)."
            )]
            #[doc = ""]
            #[doc = concat!("Returns `", $cret, "`. ", params_doc_heading!($($arg)*))]
            $(#[doc = concat!("- `", stringify!($arg), "`: `", $cty, "`")])*
            #[no_mangle]
            #[allow(non_snake_case, clippy::missing_safety_doc)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                static NEXT: $crate::next_symbol::NextFn = $crate::next_symbol::NextFn::new(
                    // SAFETY of the literal: concat! adds exactly one NUL at the end.
                    match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                        Ok(c) => c,
                        Err(_) => panic!("symbol names have no NUL"),
                    },
                );
                let next = NEXT.get();
                if next.is_null() {
                    return <$ret as $crate::next_symbol::Missing>::missing();
                }
                // SAFETY: `next` is the runtime's definition of this same
                // symbol, whose C signature the generator read from the header
                // and mapped to ABI-identical Rust types.
                let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(next) };
                if by_table::$name::wrapped() {
                    // SAFETY: forwarding the caller's arguments unchanged.
                    return unsafe { real($($arg),*) };
                }
                // SAFETY: `real` has this function's signature.
                unsafe { by_table::$name::traced(real, $($arg),*) }
            }
        )*

        /// Per function: the traced call both entry points share, and the
        /// wrapper for its slot in a ROCm ≥ 6.1 dispatch table.
        pub mod by_table {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[doc = concat!(
                    "`", stringify!($name), "`: its saved table original, the traced call ",
                    "and the wrapper for its dispatch-table slot."
                )]
                #[allow(non_snake_case, clippy::too_many_arguments)]
                pub mod $name {
                    #[allow(unused_imports)]
                    use super::*;

                    /// The runtime's function from its table slot; null until wrapped.
                    pub static ORIGINAL: std::sync::atomic::AtomicPtr<c_void> =
                        std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

                    static OP: $crate::tracer::ApiOp =
                        $crate::tracer::ApiOp::new(hip_kind!($kind), stringify!($name));

                    /// True once the table slot forwards through [`from_table`].
                    #[inline]
                    pub fn wrapped() -> bool {
                        !ORIGINAL.load(std::sync::atomic::Ordering::Relaxed).is_null()
                    }

                    /// # Safety
                    /// `real` is the runtime's function of this name.
                    #[inline(always)]
                    pub unsafe fn traced(real: unsafe extern "C" fn($($ty),*) -> $ret, $($arg: $ty),*) -> $ret {
                        // At a runtime call only: a compiler call (`__hipRegister*`)
                        // runs in the program's static initialisation, where
                        // asking the runtime its version would initialise it.
                        if matches!(hip_kind!($kind), rocwasm_core::BufferTracingKind::HipRuntimeApi) {
                            $crate::hip::runtime_up();
                        }
                        around!($name, ($($arg),*), {
                            $crate::tracer::api_call(
                                &OP,
                                &|_a: &mut $crate::call_arguments::ArgList| { $(_a.push(stringify!($arg), $cty, &$arg);)* },
                                // SAFETY: forwarding the caller's arguments unchanged.
                                || unsafe { real($($arg),*) },
                            )
                        })
                    }

                    /// What the table slot points to once wrapped.
                    ///
                    /// # Safety
                    /// Called by the runtime with this function's arguments.
                    pub unsafe extern "C" fn from_table($($arg: $ty),*) -> $ret {
                        let next = ORIGINAL.load(std::sync::atomic::Ordering::Acquire);
                        if next.is_null() {
                            return <$ret as $crate::next_symbol::Missing>::missing();
                        }
                        // SAFETY: the slot's original: the runtime's function of
                        // this name, whose signature the generator read.
                        let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(next) };
                        if $crate::register::is_trampoline() {
                            // SAFETY: forwarding unchanged; the call is already traced.
                            return unsafe { real($($arg),*) };
                        }
                        // SAFETY: `real` has this function's signature.
                        unsafe { traced(real, $($arg),*) }
                    }
                }
            )*

            /// Every function's table entry point.
            pub const ENTRIES: &[$crate::register::TableEntry] = &[$(
                $crate::register::TableEntry {
                    name: stringify!($name),
                    wrapper: $name::from_table as *mut c_void,
                    original: &$name::ORIGINAL,
                }
            ),*];
        }

        /// Every interposed HIP function, as generated.
        pub const HIP_FUNCTIONS: &[&str] = &[$(stringify!($name)),*];
    };
}

macro_rules! hip_kind {
    (runtime) => {
        rocwasm_core::BufferTracingKind::HipRuntimeApi
    };
    (compiler) => {
        rocwasm_core::BufferTracingKind::HipCompilerApi
    };
}

/// The kind's name as a literal, for the generated docs (`concat!` takes no
/// `BufferTracingKind::name()` call).
macro_rules! hip_kind_name {
    (runtime) => {
        "`HIP_RUNTIME_API`"
    };
    (compiler) => {
        "`HIP_COMPILER_API`"
    };
}

/// Extra work around particular functions; the last arm forwards the rest.
macro_rules! around {
    // `__hipRegisterFunction(modules, host_fn, device_fn, device_name, …)`:
    // the program registers each kernel's host stub at start-up.
    (__hipRegisterFunction, ($m:ident, $host:ident, $devfn:ident, $devname:ident, $limit:ident, $tid:ident, $bid:ident, $bdim:ident, $gdim:ident, $wsize:ident), $body:block) => {{
        let r = $body;
        // SAFETY: the compiler-generated registration's arguments: each
        // pointer null or valid for reading its `uint3`/`dim3`/`int`.
        let extra = unsafe {
            $crate::hip::kernels::registration($m as u64, $limit, $tid, $bid, $bdim, $gdim, $wsize)
        };
        $crate::hip::kernels::register(
            $host as usize,
            $devname,
            $devfn as *const std::ffi::c_char,
            extra,
        );
        r
    }};
    // Launches by host stub: note which kernel this thread is launching, so
    // the dispatch the HSA layer sees during the call can be named even
    // without code-object tracing.
    (hipLaunchKernel, ($f:ident $(, $rest:ident)*), $body:block) => {{
        let _note = $crate::hip::kernels::LaunchNote::set($f as usize);
        $body
    }};
    (hipLaunchKernel_spt, ($f:ident $(, $rest:ident)*), $body:block) => {{
        let _note = $crate::hip::kernels::LaunchNote::set($f as usize);
        $body
    }};
    (hipExtLaunchKernel, ($f:ident $(, $rest:ident)*), $body:block) => {{
        let _note = $crate::hip::kernels::LaunchNote::set($f as usize);
        $body
    }};
    (hipLaunchCooperativeKernel, ($f:ident $(, $rest:ident)*), $body:block) => {{
        let _note = $crate::hip::kernels::LaunchNote::set($f as usize);
        $body
    }};
    (hipLaunchCooperativeKernel_spt, ($f:ident $(, $rest:ident)*), $body:block) => {{
        let _note = $crate::hip::kernels::LaunchNote::set($f as usize);
        $body
    }};
    ($other:ident, ($($a:ident),*), $body:block) => {
        $body
    };
}
