//! Setting up contexts, buffers and services in `init`.
//!
//! The raw verbs are in [`crate::profiler`] (one per SDK function, each
//! returning the SDK status on failure). Most plugins want the same three
//! steps — a context, a buffer, buffer tracing for a few kinds, then start —
//! which [`trace_buffers`] does in one call:
//!
//! ```no_run
//! use rocwasm_plugin_sdk::{kind, services};
//! # fn init() -> Result<(), String> {
//! let tracing = services::trace_buffers(&[kind::buffer::KERNEL_DISPATCH])?;
//! # Ok(()) }
//! ```
//!
//! Remember: configuration is possible only during `init`. Afterwards every
//! configuring call fails with [`Status::ConfigurationLocked`].

use std::fmt;

use crate::profiler;
use crate::types::{BufferPolicy, Status};

/// Which SDK verb failed, for which kind, with which status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    pub call: &'static str,
    pub kind: Option<u32>,
    pub status: Status,
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind.and_then(crate::kind::buffer_kind_name) {
            Some(kind) => write!(f, "{}({kind}): {}", self.call, self.status.name()),
            None => write!(f, "{}: {}", self.call, self.status.name()),
        }
    }
}

impl std::error::Error for ServiceError {}

impl From<ServiceError> for String {
    fn from(e: ServiceError) -> String {
        e.to_string()
    }
}

/// Buffer parameters for [`trace_buffers_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferOptions {
    /// Bytes; the host rounds up to its page size.
    pub size: u64,
    /// Deliver when this many bytes are buffered.
    pub watermark: u64,
    pub policy: BufferPolicy,
}

impl Default for BufferOptions {
    /// 1 MiB, delivered at 7/8 full, lossless.
    fn default() -> Self {
        BufferOptions {
            size: 1 << 20,
            watermark: (1 << 20) / 8 * 7,
            policy: BufferPolicy::Lossless,
        }
    }
}

/// The context and buffer [`trace_buffers`] created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferTracing {
    pub context: u64,
    pub buffer: u64,
}

/// Creates a context and a default buffer, configures buffer tracing of
/// `kinds` (all operations) into it, and starts the context.
pub fn trace_buffers(kinds: &[u32]) -> Result<BufferTracing, ServiceError> {
    trace_buffers_with(kinds, BufferOptions::default())
}

/// [`trace_buffers`] with explicit buffer options.
pub fn trace_buffers_with(
    kinds: &[u32],
    options: BufferOptions,
) -> Result<BufferTracing, ServiceError> {
    let fail = |call, kind| move |status| ServiceError { call, kind, status };
    let context = profiler::create_context().map_err(fail("create-context", None))?;
    let buffer = profiler::create_buffer(context, options.size, options.watermark, options.policy)
        .map_err(fail("create-buffer", None))?;
    for &kind in kinds {
        profiler::configure_buffer_tracing(context, kind, &[], buffer)
            .map_err(fail("configure-buffer-tracing", Some(kind)))?;
    }
    profiler::start_context(context).map_err(fail("start-context", None))?;
    Ok(BufferTracing { context, buffer })
}

/// Adapts a status result for `?` in functions returning `Result<_, String>`,
/// naming the call: `profiler::flush_buffer(b).context("flush-buffer")?`.
pub trait StatusContext<T> {
    fn context(self, call: &'static str) -> Result<T, ServiceError>;
}

impl<T> StatusContext<T> for Result<T, Status> {
    fn context(self, call: &'static str) -> Result<T, ServiceError> {
        self.map_err(|status| ServiceError {
            call,
            kind: None,
            status,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_call_kind_and_status() {
        let e = ServiceError {
            call: "configure-buffer-tracing",
            kind: Some(11),
            status: Status::ConfigurationLocked,
        };
        assert_eq!(
            e.to_string(),
            "configure-buffer-tracing(KERNEL_DISPATCH): configuration-locked"
        );
        let e: Result<(), Status> = Err(Status::ContextNotFound);
        assert_eq!(
            String::from(e.context("start-context").unwrap_err()),
            "start-context: context-not-found"
        );
    }
}
