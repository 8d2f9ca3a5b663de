//! Writing results through the C API's out-pointers.
//!
//! HSA returns everything through `void*`/`T*` out-parameters whose type is
//! fixed by the attribute being queried. These helpers centralise the raw
//! writes so the API modules stay free of pointer code.

use std::ffi::c_void;

use crate::ffi::*;

/// Writes `value` through `out`; a null `out` is an invalid argument.
pub fn out<T>(out: *mut T, value: T) -> hsa_status_t {
    if out.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the C API contract makes `out` a valid, aligned pointer to a
    // `T` owned by the caller; we checked it is not null.
    unsafe { out.write(value) };
    HSA_STATUS_SUCCESS
}

/// A value returned by a `*_get_info` call, in the C type the attribute has.
pub enum Info {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    /// A string in a fixed `char[N]` buffer, NUL-padded (agent names: 64).
    Fixed(String, usize),
    /// A string of exactly its length (the caller asked `*_LENGTH` first).
    Exact(String),
}

impl Info {
    pub fn bool(b: bool) -> Self {
        Info::U8(b as u8)
    }
}

/// Writes an attribute value into the caller's buffer.
pub fn write_info(dst: *mut c_void, info: Info) -> hsa_status_t {
    if dst.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    match info {
        Info::U8(v) => out(dst.cast(), v),
        Info::U16(v) => out(dst.cast(), v),
        Info::U32(v) => out(dst.cast(), v),
        Info::U64(v) => out(dst.cast::<[u8; 8]>(), v.to_ne_bytes()),
        Info::Fixed(s, n) => {
            let mut buf = vec![0u8; n];
            let len = s.len().min(n - 1);
            buf[..len].copy_from_slice(&s.as_bytes()[..len]);
            copy_bytes(dst, &buf)
        }
        Info::Exact(s) => copy_bytes(dst, s.as_bytes()),
    }
}

/// Copies bytes into a caller buffer that the attribute says is large enough.
pub fn copy_bytes(dst: *mut c_void, bytes: &[u8]) -> hsa_status_t {
    if dst.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the attribute's documented size (or the length the caller
    // queried first) is at least `bytes.len()`; regions cannot overlap
    // because `bytes` is our own buffer.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.cast::<u8>(), bytes.len()) };
    HSA_STATUS_SUCCESS
}

/// Reads a NUL-terminated C string argument.
pub fn c_str(p: *const std::ffi::c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the C API passes NUL-terminated strings; checked non-null.
    Some(
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Reads `count` items from a C array argument (empty when null or 0).
pub fn slice<'a, T>(p: *const T, count: usize) -> &'a [T] {
    if p.is_null() || count == 0 {
        return &[];
    }
    // SAFETY: the C API passes an array of `count` elements that stays
    // valid for the duration of the call.
    unsafe { std::slice::from_raw_parts(p, count) }
}

/// Logs when `ROCWASM_SIM_LOG` is set (to anything but `0`).
pub fn log_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("ROCWASM_SIM_LOG").is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// One `write` per line: stderr is unbuffered, so `eprintln!` writes a
/// formatted line in pieces, and the application's own stderr (C stdio,
/// another thread) could land between them (a test reading the log once
/// found a copy's line cut in two).
macro_rules! sim_log {
    ($($arg:tt)*) => {
        if $crate::util::log_enabled() {
            use std::io::Write as _;
            let line = format!("sim-hsa: {}\n", format_args!($($arg)*));
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    };
}
pub(crate) use sim_log;
