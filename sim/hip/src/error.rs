//! HIP error codes, the per-thread last error, error names and strings, and
//! the scenario's injected errors.

#![allow(non_camel_case_types, non_upper_case_globals)]

use std::cell::Cell;
use std::ffi::c_char;
use std::sync::OnceLock;

use sim_scenario::ErrorInjector;

pub type hipError_t = i32;

/// `(code, name, description)` for the codes of ROCm 5.2's `hipError_t`.
pub const ERRORS: &[(hipError_t, &str, &str)] = &[
    (0, "hipSuccess", "no error"),
    (1, "hipErrorInvalidValue", "invalid argument"),
    (2, "hipErrorOutOfMemory", "out of memory"),
    (3, "hipErrorNotInitialized", "initialization error"),
    (4, "hipErrorDeinitialized", "driver shutting down"),
    (
        5,
        "hipErrorProfilerDisabled",
        "profiler disabled while using external profiling tool",
    ),
    (
        6,
        "hipErrorProfilerNotInitialized",
        "profiler is not initialized",
    ),
    (
        7,
        "hipErrorProfilerAlreadyStarted",
        "profiler already started",
    ),
    (
        8,
        "hipErrorProfilerAlreadyStopped",
        "profiler already stopped",
    ),
    (
        9,
        "hipErrorInvalidConfiguration",
        "invalid configuration argument",
    ),
    (12, "hipErrorInvalidPitchValue", "invalid pitch argument"),
    (13, "hipErrorInvalidSymbol", "invalid device symbol"),
    (17, "hipErrorInvalidDevicePointer", "invalid device pointer"),
    (
        21,
        "hipErrorInvalidMemcpyDirection",
        "invalid copy direction for memcpy",
    ),
    (
        35,
        "hipErrorInsufficientDriver",
        "driver version is insufficient for runtime version",
    ),
    (
        52,
        "hipErrorMissingConfiguration",
        "__global__ function call is not configured",
    ),
    (
        53,
        "hipErrorPriorLaunchFailure",
        "unspecified launch failure in prior launch",
    ),
    (
        98,
        "hipErrorInvalidDeviceFunction",
        "invalid device function",
    ),
    (
        100,
        "hipErrorNoDevice",
        "no ROCm-capable device is detected",
    ),
    (101, "hipErrorInvalidDevice", "invalid device ordinal"),
    (
        200,
        "hipErrorInvalidImage",
        "device kernel image is invalid",
    ),
    (201, "hipErrorInvalidContext", "invalid device context"),
    (
        209,
        "hipErrorNoBinaryForGpu",
        "no kernel image is available for execution on the device",
    ),
    (218, "hipErrorInvalidKernelFile", "invalid kernel file"),
    (
        300,
        "hipErrorInvalidSource",
        "device kernel image is invalid",
    ),
    (301, "hipErrorFileNotFound", "file not found"),
    (
        302,
        "hipErrorSharedObjectSymbolNotFound",
        "shared object symbol not found",
    ),
    (
        303,
        "hipErrorSharedObjectInitFailed",
        "shared object initialization failed",
    ),
    (
        304,
        "hipErrorOperatingSystem",
        "OS call failed or operation not supported on this OS",
    ),
    (400, "hipErrorInvalidHandle", "invalid resource handle"),
    (
        401,
        "hipErrorIllegalState",
        "the operation cannot be performed in the present state",
    ),
    (500, "hipErrorNotFound", "named symbol not found"),
    (600, "hipErrorNotReady", "device not ready"),
    (
        700,
        "hipErrorIllegalAddress",
        "an illegal memory access was encountered",
    ),
    (
        701,
        "hipErrorLaunchOutOfResources",
        "too many resources requested for launch",
    ),
    (
        702,
        "hipErrorLaunchTimeOut",
        "the launch timed out and was terminated",
    ),
    (
        704,
        "hipErrorPeerAccessAlreadyEnabled",
        "peer access is already enabled",
    ),
    (
        705,
        "hipErrorPeerAccessNotEnabled",
        "peer access has not been enabled",
    ),
    (
        708,
        "hipErrorSetOnActiveProcess",
        "cannot set while device is active in this process",
    ),
    (709, "hipErrorContextIsDestroyed", "context is destroyed"),
    (710, "hipErrorAssert", "device-side assert triggered"),
    (
        712,
        "hipErrorHostMemoryAlreadyRegistered",
        "part or all of the requested memory range is already mapped",
    ),
    (
        713,
        "hipErrorHostMemoryNotRegistered",
        "pointer does not correspond to a registered memory region",
    ),
    (719, "hipErrorLaunchFailure", "unspecified launch failure"),
    (
        720,
        "hipErrorCooperativeLaunchTooLarge",
        "too many blocks in cooperative launch",
    ),
    (801, "hipErrorNotSupported", "operation not supported"),
    (
        900,
        "hipErrorStreamCaptureUnsupported",
        "operation not permitted when stream is capturing",
    ),
    (
        901,
        "hipErrorStreamCaptureInvalidated",
        "operation failed due to a previous error during capture",
    ),
    (999, "hipErrorUnknown", "unknown error"),
    (
        1052,
        "hipErrorRuntimeMemory",
        "runtime memory call returned error",
    ),
    (
        1053,
        "hipErrorRuntimeOther",
        "runtime call other than memory returned error",
    ),
];

pub const hipSuccess: hipError_t = 0;
pub const hipErrorInvalidValue: hipError_t = 1;
pub const hipErrorOutOfMemory: hipError_t = 2;
pub const hipErrorInvalidPitchValue: hipError_t = 12;
pub const hipErrorInvalidMemcpyDirection: hipError_t = 21;
pub const hipErrorInvalidDeviceFunction: hipError_t = 98;
pub const hipErrorNoDevice: hipError_t = 100;
pub const hipErrorInvalidDevice: hipError_t = 101;
pub const hipErrorInvalidImage: hipError_t = 200;
pub const hipErrorNoBinaryForGpu: hipError_t = 209;
pub const hipErrorFileNotFound: hipError_t = 301;
pub const hipErrorInvalidHandle: hipError_t = 400;
pub const hipErrorNotFound: hipError_t = 500;
pub const hipErrorNotReady: hipError_t = 600;
pub const hipErrorHostMemoryAlreadyRegistered: hipError_t = 712;
pub const hipErrorHostMemoryNotRegistered: hipError_t = 713;
pub const hipErrorNotSupported: hipError_t = 801;

thread_local! {
    static LAST: Cell<hipError_t> = const { Cell::new(0) };
}

/// Records a failing result as the thread's last error and returns it.
pub fn ret(code: hipError_t) -> hipError_t {
    if code != hipSuccess {
        LAST.with(|l| l.set(code));
    }
    code
}

/// What every function this simulation does not implement returns.
pub fn unsupported(name: &str) -> hipError_t {
    if crate::log_enabled() {
        eprintln!("sim-hip: {name} is not supported by the simulated runtime");
    }
    ret(hipErrorNotSupported)
}

fn injector() -> &'static ErrorInjector {
    static INJECTOR: OnceLock<ErrorInjector> = OnceLock::new();
    INJECTOR.get_or_init(|| {
        let scenario = crate::scenario();
        let (injector, unknown) = ErrorInjector::new(&scenario.errors, |name| {
            ERRORS
                .iter()
                .find(|(_, n, _)| *n == name)
                .map(|(c, _, _)| i64::from(*c))
        });
        for u in unknown {
            eprintln!("sim-hip: ignoring injected error with unknown code {u}");
        }
        injector
    })
}

/// An injected error for `api`, if the scenario asks for one on this call.
pub fn inject(api: &str) -> Option<hipError_t> {
    injector().check(api).map(|c| c as hipError_t)
}

/// Runs an API body: injected errors first, then the body; failures are
/// recorded as the last error.
macro_rules! api {
    ($name:literal, $body:block) => {{
        if let Some(code) = $crate::error::inject($name) {
            return $crate::error::ret(code);
        }
        // A closure, so that `return` in the body returns the error code.
        #[allow(clippy::redundant_closure_call)]
        let result: $crate::error::hipError_t = (|| -> $crate::error::hipError_t { $body })();
        $crate::error::ret(result)
    }};
}
pub(crate) use api;

pub extern "C" fn hipGetLastError() -> hipError_t {
    LAST.with(|l| l.replace(hipSuccess))
}

pub extern "C" fn hipPeekAtLastError() -> hipError_t {
    LAST.with(|l| l.get())
}

fn lookup(code: hipError_t) -> Option<&'static (hipError_t, &'static str, &'static str)> {
    ERRORS.iter().find(|(c, _, _)| *c == code)
}

/// A `'static` NUL-terminated copy of `s` (interned: each text is leaked once).
pub fn c_static(s: &str) -> *const c_char {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static INTERNED: Mutex<Option<HashMap<String, &'static std::ffi::CStr>>> = Mutex::new(None);
    let mut map = INTERNED.lock().unwrap_or_else(|p| p.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    let entry = map.entry(s.to_string()).or_insert_with(|| {
        let owned = std::ffi::CString::new(s.replace('\0', "")).unwrap_or_default();
        Box::leak(owned.into_boxed_c_str())
    });
    entry.as_ptr()
}

pub extern "C" fn hipGetErrorName(code: hipError_t) -> *const c_char {
    c_static(lookup(code).map_or("hipErrorUnknown", |e| e.1))
}

pub extern "C" fn hipGetErrorString(code: hipError_t) -> *const c_char {
    c_static(lookup(code).map_or("unknown error", |e| e.2))
}
