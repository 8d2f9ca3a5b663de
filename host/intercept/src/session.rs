//! One profiling run inside the application: the sdk-core [`Profiler`], the
//! plugin chain, the configured services, and the output sinks, from
//! start-up to finalization.
//!
//! The session is created once ([`start`]) and then reached through a global
//! pointer that interposers load with one atomic read ([`active`]). It is
//! never freed: callbacks of the runtime may still arrive while the process
//! exits, and a leaked session is cheaper than a use-after-free. After
//! [`Session::finalize`] (or in a forked child that opted out) [`active`]
//! returns `None` and every interposer just forwards.
//!
//! # Start-up order
//!
//! The engine's configuration is locked once, after every tool's `init`, as
//! in the SDK. So the session configures its own context first (the kinds
//! the sinks want that the chain does not trace, see [`sinks::SinkPlan`], and
//! the API log), then starts the chain ([`crate::plugins`]), which configures
//! and initialises the plugins and locks; then the session's own context
//! starts.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};

use rocwasm_core::{
    clock, Argument, Batch, BufferPolicy, BufferTracingKind, CodeObject, ContextId, DeliveryInfo,
    Domain, KernelDispatch, KernelSymbol, MemoryAllocation, MemoryCopy, Profiler, RuntimeLibrary,
};
use rocwasm_output::{OutputOptions, Outputs, RunMetadata};
use rocwasm_plan::{ProcessInfo, RunPlan};
use rocwasm_plugin_host::Chain;

use crate::call_arguments::{ArgList, Render};
use crate::plugins::{self, summary::PluginReport};

mod api_log;
pub mod sinks;

use sinks::{SinkPlan, Sinks};

/// An in-flight async operation (kernel dispatch, copy); `None` when nothing traces it.
pub type AsyncToken = Option<rocwasm_core::AsyncOp>;

const DEFAULT_BUFFER: u64 = 1 << 20;

static SESSION: AtomicPtr<Session> = AtomicPtr::new(std::ptr::null_mut());

/// The process's profiling run; see the module docs. Reached through
/// [`active`]; never freed.
pub struct Session {
    profiler: Arc<Profiler>,
    /// The run plan the session started from (a forked child that profiles
    /// starts its own session from a copy).
    pub config: RunPlan,
    /// The output directory, the plan's template expanded for this process
    /// (`RunPlan::run_dir`): the sinks' files, the summary, `api_calls.txt`.
    pub dir: PathBuf,
    sinks: Arc<Sinks>,
    /// The plugin chain, until finalization takes it.
    plugins: Mutex<Option<Chain>>,
    /// Problems found at start-up (already printed), for the summary.
    start_problems: Vec<String>,
    finished: AtomicBool,
    api_log: Mutex<Option<Arc<api_log::ApiLog>>>,
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

/// A HIP kernel registration arrived (possibly before the session started;
/// [`start`] imports the earlier ones). Registered with
/// [`crate::hip::kernels::on_register`] when a session starts.
fn on_host_kernel(k: &crate::hip::kernels::HostKernel) {
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

/// Prints a problem now (`rocwasm:` prefix) and keeps it for the summary.
fn problem(list: &mut Vec<String>, text: String) {
    eprintln!("rocwasm: {text}");
    list.push(text);
}

/// Starts the session described by `config` and publishes it.
pub fn start(config: RunPlan) -> Result<&'static Session, String> {
    start_with_notes(config, Vec::new())
}

/// As [`start`], with lines the summary should carry (e.g. why a forked
/// child runs no plugins).
pub fn start_with_notes(config: RunPlan, notes: Vec<String>) -> Result<&'static Session, String> {
    let process = ProcessInfo::current();
    let dir = config.run_dir(&process);
    let kinds = config.output.kinds.clone();
    let outputs = Outputs::new(&OutputOptions {
        dir: dir.clone(),
        name: config.file_prefix(&process),
        formats: config.output.formats.clone(),
        stats: config.output.stats,
    });
    let claims = outputs.claims();
    let mut meta = RunMetadata::for_current_process(config.command.clone());
    meta.start_ns = clock::now();
    let profiler = Arc::new(Profiler::new());
    let sinks = Arc::new(Sinks::new(outputs, meta, profiler.clone()));
    let mut problems = notes;

    // The chain's stages, and what the chain will trace for them.
    let specs = plugins::spec::stage_specs(&config, &dir);
    let plan = if specs.is_empty() {
        SinkPlan::without_chain(&kinds)
    } else {
        SinkPlan::new(&kinds, &plugins::spec::traced_by_chain(&specs))
    };

    let status = |what: &str, e: rocwasm_core::Status| format!("{what}: {e}");
    let own =
        OwnContext::new(&profiler, &config, &sinks).map_err(|e| status("create context", e))?;
    own.trace(&profiler, &plan.own)?;
    let api_log = if config.api_log {
        Some(own.api_log(&profiler, &dir, &kinds)?)
    } else {
        None
    };

    let mut chain = None;
    if !specs.is_empty() {
        let output = {
            let (sinks, plan) = (sinks.clone(), plan.clone());
            Box::new(move |_: &DeliveryInfo, batch: &Batch| {
                if plan.chain_only.is_empty() {
                    sinks.write(batch);
                } else {
                    let mut batch = batch.clone();
                    plan.restrict(&mut batch);
                    sinks.write(&batch);
                }
            })
        };
        match plugins::start(&config, specs, profiler.clone(), output, claims) {
            Ok(c) => chain = Some(c),
            Err(e) => {
                problem(
                    &mut problems,
                    format!(
                        "the plugin chain cannot start ({e:#}); profiling goes on without plugins"
                    ),
                );
                // The chain fails before it locks the engine's
                // configuration: the session still traces what the sinks
                // expected from it.
                let missing: Vec<_> = plan.from_chain.iter().copied().collect();
                if let Err(e) = own.trace(&profiler, &missing) {
                    problem(&mut problems, format!("tracing without the chain: {e}"));
                }
            }
        }
    }
    profiler.lock_configuration();
    own.start(&profiler)
        .map_err(|e| status("start context", e))?;

    let session: &'static Session = Box::leak(Box::new(Session {
        profiler: profiler.clone(),
        config,
        dir,
        sinks,
        plugins: Mutex::new(chain),
        start_problems: problems,
        api_log: Mutex::new(api_log),
        finished: AtomicBool::new(false),
    }));
    session.sinks.begin();
    crate::hip::kernels::on_register(on_host_kernel);
    for k in crate::hip::kernels::all() {
        profiler.symbols().insert_kernel(host_symbol(&k));
    }
    SESSION.store(session as *const Session as *mut Session, Ordering::Release);
    Ok(session)
}

/// The session's own context: the kinds the sinks take from no chain, and
/// the API log's callbacks. Its buffer is created on first use.
struct OwnContext {
    ctx: ContextId,
    size: u64,
    sinks: Arc<Sinks>,
    buffer: Mutex<Option<rocwasm_core::BufferId>>,
    used: AtomicBool,
}

impl OwnContext {
    fn new(
        profiler: &Profiler,
        config: &RunPlan,
        sinks: &Arc<Sinks>,
    ) -> Result<OwnContext, rocwasm_core::Status> {
        Ok(OwnContext {
            ctx: profiler.create_context()?,
            size: if config.buffer.size == 0 {
                DEFAULT_BUFFER
            } else {
                config.buffer.size
            },
            sinks: sinks.clone(),
            buffer: Mutex::new(None),
            used: AtomicBool::new(false),
        })
    }

    /// Buffer tracing of `kinds` (all operations) into the sinks.
    fn trace(&self, profiler: &Profiler, kinds: &[BufferTracingKind]) -> Result<(), String> {
        if kinds.is_empty() {
            return Ok(());
        }
        let mut slot = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        let buffer = match *slot {
            Some(b) => b,
            None => {
                let sinks = self.sinks.clone();
                let sink = move |_info: DeliveryInfo, batch: Batch| sinks.write(&batch);
                let b = profiler
                    .create_buffer(
                        self.ctx,
                        self.size,
                        self.size / 2,
                        BufferPolicy::Lossless,
                        Arc::new(sink),
                    )
                    .map_err(|e| format!("create buffer: {e}"))?;
                *slot = Some(b);
                b
            }
        };
        for &kind in kinds {
            profiler
                .configure_buffer_tracing(self.ctx, kind, &[], buffer)
                .map_err(|e| format!("{}: {e}", kind.name()))?;
        }
        self.used.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// `api_calls.txt`: callback tracing of the traced API kinds.
    fn api_log(
        &self,
        profiler: &Profiler,
        dir: &std::path::Path,
        kinds: &[BufferTracingKind],
    ) -> Result<Arc<api_log::ApiLog>, String> {
        let log = Arc::new(api_log::ApiLog::new(dir)?);
        for &kind in kinds {
            let Some(cb) = Domain::from_buffer_kind(kind)
                .filter(|d| d.is_api())
                .and_then(|d| d.callback_kind())
            else {
                continue;
            };
            let log = log.clone();
            let sink = move |r: &rocwasm_core::CallbackRecord, _: &mut u64| log.record(r);
            profiler
                .configure_callback_tracing(self.ctx, cb, &[], Arc::new(sink))
                .map_err(|e| format!("{}: {e}", cb.name()))?;
            self.used.store(true, Ordering::Relaxed);
        }
        Ok(log)
    }

    /// Starts the context if it has anything to do (the engine refuses to
    /// start an empty one).
    fn start(&self, profiler: &Profiler) -> Result<(), rocwasm_core::Status> {
        if self.used.load(Ordering::Relaxed) {
            profiler.start_context(self.ctx)
        } else {
            Ok(())
        }
    }
}

impl Session {
    /// Traces one API call, operation `id` of `domain` (the interposers
    /// reach this through [`crate::tracer::api_call`]).
    #[inline]
    pub fn api_call<R: Render>(
        &self,
        domain: Domain,
        id: u32,
        args: &dyn Fn(&mut ArgList),
        call: impl FnOnce() -> R,
    ) -> R {
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

    /// The run's agents, code objects and kernel symbols, which records
    /// refer to by id; the sinks and plugins read the same table.
    pub fn symbols(&self) -> &rocwasm_core::SymbolTable {
        self.profiler.symbols()
    }

    /// Notes an async operation on the launching thread.
    pub fn begin_async(&self, kind: BufferTracingKind, op: u32) -> AsyncToken {
        self.profiler
            .begin_async(Domain::from_buffer_kind(kind)?, op)
    }

    /// Releases an operation [`begin_async`](Self::begin_async) started that
    /// will never complete (a reserved packet slot never dispatched, a
    /// completion signal that could not be set up); nothing is recorded.
    pub fn cancel_async(&self, token: AsyncToken) {
        if let Some(t) = token {
            self.profiler.cancel_async(t);
        }
    }

    /// A kernel dispatch finished (on any thread): `record` has the timing
    /// (ns) and dispatch fields; the engine fills in the correlation ids and
    /// the launching thread from `token`. A `None` token records nothing.
    pub fn complete_kernel_dispatch(&self, token: AsyncToken, record: KernelDispatch) {
        if let Some(t) = token {
            self.profiler.complete_kernel_dispatch(t, record);
        }
    }

    /// An async copy finished (on any thread): `record` has the direction
    /// (`operation`), bytes, agents and timing (ns); correlation and thread
    /// come from `token`. A `None` token records nothing.
    pub fn complete_memory_copy(&self, token: AsyncToken, record: MemoryCopy) {
        if let Some(t) = token {
            self.profiler.complete_memory_copy(t, record);
        }
    }

    /// Records an allocation or free (`row.operation`, address, size in
    /// bytes, times in ns); correlation and thread come from the calling
    /// thread.
    pub fn memory_allocation(&self, row: MemoryAllocation) {
        self.profiler.record_memory_allocation(row);
    }

    /// A code object was loaded: adds it to the symbol table and fires
    /// `CODE_OBJECT` / `LOAD` (ENTER) callbacks.
    pub fn code_object_load(&self, co: &CodeObject) {
        self.profiler.emit_code_object_load(co.clone());
    }

    /// A code object is being unloaded: `CODE_OBJECT` / `LOAD` (EXIT); the
    /// symbol table keeps it, so names stay valid until finalization.
    pub fn code_object_unload(&self, co: &CodeObject) {
        self.profiler.emit_code_object_unload(co.id);
    }

    /// A kernel symbol was registered: adds it to the symbol table and fires
    /// `CODE_OBJECT` / `DEVICE_KERNEL_SYMBOL_REGISTER` (ENTER).
    pub fn kernel_symbol_register(&self, k: &KernelSymbol) {
        self.profiler.emit_kernel_symbol_register(k.clone());
    }

    /// A kernel symbol is being unregistered: the same operation's EXIT.
    pub fn kernel_symbol_unregister(&self, k: &KernelSymbol) {
        self.profiler.emit_kernel_symbol_unregister(k.id);
    }

    /// Flushes everything, finishes the chain (each plugin's `fini`, once),
    /// closes the outputs, writes the summary file. Runs once; later calls
    /// return at once.
    pub fn finalize(&self) {
        if self.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        let chain = self
            .plugins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        // Finishing the chain finalizes the engine first (stops contexts,
        // delivers every buffered record: the chain's through the stages
        // into the sinks, the session's straight into them).
        let report = match chain {
            Some(chain) => plugins::finish(chain),
            None => PluginReport::default(),
        };
        self.profiler.finalize();
        for p in &report.problems {
            eprintln!("rocwasm: {p}");
        }
        let Some((outputs, meta)) = self.sinks.finish() else {
            return;
        };
        if let Err(e) = std::fs::create_dir_all(&self.dir) {
            eprintln!("rocwasm: cannot create {}: {e}", self.dir.display());
        }
        let mut text = report.render();
        // The host's own statistics: with `--stats`, or when no plugin
        // printed tables of its own (they would say the same twice).
        if self.config.output.stats || report.tables.iter().all(|(_, t)| t.is_empty()) {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&outputs.stats.render_summary(10));
        }
        let host_kernels = crate::hip::kernels::all().len();
        text.push_str(&format!(
            "\nrocwasm: pid {} — {} kernels registered by HIP; {} {}\n",
            meta.pid,
            host_kernels,
            report.tables.len(),
            RunPlan::PLUGINS_RAN
        ));
        text.push_str(match rocwasm_core::clock::source() {
            rocwasm_core::clock::Source::Counter => {
                "rocwasm: host timestamps: CPU time-stamp counter mapped onto CLOCK_BOOTTIME\n"
            }
            rocwasm_core::clock::Source::System => "rocwasm: host timestamps: CLOCK_BOOTTIME\n",
        });
        for p in &self.start_problems {
            text.push_str(&format!("rocwasm: {p}\n"));
        }
        for f in &outputs.files {
            text.push_str(&format!("rocwasm: wrote {}\n", f.display()));
        }
        for e in &outputs.errors {
            text.push_str(&format!("rocwasm: output error: {e:#}\n"));
        }
        for note in &outputs.notes {
            text.push_str(&format!("rocwasm: {note}\n"));
        }
        if let Some(log) = self
            .api_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            log.flush();
        }
        let path = self.dir.join(RunPlan::SUMMARY_FILE);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("rocwasm: cannot write {}: {e}", path.display());
        }
    }
}
