//! `buffer.h`, `buffer_tracing.h` (the service) and the callback threads of
//! `internal_threading.h`: buffers and threads are the engine's; what this
//! module adds is the delivery into a C callback ([`CBufferSink`]).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use rocwasm_core::{
    Batch, BufferId, BufferPolicy, BufferSink, BufferTracingKind, CallbackThreadId, Client,
    ContextId, DeliveryInfo, Status,
};

use crate::abi::records::{CounterRecord, DispatchCountingRecord};
use crate::abi::{enums, Handle, RecordHeader};
use crate::guard::{guard, quietly};
use crate::operations;
use crate::records::Delivery;
use crate::state::{self, engine};
use crate::status::Code;

pub use crate::abi::BufferCallback;

/// A buffer's deliveries into a tool's callback.
struct CBufferSink {
    callback: BufferCallback,
    data: usize,
    owner: Option<Arc<Client>>,
}

impl BufferSink for CBufferSink {
    fn deliver(&self, info: DeliveryInfo, batch: Batch) {
        if let Some(owner) = &self.owner {
            if owner.is_finished() {
                owner.count_undelivered(batch.len() as u64);
                return;
            }
        }
        if batch.is_empty() && info.drop_count == 0 {
            return;
        }
        quietly("a native tool's buffer delivery", || {
            let mut delivery = Delivery::new(&batch);
            let (headers, n) = delivery.headers();
            let (context, buffer) = (
                Handle {
                    handle: info.context.0,
                },
                Handle {
                    handle: info.buffer.0,
                },
            );
            crate::foreign::call_tool("a native tool's buffer callback", || {
                // SAFETY: the tool's callback with the documented arguments;
                // the headers and records live in `delivery` until it
                // returns.
                unsafe {
                    (self.callback)(
                        context,
                        buffer,
                        headers,
                        n,
                        self.data as *mut c_void,
                        info.drop_count,
                    )
                }
            });
        });
    }
}

/// Dispatch counting's records kept for a buffer (see
/// [`crate::dispatch_counting`]): each dispatch's header and values.
#[derive(Default)]
struct Counting {
    /// Each dispatch's header and values; device counting's values come
    /// without a header.
    groups: Vec<(Option<DispatchCountingRecord>, Vec<CounterRecord>)>,
    bytes: u64,
}

// SAFETY: the records' user-data unions may hold a tool's pointer, which
// is only handed back to the tool; nothing here dereferences it.
unsafe impl Send for Counting {}

/// A native tool's buffer: its delivery, context and watermark, and the
/// counter records kept for it.
struct Registered {
    sink: Arc<CBufferSink>,
    context: u64,
    watermark: u64,
    counting: Mutex<Counting>,
    /// Held while the tool's callback runs: one delivery at a time, in
    /// order, as the SDK's buffer makes them.
    delivering: Mutex<()>,
}

thread_local! {
    /// The buffers whose counter records this thread is delivering (a
    /// tool that flushes its buffer from its callback gets nothing more).
    static DELIVERING: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn registered() -> &'static Mutex<HashMap<u64, Arc<Registered>>> {
    static REGISTERED: std::sync::OnceLock<Mutex<HashMap<u64, Arc<Registered>>>> =
        std::sync::OnceLock::new();
    REGISTERED.get_or_init(Default::default)
}

fn registered_buffer(buffer: u64) -> Option<Arc<Registered>> {
    registered()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&buffer)
        .cloned()
}

/// Keeps a dispatch's counter records for `buffer`; delivers what it keeps
/// once that reaches the buffer's watermark.
pub(crate) fn keep_counting(
    buffer: BufferId,
    header: DispatchCountingRecord,
    values: Vec<CounterRecord>,
) {
    keep(buffer, Some(header), values);
}

/// Keeps device counting's values for `buffer` (as [`keep_counting`]).
pub(crate) fn keep_values(buffer: BufferId, values: Vec<CounterRecord>) {
    keep(buffer, None, values);
}

fn keep(buffer: BufferId, header: Option<DispatchCountingRecord>, values: Vec<CounterRecord>) {
    let Some(r) = registered_buffer(buffer.0) else {
        crate::hardware::say_once(format!(
            "dispatch counting into buffer {}, which no native tool created (or was \
             destroyed): its counter records are dropped",
            buffer.0
        ));
        return;
    };
    let full = {
        let mut c = r.counting.lock().unwrap_or_else(|e| e.into_inner());
        c.bytes += (header.map_or(0, |_| std::mem::size_of::<DispatchCountingRecord>())
            + values.len() * std::mem::size_of::<CounterRecord>()) as u64;
        c.groups.push((header, values));
        c.bytes >= r.watermark
    };
    if full {
        deliver_counting(buffer.0);
    }
}

/// Delivers the counter records kept for `buffer` to its callback, on
/// this thread (records reaching a finalized tool are counted, not
/// delivered).
pub(crate) fn deliver_counting(buffer: u64) {
    let Some(r) = registered_buffer(buffer) else {
        return;
    };
    if DELIVERING.with(|d| d.borrow().contains(&buffer)) {
        return;
    }
    let _turn = r.delivering.lock().unwrap_or_else(|e| e.into_inner());
    DELIVERING.with(|d| d.borrow_mut().push(buffer));
    deliver_kept(&r, buffer);
    DELIVERING.with(|d| d.borrow_mut().retain(|b| *b != buffer));
}

/// [`deliver_counting`], in the buffer's turn.
fn deliver_kept(r: &Registered, buffer: u64) {
    let mut groups = {
        let mut c = r.counting.lock().unwrap_or_else(|e| e.into_inner());
        c.bytes = 0;
        std::mem::take(&mut c.groups)
    };
    if groups.is_empty() {
        return;
    }
    if let Some(owner) = &r.sink.owner {
        if owner.is_finished() {
            let n: usize = groups
                .iter()
                .map(|(h, v)| usize::from(h.is_some()) + v.len())
                .sum();
            owner.count_undelivered(n as u64);
            return;
        }
    }
    use enums::rocprofiler_counter_record_kind as kind;
    let category = enums::rocprofiler_buffer_category::ROCPROFILER_BUFFER_CATEGORY_COUNTERS as u32;
    let mut headers: Vec<RecordHeader> = Vec::new();
    for (header, values) in &mut groups {
        if let Some(header) = header {
            headers.push(RecordHeader::new(
                category,
                kind::ROCPROFILER_COUNTER_RECORD_PROFILE_COUNTING_DISPATCH_HEADER as u32,
                (header as *mut DispatchCountingRecord).cast(),
            ));
        }
        for v in values.iter_mut() {
            headers.push(RecordHeader::new(
                category,
                kind::ROCPROFILER_COUNTER_RECORD_VALUE as u32,
                (v as *mut CounterRecord).cast(),
            ));
        }
    }
    let mut pointers: Vec<*mut RecordHeader> =
        headers.iter_mut().map(|h| h as *mut RecordHeader).collect();
    let (context, buffer) = (Handle { handle: r.context }, Handle { handle: buffer });
    crate::foreign::call_tool("a native tool's buffer callback (counter records)", || {
        // SAFETY: the tool's callback with the documented arguments; the
        // headers and records live in `headers` and `groups` until it
        // returns.
        unsafe {
            (r.sink.callback)(
                context,
                buffer,
                pointers.as_mut_ptr(),
                pointers.len(),
                r.sink.data as *mut c_void,
                0,
            )
        }
    });
}

/// Delivers the counter records kept for every buffer (before tools are
/// finalized).
pub(crate) fn deliver_all_counting() {
    let buffers: Vec<u64> = registered()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .copied()
        .collect();
    for b in buffers {
        deliver_counting(b);
    }
}

fn policy(raw: i32) -> Result<BufferPolicy, Status> {
    use enums::rocprofiler_buffer_policy as p;
    match i64::from(raw) {
        p::ROCPROFILER_BUFFER_POLICY_DISCARD => Ok(BufferPolicy::Discard),
        p::ROCPROFILER_BUFFER_POLICY_LOSSLESS => Ok(BufferPolicy::Lossless),
        _ => Err(Status::InvalidArgument),
    }
}

/// `rocprofiler_create_buffer`.
///
/// # Safety
/// `buffer_id` must be NULL or point to a writable `rocprofiler_buffer_id_t`;
/// `callback` must be a function of the documented type.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_create_buffer(
    context: Handle,
    size: usize,
    watermark: usize,
    policy_raw: i32,
    callback: Option<BufferCallback>,
    callback_data: *mut c_void,
    buffer_id: *mut Handle,
) -> Code {
    guard("rocprofiler_create_buffer", || {
        let (Some(callback), false) = (callback, buffer_id.is_null()) else {
            return Err(Status::InvalidArgument);
        };
        if watermark > size {
            return Err(Status::InvalidArgument);
        }
        let policy = policy(policy_raw)?;
        let engine = engine()?;
        let owner = state::current_tool();
        let sink = Arc::new(CBufferSink {
            callback,
            data: callback_data as usize,
            owner: owner.clone(),
        });
        let (ctx, size, watermark) = (ContextId(context.handle), size as u64, watermark as u64);
        let id = match &owner {
            Some(tool) => tool.create_buffer(engine, ctx, size, watermark, policy, sink.clone())?,
            None => engine.create_buffer(ctx, size, watermark, policy, sink.clone())?,
        };
        registered()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id.0,
                Arc::new(Registered {
                    sink,
                    context: ctx.0,
                    watermark,
                    counting: Mutex::new(Counting::default()),
                    delivering: Mutex::new(()),
                }),
            );
        // SAFETY: checked non-null; the caller passes a writable handle.
        unsafe { (*buffer_id).handle = id.0 };
        Ok(())
    })
}

/// `rocprofiler_flush_buffer`: returns once every record produced before
/// the call has been delivered.
#[no_mangle]
pub extern "C" fn rocprofiler_flush_buffer(buffer_id: Handle) -> Code {
    guard("rocprofiler_flush_buffer", || {
        engine()?.flush_buffer(BufferId(buffer_id.handle))?;
        deliver_counting(buffer_id.handle);
        Ok(())
    })
}

/// `rocprofiler_destroy_buffer`: delivers what the buffer holds and removes it.
#[no_mangle]
pub extern "C" fn rocprofiler_destroy_buffer(buffer_id: Handle) -> Code {
    guard("rocprofiler_destroy_buffer", || {
        engine()?.destroy_buffer(BufferId(buffer_id.handle))?;
        deliver_counting(buffer_id.handle);
        registered()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&buffer_id.handle);
        Ok(())
    })
}

/// `rocprofiler_configure_buffer_tracing_service`: records of `kind`
/// (the given SDK operations, or all) go to `buffer_id`.
///
/// # Safety
/// `operations` must point to `operations_count` values (or be NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_configure_buffer_tracing_service(
    context_id: Handle,
    kind: i32,
    operations_ptr: *const i32,
    operations_count: usize,
    buffer_id: Handle,
) -> Code {
    guard("rocprofiler_configure_buffer_tracing_service", || {
        let kind = u32::try_from(kind)
            .ok()
            .and_then(BufferTracingKind::from_raw)
            .ok_or(Status::KindNotFound)?;
        // SAFETY: the caller passes `operations_count` readable values.
        let sdk_ops = unsafe { slice(operations_ptr, operations_count) };
        let ops = engine_operations(operations::buffer(kind), sdk_ops)?;
        if !sdk_ops.is_empty() && ops.is_empty() {
            // Only operations this process's runtime does not have: the
            // service would never record anything, so it is not set up
            // (the engine's filters cannot say "none").
            return Ok(());
        }
        engine()?.configure_buffer_tracing(
            ContextId(context_id.handle),
            kind,
            &ops,
            BufferId(buffer_id.handle),
        )
    })
}

/// The engine's operations for the SDK operations a tool named: unknown
/// numbers are OPERATION_NOT_FOUND; SDK operations the engine's runtime
/// does not have are left out.
pub(crate) fn engine_operations(
    map: &operations::OperationMap,
    sdk_ops: &[i32],
) -> Result<Vec<u32>, Status> {
    let mut ops = Vec::with_capacity(sdk_ops.len());
    for &op in sdk_ops {
        if !map.is_sdk_operation(op) && map.from_sdk(op).is_none() {
            return Err(Status::OperationNotFound);
        }
        if let Some(ours) = map.from_sdk(op) {
            ops.push(ours);
        }
    }
    Ok(ops)
}

/// A C array as a slice (empty for NULL or 0).
///
/// # Safety
/// Non-null `ptr` must point to `len` initialised values.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// `rocprofiler_internal_thread_library_cb_t`.
pub type ThreadHook = unsafe extern "C-unwind" fn(library: i32, data: *mut c_void);

/// One registration: `(precreate, postcreate, libraries mask, data)`.
type ThreadHooks = (Option<ThreadHook>, Option<ThreadHook>, i32, usize);

/// The hooks tools registered.
static THREAD_HOOKS: std::sync::Mutex<Vec<ThreadHooks>> = std::sync::Mutex::new(Vec::new());

/// `rocprofiler_at_internal_thread_create`: `precreate` and `postcreate` run
/// around every thread the library creates for tools' callbacks
/// (`rocprofiler_create_callback_thread`, reported as
/// `ROCPROFILER_LIBRARY`) when `libs` includes it. The engine's default
/// callback thread, shared with the Wasm chain, exists before tools are
/// initialized and is not reported.
#[no_mangle]
pub extern "C" fn rocprofiler_at_internal_thread_create(
    precreate: Option<ThreadHook>,
    postcreate: Option<ThreadHook>,
    libs: i32,
    data: *mut c_void,
) -> Code {
    guard("rocprofiler_at_internal_thread_create", || {
        THREAD_HOOKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((precreate, postcreate, libs, data as usize));
        Ok(())
    })
}

fn run_thread_hooks(post: bool) {
    let library = enums::rocprofiler_runtime_library::ROCPROFILER_LIBRARY as i32;
    let hooks = THREAD_HOOKS.lock().map(|h| h.clone()).unwrap_or_default();
    for (pre, postc, libs, data) in hooks {
        if libs & library == 0 {
            continue;
        }
        if let Some(f) = if post { postc } else { pre } {
            quietly("a native tool's thread hook", || {
                crate::foreign::call_tool("a native tool's thread hook", || {
                    // SAFETY: the tool's hook with the documented arguments.
                    unsafe { f(library, data as *mut c_void) }
                });
            });
        }
    }
}

/// `rocprofiler_create_callback_thread`.
///
/// # Safety
/// `cb_thread_id` must be NULL or point to a writable handle.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_create_callback_thread(cb_thread_id: *mut Handle) -> Code {
    guard("rocprofiler_create_callback_thread", || {
        if cb_thread_id.is_null() {
            return Err(Status::InvalidArgument);
        }
        run_thread_hooks(false);
        let id = engine()?.create_callback_thread();
        run_thread_hooks(true);
        let id = id?;
        // SAFETY: checked non-null; the caller passes a writable handle.
        unsafe { (*cb_thread_id).handle = id.0 };
        Ok(())
    })
}

/// `rocprofiler_assign_callback_thread`.
#[no_mangle]
pub extern "C" fn rocprofiler_assign_callback_thread(
    buffer_id: Handle,
    cb_thread_id: Handle,
) -> Code {
    guard("rocprofiler_assign_callback_thread", || {
        engine()?.assign_callback_thread(
            BufferId(buffer_id.handle),
            CallbackThreadId(cb_thread_id.handle),
        )
    })
}
