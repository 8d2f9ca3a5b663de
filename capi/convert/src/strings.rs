//! C strings both ways: a Rust string as a `const char*` that lives as long
//! as the process, and a `const char*` read back.

use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::sync::{Mutex, OnceLock};

/// `text` as a NUL-terminated C string that lives as long as the process:
/// tools keep the `kernel_name`, `uri` and agent `name` pointers they are
/// given (AMD's samples read them when later records arrive), as the SDK
/// keeps them valid. Each distinct string is kept once. A string with a NUL
/// inside becomes the empty string.
pub fn to_c(text: &str) -> *const c_char {
    static KEPT: OnceLock<Mutex<HashMap<String, &'static CStr>>> = OnceLock::new();
    let mut kept = KEPT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    kept.entry(text.to_string())
        .or_insert_with(|| Box::leak(CString::new(text).unwrap_or_default().into_boxed_c_str()))
        .as_ptr()
}

/// The text of a C string; NULL is the empty string, invalid UTF-8 is
/// replaced.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string valid for the call.
pub unsafe fn from_c(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string (the caller's contract).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_and_are_kept_once() {
        for s in [
            "",
            "gfx90a",
            "_Z6kernelPf.kd",
            "file:///a%20b#offset=0&size=8",
            "ü",
        ] {
            // SAFETY: `to_c`'s strings live as long as the process.
            assert_eq!(unsafe { from_c(to_c(s)) }, s);
        }
        assert_eq!(to_c("same"), to_c("same"));
        // SAFETY: as above; NULL is allowed.
        unsafe {
            assert_eq!(from_c(to_c("a\0b")), "");
            assert_eq!(from_c(std::ptr::null()), "");
        }
    }
}
