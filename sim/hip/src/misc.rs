//! Exports that return something other than `hipError_t`, which a generic
//! "not supported" stub could not return safely.

use std::ffi::{c_char, c_int};

use crate::error::c_static;

#[repr(C)]
pub struct hipChannelFormatDesc {
    pub x: c_int,
    pub y: c_int,
    pub z: c_int,
    pub w: c_int,
    pub f: c_int,
}

pub extern "C" fn hipCreateChannelDesc(
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    f: c_int,
) -> hipChannelFormatDesc {
    hipChannelFormatDesc { x, y, z, w, f }
}

pub extern "C" fn hipApiName(_id: u32) -> *const c_char {
    c_static("unknown")
}

pub extern "C" fn hipGetCmdName(_id: u32) -> *const c_char {
    c_static("unknown")
}

pub extern "C" fn hipInitActivityCallback(
    _id: *mut std::ffi::c_void,
    _op: *mut std::ffi::c_void,
    _arg: *mut std::ffi::c_void,
) {
}

pub extern "C" fn hipEnableActivityCallback(_op: u32, _enable: bool) -> bool {
    false
}

pub extern "C" fn amd_dbgapi_get_build_name() -> *const c_char {
    c_static("rocwasm-sim")
}

pub extern "C" fn amd_dbgapi_get_git_hash() -> *const c_char {
    c_static("rocwasm-sim")
}

pub extern "C" fn amd_dbgapi_get_build_id() -> usize {
    0
}

/// IEEE half → float (exported by the real library for host-side `__half`).
pub extern "C" fn __gnu_h2f_ieee(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let mant = u32::from(h & 0x3ff);
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal half: normalise.
            let shift = m.leading_zeros() - 21;
            sign | ((127 - 15 - shift + 1) << 23) | (((m << shift) & 0x3ff) << 13)
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Float → IEEE half, round to nearest even.
pub extern "C" fn __gnu_f2h_ieee(f: f32) -> u16 {
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mant = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = mant | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = u32::from(rem > mid || (rem == mid && half & 1 == 1));
        return sign | (half + round) as u16;
    }
    let half = ((e as u32) << 10) | (mant >> 13);
    let rem = mant & 0x1fff;
    let round = u32::from(rem > 0x1000 || (rem == 0x1000 && half & 1 == 1));
    sign | (half + round) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_round_trips() {
        for v in [0.0f32, 1.0, -2.5, 65504.0, 0.000061035156, 3.140625] {
            assert_eq!(__gnu_h2f_ieee(__gnu_f2h_ieee(v)), v, "{v}");
        }
        assert_eq!(__gnu_f2h_ieee(1.0), 0x3c00);
        assert!(__gnu_h2f_ieee(__gnu_f2h_ieee(1e6)).is_infinite());
    }
}
