//! The macro that turns each generated signature into an exported interposer.
//!
//! For `runtime fn hipMalloc(ptr: *mut c_void = "void **", size: usize = "size_t") -> i32 = "hipError_t";`
//! it emits
//!
//! ```ignore
//! #[no_mangle]
//! pub unsafe extern "C" fn hipMalloc(ptr: *mut c_void, size: usize) -> i32 { … }
//! ```
//!
//! whose body finds the next definition (once), and forwards through
//! [`crate::tracer::api_call`], which does nothing but the call when tracing
//! is off. A few functions need more than tracing (kernel registration, the
//! kernel a launch names): [`around!`] adds that, matched by name.

/// See the module docs. `compiler` functions are the HIP_COMPILER_API kind,
/// `runtime` ones HIP_RUNTIME_API.
macro_rules! hip_interposers {
    ($(
        $kind:ident fn $name:ident($($arg:ident: $ty:ty = $cty:literal),* $(,)?) -> $ret:ty = $cret:literal;
    )*) => {
        $(
            #[no_mangle]
            #[allow(non_snake_case, clippy::missing_safety_doc)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                static NEXT: $crate::next::NextFn = $crate::next::NextFn::new(
                    // SAFETY of the literal: concat! adds exactly one NUL at the end.
                    match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                        Ok(c) => c,
                        Err(_) => panic!("symbol names have no NUL"),
                    },
                );
                static OP: $crate::tracer::ApiOp =
                    $crate::tracer::ApiOp::new(hip_kind!($kind), stringify!($name));
                let next = NEXT.get();
                if next.is_null() {
                    return <$ret as $crate::next::Missing>::missing();
                }
                // SAFETY: `next` is the runtime's definition of this same
                // symbol, whose C signature the generator read from the header
                // and mapped to ABI-identical Rust types.
                let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(next) };
                around!($name, ($($arg),*), {
                    $crate::tracer::api_call(
                        &OP,
                        &|_a: &mut $crate::args::ArgList| { $(_a.push(stringify!($arg), $cty, &$arg);)* },
                        // SAFETY: forwarding the caller's arguments unchanged.
                        || unsafe { real($($arg),*) },
                    )
                })
            }
        )*

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

/// Extra work around particular functions; the last arm forwards the rest.
macro_rules! around {
    // `__hipRegisterFunction(modules, host_fn, device_fn, device_name, …)`:
    // the program registers each kernel's host stub at start-up.
    (__hipRegisterFunction, ($m:ident, $host:ident, $devfn:ident, $devname:ident $(, $rest:ident)*), $body:block) => {{
        let r = $body;
        $crate::hip::kernels::register($host as usize, $devname, $devfn as *const std::ffi::c_char);
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
