//! What tools receive synchronously: callback records, external-correlation
//! requests, and the sink traits through which the engine hands them (and
//! buffered batches) to a tool.
//!
//! The types mirror the WIT records of `wit/types.wit` (`callback-record`,
//! `external-correlation-request`, `delivery-info`, …) field by field, so the
//! plugin runtime converts them without thinking.

use serde::{Deserialize, Serialize};

use crate::batch::{Batch, KernelDispatch, MemoryCopy};
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
    /// The parameter's name in the C declaration, e.g. `sizeBytes`.
    pub name: String,
    /// The parameter's C type as declared, e.g. `size_t` or `void**`.
    pub type_name: String,
    /// The value rendered as text when the callback is made (at EXIT, an
    /// output parameter shows what the call wrote).
    pub value: String,
    /// The value's bytes as the C call passed it (for a pointer, the
    /// address), in the machine's byte order; empty when the producer did
    /// not keep them (replays).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bytes: Vec<u8>,
}

impl Argument {
    /// An argument from its name, C type and any displayable value.
    pub fn new(
        name: impl Into<String>,
        type_name: impl Into<String>,
        value: impl ToString,
    ) -> Self {
        Argument {
            name: name.into(),
            type_name: type_name.into(),
            value: value.to_string(),
            bytes: Vec::new(),
        }
    }

    /// The same argument with its value's bytes.
    pub fn with_bytes(mut self, bytes: Vec<u8>) -> Self {
        self.bytes = bytes;
        self
    }
}

/// What a callback is about, beyond kind and operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum CallbackPayload {
    /// An API call: its arguments (ENTER and EXIT) and return value (EXIT only).
    Api {
        /// Every argument in declaration order, rendered when the callback
        /// is made (only when some callback will receive them).
        args: Vec<Argument>,
        /// The rendered return value, e.g. `hipSuccess` or `0`; `None` at
        /// ENTER.
        retval: Option<String>,
    },
    /// A code object was loaded (ENTER) or is being unloaded (EXIT).
    CodeObjectLoad(CodeObject),
    /// A kernel symbol was registered (ENTER) or is being unregistered (EXIT).
    KernelSymbolRegister(KernelSymbol),
    /// HIP registered a host function for a loaded kernel symbol (ENTER).
    HostKernelSymbolRegister(HostKernelSymbol),
    /// A kernel dispatch: at ENQUEUE (ENTER and EXIT) its dispatch info
    /// with no timestamps; at COMPLETE (phase NONE) the record its buffers
    /// get.
    KernelDispatch(KernelDispatch),
    /// A memory copy: at submission (ENTER) its agents, size and addresses
    /// with no timestamps; at completion (EXIT) the record its buffers get.
    MemoryCopy(MemoryCopy),
    /// A runtime came up (phase NONE): `version` = 10000·major +
    /// 100·minor + patch; `instance` counts earlier loads of it.
    RuntimeInitialization {
        /// The runtime's version number.
        version: u64,
        /// How many times the runtime was loaded before.
        instance: u64,
    },
    /// No payload.
    None,
}

/// What HIP registered for a kernel (`__hipRegisterFunction`), reported
/// with the device symbol it names when its code object is loaded (the
/// SDK's `…_host_kernel_symbol_register_data_t`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostKernelSymbol {
    /// Numbers host registrations as they are reported, from 1.
    pub host_function_id: u64,
    /// The device symbol's kernel id.
    pub kernel_id: u64,
    /// The device symbol's code object.
    pub code_object_id: u64,
    /// The host stub's address (what `hipLaunchKernel` is given).
    pub host_function: u64,
    /// The device function's name as registered.
    pub device_function: String,
    /// The rest of what the program registered.
    pub registration: HostRegistration,
}

/// What `__hipRegisterFunction` is given besides the host stub and the
/// names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRegistration {
    /// The fat binary's module handle (`modules`).
    pub modules: u64,
    /// `threadLimit`.
    pub thread_limit: u32,
    /// `*tid`, `*bid`, `*blockDim` and `*gridDim` (zeros where the
    /// program passed none, as compilers do).
    pub thread_ids: [u32; 3],
    /// See `thread_ids`.
    pub block_ids: [u32; 3],
    /// See `thread_ids`.
    pub block_dims: [u32; 3],
    /// See `thread_ids`.
    pub grid_dims: [u32; 3],
    /// `*wSize` (0 where none).
    pub workgroup_size: u64,
}

/// The phase of a callback, `None` for async completions (the SDK's
/// `ROCPROFILER_CALLBACK_PHASE_NONE` = 0).
pub type Phase = Option<CallbackPhase>;

/// One callback-tracing record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallbackRecord {
    /// The context whose callback-tracing service this record is for.
    pub context: ContextId,
    /// What the callback describes (`rocprofiler_callback_tracing_kind_t`).
    pub kind: CallbackTracingKind,
    /// The operation within `kind`: the API function, or e.g. `LOAD` /
    /// `DEVICE_KERNEL_SYMBOL_REGISTER` for `CODE_OBJECT`.
    pub operation: u32,
    /// ENTER or EXIT; `None` for an async completion.
    pub phase: Phase,
    /// The record's correlation ids; `external` is this context's.
    pub correlation: Correlation,
    /// Kernel thread id of the thread the event belongs to: the calling
    /// thread, or for an async completion the launching thread (the callback
    /// itself may run on another).
    pub thread_id: u64,
    /// When the callback was made: `CLOCK_BOOTTIME` nanoseconds. At the EXIT
    /// of an API call it equals the buffered record's `end`.
    pub timestamp: u64,
    /// Arguments, code object or kernel symbol, depending on `kind`.
    pub payload: CallbackPayload,
}

/// An external-correlation-id request, asked synchronously on the calling thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalCorrelationRequest {
    /// Kernel thread id of the calling (or launching) thread.
    pub thread_id: u64,
    /// The context whose external id is asked for.
    pub context: ContextId,
    /// The `rocprofiler_external_correlation_id_request_kind_t` of the event
    /// (HIP runtime API, kernel dispatch, memory copy, …).
    pub kind: ExternalCorrelationKind,
    /// The operation within `kind`'s domain, as in the event's record.
    pub operation: u32,
    /// The internal correlation id the event's records will carry.
    pub internal_correlation_id: u64,
}

/// Where a batch came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryInfo {
    /// The context the buffer belongs to.
    pub context: ContextId,
    /// The buffer that delivered the batch.
    pub buffer: BufferId,
    /// Records the buffer dropped since the previous delivery. Only a
    /// DISCARD buffer drops in normal operation; a LOSSLESS buffer drops only
    /// records that a callback thread (a sink) produced while both halves
    /// were full, since that thread must not wait for a delivery.
    pub drop_count: u64,
    /// The process the records were traced in, as an index into the
    /// embedder's table of the run's processes: 0 is the run's own (the
    /// profiled process, or the one recording replayed); a replay of
    /// several processes' recordings numbers them from 1. The engine's own
    /// buffers always deliver 0.
    #[serde(default)]
    pub process: u32,
}

/// Receives a buffer's batches, on the buffer's callback thread.
pub trait BufferSink: Send + Sync {
    /// Takes one delivery. Runs with no engine lock held, so it may call any
    /// tool-facing [`crate::Profiler`] method (flushing a buffer served by
    /// this same callback thread returns BUFFER_BUSY).
    fn deliver(&self, info: DeliveryInfo, batch: Batch);
}

/// Receives callback records, synchronously on the thread that made the call.
/// `user_data` is this context's slot for this call: what ENTER writes, EXIT reads.
pub trait CallbackSink: Send + Sync {
    /// Handles one record. For an API call it runs twice, at ENTER and at
    /// EXIT, with the same `user_data`; async completions and code-object
    /// events get a fresh 0 each time.
    fn on_callback(&self, record: &CallbackRecord, user_data: &mut u64);
}

/// Answers external-correlation requests, synchronously on the calling thread.
/// `Some(v)` sets the external id to `v`; `None` means "use the pushed value"
/// (the SDK's non-zero return).
pub trait ExternalCorrelationSink: Send + Sync {
    /// Answers one request: the external id for this event, or `None` for
    /// the pushed value (the thread's top, else the main thread's, else 0).
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
