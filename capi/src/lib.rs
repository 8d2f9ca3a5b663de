//! `rocwasm-capi`: rocprofiler-sdk's C API over rocwasm's engine.
//!
//! A native tool written against rocprofiler-sdk (AMD's samples, the SDK
//! back ends of HPC tools) exports `rocprofiler_configure`, and from its
//! `initialize` creates contexts, buffers and tracing services through the
//! `rocprofiler_*` functions. This crate defines those functions
//! (`#[no_mangle]`, C ABI) on the same [`rocwasm_core::Profiler`] the Wasm
//! chain configures, so native tools and plugins see the same records in
//! one run. It is linked into the tool library (`host/process/intercept`), whose
//! SONAME is `librocprofiler-sdk.so.1`: a tool that links
//! `-lrocprofiler-sdk` resolves to it.
//!
//! The C side of the contract is the headers in `include/` (written here
//! from the published API: AMD's names, values and layouts); every number
//! this crate shares with them is read from them at build time
//! ([`abi::enums`]), and [`abi`]'s `#[repr(C)]` mirrors are checked against
//! the recorded ABI table by the crate's tests.
//!
//! The flow, from the tool library's point of view:
//!
//! 1. [`registration::configure_tools`] runs while the run's pipeline starts,
//!    before the engine's configuration locks: it finds every tool
//!    ([`registration`]: loaded objects exporting `rocprofiler_configure`,
//!    `ROCP_TOOL_LIBRARIES`, a forced configure), calls each `configure`
//!    and then each `initialize`; their calls land in [`context`],
//!    [`buffer`], [`callback_tracing`], [`external_correlation`].
//! 2. Buffers deliver on the engine's callback threads: [`records`] turns
//!    each columnar batch into the SDK's record structs and header array.
//! 3. [`registration::finalize_tools`] runs at the end of the run, before the
//!    engine finalizes: each tool's buffers are flushed, then its
//!    `finalize` is called, once.
//!
//! What is not implemented returns `ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED`
//! ([`unimplemented`]), never a silent success; `docs/NATIVE_TOOLS.md` lists it.

/// The C side's types, constants and layouts (shared with the SDK client).
pub use rocprofiler_sdk_sys as abi;
pub mod agents;
pub mod api_args;
pub mod buffer;
pub mod callback_tracing;
pub mod context;
pub mod counter_config;
pub mod counter_ids;
pub mod counter_info;
pub mod create_counter;
pub mod device_counting;
pub mod dispatch_counting;
pub mod external_correlation;
pub mod foreign;
mod guard;
pub mod hardware;
pub mod intercept_table;
pub mod names;
pub mod operations;
pub mod records;
pub mod registration;
pub mod state;
pub mod status;
pub mod unimplemented;
pub mod utility;

pub use registration::{configure_tools, finalize_tools, tools_requested};

#[cfg(test)]
mod tests {
    use crate::abi::enums;

    #[test]
    fn the_engines_kinds_have_the_headers_numbers() {
        for k in rocwasm_core::BufferTracingKind::ALL {
            let name = format!("ROCPROFILER_BUFFER_TRACING_{}", k.name());
            assert_eq!(
                enums::rocprofiler_buffer_tracing_kind::ALL
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| *v),
                Some(i64::from(k.raw())),
                "{name}"
            );
        }
        for k in rocwasm_core::CallbackTracingKind::ALL {
            let name = format!("ROCPROFILER_CALLBACK_TRACING_{}", k.name());
            assert_eq!(
                enums::rocprofiler_callback_tracing_kind::ALL
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| *v),
                Some(i64::from(k.raw())),
                "{name}"
            );
        }
        for k in rocwasm_core::ExternalCorrelationKind::ALL {
            let name = format!("ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_{}", k.name());
            assert_eq!(
                enums::rocprofiler_external_correlation_id_request_kind::ALL
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| *v),
                Some(i64::from(k.raw())),
                "{name}"
            );
        }
    }
}
