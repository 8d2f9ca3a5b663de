//! The synchronisation calls that also hand the memory freed with
//! `hipFreeAsync` back to the system, like the real runtime's:
//! `hipStreamSynchronize` and `hipDeviceSynchronize` (`hipEventSynchronize`
//! does the same in `event.rs`).
//!
//! Above both `stream` (the wait) and `pool` (the hand-back,
//! [`pool::release_freed`]); nothing uses this module.

use crate::device::{self, runtime};
use crate::error::*;
use crate::pool;
use crate::stream::{self, hipStream_t};

pub extern "C" fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t {
    api!("hipStreamSynchronize", {
        match stream::resolve(stream) {
            Ok(s) => {
                s.synchronize();
                // Like the real runtime: a sync returns the memory freed
                // with hipFreeAsync to the system (`pool::release_freed`).
                pool::release_freed(s.device);
                hipSuccess
            }
            Err(e) => e,
        }
    })
}

pub extern "C" fn hipDeviceSynchronize() -> hipError_t {
    api!("hipDeviceSynchronize", {
        if let Err(e) = runtime() {
            return e;
        }
        stream::synchronize_device(device::current());
        pool::release_freed(device::current());
        hipSuccess
    })
}
