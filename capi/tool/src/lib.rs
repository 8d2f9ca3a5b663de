//! `rocwasm-sdk-tool`: rocwasm as a rocprofiler-sdk tool.
//!
//! With `rocwasm run --backend rocprofiler-sdk`, rocwasm intercepts nothing
//! itself: a rocprofiler-sdk library — AMD's where one is installed, else
//! rocwasm's own tool library, which implements the same C API — measures
//! the HIP, HSA and marker calls, the kernel dispatches and the copies, and
//! this library, loaded by the SDK as a tool (`ROCP_TOOL_LIBRARIES`), turns
//! what it measures into rocwasm's run: the same chain of Wasm plugins, the
//! same site-policy checks and containment, the same record journal from
//! which `rocwasm run` writes the same outputs.
//!
//! It uses only the SDK's public C API (`rocprofiler-sdk-sys`'s
//! declarations; `nm -D --undefined-only` shows nothing of rocwasm's
//! interception). The life cycle is the SDK's:
//!
//! 1. **configure** (`rocprofiler_configure`): the run plan named by
//!    `ROCWASM_SDK_TOOL_RUN` (`RunPlan::SDK_TOOL_ENV`, written by `rocwasm
//!    run`) must exist, or the tool opts out;
//! 2. **initialize**: the run starts as a live run does
//!    ([`rocwasm_record::LiveRun`]: admission, journal, chain), on an engine
//!    of its own that nothing intercepts into. Then one SDK context: a
//!    LOSSLESS buffer tracing every kind the engine's contexts buffer, with
//!    a callback thread of its own; CODE_OBJECT callback tracing for the
//!    symbol table; the external-correlation request service for the kinds
//!    the chain's stages answer requests for. The agents are asked for once.
//! 3. **records**: each buffer delivery's records are imported into the
//!    engine ([`records`]), which delivers them to the chain and the
//!    journal as it would interception's. External-correlation requests
//!    are answered on the application's thread by the chain's request
//!    services ([`rocwasm_core::Profiler::request_external_id`]), so the
//!    SDK's records carry the chain's ids.
//! 4. **finalize** (once; the SDK calls it at the process's end): the SDK's
//!    buffer is flushed, the run finishes (the chain's `fini`, the
//!    journal's end with the summary's lines and problems).
//!
//! Stages that ask for callbacks get them from the SDK's callback tracing
//! ([`callbacks`]): API calls at ENTER and EXIT with their arguments,
//! dispatch and copy completions. What this back end cannot do that
//! interception does — callbacks of other kinds, a killed process's
//! undelivered records — is said in the summary when a chain asks for it,
//! and listed in `docs/BACKENDS.md`.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use rocprofiler_sdk_sys::api;
use rocprofiler_sdk_sys::enums::{
    rocprofiler_buffer_policy as policy, rocprofiler_callback_tracing_kind as cb_kind,
};
use rocprofiler_sdk_sys::{
    CallbackTracingRecord, ClientFinalize, ClientId, Handle, RecordHeader, ToolConfigureResult,
    UserData,
};
use rocwasm_core::{BufferTracingKind, Domain, ExternalCorrelationKind};
use rocwasm_plan::{ProcessInfo, RunPlan};
use rocwasm_record::journal::{ProcessEnd, SdkState};
use rocwasm_record::{LiveHooks, LiveRun};

mod callbacks;
mod counting;
mod guard;
mod operations;
mod records;
mod symbols;

use guard::{check, contained};
use operations::OperationMaps;

/// The tool's run, from `initialize` on.
struct Tool {
    run: LiveRun,
    ops: OperationMaps,
    context: Handle,
    buffer: Handle,
    /// Records the SDK reported dropped (0 under LOSSLESS).
    dropped: AtomicU64,
    /// The dispatch whose counter values are being read (`--pmc`).
    counting: Mutex<counting::Values>,
    /// Records of kinds rocwasm does not record.
    skipped: AtomicU64,
    /// What is known of the SDK's buffer, kept beside the journal for the
    /// launcher should the process die (`SdkState`).
    state: Mutex<SdkState>,
    /// What this back end cannot do for this chain, said at the end.
    problems: Mutex<Vec<String>>,
    finished: AtomicBool,
    /// The process the run belongs to: a forked child (which inherits this
    /// state but not the threads behind it) must not finish it.
    pid: u32,
}

static TOOL: OnceLock<Tool> = OnceLock::new();
static PLAN: OnceLock<std::path::PathBuf> = OnceLock::new();

/// The SDK's entry point: the tool takes part when `rocwasm run` left it a
/// plan.
///
/// # Safety
/// Called by the SDK with a valid client id.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_configure(
    _version: u32,
    _runtime_version: *const c_char,
    _priority: u32,
    id: *mut ClientId,
) -> *mut ToolConfigureResult {
    let Some(path) = std::env::var_os(RunPlan::SDK_TOOL_ENV) else {
        eprintln!(
            "rocwasm: the rocprofiler-sdk tool found no run plan ({} is not set: \
             `rocwasm run --backend rocprofiler-sdk` starts it); it does not take part",
            RunPlan::SDK_TOOL_ENV
        );
        return std::ptr::null_mut();
    };
    let _ = PLAN.set(path.into());
    if !id.is_null() {
        // SAFETY: the SDK's client id, writable during configure.
        unsafe { (*id).name = c"rocwasm".as_ptr() };
    }
    let result = Box::new(ToolConfigureResult {
        size: std::mem::size_of::<ToolConfigureResult>(),
        initialize: Some(initialize),
        finalize: Some(finalize),
        tool_data: std::ptr::null_mut(),
    });
    // The SDK keeps the pointer for the process's life.
    Box::leak(result)
}

/// `initialize`: starts the run and configures the SDK (module docs, 2).
unsafe extern "C-unwind" fn initialize(_fini: ClientFinalize, _data: *mut c_void) -> c_int {
    contained("its initialize", || {
        let started = start().and_then(|tool| {
            let context = tool.context;
            // Published before the context starts: its first delivery, request
            // or callback may come at once, on any thread.
            let _ = TOOL.set(tool);
            // SAFETY: the context this tool created and configured.
            check("start the context", unsafe {
                api::rocprofiler_start_context(context)
            })
        });
        match started {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("rocwasm: the rocprofiler-sdk back end cannot start: {e}");
                -1
            }
        }
    })
    .unwrap_or(-1)
}

fn start() -> Result<Tool, String> {
    let path = PLAN.get().ok_or("no run plan")?;
    let plan = RunPlan::load(path).map_err(|e| e.to_string())?;
    let (size, watermark) = (plan.buffer.size as usize, plan.buffer.watermark as usize);
    let run = LiveRun::start(
        plan,
        &ProcessInfo::current(),
        Vec::new(),
        LiveHooks {
            back_end: rocwasm_plan::Backend::RocprofilerSdk,
            ..LiveHooks::default()
        },
    )
    .map_err(|e| format!("{e:#}"))?;
    let profiler = run.profiler().clone();
    // Counting (`--pmc`) follows each dispatch's own record (its thread,
    // the dispatch filter's verdict): the SDK traces dispatches for it.
    let counting = !run.plan().collection.counters.is_empty();
    let kinds: Vec<BufferTracingKind> = BufferTracingKind::ALL
        .iter()
        .copied()
        .filter(|&k| {
            (counting && k == BufferTracingKind::KernelDispatch)
                || Domain::from_buffer_kind(k).is_some_and(|d| profiler.buffers_domain(d))
        })
        .collect();
    let ops = OperationMaps::query();
    let mut problems = Vec::new();
    if let Err(e) = check("list the agents", symbols::query_agents(&profiler)) {
        problems.push(format!(
            "the SDK did not {e}: records name agents the outputs cannot describe"
        ));
    }
    run.journal_symbols();

    let mut context = Handle::default();
    let mut buffer = Handle::default();
    let mut thread = Handle::default();
    // SAFETY: out-pointers to locals; the callbacks have the API's types.
    unsafe {
        check(
            "create a context",
            api::rocprofiler_create_context(&mut context),
        )?;
        check(
            "create a buffer",
            api::rocprofiler_create_buffer(
                context,
                size,
                watermark.min(size),
                policy::ROCPROFILER_BUFFER_POLICY_LOSSLESS as c_int,
                on_buffer,
                std::ptr::null_mut(),
                &mut buffer,
            ),
        )?;
        check(
            "create a callback thread",
            api::rocprofiler_create_callback_thread(&mut thread),
        )?;
        check(
            "assign the callback thread",
            api::rocprofiler_assign_callback_thread(buffer, thread),
        )?;
        for &k in &kinds {
            let status = api::rocprofiler_configure_buffer_tracing_service(
                context,
                k.raw() as c_int,
                std::ptr::null(),
                0,
                buffer,
            );
            if let Err(e) = check(&format!("trace {}", k.name()), status) {
                problems.push(format!(
                    "the SDK does not trace {} for rocwasm ({e}): those records are missing",
                    k.name()
                ));
            }
        }
        check(
            "trace code objects",
            api::rocprofiler_configure_callback_tracing_service(
                context,
                cb_kind::ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT as c_int,
                std::ptr::null(),
                0,
                on_code_object,
                std::ptr::null_mut(),
            ),
        )?;
        let requests: Vec<c_int> = ExternalCorrelationKind::ALL
            .iter()
            .filter(|&&k| {
                Domain::from_external_kind(k).is_some_and(|d| profiler.requests_external_ids(d))
            })
            .map(|k| k.raw() as c_int)
            .collect();
        if !requests.is_empty() {
            check(
                "answer external-correlation requests",
                api::rocprofiler_configure_external_correlation_id_request_service(
                    context,
                    requests.as_ptr(),
                    requests.len(),
                    on_request,
                    std::ptr::null_mut(),
                ),
            )?;
        }
    }
    let counters = &run.plan().collection.counters;
    if !counters.is_empty() {
        if let Err(e) = counting::configure(&profiler, context, buffer, counters) {
            problems.push(format!(
                "the SDK did not {e}: the run's counters (--pmc) are not collected"
            ));
        }
    }
    for &d in Domain::ALL {
        if d == Domain::CodeObject || !profiler.calls_back_domain(d) {
            continue;
        }
        let configured = d
            .callback_kind()
            .filter(|_| callbacks::supported(d))
            .map(|k| {
                // SAFETY: a context this tool created; `on_callback` has the
                // callback's type.
                check(&format!("call back {}", k.name()), unsafe {
                    api::rocprofiler_configure_callback_tracing_service(
                        context,
                        k.raw() as c_int,
                        std::ptr::null(),
                        0,
                        on_callback,
                        std::ptr::null_mut(),
                    )
                })
            });
        match configured {
            Some(Ok(())) => {}
            Some(Err(e)) => problems.push(format!(
                "a stage asked for callbacks of {d:?}, which the SDK refused ({e}); its buffered \
                 records still reach the chain"
            )),
            None => problems.push(format!(
                "a stage asked for callbacks of {d:?}, which the rocprofiler-sdk back end does not \
                 make (its buffered records still reach the chain); use --backend builtin for them"
            )),
        }
    }
    for p in &problems {
        eprintln!("rocwasm: {p}");
    }
    let state = SdkState {
        buffer_bytes: size as u64,
        watermark_bytes: watermark.min(size) as u64,
        ..SdkState::default()
    };
    if let Some(dir) = &run.plan().journal {
        let _ = state.write(dir, std::process::id());
    }
    Ok(Tool {
        run,
        ops,
        context,
        buffer,
        dropped: AtomicU64::new(0),
        counting: Mutex::new(counting::Values::default()),
        skipped: AtomicU64::new(0),
        state: Mutex::new(state),
        problems: Mutex::new(problems),
        finished: AtomicBool::new(false),
        pid: std::process::id(),
    })
}

/// The SDK's buffer delivered: import every record.
unsafe extern "C-unwind" fn on_buffer(
    _context: Handle,
    _buffer: Handle,
    headers: *mut *mut RecordHeader,
    n: usize,
    _data: *mut c_void,
    drop_count: u64,
) {
    contained("its buffer callback", || {
        let Some(tool) = TOOL.get() else {
            return;
        };
        tool.dropped.fetch_add(drop_count, Ordering::Relaxed);
        // SAFETY: the SDK's `n` headers and their records, valid for this call.
        let skipped = unsafe {
            let mut counting = tool.counting.lock().unwrap_or_else(|e| e.into_inner());
            records::import_all(tool.run.profiler(), &tool.ops, &mut counting, headers, n)
        };
        tool.skipped.fetch_add(skipped.kinds, Ordering::Relaxed);
        note_delivery(tool, n as u64, skipped.kinds, drop_count);
    })
    .unwrap_or_default()
}

/// Counts a delivery in the state kept beside the journal (the process's
/// own: a forked child does not write the parent's).
fn note_delivery(tool: &Tool, delivered: u64, skipped: u64, dropped: u64) {
    let Some(dir) = &tool.run.plan().journal else {
        return;
    };
    if std::process::id() != tool.pid {
        return;
    }
    let mut state = tool.state.lock().unwrap_or_else(|e| e.into_inner());
    state.deliveries += 1;
    state.delivered += delivered;
    state.imported += delivered.saturating_sub(skipped);
    state.dropped += dropped;
    let _ = state.write(dir, tool.pid);
}

/// An API call's ENTER or EXIT, or a completion, for the chain's stages.
unsafe extern "C-unwind" fn on_callback(
    record: CallbackTracingRecord,
    user_data: *mut UserData,
    _data: *mut c_void,
) {
    contained("its tracing callback", || {
        let Some(tool) = TOOL.get() else {
            return;
        };
        // SAFETY: the SDK's record and user-data slot, valid for the callback.
        unsafe { callbacks::on_callback(tool.run.profiler(), &tool.ops, &record, user_data) };
    })
    .unwrap_or_default()
}

/// A code object or kernel symbol was loaded or unloaded.
unsafe extern "C-unwind" fn on_code_object(
    record: CallbackTracingRecord,
    _user_data: *mut UserData,
    _data: *mut c_void,
) {
    contained("its code-object callback", || {
        let Some(tool) = TOOL.get() else {
            return;
        };
        // SAFETY: the SDK's CODE_OBJECT record with its operation's payload.
        unsafe {
            symbols::on_code_object(tool.run.profiler(), &record, || tool.run.journal_symbols())
        };
    })
    .unwrap_or_default()
}

/// The SDK asks, on the application's thread, for the external id of a
/// call or dispatch: the chain's request services answer.
unsafe extern "C-unwind" fn on_request(
    thread_id: u64,
    _context: Handle,
    kind: c_int,
    operation: i32,
    internal: u64,
    external: *mut UserData,
    _data: *mut c_void,
) -> c_int {
    contained("its external-correlation request callback", || {
        let Some(tool) = TOOL.get() else {
            return 0;
        };
        let Some(domain) = u32::try_from(kind)
            .ok()
            .and_then(ExternalCorrelationKind::from_raw)
            .and_then(Domain::from_external_kind)
        else {
            return 0;
        };
        let op = match domain.buffer_kind() {
            Some(k) if domain.is_api() => tool.ops.engine_quiet(k, operation),
            _ => u32::try_from(operation).ok(),
        };
        let Some(op) = op else {
            return 0;
        };
        let id = tool
            .run
            .profiler()
            .request_external_id(domain, op, internal, thread_id);
        if !external.is_null() {
            // SAFETY: the SDK's out-parameter for this request.
            unsafe { (*external).value = id };
        }
        0
    })
    .unwrap_or_default()
}

/// `finalize`, once: flush the SDK's buffer, finish the run (module docs, 4).
unsafe extern "C-unwind" fn finalize(_data: *mut c_void) {
    contained("its finalize", || {
        let Some(tool) = TOOL.get() else {
            return;
        };
        // A forked child's copy of the run is not its run: the parent finishes
        // it (and its journal) once.
        if std::process::id() != tool.pid || tool.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        // SAFETY: the buffer and context this tool created.
        let flushed = check("flush its buffer", unsafe {
            api::rocprofiler_flush_buffer(tool.buffer)
        });
        // A dispatch whose values the SDK cut short.
        tool.counting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .end(tool.run.profiler());
        if let Err(e) = flushed {
            // What it still held never reaches the journal: said at the end.
            tool.problems
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!(
                    "the SDK could not {e}: its last records are missing"
                ));
        }
        // SAFETY: as above. Stopping only ends the deliveries; its status
        // changes nothing that was recorded.
        let _ = unsafe { api::rocprofiler_stop_context(tool.context) };
        let Some(report) = tool.run.finish() else {
            return;
        };
        if tool.run.plan().writes_nothing() {
            return;
        }
        for p in &report.plugins.problems {
            eprintln!("rocwasm: {p}");
        }
        let mut problems = report.problems;
        problems.extend(
            tool.problems
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain(..),
        );
        problems.extend(tool.ops.unmapped());
        let dropped = tool.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            problems.push(format!(
            "the rocprofiler-sdk buffer dropped {dropped} record(s) before rocwasm received them"
        ));
        }
        let skipped = tool.skipped.load(Ordering::Relaxed);
        if skipped > 0 {
            problems.push(format!(
                "{skipped} record(s) of kinds rocwasm does not record were not imported"
            ));
        }
        tool.run.end_journal(&ProcessEnd {
            plugin_text: report.plugins.render(),
            no_plugin_tables: report.plugins.tables.iter().all(|(_, t)| t.is_empty()),
            lines: vec![format!(
                "pid {} — records from rocprofiler-sdk (--backend rocprofiler-sdk); {} {}",
                report.meta.pid,
                report.plugins.tables.len(),
                RunPlan::PLUGINS_RAN
            )],
            problems,
            notes: report.notes,
            end_ns: report.meta.end_ns,
            stage_files: Vec::new(),
        });
    })
    .unwrap_or_default()
}
