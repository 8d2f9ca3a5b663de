//! Tracing kinds, callback phases and status codes (defined in
//! `rocwasm-ids`, re-exported here), and the buffer policy.

use serde::{Deserialize, Serialize};

pub use rocwasm_ids::kind::{
    buffer, callback, external_correlation, phase, BufferTracingKind, CallbackPhase,
    CallbackTracingKind, ExternalCorrelationKind,
};
pub use rocwasm_ids::Status;

/// What a buffer does with a record that does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum BufferPolicy {
    /// Swap halves and deliver; the producer waits only when both halves are full.
    #[default]
    Lossless,
    /// Drop the record and count it; the count reaches the delivery as `drop_count`.
    Discard,
}
