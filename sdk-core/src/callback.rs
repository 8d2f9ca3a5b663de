//! What tools receive synchronously: callback records, external-correlation
//! requests, and the sink traits through which the engine hands them (and
//! buffered batches) to a tool.
//!
//! The types mirror the WIT records of `wit/types.wit` (`callback-record`,
//! `external-correlation-request`, `delivery-info`, …) field by field, so the
//! plugin runtime converts them without thinking.

use serde::{Deserialize, Serialize};

use crate::batch::Batch;
use crate::kind::{CallbackPhase, CallbackTracingKind, ExternalCorrelationKind};
use crate::symbols::{CodeObject, KernelSymbol};

/// A context handle (`rocprofiler_context_id_t`). Ids start at 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ContextId(pub u64);

/// A buffer handle (`rocprofiler_buffer_id_t`). Ids start at 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BufferId(pub u64);

/// A callback (delivery) thread handle. [`CallbackThreadId::DEFAULT`] always exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CallbackThreadId(pub u64);

impl CallbackThreadId {
    /// The thread every buffer is served by unless assigned elsewhere.
    pub const DEFAULT: CallbackThreadId = CallbackThreadId(0);
}

/// The three correlation ids of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Correlation {
    /// The global internal id of the API call (or of the launching call, for
    /// async records).
    pub internal: u64,
    /// The tool's external id for this context (0 when none).
    pub external: u64,
    /// The internal id of the enclosing traced call on the same thread; 0 at top level.
    pub ancestor: u64,
}

/// An API-call argument rendered as text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Argument {
    pub name: String,
    pub type_name: String,
    pub value: String,
}

impl Argument {
    pub fn new(
        name: impl Into<String>,
        type_name: impl Into<String>,
        value: impl ToString,
    ) -> Self {
        Argument {
            name: name.into(),
            type_name: type_name.into(),
            value: value.to_string(),
        }
    }
}

/// What a callback is about, beyond kind and operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CallbackPayload {
    /// An API call: its arguments (ENTER and EXIT) and return value (EXIT only).
    Api {
        args: Vec<Argument>,
        retval: Option<String>,
    },
    /// A code object was loaded (ENTER) or is being unloaded (EXIT).
    CodeObjectLoad(CodeObject),
    /// A kernel symbol was registered (ENTER) or is being unregistered (EXIT).
    KernelSymbolRegister(KernelSymbol),
    None,
}

/// The phase of a callback, `None` for async completions (the SDK's
/// `ROCPROFILER_CALLBACK_PHASE_NONE` = 0).
pub type Phase = Option<CallbackPhase>;

/// One callback-tracing record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallbackRecord {
    pub context: ContextId,
    pub kind: CallbackTracingKind,
    pub operation: u32,
    pub phase: Phase,
    pub correlation: Correlation,
    pub thread_id: u64,
    pub timestamp: u64,
    pub payload: CallbackPayload,
}

/// An external-correlation-id request, asked synchronously on the calling thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalCorrelationRequest {
    pub thread_id: u64,
    pub context: ContextId,
    pub kind: ExternalCorrelationKind,
    pub operation: u32,
    pub internal_correlation_id: u64,
}

/// Where a batch came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryInfo {
    pub context: ContextId,
    pub buffer: BufferId,
    /// Records a DISCARD buffer dropped since the previous delivery (always 0
    /// for LOSSLESS buffers).
    pub drop_count: u64,
}

/// Receives a buffer's batches, on the buffer's callback thread.
pub trait BufferSink: Send + Sync {
    fn deliver(&self, info: DeliveryInfo, batch: Batch);
}

/// Receives callback records, synchronously on the thread that made the call.
/// `user_data` is this context's slot for this call: what ENTER writes, EXIT reads.
pub trait CallbackSink: Send + Sync {
    fn on_callback(&self, record: &CallbackRecord, user_data: &mut u64);
}

/// Answers external-correlation requests, synchronously on the calling thread.
/// `Some(v)` sets the external id to `v`; `None` means "use the pushed value"
/// (the SDK's non-zero return).
pub trait ExternalCorrelationSink: Send + Sync {
    fn request(&self, request: &ExternalCorrelationRequest) -> Option<u64>;
}

impl<F: Fn(DeliveryInfo, Batch) + Send + Sync> BufferSink for F {
    fn deliver(&self, info: DeliveryInfo, batch: Batch) {
        self(info, batch)
    }
}

impl<F: Fn(&CallbackRecord, &mut u64) + Send + Sync> CallbackSink for F {
    fn on_callback(&self, record: &CallbackRecord, user_data: &mut u64) {
        self(record, user_data)
    }
}

impl<F: Fn(&ExternalCorrelationRequest) -> Option<u64> + Send + Sync> ExternalCorrelationSink
    for F
{
    fn request(&self, request: &ExternalCorrelationRequest) -> Option<u64> {
        self(request)
    }
}
