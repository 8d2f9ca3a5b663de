//! The sandbox of one plugin: a memory cap, a cap on what one call copies
//! out of the guest ([`MAX_CALL_COPY_BYTES`]) and, for guests that import
//! WASI, a WASI context that denies everything (its stdout and stderr go to
//! the host's log, line by line, under the stage's name).
//!
//! The time cap is not here: it is the store's epoch deadline, set before
//! every call (see `crate::plugin`), driven by the runtime's ticker thread.

use wasmtime::{ResourceLimiter, Result};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder};

use crate::guest_log::GuestOutput;

/// The most one call may copy from the guest into the host: the arguments
/// of one host import (a log message, an output file's contents) or the
/// result of one export (`fini`'s summary tables, a transform's batch),
/// counted in host bytes (wasmtime's "hostcall fuel", set per store). A
/// call that would copy more traps, and is reported as
/// [`FailureCause::Oversized`](crate::FailureCause::Oversized): the host
/// never allocates more than this on a guest's behalf in one call, however
/// large the guest's memory cap.
pub const MAX_CALL_COPY_BYTES: usize = 128 << 20;

/// How wasmtime words the error of a call past [`MAX_CALL_COPY_BYTES`]
/// (its error type is private).
pub(crate) const COPY_CAP_ERROR: &str = "fuel allocated for hostcalls has been exhausted";

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
    /// The most `used` has ever been.
    peak: usize,
}

impl MemoryCap {
    /// At most `limit` bytes of linear memory, all memories of the store
    /// together; nothing is held yet.
    pub fn new(limit: usize) -> Self {
        MemoryCap {
            limit,
            used: 0,
            peak: 0,
        }
    }

    /// The most linear memory the store has held at once, in bytes.
    pub fn peak(&self) -> usize {
        self.peak
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
        self.peak = self.peak.max(total);
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
/// discarded, and **no directory at all**: a guest's files go through the
/// `rocwasm:plugin/output` interface only, where every file is claimed once
/// in the run's output registry and counted against the stage's quota. (A
/// preopened output directory would let WASI writes bypass both.)
pub fn deny_all_wasi() -> Result<WasiCtx> {
    Ok(deny_all_builder().build())
}

/// As [`deny_all_wasi`], but the guest's stdout and stderr are logged: each
/// line as `[stage] line` (stderr at `warn`, stdout at `info`), at most
/// `lines_per_second` lines a second for both streams together (the
/// stage's `Limits::log_per_second`); lines beyond are dropped and counted.
/// What plugin runs get.
pub fn deny_all_wasi_logged(stage: &str, lines_per_second: u32) -> Result<WasiCtx> {
    let (stdout, stderr) = GuestOutput::pair(stage, lines_per_second);
    Ok(deny_all_wasi_writing_to(stdout, stderr))
}

fn deny_all_wasi_writing_to(stdout: GuestOutput, stderr: GuestOutput) -> WasiCtx {
    let mut b = deny_all_builder();
    b.stdout(stdout).stderr(stderr);
    b.build()
}

fn deny_all_builder() -> WasiCtxBuilder {
    let mut b = WasiCtxBuilder::new();
    b.allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }));
    b
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use wasmtime::component::ResourceTable;
    use wasmtime_wasi::cli::WasiCliCtxView;
    use wasmtime_wasi::p2::bindings::cli::{stderr, stdout};

    use super::*;
    use crate::guest_log::Stream;

    #[test]
    fn a_wasi_guests_stdout_and_stderr_are_logged_as_lines() {
        let logged: Arc<Mutex<Vec<(Stream, String)>>> = Arc::default();
        let l = logged.clone();
        let (out, err) = GuestOutput::pair_to(
            "js",
            100,
            Box::new(move |s, line| l.lock().unwrap().push((s, line))),
        );
        let mut wasi = deny_all_wasi_writing_to(out, err);
        let mut table = ResourceTable::new();
        // What the guest's `get-stderr` / `get-stdout` imports do.
        let mut view = WasiCliCtxView {
            ctx: wasi.cli(),
            table: &mut table,
        };
        let e = stderr::Host::get_stderr(&mut view).unwrap();
        let o = stdout::Host::get_stdout(&mut view).unwrap();
        table
            .get_mut(&e)
            .unwrap()
            .write(bytes::Bytes::from_static(b"Error: boom\n"))
            .unwrap();
        table
            .get_mut(&o)
            .unwrap()
            .write(bytes::Bytes::from_static(b"42 kernels\n"))
            .unwrap();
        assert_eq!(
            *logged.lock().unwrap(),
            vec![
                (Stream::Stderr, "[js] Error: boom".to_string()),
                (Stream::Stdout, "[js] 42 kernels".to_string()),
            ]
        );
    }

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
