//! Timestamps, thread ids and the version (`rocprofiler.h`).
//!
//! Timestamps are the engine's clock: `CLOCK_BOOTTIME` nanoseconds (read
//! through the CPU's time-stamp counter where it is invariant), the time
//! base of every record, as in the SDK.

use rocwasm_core::{clock, Status};

use crate::guard::guard;
use crate::status::Code;

/// `rocprofiler_get_timestamp`.
///
/// # Safety
/// `ts` must be NULL or point to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_get_timestamp(ts: *mut u64) -> Code {
    guard("rocprofiler_get_timestamp", || {
        if ts.is_null() {
            return Err(Status::InvalidArgument);
        }
        // SAFETY: checked non-null; the caller passes a writable u64.
        unsafe { *ts = clock::now() };
        Ok(())
    })
}

/// `rocprofiler_get_thread_id`: the calling thread's kernel id (`gettid`),
/// the id records carry.
///
/// # Safety
/// `tid` must be NULL or point to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_get_thread_id(tid: *mut u64) -> Code {
    guard("rocprofiler_get_thread_id", || {
        if tid.is_null() {
            return Err(Status::InvalidArgument);
        }
        // SAFETY: checked non-null; the caller passes a writable u64.
        unsafe { *tid = clock::thread_id() };
        Ok(())
    })
}

/// `rocprofiler_get_version`: 1.0.0, the interface the headers describe.
///
/// # Safety
/// Each pointer must be NULL or point to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_get_version(
    major: *mut u32,
    minor: *mut u32,
    patch: *mut u32,
) -> Code {
    // SAFETY: each pointer is NULL or writable, as the caller promises.
    unsafe {
        for (p, v) in [(major, 1), (minor, 0), (patch, 0)] {
            if !p.is_null() {
                *p = v;
            }
        }
    }
    crate::status::SUCCESS
}

/// `rocprofiler_get_version_triplet`.
///
/// # Safety
/// `info` must be NULL or point to a writable triplet.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_get_version_triplet(
    info: *mut crate::abi::VersionTriplet,
) -> Code {
    guard("rocprofiler_get_version_triplet", || {
        if info.is_null() {
            return Err(Status::InvalidArgument);
        }
        // SAFETY: checked non-null; the caller passes a writable triplet.
        unsafe {
            *info = crate::abi::VersionTriplet {
                major: 1,
                minor: 0,
                patch: 0,
            }
        };
        Ok(())
    })
}
