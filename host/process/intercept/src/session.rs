//! One profiling run inside the application: the run's [`LiveRun`] (the
//! engine, the in-process plugin chain, the record journal) and the
//! producer calls the interposers make into its engine, from start-up to
//! finalization.
//!
//! The session is created once ([`start`]) and then reached through a global
//! pointer that interposers load with one atomic read ([`active`]). It is
//! never freed: callbacks of the runtime may still arrive while the process
//! exits, and a leaked session is cheaper than a use-after-free. After
//! [`Session::finalize`] (or in a forked child that opted out) [`active`]
//! returns `None` and every interposer just forwards.
//!
//! Everything that is not FFI (the start-up order of the engine, the chain
//! and the journal; which buffer feeds the outputs each kind; the end of
//! the run) is `rocwasm-record`'s. What stays here: the producer entry
//! points, the HIP kernels registered before start-up, the process's own
//! report lines, and, without a launcher, having the outputs written
//! ([`crate::writer`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};

use rocwasm_core::{
    Argument, BufferTracingKind, CodeObject, Domain, KernelDispatch, KernelSymbol,
    MemoryAllocation, MemoryCopy, Profiler, RuntimeLibrary,
};
use rocwasm_plan::{ProcessInfo, RunPlan};
use rocwasm_record::{LiveHooks, LiveRun, ProcessEnd};

use crate::call_arguments::{ArgList, Render};

/// An in-flight async operation (kernel dispatch, copy); `None` when nothing traces it.
pub type AsyncToken = Option<rocwasm_core::AsyncOp>;

static SESSION: AtomicPtr<Session> = AtomicPtr::new(std::ptr::null_mut());

/// The process's profiling run; see the module docs. Reached through
/// [`active`]; never freed.
pub struct Session {
    run: LiveRun,
}

/// Where a deferred start stands (see [`crate::lifecycle`]: native tools
/// must be configured after every library's constructors have run, so the
/// session starts at the first intercepted call).
static DEFERRED: AtomicU8 = AtomicU8::new(NOT_DEFERRED);
/// No deferred start (none asked for, or it is over).
const NOT_DEFERRED: u8 = 0;
/// The first intercepted call will start the session.
const PENDING: u8 = 1;
/// A thread is starting the session now.
const STARTING: u8 = 2;

thread_local! {
    /// True on the thread that is starting the session, while it does.
    static STARTER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Wakes the threads that wait for a deferred start.
static START_DONE: (std::sync::Mutex<()>, std::sync::Condvar) =
    (std::sync::Mutex::new(()), std::sync::Condvar::new());

/// How long another thread's call waits for a deferred start before it
/// goes on untraced (a tool whose `initialize` waits for that thread would
/// otherwise never finish).
const START_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The live session, if any. The first call after a deferred start-up
/// starts the session (one atomic load more on the path without a session).
#[inline]
pub fn active() -> Option<&'static Session> {
    let p = SESSION.load(Ordering::Acquire);
    if p.is_null() {
        return match DEFERRED.load(Ordering::Acquire) {
            NOT_DEFERRED => None,
            _ => start_deferred(),
        };
    }
    // SAFETY: a published session is leaked and never freed.
    Some(unsafe { &*p })
}

/// What starts a deferred session (the life cycle's start, which also
/// installs the exit hooks); set by [`defer_start`].
static DEFERRED_START: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Defers the start to the first intercepted call (or the process's exit),
/// which then calls `start`.
pub fn defer_start(start: fn()) {
    let _ = DEFERRED_START.set(start);
    DEFERRED.store(PENDING, Ordering::Release);
}

/// Starts a deferred session, once. Calls other threads make while it
/// starts wait for it (at most [`START_WAIT`]) and are traced: with native
/// tools the start runs their `initialize` (and, under the SDK back end,
/// rocwasm's chain), which takes long enough for a busy program's other
/// threads to make many calls. Calls the start itself makes (a tool's
/// `initialize` calling HIP) go untraced.
#[cold]
pub fn start_deferred() -> Option<&'static Session> {
    if DEFERRED
        .compare_exchange(PENDING, STARTING, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        STARTER.with(|s| s.set(true));
        if let Some(start) = DEFERRED_START.get() {
            start();
        }
        STARTER.with(|s| s.set(false));
        finish_start();
    } else if DEFERRED.load(Ordering::Acquire) == STARTING && !STARTER.with(|s| s.get()) {
        wait_for_start();
    }
    let p = SESSION.load(Ordering::Acquire);
    // SAFETY: a published session is leaked and never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// The deferred start is over: wake the waiting threads.
fn finish_start() {
    let _guard = START_DONE.0.lock().unwrap_or_else(|e| e.into_inner());
    DEFERRED.store(NOT_DEFERRED, Ordering::Release);
    START_DONE.1.notify_all();
}

fn wait_for_start() {
    let guard = START_DONE.0.lock().unwrap_or_else(|e| e.into_inner());
    let (_guard, timeout) = START_DONE
        .1
        .wait_timeout_while(guard, START_WAIT, |_| {
            DEFERRED.load(Ordering::Acquire) == STARTING
        })
        .unwrap_or_else(|e| e.into_inner());
    if timeout.timed_out() {
        static SAID: AtomicBool = AtomicBool::new(false);
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!(
                "rocwasm: profiling has been starting for {} s (a native tool's initialize?); \
                 calls on other threads go on untraced until it is done",
                START_WAIT.as_secs()
            );
        }
    }
}

/// Stops interposers from using the session (forked child, after finalize).
/// A start under way in another thread of the parent is over for a forked
/// child, which has no such thread.
pub fn detach() {
    SESSION.store(std::ptr::null_mut(), Ordering::Release);
    if DEFERRED.load(Ordering::Acquire) == STARTING && !STARTER.with(|s| s.get()) {
        DEFERRED.store(NOT_DEFERRED, Ordering::Release);
    }
}

/// A HIP kernel registration arrived (possibly before the session started;
/// [`start`] imports the earlier ones). Registered with
/// [`crate::hip::kernels::on_register`] when a session starts.
fn on_host_kernel(k: &crate::hip::kernels::HostKernel) {
    if let Some(s) = active() {
        s.profiler().symbols().insert_kernel(host_symbol(k));
        s.run.journal_symbols();
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

/// What a session asks of the runtime interception at three moments. The
/// HSA module depends on the session (it records into it); these function
/// pointers, set once by the library's constructor, let the session call
/// back without depending on it.
pub struct RuntimeHooks {
    /// Before native tools are configured: make the agents known.
    pub before_native_tools: fn(&Profiler),
    /// A session was published (the runtime may have come up before it).
    pub started: fn(&Session),
    /// Before native tools finalize: report the code objects still loaded
    /// unloaded.
    pub before_finalize: fn(),
}

static HOOKS: std::sync::OnceLock<RuntimeHooks> = std::sync::OnceLock::new();

/// Sets the [`RuntimeHooks`] (once; later calls are ignored).
pub fn set_runtime_hooks(hooks: RuntimeHooks) {
    let _ = HOOKS.set(hooks);
}

/// Starts the session described by `config` and publishes it.
pub fn start(config: RunPlan) -> Result<&'static Session, String> {
    start_with_notes(config, Vec::new())
}

/// As [`start`], with lines the summary should carry (e.g. why a forked
/// child runs no plugins).
pub fn start_with_notes(config: RunPlan, notes: Vec<String>) -> Result<&'static Session, String> {
    let native_tools = |profiler: &std::sync::Arc<Profiler>, allowed: bool| {
        if allowed && rocwasm_capi::tools_requested() {
            if let Some(h) = HOOKS.get() {
                (h.before_native_tools)(profiler);
            }
        }
        rocwasm_capi::configure_tools(profiler, allowed)
    };
    let run = LiveRun::start(
        config,
        &ProcessInfo::current(),
        notes,
        LiveHooks {
            native_tools: Some(&native_tools),
            durable_memory: Some(|dir, stem| {
                std::sync::Arc::new(crate::durable::MappedHalves { dir, stem })
                    as std::sync::Arc<dyn rocwasm_core::buffer::DurableMemory>
            }),
            back_end: rocwasm_plan::Backend::Builtin,
        },
    )
    .map_err(|e| format!("{e:#}"))?;
    let session: &'static Session = Box::leak(Box::new(Session { run }));
    crate::hip::kernels::on_register(on_host_kernel);
    for k in crate::hip::kernels::all() {
        session.profiler().symbols().insert_kernel(host_symbol(&k));
    }
    session.run.journal_symbols();
    SESSION.store(session as *const Session as *mut Session, Ordering::Release);
    if let Some(h) = HOOKS.get() {
        (h.started)(session);
    }
    Ok(session)
}

impl Session {
    /// Records that runtime `lib` (version `version`) initialized.
    pub fn runtime_initialized(&self, lib: RuntimeLibrary, version: u64) {
        self.profiler()
            .record_runtime_initialization(lib, version, 0);
    }

    /// The engine the interposers record into.
    #[inline]
    pub(crate) fn profiler(&self) -> &Profiler {
        self.run.profiler()
    }

    /// The run plan the session started from (a forked child that profiles
    /// starts its own session from a copy).
    pub fn plan(&self) -> &RunPlan {
        self.run.plan()
    }

    /// The output directory, the plan's template expanded for this process
    /// (`RunPlan::run_dir`): the sinks' files, the summary, `api_calls.txt`.
    pub fn dir(&self) -> &Path {
        self.run.dir()
    }

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
        self.profiler().trace_api(
            domain,
            id,
            || {
                let mut list = ArgList::default();
                args(&mut list);
                list.args
                    .into_iter()
                    .map(|a| Argument::new(a.name, a.type_name, a.value).with_bytes(a.bytes))
                    .collect()
            },
            call,
            |r| r.to_text(),
        )
    }

    /// True when some context records `kind`.
    #[inline]
    pub fn wants(&self, kind: BufferTracingKind) -> bool {
        Domain::from_buffer_kind(kind).is_some_and(|d| self.profiler().is_tracing(d))
    }

    /// True when some context, started or not, configured `kind`'s domain:
    /// what must be set up when the runtime comes up (copy timing,
    /// intercept queues) asks this, so a context started later is served.
    pub fn configured(&self, kind: BufferTracingKind) -> bool {
        Domain::from_buffer_kind(kind).is_some_and(|d| self.profiler().is_configured(d))
    }

    /// The run's agents, code objects and kernel symbols, which records
    /// refer to by id; the sinks and plugins read the same table.
    pub fn symbols(&self) -> &rocwasm_core::SymbolTable {
        self.profiler().symbols()
    }

    /// Notes an async operation on the launching thread.
    pub fn begin_async(&self, kind: BufferTracingKind, op: u32) -> AsyncToken {
        self.profiler()
            .begin_async(Domain::from_buffer_kind(kind)?, op)
    }

    /// As [`begin_async`](Self::begin_async) for an operation that may not
    /// happen (a reserved queue slot): tools are asked for external ids only
    /// at [`confirm_async`](Self::confirm_async).
    pub fn begin_async_unconfirmed(&self, kind: BufferTracingKind, op: u32) -> AsyncToken {
        self.profiler()
            .begin_async_unconfirmed(Domain::from_buffer_kind(kind)?, op)
    }

    /// The operation of an unconfirmed token does happen (see
    /// `Profiler::confirm_async`).
    pub fn confirm_async(&self, token: &mut AsyncToken) {
        if let Some(t) = token {
            self.profiler().confirm_async(t);
        }
    }

    /// A kernel dispatch's packet is being written: its ENQUEUE callbacks
    /// (see `Profiler::enqueue_kernel_dispatch`).
    pub fn enqueue_kernel_dispatch(&self, token: &mut AsyncToken, record: &KernelDispatch) {
        if let Some(t) = token {
            self.profiler().enqueue_kernel_dispatch(t, record);
        }
    }

    /// An async copy is being submitted: its ENTER callbacks (see
    /// `Profiler::submit_memory_copy`).
    pub fn submit_memory_copy(&self, token: &mut AsyncToken, record: &MemoryCopy) {
        if let Some(t) = token {
            self.profiler().submit_memory_copy(t, record);
        }
    }

    /// Releases an operation [`begin_async`](Self::begin_async) started that
    /// will never complete (a reserved packet slot never dispatched, a
    /// completion signal that could not be set up); nothing is recorded.
    pub fn cancel_async(&self, token: AsyncToken) {
        if let Some(t) = token {
            self.profiler().cancel_async(t);
        }
    }

    /// A kernel dispatch finished (on any thread): `record` has the timing
    /// (ns) and dispatch fields; the engine fills in the correlation ids and
    /// the launching thread from `token`. A `None` token records nothing.
    pub fn complete_kernel_dispatch(&self, token: AsyncToken, record: KernelDispatch) {
        if let Some(t) = token {
            self.profiler().complete_kernel_dispatch(t, record);
        }
    }

    /// The active contexts in which a native tool counts, with the
    /// dispatch's external id in each (see `Profiler::tool_counting`).
    pub fn tool_counting(&self, op: &rocwasm_core::AsyncOp) -> Vec<(rocwasm_core::ContextId, u64)> {
        self.profiler().tool_counting(op)
    }

    /// The counters some context counts for every dispatch (empty: none).
    pub fn dispatch_counters(&self) -> std::sync::Arc<[String]> {
        self.profiler().dispatch_counters()
    }

    /// A kernel dispatch finished, with its counters' values (see
    /// [`Session::complete_kernel_dispatch`]).
    pub fn complete_kernel_dispatch_counted(
        &self,
        token: AsyncToken,
        record: KernelDispatch,
        values: &[(String, f64)],
    ) {
        if let Some(t) = token {
            self.profiler()
                .complete_kernel_dispatch_counted(t, record, values);
        }
    }

    /// An async copy finished (on any thread): `record` has the direction
    /// (`operation`), bytes, agents and timing (ns); correlation and thread
    /// come from `token`. A `None` token records nothing.
    pub fn complete_memory_copy(&self, token: AsyncToken, record: MemoryCopy) {
        if let Some(t) = token {
            self.profiler().complete_memory_copy(t, record);
        }
    }

    /// Records an allocation or free (`row.operation`, address, size in
    /// bytes, times in ns); correlation and thread come from the calling
    /// thread.
    pub fn memory_allocation(&self, row: MemoryAllocation) {
        self.profiler().record_memory_allocation(row);
    }

    /// `roctxProfilerResume` (`on`) / `roctxProfilerPause`: with
    /// `--selected-regions`, the engine resumes or pauses collection for the
    /// whole process; otherwise nothing happens.
    pub fn set_collecting(&self, on: bool) {
        if on {
            self.profiler().resume();
        } else {
            self.profiler().pause();
        }
    }

    /// A code object was loaded: adds it to the symbol table and fires
    /// `CODE_OBJECT` / `LOAD` (ENTER) callbacks.
    pub fn code_object_load(&self, co: &CodeObject) {
        self.profiler().emit_code_object_load(co.clone());
        self.run.journal_symbols();
    }

    /// A code object is being unloaded: `CODE_OBJECT` / `LOAD` (EXIT); the
    /// symbol table keeps it, so names stay valid until finalization.
    pub fn code_object_unload(&self, co: &CodeObject) {
        self.profiler().emit_code_object_unload(co.id);
    }

    /// A kernel symbol was registered: adds it to the symbol table and fires
    /// `CODE_OBJECT` / `DEVICE_KERNEL_SYMBOL_REGISTER` (ENTER).
    pub fn kernel_symbol_register(&self, k: &KernelSymbol) {
        self.profiler().emit_kernel_symbol_register(k.clone());
        self.run.journal_symbols();
    }

    /// HIP registered a host function for the kernel symbol `k` just
    /// registered: `CODE_OBJECT` / `HOST_KERNEL_SYMBOL_REGISTER` (ENTER).
    pub fn host_kernel_symbol_register(
        &self,
        host: &crate::hip::kernels::HostKernel,
        k: &KernelSymbol,
    ) {
        static HOST_FUNCTION_IDS: std::sync::atomic::AtomicU64 =
            std::sync::atomic::AtomicU64::new(1);
        if !self.profiler().is_tracing(Domain::CodeObject) {
            return;
        }
        self.profiler()
            .emit_host_kernel_symbol_register(rocwasm_core::HostKernelSymbol {
                host_function_id: HOST_FUNCTION_IDS
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                kernel_id: k.id,
                code_object_id: k.code_object_id,
                host_function: host.host_fn as u64,
                device_function: host.mangled.clone(),
                registration: host.registered,
            });
    }

    /// A kernel symbol is being unregistered: the same operation's EXIT.
    pub fn kernel_symbol_unregister(&self, k: &KernelSymbol) {
        self.profiler().emit_kernel_symbol_unregister(k.id);
    }

    /// Flushes everything, finishes the chain (each plugin's `fini`, once),
    /// closes the outputs, writes the summary file. Runs once; later calls
    /// return at once.
    pub fn finalize(&self) {
        // The runtime may not have reported the last completions yet.
        self.run.settle_async();
        // Native tools first: their buffers are flushed and their
        // `finalize` runs while the engine still delivers. Code objects
        // still loaded are reported unloaded before that.
        if let Some(h) = HOOKS.get() {
            (h.before_finalize)();
        }
        let tool_lines = rocwasm_capi::finalize_tools();
        // The kernels the engine knows, by name: from the code objects
        // loaded (`hipModuleLoad`, a fat binary's) and from HIP's host-side
        // registration (`__hipRegisterFunction`), which a program that only
        // loads modules never calls. One kernel has a symbol per agent and
        // per source; it counts once.
        let kernels: std::collections::BTreeSet<String> = self
            .profiler()
            .symbols()
            .kernels()
            .into_iter()
            .map(|k| k.name)
            .collect();
        let Some(report) = self.run.finish() else {
            return;
        };
        for line in &tool_lines {
            eprintln!("rocwasm: {line}");
        }
        if self.plan().writes_nothing() {
            return;
        }
        for p in &report.plugins.problems {
            eprintln!("rocwasm: {p}");
        }
        let mut lines = vec![
            format!(
                "pid {} — records from rocwasm's interception (--backend builtin); {} kernel(s) loaded; {} {}",
                report.meta.pid,
                kernels.len(),
                report.plugins.tables.len(),
                RunPlan::PLUGINS_RAN
            ),
            match rocwasm_core::clock::source() {
                rocwasm_core::clock::Source::Counter => {
                    "host timestamps: CPU time-stamp counter mapped onto CLOCK_BOOTTIME"
                }
                rocwasm_core::clock::Source::System => "host timestamps: CLOCK_BOOTTIME",
            }
            .to_string(),
        ];
        let own_journal = self.run.own_journal().map(Path::to_path_buf);
        if own_journal.is_some() {
            lines.push(
                "not started by `rocwasm run`: the outputs were written by `rocwasm write-journal` at the process's end (if it is killed, run that command on the journal directory it names)"
                    .to_string(),
            );
        }
        let mut problems = report.problems;
        problems.extend(tool_lines);
        self.run.end_journal(&ProcessEnd {
            plugin_text: report.plugins.render(),
            no_plugin_tables: report.plugins.tables.iter().all(|(_, t)| t.is_empty()),
            lines,
            problems,
            notes: report.notes,
            end_ns: report.meta.end_ns,
            stage_files: Vec::new(),
        });
        // Under `rocwasm run` the launcher writes the outputs and the
        // summary from the journal; without it, `rocwasm write-journal`.
        if let Some(dir) = own_journal {
            if let Err(e) = crate::writer::write_outputs(&dir) {
                eprintln!("rocwasm: {e}");
            }
        }
    }
}
