//! What a failed call was: a wasmtime error classified into a
//! [`FailureCause`] (deadline, memory cap, stack, copy cap, other trap), with
//! the export that was running and the guest's Wasm backtrace.
//!
//! The plugin (`crate::plugin`) turns a [`Failed`] into a [`FailureReport`]
//! once its stage's policy has decided what to do about it.
//!
//! [`FailureReport`]: super::FailureReport

use std::time::Duration;

use wasmtime::{Trap, WasmBacktrace};

use super::FailureCause;
use crate::sandbox::{MemoryCapExceeded, COPY_CAP_ERROR, MAX_CALL_COPY_BYTES};

/// A failed call: why, in which export, and where in the guest.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) cause: FailureCause,
    /// `None` while making an instance (no export was running).
    pub(crate) export: Option<&'static str>,
    /// The guest's frames, innermost first (see
    /// [`FailureReport::backtrace`](super::FailureReport::backtrace)).
    pub(crate) backtrace: Vec<String>,
}

impl Failed {
    /// A failure the host found in what an export returned (no backtrace).
    pub(crate) fn returned(cause: FailureCause, export: &'static str) -> Failed {
        Failed {
            cause,
            export: Some(export),
            backtrace: Vec::new(),
        }
    }
}

/// What a call into a plugin gives: its result, or why it failed.
pub(crate) type CallResult<T> = Result<T, Failed>;

/// Works out why a call of `export` failed, with the guest's backtrace.
pub(crate) fn classify(
    e: wasmtime::Error,
    budget: Duration,
    export: Option<&'static str>,
) -> Failed {
    let trace = e.downcast_ref::<WasmBacktrace>();
    let backtrace = trace.map(frames).unwrap_or_default();
    let cause = if let Some(m) = e.downcast_ref::<MemoryCapExceeded>() {
        FailureCause::MemoryCap {
            limit: m.limit,
            requested: m.requested,
        }
    } else {
        match e.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => FailureCause::Deadline(budget),
            Some(Trap::StackOverflow) => FailureCause::StackOverflow,
            // `wasm trap: wasm `unreachable` …` without the first `wasm trap`:
            // the cause already reads `trap: …`.
            Some(t) => {
                let text = t.to_string();
                FailureCause::Trap(
                    text.strip_prefix("wasm trap: ")
                        .unwrap_or(&text)
                        .to_string(),
                )
            }
            None => {
                // The error's own messages, without the backtrace's (it is
                // reported frame by frame).
                let bt = trace.map(|t| t.to_string());
                let chain: Vec<String> = e
                    .chain()
                    .map(|c| c.to_string())
                    .filter(|c| Some(c) != bt.as_ref())
                    .collect();
                if chain.iter().any(|c| c.contains(COPY_CAP_ERROR)) {
                    FailureCause::Oversized(format!(
                        "the call copied more than {MAX_CALL_COPY_BYTES} bytes out of the guest"
                    ))
                } else {
                    FailureCause::Trap(chain.join(": "))
                }
            }
        }
    };
    Failed {
        cause,
        export,
        backtrace,
    }
}

/// One line per frame, innermost first: `module!function` (Rust names
/// demangled), then the source
/// location when the component carries debug info (and
/// `WASMTIME_BACKTRACE_DETAILS=1`).
fn frames(trace: &WasmBacktrace) -> Vec<String> {
    trace
        .frames()
        .iter()
        .map(|frame| {
            // Rust symbols demangled without their hash; other names as they are.
            let func = match frame.func_name() {
                Some(name) => format!("{:#}", rustc_demangle::demangle(name)),
                None => format!("<wasm function {}>", frame.func_index()),
            };
            let mut line = match frame.module().name() {
                Some(module) => format!("{module}!{func}"),
                None => func,
            };
            let at = frame.symbols().iter().find_map(|s| {
                let file = s.file()?;
                Some(match s.line() {
                    Some(l) => format!("{file}:{l}"),
                    None => file.to_string(),
                })
            });
            if let Some(at) = at {
                line.push_str(" at ");
                line.push_str(&at);
            }
            line
        })
        .collect()
}
