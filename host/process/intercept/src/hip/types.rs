//! `#[repr(C)]` twins of the HIP structs that cross the API by value.
//!
//! Only their ABI matters (the wrappers hand them on untouched), but each also
//! renders itself for argument tracing. The generator (`cargo xtask
//! gen-intercept`) maps exactly these C names to these types and refuses any
//! other by-value struct, so a wrong classification cannot slip in silently.

use std::ffi::c_void;
use std::fmt::Write;

use crate::call_arguments::Render;

/// `dim3`: three `uint32_t` (12 bytes, passed in two integer registers).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dim3 {
    /// Extent in x (grid: blocks; block: threads).
    pub x: u32,
    /// Extent in y.
    pub y: u32,
    /// Extent in z.
    pub z: u32,
}

/// `hipExtent`: three `size_t` (24 bytes, passed in memory).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HipExtent {
    /// Width: bytes for linear memory, elements for arrays.
    pub width: usize,
    /// Height, in rows.
    pub height: usize,
    /// Depth, in slices.
    pub depth: usize,
}

/// `hipPitchedPtr`: a pointer and three `size_t` (32 bytes, passed in memory).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HipPitchedPtr {
    /// The allocation's base address.
    pub ptr: *mut c_void,
    /// Bytes from one row to the next (padding included).
    pub pitch: usize,
    /// Logical width of the allocation, in elements.
    pub xsize: usize,
    /// Logical height of the allocation, in elements.
    pub ysize: usize,
}

/// `hipIpcMemHandle_t` and `hipIpcEventHandle_t`: `char reserved[64]`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HipIpcHandle {
    /// The opaque handle bytes, shown in hex.
    pub reserved: [u8; 64],
}

/// `hipChannelFormatDesc`: four `int` and an enum (20 bytes, returned via a hidden pointer).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HipChannelFormatDesc {
    /// Bits of the x channel.
    pub x: i32,
    /// Bits of the y channel.
    pub y: i32,
    /// Bits of the z channel.
    pub z: i32,
    /// Bits of the w channel.
    pub w: i32,
    /// `hipChannelFormatKind`: signed, unsigned, float or none.
    pub f: i32,
}

// SAFETY: each is `#[repr(C)]` with fields of one size class laid end to
// end (three u32; three usize; a pointer and three usize; 64 bytes; five
// i32): no padding.
unsafe impl crate::call_arguments::PlainValue for Dim3 {}
// SAFETY: as above.
unsafe impl crate::call_arguments::PlainValue for HipExtent {}
// SAFETY: as above.
unsafe impl crate::call_arguments::PlainValue for HipPitchedPtr {}
// SAFETY: as above.
unsafe impl crate::call_arguments::PlainValue for HipIpcHandle {}
// SAFETY: as above.
unsafe impl crate::call_arguments::PlainValue for HipChannelFormatDesc {}

impl Render for Dim3 {
    fn render(&self, out: &mut String) {
        let _ = write!(out, "{{{}, {}, {}}}", self.x, self.y, self.z);
    }
}

impl Render for HipExtent {
    fn render(&self, out: &mut String) {
        let _ = write!(
            out,
            "{{width={}, height={}, depth={}}}",
            self.width, self.height, self.depth
        );
    }
}

impl Render for HipPitchedPtr {
    fn render(&self, out: &mut String) {
        let _ = write!(
            out,
            "{{ptr={:p}, pitch={}, xsize={}, ysize={}}}",
            self.ptr, self.pitch, self.xsize, self.ysize
        );
    }
}

impl Render for HipIpcHandle {
    fn render(&self, out: &mut String) {
        out.push_str("0x");
        for b in &self.reserved {
            let _ = write!(out, "{b:02x}");
        }
    }
}

impl Render for HipChannelFormatDesc {
    fn render(&self, out: &mut String) {
        let _ = write!(
            out,
            "{{{}, {}, {}, {}, kind={}}}",
            self.x, self.y, self.z, self.w, self.f
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the C headers give (checked against clang in the generator's
    /// notes): a mismatch would shift every later argument.
    #[test]
    fn sizes_match_the_c_structs() {
        assert_eq!(std::mem::size_of::<Dim3>(), 12);
        assert_eq!(std::mem::size_of::<HipExtent>(), 24);
        assert_eq!(std::mem::size_of::<HipPitchedPtr>(), 32);
        assert_eq!(std::mem::size_of::<HipIpcHandle>(), 64);
        assert_eq!(std::mem::size_of::<HipChannelFormatDesc>(), 20);
    }

    #[test]
    fn dim3_renders_as_a_triple() {
        let mut s = String::new();
        Dim3 { x: 4, y: 1, z: 1 }.render(&mut s);
        assert_eq!(s, "{4, 1, 1}");
    }
}
