//! `callback_tracing.h`: synchronous callbacks at ENTER and EXIT of API
//! calls and for code-object events, with the tool's
//! `rocprofiler_user_data_t` kept between the phases (the engine's per-call
//! slot), and iteration over a call's arguments.
//!
//! Payloads: code objects and kernel symbols are the SDK's structs, filled
//! completely. API calls get the SDK's `…_api_data_t` with its `size`, the
//! return value (EXIT, when the runtime returned a number) and the
//! function's member of the argument union filled from the bytes
//! interception kept ([`crate::api_args`]). Argument iteration
//! (`rocprofiler_iterate_callback_tracing_kind_operation_args`) names each
//! argument with its C type, value as text, and the address of its value in
//! that payload (`docs/NATIVE_TOOLS.md`).

use std::cell::Cell;
use std::ffi::{c_int, c_void, CString};
use std::sync::Arc;

use rocwasm_capi_convert::callbacks::{
    api_data_to_c, copy_data_to_c, dispatch_data_to_c, record_to_c,
    runtime_initialization_data_to_c,
};
use rocwasm_capi_convert::symbols::{
    code_object_to_c, host_kernel_symbol_to_c, kernel_symbol_to_c,
};
use rocwasm_core::{
    Argument, CallbackPayload, CallbackRecord, CallbackSink, CallbackTracingKind, ContextId, Status,
};

use crate::abi::{
    c_offsetof, CallbackTracingRecord, CodeObjectLoadData, Handle, HostKernelSymbolRegisterData,
    KernelDispatchData, KernelSymbolRegisterData, MemoryCopyData, RuntimeInitializationData,
    UserData,
};
use crate::buffer::{engine_operations, slice};
use crate::foreign::call_tool;
use crate::guard::{guard, quietly};
use crate::operations;
use crate::state::engine;
use crate::status::Code;

pub use crate::abi::TracingCallback;

thread_local! {
    /// The engine record a callback on this thread is being made for, so
    /// argument iteration inside the callback can find its arguments.
    static CURRENT: Cell<*const CallbackRecord> = const { Cell::new(std::ptr::null()) };
}

struct CCallbackSink {
    callback: TracingCallback,
    data: usize,
}

/// The C type name of an API kind's data struct, for its size and the
/// offset of its return value and arguments.
fn api_data_type(kind: CallbackTracingKind) -> Option<&'static str> {
    crate::api_args::api_types(kind).map(|(data, _)| data)
}

/// The bytes behind a record's payload pointer, kept alive for the callback.
enum Payload {
    None,
    Bytes(Vec<u64>),
    CodeObject(Box<CodeObjectLoadData>),
    Symbol(Box<KernelSymbolRegisterData>),
    HostSymbol(Box<HostKernelSymbolRegisterData>),
    Dispatch(Box<KernelDispatchData>),
    Copy(Box<MemoryCopyData>),
    RuntimeInit(Box<RuntimeInitializationData>),
}

impl Payload {
    fn pointer(&mut self) -> *mut c_void {
        match self {
            Payload::None => std::ptr::null_mut(),
            Payload::Bytes(b) => b.as_mut_ptr() as *mut c_void,
            Payload::CodeObject(c) => &mut **c as *mut CodeObjectLoadData as *mut c_void,
            Payload::Symbol(s) => &mut **s as *mut KernelSymbolRegisterData as *mut c_void,
            Payload::HostSymbol(s) => &mut **s as *mut HostKernelSymbolRegisterData as *mut c_void,
            Payload::Dispatch(d) => &mut **d as *mut KernelDispatchData as *mut c_void,
            Payload::Copy(c) => &mut **c as *mut MemoryCopyData as *mut c_void,
            Payload::RuntimeInit(r) => &mut **r as *mut RuntimeInitializationData as *mut c_void,
        }
    }
}

/// The C payload of an engine callback (each struct written by
/// `rocwasm_capi_convert`, beside the tool's way back).
fn payload_of(record: &CallbackRecord) -> Payload {
    match &record.payload {
        CallbackPayload::Api { args, retval } => {
            let Some(mut bytes) = api_data_to_c(record.kind, retval.as_deref()) else {
                return Payload::None;
            };
            let args_at =
                api_data_type(record.kind).and_then(|ty| c_offsetof(&format!("{ty}.args")));
            if let Some(union) = args_at.and_then(|off| bytes.get_mut(off..)) {
                crate::api_args::fill(record.kind, record.operation, args, union);
            }
            Payload::Bytes(
                bytes
                    .chunks_exact(8)
                    .map(|w| u64::from_ne_bytes(w.try_into().unwrap_or_default()))
                    .collect(),
            )
        }
        CallbackPayload::CodeObjectLoad(co) => Payload::CodeObject(Box::new(code_object_to_c(co))),
        CallbackPayload::KernelSymbolRegister(k) => {
            Payload::Symbol(Box::new(kernel_symbol_to_c(k)))
        }
        CallbackPayload::HostKernelSymbolRegister(h) => {
            Payload::HostSymbol(Box::new(host_kernel_symbol_to_c(h)))
        }
        CallbackPayload::RuntimeInitialization { version, instance } => Payload::RuntimeInit(
            Box::new(runtime_initialization_data_to_c(*version, *instance)),
        ),
        CallbackPayload::KernelDispatch(k) => Payload::Dispatch(Box::new(dispatch_data_to_c(k))),
        CallbackPayload::MemoryCopy(c) => Payload::Copy(Box::new(copy_data_to_c(c))),
        CallbackPayload::None => Payload::None,
    }
}

impl CallbackSink for CCallbackSink {
    fn on_callback(&self, record: &CallbackRecord, user_data: &mut u64) {
        quietly("a native tool's tracing callback", || {
            let mut payload = payload_of(record);
            let operation = operations::callback(record.kind).to_sdk(record.operation);
            let c = record_to_c(record, operation, payload.pointer());
            let before = CURRENT.with(|cur| cur.replace(record as *const CallbackRecord));
            let user_data = user_data as *mut u64 as *mut UserData;
            call_tool("a native tool's tracing callback", || {
                // SAFETY: the tool's callback with the documented arguments;
                // `user_data` is this call's 64-bit slot (a `u64` has the
                // union's size and alignment) and outlives the call, as does
                // the payload.
                unsafe { (self.callback)(c, user_data, self.data as *mut c_void) }
            });
            CURRENT.with(|cur| cur.set(before));
        });
    }
}

/// `rocprofiler_configure_callback_tracing_service`.
///
/// # Safety
/// `operations_ptr` must point to `operations_count` values (or be NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_configure_callback_tracing_service(
    context_id: Handle,
    kind: c_int,
    operations_ptr: *const i32,
    operations_count: usize,
    callback: Option<TracingCallback>,
    callback_args: *mut c_void,
) -> Code {
    guard("rocprofiler_configure_callback_tracing_service", || {
        let callback = callback.ok_or(Status::InvalidArgument)?;
        let kind = u32::try_from(kind)
            .ok()
            .and_then(CallbackTracingKind::from_raw)
            .ok_or(Status::KindNotFound)?;
        // SAFETY: the caller passes `operations_count` readable values.
        let sdk_ops = unsafe { slice(operations_ptr, operations_count) };
        let ops = engine_operations(operations::callback(kind), sdk_ops)?;
        if !sdk_ops.is_empty() && ops.is_empty() {
            // Only operations this runtime does not have: nothing to call back.
            return Ok(());
        }
        let sink = Arc::new(CCallbackSink {
            callback,
            data: callback_args as usize,
        });
        engine()?.configure_callback_tracing(ContextId(context_id.handle), kind, &ops, sink)
    })
}

pub use crate::abi::ArgCallback;

/// `rocprofiler_iterate_callback_tracing_kind_operation_args`: the
/// arguments of the call `record` describes, in declaration order, with
/// their C type, name and value as text; until the callback returns
/// non-zero. Valid inside the tracing callback that received `record`
/// (the engine keeps no arguments after it). `arg_value_addr` points to
/// the argument's value in `record.payload`'s argument union (its name is
/// then the union field's, AMD's spelling), or, for a function the union
/// has no member for, to a copy of the value that lives as long as the
/// callback; NULL only when interception kept no bytes (never for calls it
/// traced).
#[no_mangle]
pub extern "C" fn rocprofiler_iterate_callback_tracing_kind_operation_args(
    record: CallbackTracingRecord,
    callback: Option<ArgCallback>,
    _max_dereference_count: i32,
    user_data: *mut c_void,
) -> Code {
    guard(
        "rocprofiler_iterate_callback_tracing_kind_operation_args",
        || {
            let callback = callback.ok_or(Status::InvalidArgument)?;
            let current = CURRENT.with(Cell::get);
            if current.is_null() {
                return Err(Status::InvalidArgument);
            }
            // SAFETY: set by the sink for the duration of the tool's callback on
            // this thread, which is where this function is being called from.
            let current = unsafe { &*current };
            if current.correlation.internal != record.correlation_id.internal
                || current.kind.raw() as c_int != record.kind
            {
                return Err(Status::InvalidArgument);
            }
            let CallbackPayload::Api { args, .. } = &current.payload else {
                return Ok(());
            };
            // Where the payload's argument union starts, if the record
            // carries one (it does when the callback got it from us).
            let union = api_data_type(current.kind)
                .and_then(|ty| c_offsetof(&format!("{ty}.args")))
                .filter(|_| !record.payload.is_null())
                .map(|off| record.payload as usize + off);
            let fields = crate::api_args::fields(current.kind, current.operation, args);
            for (i, a) in args.iter().enumerate() {
                let field = fields.zip(union).map(|(f, base)| (&f[i], base));
                if call_arg(callback, record, i as u32, a, field, user_data) != 0 {
                    break;
                }
            }
            Ok(())
        },
    )
}

/// Calls the tool back with argument `i`; `field` is its field in the
/// payload's union (and the union's address), if the union has one.
fn call_arg(
    callback: ArgCallback,
    record: CallbackTracingRecord,
    i: u32,
    a: &Argument,
    field: Option<(&crate::api_args::Field, usize)>,
    data: *mut c_void,
) -> c_int {
    let ty = CString::new(a.type_name.as_str()).unwrap_or_default();
    let name = CString::new(field.map_or(a.name.as_str(), |(f, _)| f.name)).unwrap_or_default();
    let value = CString::new(a.value.as_str()).unwrap_or_default();
    let indirection = a.type_name.matches('*').count() as i32;
    let address = match field {
        Some((f, base)) => (base + f.offset) as *const c_void,
        None if !a.bytes.is_empty() => a.bytes.as_ptr() as *const c_void,
        None => std::ptr::null(),
    };
    call_tool("a native tool's argument callback", || {
        // SAFETY: the tool's callback with the documented arguments; the
        // strings live until it returns.
        unsafe {
            callback(
                record.kind,
                record.operation as u32,
                i,
                address,
                indirection,
                ty.as_ptr(),
                name.as_ptr(),
                value.as_ptr(),
                0,
                data,
            )
        }
    })
    // An exception ends the iteration.
    .unwrap_or(1)
}
