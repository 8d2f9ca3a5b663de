//! Tracing kinds, callback phases, status codes and buffer policies: all
//! defined once in `rocwasm-ids` and re-exported here.

pub use rocwasm_ids::kind::{
    BufferPolicy, BufferTracingKind, CallbackPhase, CallbackTracingKind, ExternalCorrelationKind,
};
pub use rocwasm_ids::Status;
