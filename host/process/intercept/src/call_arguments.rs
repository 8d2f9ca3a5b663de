//! Arguments of intercepted calls, rendered as text only when someone asks.
//!
//! Callback tracing hands plugins each argument as `(name, type, value)`
//! strings. Building those strings costs far more than the call being traced,
//! so wrappers pass a closure that fills an [`ArgList`]; it runs only when a
//! callback subscriber exists for the operation.

use std::ffi::{c_char, c_void, CStr};
use std::fmt::Write;

/// One rendered argument; becomes an sdk-core `Argument` (ROCprofiler-SDK's
/// `arg_name`, `arg_type`, `arg_value_str`, and the value's bytes behind
/// `arg_value_addr` and the per-function argument structs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The parameter's name in the C declaration, without the `r#` of a
    /// Rust raw identifier (`type`, not `r#type`).
    pub name: String,
    /// The parameter's C type as the header spells it (`hipStream_t`,
    /// `void **`).
    pub type_name: String,
    /// The value as [`Render`] writes it: numbers in decimal, pointers in
    /// hex or `nullptr`, `const char *` as text.
    pub value: String,
    /// The value as the C calling convention passed it (a pointer's
    /// address, not what it points to).
    pub bytes: Vec<u8>,
}

/// The arguments of one call, in declaration order.
#[derive(Debug, Default, Clone)]
pub struct ArgList {
    /// The arguments pushed so far.
    pub args: Vec<Arg>,
}

impl ArgList {
    /// Appends `value` rendered with its C type name, and its bytes.
    pub fn push<T: Render + PlainValue>(&mut self, name: &str, type_name: &str, value: &T) {
        let mut s = String::new();
        value.render(&mut s);
        // SAFETY: `T: PlainValue` has no padding, so all of its
        // `size_of::<T>()` bytes are initialised; `value` is a live reference.
        let bytes = unsafe {
            std::slice::from_raw_parts(value as *const T as *const u8, std::mem::size_of::<T>())
        };
        self.args.push(Arg {
            // Parameters named like Rust keywords arrive as raw identifiers.
            name: name.trim_start_matches("r#").to_string(),
            type_name: type_name.to_string(),
            value: s,
            bytes: bytes.to_vec(),
        });
    }
}

/// A C argument type whose bytes can be copied out as they are.
///
/// # Safety
/// The type has no padding bytes (every byte of a value is initialised):
/// integers, floats, `bool`, raw pointers, and `#[repr(C)]` structs of those
/// whose fields leave no gaps.
pub unsafe trait PlainValue: Copy {}

macro_rules! plain_value {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive or raw pointer: no padding.
        unsafe impl PlainValue for $t {}
    )*};
}
plain_value!(
    i8,
    u8,
    i16,
    u16,
    i32,
    u32,
    i64,
    u64,
    usize,
    isize,
    f32,
    f64,
    bool,
    *mut c_void,
    *const c_void,
    *mut c_char,
    *const c_char
);

/// How a value shows up in argument and return-value text.
pub trait Render {
    /// Appends the value's text to `out`.
    fn render(&self, out: &mut String);

    /// The value's text on its own (how return values are rendered).
    fn to_text(&self) -> String {
        let mut s = String::new();
        self.render(&mut s);
        s
    }
}

macro_rules! render_display {
    ($($t:ty),*) => {$(
        impl Render for $t {
            fn render(&self, out: &mut String) {
                let _ = write!(out, "{}", self);
            }
        }
    )*};
}
render_display!(i8, u8, i16, u16, i32, u32, i64, u64, usize, isize, f32, f64, bool);

impl Render for () {
    fn render(&self, _: &mut String) {}
}

impl Render for *mut c_void {
    fn render(&self, out: &mut String) {
        render_ptr(*self as usize, out)
    }
}

impl Render for *const c_void {
    fn render(&self, out: &mut String) {
        render_ptr(*self as usize, out)
    }
}

/// `char*` parameters are output buffers (e.g. `hipDeviceGetName`): their
/// contents are not initialised at entry, so only the address is shown.
impl Render for *mut c_char {
    fn render(&self, out: &mut String) {
        render_ptr(*self as usize, out)
    }
}

/// `const char*` is a C string: shown as text (at most [`MAX_STRING`] bytes).
impl Render for *const c_char {
    fn render(&self, out: &mut String) {
        if self.is_null() {
            out.push_str("nullptr");
            return;
        }
        // SAFETY: the application passed this as a NUL-terminated C string to
        // a function whose contract says so; we read it before forwarding (or
        // after, for return values, while the runtime keeps it alive).
        let s = unsafe { CStr::from_ptr(*self) }.to_string_lossy();
        if s.len() > MAX_STRING {
            let cut = (0..=MAX_STRING)
                .rev()
                .find(|&i| s.is_char_boundary(i))
                .unwrap_or(0);
            out.push_str(&s[..cut]);
            out.push('…');
        } else {
            out.push_str(&s);
        }
    }
}

/// Longest string argument kept in full.
pub const MAX_STRING: usize = 1024;

fn render_ptr(p: usize, out: &mut String) {
    if p == 0 {
        out.push_str("nullptr");
    } else {
        let _ = write!(out, "{p:#x}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_scalars_pointers_and_strings() {
        let mut l = ArgList::default();
        l.push("count", "int", &42i32);
        l.push("ptr", "void *", &(0x1000usize as *mut c_void));
        l.push("null", "void *", &std::ptr::null_mut::<c_void>());
        let msg = c"hello";
        l.push("r#type", "const char *", &msg.as_ptr());
        let v: Vec<_> = l
            .args
            .iter()
            .map(|a| (a.name.as_str(), a.value.as_str()))
            .collect();
        assert_eq!(
            v,
            [
                ("count", "42"),
                ("ptr", "0x1000"),
                ("null", "nullptr"),
                ("type", "hello")
            ]
        );
        assert_eq!(l.args[3].type_name, "const char *");
        assert_eq!(l.args[0].bytes, 42i32.to_ne_bytes());
        assert_eq!(l.args[1].bytes, 0x1000usize.to_ne_bytes());
        assert_eq!(l.args[3].bytes, (msg.as_ptr() as usize).to_ne_bytes());
    }

    #[test]
    fn long_strings_are_cut() {
        let long = std::ffi::CString::new("x".repeat(5000)).unwrap();
        let s = long.as_ptr().to_text();
        assert_eq!(s.chars().count(), MAX_STRING + 1);
    }
}
