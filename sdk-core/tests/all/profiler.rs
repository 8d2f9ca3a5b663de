//! The tool-facing rules: every status code, and the correlation-id rules.

use std::sync::{Arc, Mutex};

use rocwasm_core::*;

type Log = Arc<Mutex<Vec<CallbackRecord>>>;

fn callback_log() -> (Log, Arc<dyn CallbackSink>) {
    let log: Log = Arc::default();
    let l = log.clone();
    let sink = Arc::new(move |rec: &CallbackRecord, user: &mut u64| {
        // ENTER of an API call leaves a mark that its EXIT must see.
        if matches!(rec.payload, CallbackPayload::Api { .. }) {
            match rec.phase {
                Some(CallbackPhase::Enter) => *user = rec.correlation.internal + 1000,
                _ => assert_eq!(*user, rec.correlation.internal + 1000),
            }
        }
        l.lock().unwrap().push(rec.clone());
    });
    (log, sink)
}

#[derive(Default)]
struct Batches(Mutex<Batch>);

impl BufferSink for Batches {
    fn deliver(&self, _: DeliveryInfo, mut batch: Batch) {
        self.0.lock().unwrap().append(&mut batch);
    }
}

fn hip(name: &str) -> u32 {
    operation_by_name(BufferTracingKind::HipRuntimeApi, name).unwrap()
}

fn noop() -> Vec<Argument> {
    vec![]
}

/// A context buffering `kinds` into one buffer.
fn buffered(p: &Profiler, kinds: &[BufferTracingKind]) -> (ContextId, BufferId, Arc<Batches>) {
    let ctx = p.create_context().unwrap();
    let sink = Arc::new(Batches::default());
    let buf = p
        .create_buffer(ctx, 1 << 16, 1 << 16, BufferPolicy::Lossless, sink.clone())
        .unwrap();
    for &k in kinds {
        p.configure_buffer_tracing(ctx, k, &[], buf).unwrap();
    }
    (ctx, buf, sink)
}

#[test]
fn status_codes() {
    let p = Profiler::new();
    let ctx = p.create_context().unwrap();
    let nobody = ContextId(999);
    let sink: Arc<dyn BufferSink> = Arc::new(Batches::default());
    let (_, cb) = callback_log();

    // CONTEXT_NOT_FOUND
    assert_eq!(p.start_context(nobody), Err(Status::ContextNotFound));
    assert_eq!(p.is_context_active(nobody), Err(Status::ContextNotFound));
    assert_eq!(
        p.create_buffer(nobody, 4096, 0, BufferPolicy::Lossless, sink.clone()),
        Err(Status::ContextNotFound)
    );
    assert_eq!(
        p.configure_callback_tracing(nobody, CallbackTracingKind::HipRuntimeApi, &[], cb.clone()),
        Err(Status::ContextNotFound)
    );
    assert_eq!(
        p.push_external_correlation_id(nobody, clock::thread_id(), 1),
        Err(Status::ContextNotFound)
    );

    // CONTEXT_INVALID: nothing to start.
    assert_eq!(p.start_context(ctx), Err(Status::ContextInvalid));

    // INVALID_ARGUMENT: watermark above the size, size 0.
    assert_eq!(
        p.create_buffer(ctx, 4096, 5000, BufferPolicy::Lossless, sink.clone()),
        Err(Status::InvalidArgument)
    );
    assert_eq!(
        p.create_buffer(ctx, 0, 0, BufferPolicy::Lossless, sink.clone()),
        Err(Status::InvalidArgument)
    );
    let buf = p
        .create_buffer(ctx, 100, 0, BufferPolicy::Lossless, sink.clone())
        .unwrap();
    assert_eq!(
        p.buffer(buf).unwrap().size(),
        4096,
        "rounded up to the page size"
    );

    // BUFFER_NOT_FOUND
    assert_eq!(p.flush_buffer(BufferId(77)), Err(Status::BufferNotFound));
    assert_eq!(
        p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], BufferId(77)),
        Err(Status::BufferNotFound)
    );

    // KIND_NOT_FOUND: raw numbers outside the headers' kinds.
    assert_eq!(ops::buffer_kind_from_raw(9999), Err(Status::KindNotFound));
    // Every declared kind is accepted, as by the SDK, even one nothing
    // here produces (it yields no records) and the callback-only HIP_STREAM.
    assert_eq!(
        p.configure_buffer_tracing(ctx, BufferTracingKind::HipStream, &[], buf),
        Ok(())
    );
    assert_eq!(
        p.configure_buffer_tracing(ctx, BufferTracingKind::KfdPageFault, &[], buf),
        Ok(())
    );
    assert_eq!(
        p.configure_callback_tracing(
            ctx,
            CallbackTracingKind::Ompt,
            &[],
            Arc::new(|_: &CallbackRecord, _: &mut u64| {})
        ),
        Ok(())
    );

    // OPERATION_NOT_FOUND
    assert_eq!(
        p.configure_buffer_tracing(ctx, BufferTracingKind::MemoryCopy, &[9], buf),
        Err(Status::OperationNotFound)
    );

    // SERVICE_ALREADY_CONFIGURED, per service type and kind.
    p.configure_buffer_tracing(
        ctx,
        BufferTracingKind::HipRuntimeApi,
        &[hip("hipMalloc")],
        buf,
    )
    .unwrap();
    assert_eq!(
        p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf),
        Err(Status::ServiceAlreadyConfigured)
    );
    p.configure_callback_tracing(ctx, CallbackTracingKind::HipRuntimeApi, &[], cb.clone())
        .unwrap();
    assert_eq!(
        p.configure_callback_tracing(ctx, CallbackTracingKind::HipRuntimeApi, &[], cb.clone()),
        Err(Status::ServiceAlreadyConfigured)
    );
    let req = Arc::new(|_: &ExternalCorrelationRequest| None);
    p.configure_external_correlation_request(ctx, &[], req.clone())
        .unwrap();
    assert_eq!(
        p.configure_external_correlation_request(ctx, &[], req.clone()),
        Err(Status::ServiceAlreadyConfigured)
    );

    // INVALID_ARGUMENT: a buffer of another context.
    let other = p.create_context().unwrap();
    assert_eq!(
        p.configure_buffer_tracing(other, BufferTracingKind::HsaCoreApi, &[], buf),
        Err(Status::InvalidArgument)
    );

    // THREAD_NOT_FOUND / INVALID_ARGUMENT for external ids.
    assert_eq!(
        p.push_external_correlation_id(ctx, 0, 1),
        Err(Status::InvalidArgument)
    );
    assert_eq!(
        p.push_external_correlation_id(ctx, i32::MAX as u64, 1),
        Err(Status::ThreadNotFound)
    );
    assert_eq!(
        p.pop_external_correlation_id(ctx, i32::MAX as u64),
        Err(Status::ThreadNotFound)
    );
    assert_eq!(
        p.assign_callback_thread(buf, CallbackThreadId(42)),
        Err(Status::ThreadNotFound)
    );

    // Callback threads: create and assign during init.
    let t = p.create_callback_thread().unwrap();
    p.assign_callback_thread(buf, t).unwrap();

    p.start_context(ctx).unwrap();
    assert_eq!(p.is_context_active(ctx), Ok(true));

    // CONFIGURATION_LOCKED after init; starting and stopping still work.
    p.lock_configuration();
    assert_eq!(p.create_context(), Err(Status::ConfigurationLocked));
    assert_eq!(
        p.create_buffer(ctx, 4096, 0, BufferPolicy::Lossless, sink.clone()),
        Err(Status::ConfigurationLocked)
    );
    assert_eq!(p.create_callback_thread(), Err(Status::ConfigurationLocked));
    assert_eq!(
        p.assign_callback_thread(buf, t),
        Err(Status::ConfigurationLocked)
    );
    assert_eq!(
        p.configure_buffer_tracing(ctx, BufferTracingKind::HsaCoreApi, &[], buf),
        Err(Status::ConfigurationLocked)
    );
    assert_eq!(
        p.configure_callback_tracing(ctx, CallbackTracingKind::HsaCoreApi, &[], cb.clone()),
        Err(Status::ConfigurationLocked)
    );
    assert_eq!(
        p.configure_external_correlation_request(other, &[], req),
        Err(Status::ConfigurationLocked)
    );
    p.stop_context(ctx).unwrap();
    assert_eq!(p.is_context_active(ctx), Ok(false));
    p.start_context(ctx).unwrap();
    p.push_external_correlation_id(ctx, clock::thread_id(), 5)
        .unwrap();

    // BUFFER_BUSY: flushing a buffer from its own callback thread would deadlock.
    let p = Arc::new(Profiler::new());
    let ctx = p.create_context().unwrap();
    let seen: Arc<Mutex<Option<Result<(), Status>>>> = Arc::default();
    let (s2, p2) = (seen.clone(), Arc::downgrade(&p));
    let sink = Arc::new(move |info: DeliveryInfo, _: Batch| {
        let p = p2.upgrade().unwrap();
        *s2.lock().unwrap() = Some(p.flush_buffer(info.buffer));
    });
    let buf = p
        .create_buffer(ctx, 4096, 0, BufferPolicy::Lossless, sink)
        .unwrap();
    p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
        .unwrap();
    p.start_context(ctx).unwrap();
    p.trace_api(
        Domain::HipRuntimeApi,
        hip("hipMalloc"),
        noop,
        || 0,
        |r| r.to_string(),
    );
    p.flush_buffer(buf).unwrap();
    assert_eq!(*seen.lock().unwrap(), Some(Err(Status::BufferBusy)));

    // FINALIZED
    p.finalize();
    p.finalize(); // idempotent
    assert_eq!(p.create_context(), Err(Status::Finalized));
    assert_eq!(p.start_context(ctx), Err(Status::Finalized));
    assert!(!p.is_tracing(Domain::HipRuntimeApi));
}

#[test]
fn api_records_callbacks_and_ancestors() {
    let p = Profiler::new();
    let (ctx, buf, out) = buffered(
        &p,
        &[
            BufferTracingKind::HipRuntimeApi,
            BufferTracingKind::HsaCoreApi,
        ],
    );
    let (log, cb) = callback_log();
    p.configure_callback_tracing(
        ctx,
        CallbackTracingKind::HipRuntimeApi,
        &[hip("hipMalloc")],
        cb,
    )
    .unwrap();
    // Not started: no tracing, calls go straight through.
    assert!(!p.is_tracing(Domain::HipRuntimeApi));
    assert_eq!(
        p.trace_api(
            Domain::HipRuntimeApi,
            1,
            || panic!("args rendered"),
            || 7,
            |_| unreachable!()
        ),
        7
    );
    p.start_context(ctx).unwrap();
    p.lock_configuration();
    assert!(p.is_tracing(Domain::HipRuntimeApi) && p.is_tracing(Domain::HsaCoreApi));
    assert!(!p.is_tracing(Domain::KernelDispatch));

    let hsa_init = operation_by_name(BufferTracingKind::HsaCoreApi, "hsa_init").unwrap();
    let ret = p.trace_api(
        Domain::HipRuntimeApi,
        hip("hipMalloc"),
        || vec![Argument::new("size", "size_t", 64)],
        || {
            p.trace_api(
                Domain::HsaCoreApi,
                hsa_init,
                || panic!("no HSA callbacks"),
                || 0,
                |_| unreachable!(),
            )
        },
        |r| format!("ret={r}"),
    );
    assert_eq!(ret, 0);
    // hipFree is buffered but has no callback (filter): args must not be rendered.
    p.trace_api(
        Domain::HipRuntimeApi,
        hip("hipFree"),
        || panic!("args rendered"),
        || (),
        |_| unreachable!(),
    );
    p.flush_buffer(buf).unwrap();

    let b = out.0.lock().unwrap();
    let rows: Vec<ApiCall> = b.api_calls.rows().collect();
    assert_eq!(rows.len(), 3);
    // The nested HSA call finishes (and is buffered) first.
    let (hsa, malloc, free) = (rows[0], rows[1], rows[2]);
    assert_eq!(hsa.kind, BufferTracingKind::HsaCoreApi.raw());
    assert_eq!(malloc.operation, hip("hipMalloc"));
    assert_eq!(hsa.ancestor, malloc.correlation_id);
    assert_eq!(malloc.ancestor, 0);
    assert_eq!(free.ancestor, 0);
    assert!(free.correlation_id > malloc.correlation_id);
    assert!(malloc.start <= hsa.start && hsa.end <= malloc.end);
    assert_eq!(malloc.thread_id, clock::thread_id());

    let log = log.lock().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].phase, Some(CallbackPhase::Enter));
    assert_eq!(log[1].phase, Some(CallbackPhase::Exit));
    assert_eq!(log[0].correlation.internal, malloc.correlation_id);
    match (&log[0].payload, &log[1].payload) {
        (
            CallbackPayload::Api { args, retval: None },
            CallbackPayload::Api {
                retval: Some(r), ..
            },
        ) => {
            assert_eq!(args[0].value, "64");
            assert_eq!(r, "ret=0");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn async_children_keep_the_launcher_id_and_retire_after_the_last() {
    let p = Arc::new(Profiler::new());
    let (ctx, buf, out) = buffered(
        &p,
        &[
            BufferTracingKind::HipRuntimeApi,
            BufferTracingKind::KernelDispatch,
            BufferTracingKind::MemoryCopy,
            BufferTracingKind::CorrelationIdRetirement,
        ],
    );
    p.start_context(ctx).unwrap();
    let launch = hip("hipLaunchKernel");
    let ops = p.trace_api(
        Domain::HipRuntimeApi,
        launch,
        noop,
        || {
            let a = p
                .begin_async(Domain::KernelDispatch, ops::kernel_dispatch::ENQUEUE)
                .unwrap();
            let b = p
                .begin_async(Domain::MemoryCopy, MemoryCopyDirection::HostToDevice as u32)
                .unwrap();
            (a, b)
        },
        |_| String::new(),
    );
    // The call has returned but two children are pending: not retired yet.
    p.flush_buffer(buf).unwrap();
    assert!(out.0.lock().unwrap().retirements.is_empty());
    let (kernel, copy) = ops;
    let launcher = kernel.correlation_id();
    assert_eq!(copy.correlation_id(), launcher);
    let p2 = p.clone();
    std::thread::spawn(move || {
        p2.complete_kernel_dispatch(
            kernel,
            KernelDispatch {
                kernel_id: 3,
                start: 10,
                end: 20,
                ..Default::default()
            },
        )
    })
    .join()
    .unwrap();
    p.flush_buffer(buf).unwrap();
    assert!(
        out.0.lock().unwrap().retirements.is_empty(),
        "one child still pending"
    );
    p.complete_memory_copy(
        copy,
        MemoryCopy {
            operation: 2,
            bytes: 4096,
            ..Default::default()
        },
    );
    p.flush_buffer(buf).unwrap();

    // A call without children retires at once.
    p.trace_api(
        Domain::HipRuntimeApi,
        hip("hipFree"),
        noop,
        || (),
        |_| String::new(),
    );
    p.flush_buffer(buf).unwrap();

    let b = out.0.lock().unwrap();
    let k = b.kernel_dispatches.row(0);
    assert_eq!(k.correlation_id, launcher);
    assert_eq!(
        k.thread_id,
        clock::thread_id(),
        "the launcher, not the completion thread"
    );
    assert_eq!(k.kernel_id, 3);
    let c = b.memory_copies.row(0);
    assert_eq!(
        (c.correlation_id, c.operation, c.bytes),
        (launcher, 2, 4096)
    );
    let retired: Vec<u64> = b.retirements.correlation_id.clone();
    let free_id = b.api_calls.row(1).correlation_id;
    assert_eq!(retired, vec![launcher, free_id]);
}

/// At the end of a run the engine waits for the runtime to report the
/// operations still in flight (a completion that lags behind an
/// application returning from `main`), and says how many never did.
#[test]
fn settling_waits_for_late_completions_and_counts_the_rest() {
    let p = Arc::new(Profiler::new());
    let (ctx, buf, out) = buffered(&p, &[BufferTracingKind::KernelDispatch]);
    p.start_context(ctx).unwrap();
    let late = p
        .begin_async(Domain::KernelDispatch, ops::kernel_dispatch::ENQUEUE)
        .unwrap();
    let cancelled = p
        .begin_async(Domain::KernelDispatch, ops::kernel_dispatch::ENQUEUE)
        .unwrap();
    p.cancel_async(cancelled);
    let p2 = p.clone();
    let completer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        p2.complete_kernel_dispatch(
            late,
            KernelDispatch {
                kernel_id: 1,
                start: 1,
                end: 2,
                ..Default::default()
            },
        );
    });
    assert_eq!(p.settle_async(std::time::Duration::from_secs(10)), 0);
    p.flush_buffer(buf).unwrap();
    assert_eq!(out.0.lock().unwrap().kernel_dispatches.len(), 1);
    completer.join().unwrap();

    // One that never completes: the wait ends and counts it.
    let _never = p
        .begin_async(Domain::KernelDispatch, ops::kernel_dispatch::ENQUEUE)
        .unwrap();
    assert_eq!(p.settle_async(std::time::Duration::from_millis(20)), 1);
}

#[test]
fn external_ids_per_context_and_thread() {
    let p = Arc::new(Profiler::new());
    let (a, buf_a, out_a) = buffered(&p, &[BufferTracingKind::HipRuntimeApi]);
    let (b, buf_b, out_b) = buffered(&p, &[BufferTracingKind::HipRuntimeApi]);
    p.start_context(a).unwrap();
    p.start_context(b).unwrap();
    let me = clock::thread_id();
    let main = clock::main_thread_id();
    let call = |p: &Profiler| {
        p.trace_api(
            Domain::HipRuntimeApi,
            hip("hipMalloc"),
            noop,
            || (),
            |_| String::new(),
        )
    };

    // Pop of an empty stack succeeds with 0.
    assert_eq!(p.pop_external_correlation_id(a, me), Ok(0));

    p.push_external_correlation_id(a, me, 11).unwrap();
    p.push_external_correlation_id(a, me, 12).unwrap();
    p.push_external_correlation_id(b, me, 21).unwrap();
    call(&p); // a: 12, b: 21
    assert_eq!(p.pop_external_correlation_id(a, me), Ok(12));
    call(&p); // a: 11, b: 21

    // Another thread with no value of its own uses the main thread's top.
    p.push_external_correlation_id(a, main, 99).unwrap();
    let p2 = p.clone();
    std::thread::spawn(move || call(&p2)).join().unwrap(); // a: 99, b: 21 or 0
    p.flush_buffer(buf_a).unwrap();
    p.flush_buffer(buf_b).unwrap();
    let ext_a = out_a
        .0
        .lock()
        .unwrap()
        .api_calls
        .external_correlation_id
        .clone();
    let ext_b = out_b
        .0
        .lock()
        .unwrap()
        .api_calls
        .external_correlation_id
        .clone();
    assert_eq!(ext_a, vec![12, 11, 99]);
    // b's main-thread fallback: this test thread is main only when run alone.
    let fallback_b = if me == main { 21 } else { 0 };
    assert_eq!(ext_b, vec![21, 21, fallback_b]);
}

#[test]
fn external_correlation_requests_follow_the_kind_filter_and_the_zero_rule() {
    let p = Profiler::new();
    let (ctx, buf, out) = buffered(
        &p,
        &[
            BufferTracingKind::HipRuntimeApi,
            BufferTracingKind::HsaCoreApi,
        ],
    );
    let asked: Arc<Mutex<Vec<ExternalCorrelationRequest>>> = Arc::default();
    let a2 = asked.clone();
    // Answers for hipMalloc, declines (= use the pushed value) otherwise.
    let malloc = hip("hipMalloc");
    let sink = Arc::new(move |r: &ExternalCorrelationRequest| {
        a2.lock().unwrap().push(*r);
        (r.operation == malloc).then_some(500 + r.internal_correlation_id)
    });
    p.configure_external_correlation_request(ctx, &[ExternalCorrelationKind::HipRuntimeApi], sink)
        .unwrap();
    p.start_context(ctx).unwrap();
    p.push_external_correlation_id(ctx, clock::thread_id(), 7)
        .unwrap();
    let call = |d, op| p.trace_api(d, op, noop, || (), |_| String::new());
    call(Domain::HipRuntimeApi, malloc);
    call(Domain::HipRuntimeApi, hip("hipFree"));
    call(Domain::HsaCoreApi, 1); // HSA not requested: no request, pushed value.
    p.flush_buffer(buf).unwrap();

    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 2, "only HIP calls are asked about");
    let rows: Vec<ApiCall> = out.0.lock().unwrap().api_calls.rows().collect();
    assert_eq!(asked[0].internal_correlation_id, rows[0].correlation_id);
    assert_eq!(asked[0].kind, ExternalCorrelationKind::HipRuntimeApi);
    assert_eq!(asked[0].context, ctx);
    assert_eq!(asked[0].thread_id, clock::thread_id());
    assert_eq!(
        rows[0].external_correlation_id,
        500 + rows[0].correlation_id
    );
    assert_eq!(rows[1].external_correlation_id, 7);
    assert_eq!(rows[2].external_correlation_id, 7);
}

#[test]
fn code_objects_memory_and_runtime_events() {
    let p = Profiler::new();
    let (ctx, buf, out) = buffered(
        &p,
        &[
            BufferTracingKind::MemoryAllocation,
            BufferTracingKind::ScratchMemory,
            BufferTracingKind::RuntimeInitialization,
        ],
    );
    let (log, cb) = callback_log();
    p.configure_callback_tracing(ctx, CallbackTracingKind::CodeObject, &[], cb)
        .unwrap();
    p.start_context(ctx).unwrap();

    let co = CodeObject {
        id: 1,
        agent_id: 2,
        uri: "file:///a.out#offset=0&size=10".into(),
        load_base: 0x1000,
        load_size: 10,
        load_delta: 0,
        storage: CodeObjectStorage::None,
    };
    let ks = KernelSymbol {
        id: 5,
        code_object_id: 1,
        name: "_Z3addPf".into(),
        demangled_name: "add(float*)".into(),
        kernel_object: 0xabc,
        kernarg_segment_size: 8,
        kernarg_segment_alignment: 8,
        group_segment_size: 0,
        private_segment_size: 0,
        sgpr_count: 1,
        arch_vgpr_count: 2,
        accum_vgpr_count: 0,
        kernel_code_entry_byte_offset: 0,
        kernel_address: 0x2000,
    };
    p.emit_code_object_load(co.clone());
    p.emit_kernel_symbol_register(ks.clone());
    p.emit_kernel_symbol_unregister(5);
    p.emit_code_object_unload(1);
    assert_eq!(
        p.symbols().kernel(5).unwrap().name,
        "_Z3addPf",
        "names stay valid"
    );

    p.record_memory_allocation(MemoryAllocation {
        operation: 1,
        address: 0x10,
        allocation_size: 64,
        ..Default::default()
    });
    p.record_scratch_memory(ScratchMemory {
        operation: 1,
        flags: 2,
        ..Default::default()
    });
    p.record_runtime_initialization(RuntimeLibrary::Hip, 50203, 0);
    p.flush_buffer(buf).unwrap();

    let log = log.lock().unwrap();
    let order: Vec<(u32, Option<CallbackPhase>)> =
        log.iter().map(|r| (r.operation, r.phase)).collect();
    use ops::code_object::*;
    assert_eq!(
        order,
        vec![
            (LOAD, Some(CallbackPhase::Enter)),
            (DEVICE_KERNEL_SYMBOL_REGISTER, Some(CallbackPhase::Enter)),
            (DEVICE_KERNEL_SYMBOL_REGISTER, Some(CallbackPhase::Exit)),
            (LOAD, Some(CallbackPhase::Exit)),
        ]
    );
    assert_eq!(log[0].payload, CallbackPayload::CodeObjectLoad(co));
    assert_eq!(log[1].payload, CallbackPayload::KernelSymbolRegister(ks));

    let b = out.0.lock().unwrap();
    assert_eq!(b.memory_allocations.row(0).allocation_size, 64);
    assert_eq!(b.memory_allocations.row(0).thread_id, clock::thread_id());
    assert_eq!(b.scratch_memory.row(0).flags, 2);
    let init = b.runtime_initializations.row(0);
    assert_eq!(
        (init.operation, init.version),
        (RuntimeLibrary::Hip as u32, 50203)
    );
}

/// rocprofv3's markers: a mark is one record (start = end), a push…pop one
/// record on its thread, a start…stop one record across threads, each named
/// by its message (an interned operation) with the opening correlation id
/// and thread; an open range gives no record and is counted.
#[test]
fn marker_ranges_are_records_of_their_message() {
    let p = Arc::new(Profiler::new());
    let (ctx, buf, sink) = buffered(&p, &[BufferTracingKind::MarkerCoreRangeApi]);
    p.start_context(ctx).unwrap();

    p.marker_mark("mark");
    p.marker_push("outer");
    p.marker_push("inner");
    p.marker_pop();
    p.marker_start("across", 7, clock::now());
    let q = p.clone();
    std::thread::spawn(move || {
        q.marker_pop(); // nothing open on this thread: no record
        q.marker_push("other thread");
        q.marker_pop();
        q.marker_stop(7);
        q.marker_stop(8); // never started: no record
    })
    .join()
    .unwrap();
    p.marker_pop();
    p.marker_push("left open");
    p.marker_start("also open", 9, clock::now());
    assert_eq!(p.unclosed_marker_ranges(), 2);
    p.flush_buffer(buf).unwrap();

    let b = sink.0.lock().unwrap();
    let mut rows: Vec<ApiCall> = b.api_calls.rows().collect();
    rows.sort_by_key(|r| (r.end, r.start));
    let name = |r: &ApiCall| p.symbols().marker(r.operation).unwrap().to_string();
    let names: Vec<String> = rows.iter().map(name).collect();
    assert_eq!(names, ["mark", "inner", "other thread", "across", "outer"]);
    let kind = BufferTracingKind::MarkerCoreRangeApi as u32;
    assert!(rows.iter().all(|r| r.kind == kind));
    assert_eq!(rows[0].start, rows[0].end, "a mark is a point");
    let me = clock::thread_id();
    let (inner, other, across, outer) = (&rows[1], &rows[2], &rows[3], &rows[4]);
    assert!(
        outer.start <= inner.start && inner.end <= outer.end,
        "nesting kept"
    );
    assert_eq!(
        (outer.thread_id, inner.thread_id, across.thread_id),
        (me, me, me)
    );
    assert_ne!(other.thread_id, me);
    assert!(
        across.end >= other.end,
        "stopped on the other thread, after its range"
    );
    assert!(
        outer.correlation_id < inner.correlation_id,
        "the opening call's id"
    );
    let mut ids: Vec<u64> = rows.iter().map(|r| r.correlation_id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 5);
    assert_eq!(
        p.symbols().intern_marker("outer"),
        outer.operation,
        "one operation per message"
    );
}

/// A pop closes its own push even when tracing stopped and started again
/// between them: a push made untraced takes a place on the thread's stack
/// and gives no record, and the traced push beneath it keeps its message.
#[test]
fn a_pop_closes_its_own_push_across_a_tracing_pause() {
    let p = Profiler::new();
    let (ctx, buf, sink) = buffered(&p, &[BufferTracingKind::MarkerCoreRangeApi]);
    p.start_context(ctx).unwrap();
    p.marker_push("traced");
    p.stop_context(ctx).unwrap();
    p.marker_push("untraced");
    p.start_context(ctx).unwrap();
    p.marker_pop(); // closes "untraced": no record
    assert_eq!(p.unclosed_marker_ranges(), 1);
    p.marker_pop(); // closes "traced"
    assert_eq!(p.unclosed_marker_ranges(), 0);
    p.flush_buffer(buf).unwrap();
    let b = sink.0.lock().unwrap();
    let names: Vec<String> = b
        .api_calls
        .rows()
        .map(|r| p.symbols().marker(r.operation).unwrap().to_string())
        .collect();
    assert_eq!(names, ["traced"]);
}

/// A C tool's context (numbered as the SDK) gets the roctx operation of
/// each marker record, as the SDK's records carry it; another context of
/// the same run gets the message's number.
#[test]
fn a_c_tools_marker_records_carry_the_roctx_operation() {
    let p = Arc::new(Profiler::new());
    let kinds = [BufferTracingKind::MarkerCoreRangeApi];
    let (sdk_ctx, sdk_buf, sdk_sink) = buffered(&p, &kinds);
    let (ctx, buf, sink) = buffered(&p, &kinds);
    p.number_markers_as_the_sdk(sdk_ctx).unwrap();
    p.start_context(sdk_ctx).unwrap();
    p.start_context(ctx).unwrap();
    p.marker_mark("mark");
    p.marker_push("range");
    p.marker_pop();
    p.marker_start("process", 3, clock::now());
    p.marker_stop(3);
    p.flush_buffer(sdk_buf).unwrap();
    p.flush_buffer(buf).unwrap();
    let kind = BufferTracingKind::MarkerCoreRangeApi;
    let op = |n: &str| operation_by_name(kind, n).unwrap();
    let ops: Vec<u32> = sdk_sink.0.lock().unwrap().api_calls.operation.clone();
    assert_eq!(
        ops,
        [
            op("roctxMarkA"),
            op("roctxThreadRangeA"),
            op("roctxProcessRangeA")
        ]
    );
    let names: Vec<String> = sink
        .0
        .lock()
        .unwrap()
        .api_calls
        .operation
        .iter()
        .map(|&o| p.symbols().marker(o).unwrap().to_string())
        .collect();
    assert_eq!(names, ["mark", "range", "process"]);
    assert_eq!(
        p.number_markers_as_the_sdk(ContextId(999)),
        Err(Status::ContextNotFound)
    );
}

/// Without a context tracing `MARKER_CORE_RANGE_API` nothing is kept.
#[test]
fn markers_untraced_cost_nothing() {
    let p = Profiler::new();
    let (ctx, _, _) = buffered(&p, &[BufferTracingKind::MarkerCoreApi]);
    p.start_context(ctx).unwrap();
    p.marker_push("x");
    p.marker_start("y", 1, clock::now());
    assert_eq!(p.unclosed_marker_ranges(), 0);
    assert!(p.symbols().marker(ops::MARKER_MESSAGE_BASE).is_none());
}

/// Inside a traced roctx call, a marker record takes that call's
/// correlation id (the push's, for a push…pop range), as the SDK's callback
/// record of the call carries it.
#[test]
fn a_marker_takes_its_traced_calls_correlation_id() {
    let p = Profiler::new();
    let (ctx, buf, sink) = buffered(
        &p,
        &[
            BufferTracingKind::MarkerCoreApi,
            BufferTracingKind::MarkerCoreRangeApi,
        ],
    );
    p.start_context(ctx).unwrap();
    let op = |n: &str| operation_by_name(BufferTracingKind::MarkerCoreApi, n).unwrap();
    let call = |name: &str, f: &dyn Fn()| {
        p.trace_api(Domain::MarkerCoreApi, op(name), noop, f, |_| String::new())
    };
    call("roctxRangePushA", &|| p.marker_push("range"));
    call("roctxMarkA", &|| p.marker_mark("mark"));
    call("roctxRangePop", &|| p.marker_pop());
    p.flush_buffer(buf).unwrap();
    let b = sink.0.lock().unwrap();
    let rows: Vec<ApiCall> = b.api_calls.rows().collect();
    let calls: Vec<&ApiCall> = rows
        .iter()
        .filter(|r| r.kind == BufferTracingKind::MarkerCoreApi as u32)
        .collect();
    let marked = |m: &str| {
        rows.iter()
            .find(|r| p.symbols().marker(r.operation).as_deref() == Some(m))
            .unwrap()
            .correlation_id
    };
    assert_eq!(calls.len(), 3);
    assert_eq!(marked("range"), calls[0].correlation_id, "the push's id");
    assert_eq!(marked("mark"), calls[1].correlation_id, "the mark's id");
}
