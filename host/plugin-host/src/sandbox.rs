//! The sandbox of one plugin: a memory cap and, for guests that import WASI,
//! a WASI context that denies everything.
//!
//! The time cap is not here: it is the store's epoch deadline, set before
//! every call (see `crate::plugin`), driven by the runtime's ticker thread.

use std::path::Path;

use wasmtime::{ResourceLimiter, Result};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

/// The error a guest's `memory.grow` traps with when it would pass the cap.
/// Trapping (instead of returning -1 to the guest) makes the failure precise:
/// the report says "memory cap" rather than whatever the guest's allocator
/// does when it runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("memory cap of {limit} bytes exceeded: the guest asked for {requested} bytes")]
pub struct MemoryCapExceeded {
    /// The cap in bytes.
    pub limit: usize,
    /// The linear memory, in bytes, all of the store's memories would have
    /// held after the growth.
    pub requested: usize,
}

/// A [`ResourceLimiter`] capping the total linear memory of one store.
#[derive(Debug)]
pub struct MemoryCap {
    limit: usize,
    /// Bytes held by every memory of the store (they are summed: a component
    /// may have several core instances, each with its own memory).
    used: usize,
}

impl MemoryCap {
    /// At most `limit` bytes of linear memory, all memories of the store
    /// together; nothing is held yet.
    pub fn new(limit: usize) -> Self {
        MemoryCap { limit, used: 0 }
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> Result<bool> {
        let total = self.used - current.min(self.used) + desired;
        if total > self.limit {
            return Err(wasmtime::Error::new(MemoryCapExceeded {
                limit: self.limit,
                requested: total,
            }));
        }
        self.used = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> Result<bool> {
        // Tables hold function references; a million is far beyond any plugin.
        Ok(desired <= 1 << 20)
    }
}

/// A WASI context with nothing in it: no environment, no arguments, no
/// network, no clocks beyond WASI's own, stdin empty, stdout/stderr
/// discarded, and at most the granted output directory preopened as `out`.
pub fn deny_all_wasi(output_dir: Option<&Path>) -> Result<WasiCtx> {
    let mut b = WasiCtxBuilder::new();
    b.allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }));
    if let Some(dir) = output_dir {
        b.preopened_dir(dir, "out", FsPerms::ReadWrite)?;
    }
    Ok(b.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_counts_all_memories_together() {
        let mut cap = MemoryCap::new(100);
        assert!(cap.memory_growing(0, 60, None).unwrap());
        let err = cap.memory_growing(0, 50, None).unwrap_err();
        let e = err.downcast_ref::<MemoryCapExceeded>().unwrap();
        assert_eq!((e.limit, e.requested), (100, 110));
        assert!(cap.memory_growing(60, 70, None).unwrap());
    }
}
