//! Tool discovery and the life cycle: configure → initialize → finalize.
//!
//! A tool is any loaded object that exports `rocprofiler_configure`, each
//! library `ROCP_TOOL_LIBRARIES` names (colon-separated, loaded here with
//! `RTLD_GLOBAL`), and a configure function passed to
//! `rocprofiler_force_configure`. They are configured in that order —
//! forced first, then loaded objects in the loader's order, then the
//! environment's — and each is given its index as its priority. A
//! configure function found twice (through two objects) runs once.
//!
//! [`configure_tools`] calls every `configure`, then every `initialize`
//! (with [`client_finalize`], which a tool may call to finalize itself
//! early). [`finalize_tools`] flushes each tool's buffers, then calls its
//! `finalize`, once, whatever the exit path (the tool library's exit, signal
//! and `atexit` hooks all end in it).

use std::ffi::{c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use rocwasm_core::Profiler;

use crate::abi::{ClientId, ConfigureFn, ToolConfigureResult};
use crate::state;
use crate::status::{code, Code, SUCCESS};
use rocwasm_core::Client;

/// The environment variable naming tool libraries to load.
pub const TOOL_LIBRARIES_ENV: &str = "ROCP_TOOL_LIBRARIES";

/// One tool: where its configure function came from and what it returned.
struct Tool {
    /// The object's path, `(forced)` for a forced configure function.
    name: String,
    configure: ConfigureFn,
    /// Stable address: the tool may keep the pointer `configure` received.
    client: Box<ClientId>,
    /// Keeps `client.name` alive.
    _client_name: CString,
    result: Option<ToolConfigureResult>,
    owned: Arc<Client>,
    index: usize,
}

// SAFETY: the raw pointers in `Tool` (the client name, the tool's data) are
// only passed back to the tool's own functions; the tool is responsible for
// them, as with the SDK, and they are never dereferenced here.
unsafe impl Send for Tool {}

static TOOLS: Mutex<Vec<Tool>> = Mutex::new(Vec::new());
static FORCED: Mutex<Option<ConfigureFn>> = Mutex::new(None);
/// 0 before, -1 while, 1 after tools were configured and initialized.
static INIT_STATUS: AtomicI32 = AtomicI32::new(0);
/// 0 before, -1 while, 1 after tools were finalized.
static FINI_STATUS: AtomicI32 = AtomicI32::new(0);

/// The SDK version tools are told (`ROCPROFILER_VERSION`: major · 10000 +
/// minor · 100 + patch) and its string.
const VERSION: u32 = 10_000;
const VERSION_STRING: &CStr = c"1.0.0";

/// True when some tool would be configured: a forced configure function,
/// `ROCP_TOOL_LIBRARIES`, or a loaded object exporting `rocprofiler_configure`.
/// The tool library starts a session for them even without `rocwasm run`.
pub fn tools_requested() -> bool {
    FORCED.lock().unwrap_or_else(|e| e.into_inner()).is_some()
        || std::env::var_os(TOOL_LIBRARIES_ENV).is_some_and(|v| !v.is_empty())
        || global_configure().is_some()
}

/// `rocprofiler_configure` in the global scope (the program and the
/// libraries it was linked with), looked up without loading or
/// initialising anything: this runs in the tool library's constructor, when
/// other objects' constructors may not have run yet.
fn global_configure() -> Option<*mut c_void> {
    // SAFETY: a plain symbol lookup in the global scope.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"rocprofiler_configure".as_ptr()) };
    (!sym.is_null()).then_some(sym)
}

/// Finds, configures and initializes every tool on `profiler` (before its
/// configuration locks). Returns lines for the run's report: which tools
/// ran, and every tool that could not be loaded or configured. Runs once
/// per process; later calls return nothing.
///
/// With `allowed` false (the site policy forbids native tools) no tool is
/// configured; each one found is named in a line, and tools that call the
/// API get CONFIGURATION_LOCKED.
pub fn configure_tools(profiler: &Arc<Profiler>, allowed: bool) -> Vec<String> {
    if INIT_STATUS
        .compare_exchange(0, -1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return Vec::new();
    }
    if !allowed {
        // Named without loading anything: loading a library runs its code.
        let mut names: Vec<String> = std::env::var(TOOL_LIBRARIES_ENV)
            .unwrap_or_default()
            .split(':')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        if global_configure().is_some() {
            names.push("(linked into the application)".into());
        }
        if FORCED.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
            names.push("(forced)".into());
        }
        INIT_STATUS.store(1, Ordering::Release);
        return names
            .into_iter()
            .map(|n| format!("native tool {n} not configured: the site policy does not allow native tools (capabilities.native_tools = false)"))
            .collect();
    }
    state::bind(profiler);
    let (found, mut lines) = discover();
    let mut tools = Vec::new();
    for (name, configure) in found {
        let (index, owned) = state::new_owner();
        let client_name = CString::new(name.clone()).unwrap_or_default();
        let client = Box::new(ClientId {
            size: std::mem::size_of::<ClientId>(),
            name: client_name.as_ptr(),
            handle: index as u32,
        });
        tools.push(Tool {
            name,
            configure,
            client,
            _client_name: client_name,
            result: None,
            owned,
            index,
        });
    }
    for tool in &mut tools {
        let client: *mut ClientId = &mut *tool.client;
        let configure = tool.configure;
        let priority = tool.index as u32;
        let result = crate::guard::catching(&tool.name, || {
            state::with_current(tool.index, || {
                crate::foreign::call_tool(
                    &format!("native tool {}'s rocprofiler_configure", tool.name),
                    || {
                        // SAFETY: `configure` is the tool's exported
                        // `rocprofiler_configure` (the signature the SDK
                        // documents); the version string is static and `client`
                        // lives as long as the process (TOOLS is never freed).
                        unsafe { configure(VERSION, VERSION_STRING.as_ptr(), priority, client) }
                    },
                )
                // An exception: as if it returned NULL (opted out).
                .unwrap_or(std::ptr::null_mut())
            })
        });
        match result {
            Some(p) if !p.is_null() => {
                // SAFETY: a non-null result points at the tool's
                // `rocprofiler_tool_configure_result_t`; it is copied now,
                // as the SDK does.
                tool.result = Some(unsafe { std::ptr::read(p) });
            }
            Some(_) => lines.push(format!(
                "native tool {}: rocprofiler_configure returned NULL (the tool opted out)",
                tool.name
            )),
            None => lines.push(format!(
                "native tool {}: rocprofiler_configure panicked",
                tool.name
            )),
        }
    }
    for tool in &mut tools {
        let Some(init) = tool.result.as_ref().and_then(|r| r.initialize) else {
            continue;
        };
        let data = tool
            .result
            .as_ref()
            .map_or(std::ptr::null_mut(), |r| r.tool_data);
        let site = format!("native tool {}'s initialize", tool.name);
        let status = state::with_current(tool.index, || {
            crate::foreign::call_tool(&site, || {
                // SAFETY: the tool's initialize function, called once with
                // the finalize callback and the tool's own data, as
                // documented.
                unsafe { init(client_finalize, data) }
            })
            // An exception: initialize failed.
            .unwrap_or(-1)
        });
        let contexts = tool.owned.contexts().len();
        let buffers = tool.owned.buffers().len();
        if status != 0 {
            lines.push(format!(
                "native tool {}: initialize returned {status}; its {contexts} context(s) are stopped",
                tool.name
            ));
            stop_contexts(&tool.owned);
        } else {
            lines.push(format!(
                "native tool {} (priority {}): {contexts} context(s), {buffers} buffer(s)",
                tool.name, tool.index
            ));
        }
    }
    TOOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(tools);
    INIT_STATUS.store(1, Ordering::Release);
    lines
}

/// Finalizes every tool not yet finalized (see the module docs); returns
/// lines for the report (records that reached a tool after its finalize,
/// C++ exceptions tools let escape).
pub fn finalize_tools() -> Vec<String> {
    if INIT_STATUS.load(Ordering::Acquire) != 1
        || FINI_STATUS
            .compare_exchange(0, -1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
    {
        return Vec::new();
    }
    let indices: Vec<usize> = TOOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|t| t.index)
        .collect();
    for i in indices {
        finalize_tool(i);
    }
    FINI_STATUS.store(1, Ordering::Release);
    let mut lines = undelivered_lines();
    lines.extend(crate::foreign::caught_lines());
    lines
}

/// Lines for each tool whose buffers received records after its finalize,
/// and for records whose operation rocprofiler-sdk has no number for.
pub fn undelivered_lines() -> Vec<String> {
    let unmapped = crate::operations::unmapped();
    let mut lines: Vec<String> = TOOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(|t| {
            let n = t.owned.undelivered();
            (n > 0).then(|| {
                format!(
                    "native tool {}: {n} record(s) reached its buffers after its finalize and were not delivered",
                    t.name
                )
            })
        })
        .collect();
    if unmapped > 0 {
        lines.push(format!(
            "native tools: {unmapped} record(s) of operations rocprofiler-sdk 1.0 has no number for \
             (functions of this process's runtime the SDK does not list) were delivered as NONE"
        ));
    }
    lines
}

/// Flushes tool `index`'s buffers, calls its `finalize` (once), stops its contexts.
fn finalize_tool(index: usize) {
    let (owned, finalize, data, name) = {
        let tools = TOOLS.lock().unwrap_or_else(|e| e.into_inner());
        let Some(t) = tools.iter().find(|t| t.index == index) else {
            return;
        };
        (
            t.owned.clone(),
            t.result.as_ref().and_then(|r| r.finalize),
            t.result
                .as_ref()
                .map_or(std::ptr::null_mut(), |r| r.tool_data),
            t.name.clone(),
        )
    };
    if owned.is_finalized() {
        return;
    }
    if let Ok(engine) = state::engine() {
        // A buffer is BUSY when a tool finalizes itself from its own
        // buffer's callback: that delivery is under way already.
        owned.flush_buffers(engine);
    }
    // Dispatch counting's records kept for buffers (every tool's: a
    // finalized tool's would only be counted).
    crate::buffer::deliver_all_counting();
    if !owned.finalize_once() {
        return;
    }
    if let Some(f) = finalize {
        let before = FINI_STATUS.load(Ordering::Acquire);
        if before == 0 {
            FINI_STATUS.store(-1, Ordering::Release);
        }
        crate::guard::quietly(&format!("the finalize of native tool {name}"), || {
            crate::foreign::call_tool(&format!("native tool {name}'s finalize"), || {
                // SAFETY: the tool's finalize function with its own data, once.
                unsafe { f(data) }
            });
        });
        if before == 0 {
            FINI_STATUS.store(0, Ordering::Release);
        }
    }
    owned.finish();
    stop_contexts(&owned);
}

fn stop_contexts(owned: &Client) {
    if let Ok(engine) = state::engine() {
        owned.stop_contexts(engine);
    }
}

/// The finalize callback tools receive in `initialize`: finalizes that tool now.
extern "C" fn client_finalize(client: ClientId) {
    finalize_tool(client.handle as usize);
}

/// Every tool's configure function, with a name, in discovery order,
/// each function once; plus lines about libraries that could not be used.
fn discover() -> (Vec<(String, ConfigureFn)>, Vec<String>) {
    let mut found: Vec<(String, ConfigureFn)> = Vec::new();
    let mut lines = Vec::new();
    let add = |found: &mut Vec<(String, ConfigureFn)>, name: String, f: ConfigureFn| {
        if !found.iter().any(|(_, g)| *g as usize == f as usize) {
            found.push((name, f));
        }
    };
    if let Some(f) = *FORCED.lock().unwrap_or_else(|e| e.into_inner()) {
        add(&mut found, "(forced)".into(), f);
    }
    // Each loaded object is asked only when some object defines the
    // function: asking means `dlopen(RTLD_NOLOAD)`, which would run the
    // constructors of objects not initialised yet.
    if global_configure().is_some() {
        for (name, f) in loaded_configure_functions() {
            add(&mut found, name, f);
        }
    }
    if let Some(list) = std::env::var_os(TOOL_LIBRARIES_ENV) {
        for path in list.to_string_lossy().split(':').filter(|p| !p.is_empty()) {
            match load_tool_library(path) {
                Ok(f) => add(&mut found, path.to_string(), f),
                Err(e) => lines.push(format!("{TOOL_LIBRARIES_ENV}: {e}")),
            }
        }
    }
    (found, lines)
}

/// `rocprofiler_configure` of every loaded object that defines one, named
/// by the object defining it.
fn loaded_configure_functions() -> Vec<(String, ConfigureFn)> {
    let mut names: Vec<String> = Vec::new();
    // SAFETY: dl_iterate_phdr calls `collect` with valid `dl_phdr_info`s and
    // our `names` vector as data, synchronously.
    unsafe {
        libc::dl_iterate_phdr(Some(collect), &mut names as *mut Vec<String> as *mut c_void);
    }
    let own = defining_object(loaded_configure_functions as *const () as usize);
    let mut out: Vec<(String, ConfigureFn)> = Vec::new();
    for name in names {
        // Never this library itself (it is being initialised when a
        // session starts from its constructor).
        if own.as_deref() == Some(name.as_str()) {
            continue;
        }
        let Some(f) = configure_in(&name) else {
            continue;
        };
        if out.iter().any(|(_, g)| *g as usize == f as usize) {
            continue;
        }
        out.push((defining_object(f as usize).unwrap_or(name), f));
    }
    out
}

unsafe extern "C" fn collect(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `data` is the `Vec<String>` passed above; `info` is valid for
    // this call and its name, when not null, a C string.
    unsafe {
        let names = &mut *(data as *mut Vec<String>);
        let name = (*info).dlpi_name;
        let name = if name.is_null() {
            String::new()
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        names.push(name);
    }
    0
}

/// `rocprofiler_configure` as the object `name` (`""`: the program) sees it.
fn configure_in(name: &str) -> Option<ConfigureFn> {
    let c = CString::new(name).ok()?;
    // SAFETY: RTLD_NOLOAD only returns a handle to an object already
    // loaded (or NULL); dlsym on it is a plain lookup; the handle's
    // reference is released with dlclose.
    unsafe {
        let handle = libc::dlopen(
            if name.is_empty() {
                std::ptr::null()
            } else {
                c.as_ptr()
            },
            libc::RTLD_LAZY | libc::RTLD_NOLOAD,
        );
        if handle.is_null() {
            return None;
        }
        let sym = libc::dlsym(handle, c"rocprofiler_configure".as_ptr());
        libc::dlclose(handle);
        if sym.is_null() {
            return None;
        }
        // The library must not configure itself: this crate never defines
        // `rocprofiler_configure`, so any definition is a tool's.
        Some(std::mem::transmute::<*mut c_void, ConfigureFn>(sym))
    }
}

/// The path of the object that defines the code at `addr` (the tool
/// library finds the `rocwasm` program beside itself with it).
/// The address is only looked up, never read: it is passed as a number.
pub fn defining_object(addr: usize) -> Option<String> {
    // SAFETY: dladdr only looks the address up among the loaded objects
    // and fills `info`; the name it points to lives as long as the object.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr as *const c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        Some(
            CStr::from_ptr(info.dli_fname)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// Loads one `ROCP_TOOL_LIBRARIES` entry and finds its configure function.
fn load_tool_library(path: &str) -> Result<ConfigureFn, String> {
    let c = CString::new(path).map_err(|_| format!("`{path}` contains a NUL byte"))?;
    // SAFETY: dlopen of a path the user named (running its constructors is
    // what loading a tool means); dlerror's message is copied at once.
    unsafe {
        let handle = libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
        if handle.is_null() {
            let e = libc::dlerror();
            let why = if e.is_null() {
                "unknown error".to_string()
            } else {
                CStr::from_ptr(e).to_string_lossy().into_owned()
            };
            return Err(format!("cannot load {path}: {why}"));
        }
        let sym = libc::dlsym(handle, c"rocprofiler_configure".as_ptr());
        if sym.is_null() {
            return Err(format!("{path} exports no rocprofiler_configure"));
        }
        Ok(std::mem::transmute::<*mut c_void, ConfigureFn>(sym))
    }
}

/// `rocprofiler_is_initialized`: 0 before tools are configured, -1 while,
/// 1 after.
///
/// # Safety
/// `status` must be NULL or point to writable memory for an `int`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_is_initialized(status: *mut c_int) -> Code {
    if status.is_null() {
        return code(rocwasm_core::Status::InvalidArgument);
    }
    // SAFETY: checked non-null; the caller passes a writable int.
    unsafe { *status = INIT_STATUS.load(Ordering::Acquire) };
    SUCCESS
}

/// `rocprofiler_is_finalized`: 0 before finalization, -1 while, 1 after.
///
/// # Safety
/// `status` must be NULL or point to writable memory for an `int`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_is_finalized(status: *mut c_int) -> Code {
    if status.is_null() {
        return code(rocwasm_core::Status::InvalidArgument);
    }
    // SAFETY: checked non-null; the caller passes a writable int.
    unsafe { *status = FINI_STATUS.load(Ordering::Acquire) };
    SUCCESS
}

/// `rocprofiler_force_configure`: configures with `configure` (first, before
/// every discovered tool) when tools have not been configured yet;
/// CONFIGURATION_LOCKED afterwards or when another function was forced.
#[no_mangle]
pub extern "C" fn rocprofiler_force_configure(configure: Option<ConfigureFn>) -> Code {
    let Some(configure) = configure else {
        return code(rocwasm_core::Status::InvalidArgument);
    };
    if INIT_STATUS.load(Ordering::Acquire) != 0 {
        return code(rocwasm_core::Status::ConfigurationLocked);
    }
    let mut forced = FORCED.lock().unwrap_or_else(|e| e.into_inner());
    if forced.is_some() {
        return code(rocwasm_core::Status::ConfigurationLocked);
    }
    *forced = Some(configure);
    drop(forced);
    // Start the run now (the tool library's hook), as the SDK initializes
    // at once: the forced tool is configured before this returns when the
    // library can start a session.
    if let Some(start) = START_HOOK.get() {
        start();
    }
    SUCCESS
}

static START_HOOK: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// The tool library's way to start its session when a tool forces
/// configuration before one started.
pub fn set_start_hook(start: fn()) {
    let _ = START_HOOK.set(start);
}
