//! One profiling run inside the application: the sdk-core [`Profiler`], the
//! configured services, and the output sinks, from start-up to finalization.
//!
//! The session is created once ([`start`]) and then reached through a global
//! pointer that interposers load with one atomic read ([`active`]). It is
//! never freed: callbacks of the runtime may still arrive while the process
//! exits, and a leaked session is cheaper than a use-after-free. After
//! [`Session::finalize`] (or in a forked child that opted out) [`active`]
//! returns `None` and every interposer just forwards.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};

use rocwasm_core::{
    clock, Argument, Batch, BufferPolicy, BufferTracingKind, CodeObject, DeliveryInfo, Domain,
    KernelDispatch, KernelSymbol, MemoryAllocation, MemoryCopy, Profiler, RuntimeLibrary,
};
use rocwasm_output::{
    OperationNames, OutputFormat, OutputOptions, Outputs, RunMetadata, SinkContext,
};

use crate::args::{ArgList, Render};
use crate::run_config::{RunConfig, SUMMARY_FILE};
use crate::tracer::ApiOp;

mod api_log;

/// An in-flight async operation (kernel dispatch, copy); `None` when nothing traces it.
pub type AsyncToken = Option<rocwasm_core::AsyncOp>;

const DEFAULT_BUFFER: u64 = 1 << 20;

static SESSION: AtomicPtr<Session> = AtomicPtr::new(std::ptr::null_mut());

pub struct Session {
    profiler: Arc<Profiler>,
    pub config: RunConfig,
    pub dir: PathBuf,
    outputs: Mutex<Option<Outputs>>,
    meta: Mutex<RunMetadata>,
    names: OperationNames,
    finished: AtomicBool,
    pub kinds: Vec<BufferTracingKind>,
    api_log: Mutex<Option<Arc<api_log::ApiLog>>>,
}

/// The output's name table, completed with every operation of the registry.
fn operation_names() -> OperationNames {
    let names = OperationNames::new();
    for &kind in BufferTracingKind::ALL {
        for (op, name) in rocwasm_core::operations(kind) {
            names.register(kind.raw(), op, name);
        }
    }
    names
}

/// The live session, if any.
#[inline]
pub fn active() -> Option<&'static Session> {
    let p = SESSION.load(Ordering::Acquire);
    // SAFETY: a published session is leaked and never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Stops interposers from using the session (forked child, after finalize).
pub fn detach() {
    SESSION.store(std::ptr::null_mut(), Ordering::Release);
}

/// The registry number of an operation by name.
pub fn operation_id(kind: BufferTracingKind, name: &str) -> Option<u32> {
    rocwasm_core::operation_by_name(kind, name)
}

/// A HIP kernel registration arrived (possibly before the session started;
/// [`start`] imports the earlier ones).
pub fn on_host_kernel(k: &crate::hip::kernels::HostKernel) {
    if let Some(s) = active() {
        s.profiler.symbols().insert_kernel(host_symbol(k));
    }
}

fn host_symbol(k: &crate::hip::kernels::HostKernel) -> KernelSymbol {
    KernelSymbol {
        id: k.symbol_id,
        code_object_id: 0,
        name: k.mangled.clone(),
        demangled_name: k.demangled.clone(),
        kernel_object: 0,
        kernarg_segment_size: 0,
        kernarg_segment_alignment: 0,
        group_segment_size: 0,
        private_segment_size: 0,
        sgpr_count: 0,
        arch_vgpr_count: 0,
        accum_vgpr_count: 0,
        kernel_code_entry_byte_offset: 0,
        kernel_address: k.host_fn as u64,
    }
}

/// A runtime reported its initialisation.
pub fn runtime_initialized(lib: RuntimeLibrary, version: u64) {
    if let Some(s) = active() {
        s.profiler.record_runtime_initialization(lib, version, 0);
    }
}

/// Starts the session described by `config` and publishes it.
pub fn start(config: RunConfig) -> Result<&'static Session, String> {
    let pid = std::process::id();
    let dir = config.expand_dir(pid);
    let mut kinds = Vec::new();
    for name in &config.kinds {
        let kind = BufferTracingKind::from_name(name)
            .ok_or_else(|| format!("unknown tracing kind {name:?}"))?;
        kinds.push(kind);
    }
    let mut formats = Vec::new();
    for f in &config.formats {
        formats.push(OutputFormat::from_name(f).map_err(|e| e.to_string())?);
    }
    let outputs = Outputs::new(&OutputOptions {
        dir: dir.clone(),
        name: config.output_name.clone(),
        formats,
        stats: config.stats,
    });
    let mut meta = RunMetadata::for_current_process(config.command.clone());
    meta.start_ns = clock::now();

    let profiler = Arc::new(Profiler::new());
    let session: &'static Session = Box::leak(Box::new(Session {
        profiler: profiler.clone(),
        config,
        dir,
        outputs: Mutex::new(Some(outputs)),
        meta: Mutex::new(meta),
        names: operation_names(),
        api_log: Mutex::new(None),
        finished: AtomicBool::new(false),
        kinds: kinds.clone(),
    }));

    let status = |what: &str, e: rocwasm_core::Status| format!("{what}: {e}");
    let ctx = profiler
        .create_context()
        .map_err(|e| status("create context", e))?;
    let size = if session.config.buffer_size == 0 {
        DEFAULT_BUFFER
    } else {
        session.config.buffer_size
    };
    let sink = move |_info: DeliveryInfo, batch: Batch| session.deliver(&batch);
    let buffer = profiler
        .create_buffer(ctx, size, size / 2, BufferPolicy::Lossless, Arc::new(sink))
        .map_err(|e| status("create buffer", e))?;
    for &kind in &kinds {
        profiler
            .configure_buffer_tracing(ctx, kind, &[], buffer)
            .map_err(|e| status(kind.name(), e))?;
    }
    if session.config.api_log {
        let log = Arc::new(api_log::ApiLog::new(&session.dir)?);
        *session.api_log.lock().unwrap_or_else(|e| e.into_inner()) = Some(log.clone());
        for &kind in &kinds {
            let Some(cb) = Domain::from_buffer_kind(kind)
                .filter(|d| d.is_api())
                .and_then(|d| d.callback_kind())
            else {
                continue;
            };
            let log = log.clone();
            let sink = move |r: &rocwasm_core::CallbackRecord, _: &mut u64| log.record(r);
            profiler
                .configure_callback_tracing(ctx, cb, &[], Arc::new(sink))
                .map_err(|e| status(cb.name(), e))?;
        }
    }
    if let Some(chain) = &session.config.chain {
        eprintln!(
            "rocwasm: chain {} is not run in the process by this build (the plugin runtime is not linked yet)",
            chain.display()
        );
    }
    profiler.lock_configuration();
    profiler
        .start_context(ctx)
        .map_err(|e| status("start context", e))?;

    {
        let mut guard = session.outputs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(o) = guard.as_mut() {
            let meta = session
                .meta
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            o.begin(&SinkContext {
                meta: &meta,
                symbols: profiler.symbols(),
                names: &session.names,
            });
        }
    }
    for k in crate::hip::kernels::all() {
        profiler.symbols().insert_kernel(host_symbol(&k));
    }
    SESSION.store(session as *const Session as *mut Session, Ordering::Release);
    Ok(session)
}

impl Session {
    /// Traces one API call (see [`crate::tracer::api_call`]).
    #[inline]
    pub fn api_call<R: Render>(
        &self,
        op: &'static ApiOp,
        args: &dyn Fn(&mut ArgList),
        call: impl FnOnce() -> R,
    ) -> R {
        let (Some(domain), Some(id)) = (Domain::from_buffer_kind(op.kind), op.id()) else {
            return call();
        };
        self.profiler.trace_api(
            domain,
            id,
            || {
                let mut list = ArgList::default();
                args(&mut list);
                list.args
                    .into_iter()
                    .map(|a| Argument::new(a.name, a.type_name, a.value))
                    .collect()
            },
            call,
            |r| r.to_text(),
        )
    }

    /// True when some context records `kind`.
    #[inline]
    pub fn wants(&self, kind: BufferTracingKind) -> bool {
        Domain::from_buffer_kind(kind).is_some_and(|d| self.profiler.is_tracing(d))
    }

    pub fn symbols(&self) -> &rocwasm_core::SymbolTable {
        self.profiler.symbols()
    }

    /// Notes an async operation on the launching thread.
    pub fn begin_async(&self, kind: BufferTracingKind, op: u32) -> AsyncToken {
        self.profiler
            .begin_async(Domain::from_buffer_kind(kind)?, op)
    }

    pub fn cancel_async(&self, token: AsyncToken) {
        if let Some(t) = token {
            self.profiler.cancel_async(t);
        }
    }

    pub fn complete_kernel_dispatch(&self, token: AsyncToken, record: KernelDispatch) {
        if let Some(t) = token {
            self.profiler.complete_kernel_dispatch(t, record);
        }
    }

    pub fn complete_memory_copy(&self, token: AsyncToken, record: MemoryCopy) {
        if let Some(t) = token {
            self.profiler.complete_memory_copy(t, record);
        }
    }

    pub fn memory_allocation(&self, row: MemoryAllocation) {
        self.profiler.record_memory_allocation(row);
    }

    pub fn code_object_load(&self, co: &CodeObject) {
        self.profiler.emit_code_object_load(co.clone());
    }

    pub fn code_object_unload(&self, co: &CodeObject) {
        self.profiler.emit_code_object_unload(co.id);
    }

    pub fn kernel_symbol_register(&self, k: &KernelSymbol) {
        self.profiler.emit_kernel_symbol_register(k.clone());
    }

    pub fn kernel_symbol_unregister(&self, k: &KernelSymbol) {
        self.profiler.emit_kernel_symbol_unregister(k.id);
    }

    /// A buffer delivery, on the callback thread.
    fn deliver(&self, batch: &Batch) {
        let mut guard = self.outputs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(o) = guard.as_mut() {
            let meta = self.meta.lock().unwrap_or_else(|e| e.into_inner()).clone();
            o.write_batch(
                batch,
                &SinkContext {
                    meta: &meta,
                    symbols: self.profiler.symbols(),
                    names: &self.names,
                },
            );
        }
    }

    /// Flushes everything, closes the outputs, writes the summary file. Runs
    /// once; later calls return at once.
    pub fn finalize(&self) {
        if self.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        // Stops contexts and delivers every buffered record (blocking).
        self.profiler.finalize();
        let outputs = self
            .outputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(outputs) = outputs else { return };
        let mut meta = self.meta.lock().unwrap_or_else(|e| e.into_inner()).clone();
        meta.end_ns = clock::now();
        if let Err(e) = std::fs::create_dir_all(&self.dir) {
            eprintln!("rocwasm: cannot create {}: {e}", self.dir.display());
        }
        let ctx = SinkContext {
            meta: &meta,
            symbols: self.profiler.symbols(),
            names: &self.names,
        };
        let summary = outputs.finish(&ctx);
        let mut text = summary.stats.render_summary(10);
        let host_kernels = crate::hip::kernels::all().len();
        text.push_str(&format!(
            "\nrocwasm: pid {} — {} kernels registered by HIP\n",
            meta.pid, host_kernels
        ));
        for f in &summary.files {
            text.push_str(&format!("rocwasm: wrote {}\n", f.display()));
        }
        for e in &summary.errors {
            text.push_str(&format!("rocwasm: output error: {e:#}\n"));
        }
        if let Some(log) = self
            .api_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            log.flush();
        }
        let path = self.dir.join(SUMMARY_FILE);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("rocwasm: cannot write {}: {e}", path.display());
        }
    }
}
