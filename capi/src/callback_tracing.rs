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
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

use rocwasm_core::{
    Argument, CallbackPayload, CallbackRecord, CallbackSink, CallbackTracingKind, ContextId, Status,
};

use crate::abi::{
    c_offsetof, c_sizeof, CallbackTracingRecord, CodeObjectLoadData, Dim3, Handle,
    HostKernelSymbolRegisterData, HsaAgent, KernelDispatchData, KernelSymbolRegisterData,
    MemoryCopyData, RuntimeInitializationData, UserData,
};
use crate::buffer::{engine_operations, slice};
use crate::foreign::call_tool;
use crate::guard::{guard, quietly};
use crate::operations;
use crate::records::correlation_of;
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

/// A code object's URI or a kernel's name as a C string that lives as long
/// as the process: tools keep the `kernel_name` and `uri` pointers of the
/// records they are given (AMD's samples read them when later dispatch
/// records arrive), as the SDK keeps them valid until the code object is
/// unloaded. Each distinct string is kept once.
fn lasting(text: &str) -> *const c_char {
    static KEPT: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, &'static std::ffi::CStr>>,
    > = std::sync::OnceLock::new();
    let mut kept = KEPT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    kept.entry(text.to_string())
        .or_insert_with(|| Box::leak(CString::new(text).unwrap_or_default().into_boxed_c_str()))
        .as_ptr()
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

fn payload_of(record: &CallbackRecord) -> Payload {
    match &record.payload {
        CallbackPayload::Api { retval, .. } => {
            let Some(ty) = api_data_type(record.kind) else {
                return Payload::None;
            };
            let Some(size) = c_sizeof(ty) else {
                return Payload::None;
            };
            let mut bytes = vec![0u8; size.div_ceil(8) * 8];
            bytes[..8].copy_from_slice(&(size as u64).to_ne_bytes());
            let number = retval.as_deref().and_then(|v| {
                v.parse::<i64>().ok().or_else(|| {
                    v.strip_prefix("0x")
                        .and_then(|h| i64::from_str_radix(h, 16).ok())
                })
            });
            if let (Some(n), Some(off)) = (number, c_offsetof(&format!("{ty}.retval"))) {
                if let Some(dst) = bytes.get_mut(off..off + 8) {
                    dst.copy_from_slice(&n.to_ne_bytes());
                }
            }
            if let (CallbackPayload::Api { args, .. }, Some(off)) =
                (&record.payload, c_offsetof(&format!("{ty}.args")))
            {
                if let Some(union) = bytes.get_mut(off..) {
                    crate::api_args::fill(record.kind, record.operation, args, union);
                }
            }
            Payload::Bytes(
                bytes
                    .chunks_exact(8)
                    .map(|w| u64::from_ne_bytes(w.try_into().unwrap_or_default()))
                    .collect(),
            )
        }
        CallbackPayload::CodeObjectLoad(co) => {
            use crate::abi::enums::rocprofiler_code_object_storage_type as storage;
            let (storage_type, a, b) = match co.storage {
                rocwasm_core::CodeObjectStorage::None => {
                    (storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_NONE, 0, 0)
                }
                rocwasm_core::CodeObjectStorage::File { fd } => (
                    storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_FILE,
                    fd as u32 as u64,
                    0,
                ),
                rocwasm_core::CodeObjectStorage::Memory { base, size } => (
                    storage::ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_MEMORY,
                    base,
                    size,
                ),
            };
            let storage_type = storage_type as c_int;
            let data = Box::new(CodeObjectLoadData {
                size: std::mem::size_of::<CodeObjectLoadData>() as u64,
                code_object_id: co.id,
                agent_id: Handle {
                    handle: co.agent_id,
                },
                // The engine keeps agents by rocprofiler id; the HSA handle
                // is not recorded (0, documented in docs/NATIVE_TOOLS.md).
                hsa_agent: HsaAgent { handle: 0 },
                uri: lasting(&co.uri),
                load_base: co.load_base,
                load_size: co.load_size,
                load_delta: co.load_delta,
                storage_type,
                storage_a: a,
                storage_b: b,
            });
            Payload::CodeObject(data)
        }
        CallbackPayload::KernelSymbolRegister(k) => {
            let data = Box::new(KernelSymbolRegisterData {
                size: std::mem::size_of::<KernelSymbolRegisterData>() as u64,
                kernel_id: k.id,
                code_object_id: k.code_object_id,
                kernel_name: lasting(&k.name),
                kernel_object: k.kernel_object,
                kernarg_segment_size: k.kernarg_segment_size,
                kernarg_segment_alignment: k.kernarg_segment_alignment,
                group_segment_size: k.group_segment_size,
                private_segment_size: k.private_segment_size,
                sgpr_count: k.sgpr_count,
                arch_vgpr_count: k.arch_vgpr_count,
                accum_vgpr_count: k.accum_vgpr_count,
                kernel_code_entry_byte_offset: k.kernel_code_entry_byte_offset,
                kernel_address: k.kernel_address,
            });
            Payload::Symbol(data)
        }
        CallbackPayload::HostKernelSymbolRegister(h) => {
            let dim3 = |[x, y, z]: [u32; 3]| Dim3 { x, y, z };
            let r = &h.registration;
            Payload::HostSymbol(Box::new(HostKernelSymbolRegisterData {
                size: std::mem::size_of::<HostKernelSymbolRegisterData>() as u64,
                host_function_id: h.host_function_id,
                kernel_id: h.kernel_id,
                code_object_id: h.code_object_id,
                host_function: h.host_function,
                modules: r.modules,
                device_function: lasting(&h.device_function),
                thread_limit: r.thread_limit,
                thread_ids: dim3(r.thread_ids),
                block_ids: dim3(r.block_ids),
                block_dims: dim3(r.block_dims),
                grid_dims: dim3(r.grid_dims),
                workgroup_size: r.workgroup_size,
            }))
        }
        CallbackPayload::RuntimeInitialization { version, instance } => {
            Payload::RuntimeInit(Box::new(RuntimeInitializationData {
                size: std::mem::size_of::<RuntimeInitializationData>() as u64,
                version: *version,
                instance: *instance,
            }))
        }
        CallbackPayload::KernelDispatch(k) => Payload::Dispatch(Box::new(KernelDispatchData {
            size: std::mem::size_of::<KernelDispatchData>() as u64,
            start_timestamp: k.start,
            end_timestamp: k.end,
            dispatch_info: crate::records::dispatch_info(k),
        })),
        CallbackPayload::MemoryCopy(c) => Payload::Copy(Box::new(MemoryCopyData {
            size: std::mem::size_of::<MemoryCopyData>() as u64,
            start_timestamp: c.start,
            end_timestamp: c.end,
            dst_agent_id: Handle {
                handle: c.dst_agent_id,
            },
            src_agent_id: Handle {
                handle: c.src_agent_id,
            },
            bytes: c.bytes,
            dst_address: c.dst_address,
            src_address: c.src_address,
        })),
        CallbackPayload::None => Payload::None,
    }
}

impl CallbackSink for CCallbackSink {
    fn on_callback(&self, record: &CallbackRecord, user_data: &mut u64) {
        quietly("a native tool's tracing callback", || {
            let mut payload = payload_of(record);
            let c = CallbackTracingRecord {
                context_id: Handle {
                    handle: record.context.0,
                },
                thread_id: record.thread_id,
                correlation_id: correlation_of(&record.correlation),
                kind: record.kind.raw() as c_int,
                operation: operations::callback(record.kind).to_sdk(record.operation),
                phase: record.phase.map_or(0, |p| p.raw() as c_int),
                payload: payload.pointer(),
            };
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
