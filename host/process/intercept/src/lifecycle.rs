//! Start-up and shutdown of the tool inside the application.
//!
//! - **Start**: an `.init_array` constructor (the crate root's) runs when the loader maps the
//!   library (before the application's own constructors, which is when HIP
//!   programs register their kernels). Without `ROCWASM_RUN` a session
//!   starts only for native rocprofiler-sdk tools (a loaded object exporting
//!   `rocprofiler_configure`, `ROCP_TOOL_LIBRARIES`, or
//!   `rocprofiler_force_configure` later), with no files of ours; without
//!   those every interposer only forwards. `OnLoad` calls [`ensure_started`]
//!   too, for runtimes that load the library as an HSA tool without preload.
//! - **Normal exit** (`exit()` from any thread, or `main` returning while
//!   threads still run): an `atexit` handler finalizes on the exiting thread.
//! - **SIGINT/SIGTERM**: the handler only writes the signal number to a pipe
//!   (async-signal-safe); a watcher thread finalizes, restores the default
//!   action and re-raises, so the process dies of the same signal with its
//!   outputs complete. An application's own handler, if it installed one
//!   after us, wins — as it should.
//! - **fork()**: the child must never write into the parent's outputs. A
//!   `pthread_atfork` child handler detaches the inherited session; with
//!   `fork = "run"` (the default) the child starts its own run in its own
//!   directory (`<dir>/child-<pid>` unless the template has `%pid%`). The
//!   child's run has the sinks but **no plugins**: starting a wasm engine
//!   inside `fork()` would take locks that another parent thread may have
//!   held at the moment of the fork (and most forks are followed by `exec`).
//!
//! Errors never reach the application: they are printed with a `rocwasm:`
//! prefix and the tool stays out of the way.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Once;

use crate::session;
use rocwasm_plan::{ForkPolicy, PathTemplate, RunPlan};

static START: Once = Once::new();
static FINALIZED: AtomicBool = AtomicBool::new(false);

/// Starts the session once, if the launcher asked for one.
pub fn ensure_started() {
    START.call_once(|| {
        rocwasm_capi::registration::set_start_hook(force_start);
        // Native tools' counting services read the GPU's counters here.
        rocwasm_capi::hardware::set_hardware(Box::new(crate::hsa::counters::Gpu));
        let Some(path) = std::env::var_os(RunPlan::ENV) else {
            // No `rocwasm run`: profile only for native rocprofiler-sdk
            // tools, which then get the engine (and no files of ours).
            if rocwasm_capi::tools_requested() {
                defer(RunPlan::native_tools_only());
            }
            return;
        };
        let config = match RunPlan::load(path.as_ref()) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("rocwasm: {e}; profiling is off");
                return;
            }
        };
        if rocwasm_capi::tools_requested() {
            // Native tools are configured when the session starts; their
            // libraries' constructors (C++ static objects) must have run by
            // then, and ours runs first. So the session starts at the first
            // intercepted call, as the SDK configures tools when a runtime
            // initializes (or at exit, if no call ever comes).
            defer(config);
            return;
        }
        start_with(config);
    });
}

/// `rocprofiler_force_configure` was called: start now (a deferred
/// session, or one for native tools only when nothing else profiles).
fn force_start() {
    ensure_started();
    if session::start_deferred().is_none() && session::active().is_none() {
        start_with(RunPlan::native_tools_only());
    }
}

fn defer(plan: RunPlan) {
    *DEFERRED_PLAN.lock().unwrap_or_else(|e| e.into_inner()) = Some(plan);
    session::defer_start(start_deferred);
    // SAFETY: registering a plain `extern "C"` function with libc.
    unsafe { libc::atexit(at_exit_deferred) };
}

static DEFERRED_PLAN: std::sync::Mutex<Option<RunPlan>> = std::sync::Mutex::new(None);

/// Starts the session [`ensure_started`] deferred (see [`session::active`]).
fn start_deferred() {
    let plan = DEFERRED_PLAN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(plan) = plan {
        start_with(plan);
    }
}

/// A deferred session that no intercepted call started still runs (and
/// finalizes) at exit, so `rocwasm run` gets its summary.
extern "C" fn at_exit_deferred() {
    if session::start_deferred().is_some() {
        finalize();
    }
}

fn start_with(config: RunPlan) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session::start(config)));
    match result {
        Ok(Ok(_)) => install_exit_hooks(),
        Ok(Err(e)) => eprintln!("rocwasm: cannot start profiling: {e}"),
        Err(_) => eprintln!("rocwasm: profiling start-up panicked; profiling is off"),
    }
}

/// Finalizes the session (idempotent, never panics into the caller).
///
/// The work runs on a thread of its own: `exit()` destroys the exiting
/// thread's thread-locals before it runs `atexit` handlers, and finishing
/// the chain calls into wasmtime (and the plugins' `fini`), which need a
/// thread whose thread-locals are intact. That thread acts for the one
/// that finalizes ([`rocwasm_core::clock::act_for_thread`]): the SDK runs
/// a native tool's `finalize` on the exiting thread, and a tool that
/// pushed an external correlation id there pops it in `finalize` by that
/// thread's id.
pub fn finalize() {
    if FINALIZED.swap(true, Ordering::AcqRel) {
        return;
    }
    let Some(s) = session::active() else {
        return;
    };
    let exiting = rocwasm_core::clock::thread_id();
    let work = move || {
        rocwasm_core::clock::act_for_thread(exiting);
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.finalize())).is_err() {
            eprintln!("rocwasm: finalization panicked; outputs may be incomplete");
        }
    };
    match std::thread::Builder::new()
        .name("rocwasm-finalize".into())
        .spawn(work)
    {
        Ok(t) => {
            let _ = t.join();
        }
        // No thread to be had: do it here, as well as it goes.
        Err(_) => work(),
    }
    session::detach();
}

extern "C" fn at_exit() {
    finalize();
}

static HOOKS: Once = Once::new();
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

fn install_exit_hooks() {
    HOOKS.call_once(|| {
        // SAFETY: registering plain `extern "C"` functions with libc.
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(None, None, Some(after_fork_child));
        }
        install_signal_handlers();
    });
}

fn install_signal_handlers() {
    let mut fds = [0i32; 2];
    // SAFETY: creating a pipe; CLOEXEC so exec'd children do not inherit it.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        eprintln!("rocwasm: no signal pipe; SIGINT/SIGTERM will not finalize outputs");
        return;
    }
    SIGNAL_PIPE.store(fds[1], Ordering::Release);
    let read_fd = fds[0];
    let spawned = std::thread::Builder::new()
        .name("rocwasm-signals".into())
        .spawn(move || {
            let mut sig = [0u8; 4];
            loop {
                // SAFETY: reading 4 bytes into a local buffer from our pipe.
                let n = unsafe { libc::read(read_fd, sig.as_mut_ptr() as *mut libc::c_void, 4) };
                if n == 4 {
                    let signo = i32::from_ne_bytes(sig);
                    finalize();
                    // SAFETY: restore the default action and re-raise: the
                    // process ends as the signal intended.
                    unsafe {
                        libc::signal(signo, libc::SIG_DFL);
                        libc::kill(libc::getpid(), signo);
                    }
                    return;
                }
                if n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                return;
            }
        });
    if spawned.is_err() {
        eprintln!("rocwasm: no signal thread; SIGINT/SIGTERM will not finalize outputs");
        return;
    }
    for signo in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installing an async-signal-safe handler (it only writes to a pipe).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signo, &action, &mut old);
            // Keep an application's handler that was there before us.
            if old.sa_sigaction != libc::SIG_DFL {
                libc::sigaction(signo, &old, std::ptr::null_mut());
            }
        }
    }
}

extern "C" fn on_signal(signo: i32) {
    let fd = SIGNAL_PIPE.load(Ordering::Acquire);
    if fd >= 0 {
        let bytes = signo.to_ne_bytes();
        // SAFETY: write(2) is async-signal-safe; a short write only loses the
        // finalization, never the signal (the thread re-raises on a full read).
        unsafe { libc::write(fd, bytes.as_ptr() as *const libc::c_void, 4) };
    }
}

/// In the child of `fork()`: drop the parent's session, maybe start our own.
extern "C" fn after_fork_child() {
    let Some(parent) = session::active() else {
        return;
    };
    session::detach();
    // The child shares nothing with the parent's run: its threads did not
    // survive the fork and its outputs belong to the parent.
    let mut config = parent.plan().clone();
    if config.fork == ForkPolicy::None {
        FINALIZED.store(true, Ordering::Release);
        return;
    }
    if !config.output.directory.as_str().contains("%pid%") {
        let child = format!("{}/child-%pid%", parent.dir().display());
        match PathTemplate::parse(&child) {
            Ok(t) => config.output.directory = t,
            // The parent's directory has a `%` of its own: a plain child
            // directory, named now.
            Err(_) => {
                config.output.directory = PathTemplate::literal(&format!(
                    "{}/child-{}",
                    parent.dir().display(),
                    std::process::id()
                ))
            }
        }
    }
    // The signal thread did not survive either; a new one is made for the child.
    SIGNAL_PIPE.store(-1, Ordering::Release);
    let mut notes = Vec::new();
    if !config.stages.is_empty() {
        config.stages.clear();
        notes.push(format!(
            "forked child {}: the chain's plugins run in the parent process only",
            std::process::id()
        ));
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        session::start_with_notes(config, notes)
    }));
    match result {
        Ok(Ok(_)) => install_signal_handlers(),
        Ok(Err(e)) => eprintln!(
            "rocwasm: child {}: cannot start profiling: {e}",
            std::process::id()
        ),
        Err(_) => eprintln!("rocwasm: child start-up panicked; profiling is off in the child"),
    }
    // `atexit` handlers are inherited: the child's exit finalizes the child's session.
}
