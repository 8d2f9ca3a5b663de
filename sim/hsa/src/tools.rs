//! The HSA tools protocol: `HSA_TOOLS_LIB` libraries get `OnLoad` with the
//! live API table during the first `hsa_init`, and `OnUnload` at the last
//! `hsa_shut_down` or at process exit, whichever comes first.
//!
//! `OnLoad(HsaApiTable* table, uint64_t runtime_version, uint64_t
//! failed_tool_count, const char* const* failed_tool_names)` returns a bool;
//! a library that cannot be opened, lacks `OnLoad`, or returns false is
//! counted as failed and named to the tools loaded after it.

use std::ffi::{c_char, CString};
use std::sync::Mutex;

use crate::table;

type OnLoad = unsafe extern "C" fn(*mut table::HsaApiTable, u64, u64, *const *const c_char) -> bool;
type OnUnload = unsafe extern "C" fn();

struct Loaded {
    name: String,
    on_unload: Option<OnUnload>,
    /// Kept open for the rest of the process.
    _library: libloading::Library,
}

static LOADED: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

/// Loads every library named in `HSA_TOOLS_LIB` and calls its `OnLoad`.
pub fn load_all() {
    let Ok(list) = std::env::var("HSA_TOOLS_LIB") else {
        return;
    };
    let tables = table::tables();
    let mut failed: Vec<CString> = Vec::new();
    for name in list.split_whitespace() {
        // SAFETY: loading the library runs its initialisers; the user asked
        // for this tool by setting HSA_TOOLS_LIB.
        let library = match unsafe { libloading::Library::new(name) } {
            Ok(l) => l,
            Err(e) => {
                eprintln!("sim-hsa: cannot load HSA tool {name}: {e}");
                failed.push(CString::new(name).unwrap_or_default());
                continue;
            }
        };
        // SAFETY: `OnLoad` has the protocol's C signature.
        let on_load = unsafe { library.get::<OnLoad>(b"OnLoad\0") }.map(|s| *s);
        // SAFETY: `OnUnload` has the protocol's C signature.
        let on_unload = unsafe { library.get::<OnUnload>(b"OnUnload\0") }
            .map(|s| *s)
            .ok();
        let Ok(on_load) = on_load else {
            eprintln!("sim-hsa: HSA tool {name} has no OnLoad");
            failed.push(CString::new(name).unwrap_or_default());
            continue;
        };
        let names: Vec<*const c_char> = failed.iter().map(|c| c.as_ptr()).collect();
        let names_ptr = if names.is_empty() {
            std::ptr::null()
        } else {
            names.as_ptr()
        };
        let version = u64::from(tables.layout.root_major);
        // SAFETY: the table stays alive for the process; the failed-name
        // array and its strings outlive the call.
        let ok = unsafe { on_load(tables.root(), version, names.len() as u64, names_ptr) };
        if !ok {
            eprintln!("sim-hsa: HSA tool {name}: OnLoad returned false");
            failed.push(CString::new(name).unwrap_or_default());
        }
        LOADED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Loaded {
                name: name.to_string(),
                on_unload: if ok { on_unload } else { None },
                _library: library,
            });
    }
    register_exit_hook();
}

/// Calls `OnUnload` of every loaded tool, newest first, once, after the
/// async handlers already triggered have run (so a tool has seen every
/// completion of the work the application waited for).
pub fn unload_all() {
    if !crate::signal::drain_async_handlers(std::time::Duration::from_secs(5)) {
        eprintln!("sim-hsa: async handlers still running at tool unload");
    }
    let tools: Vec<(String, Option<OnUnload>)> = {
        let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
        loaded
            .iter_mut()
            .rev()
            .map(|t| (t.name.clone(), t.on_unload.take()))
            .collect()
    };
    for (name, on_unload) in tools {
        if let Some(f) = on_unload {
            crate::util::sim_log!("OnUnload of {name}");
            // SAFETY: the library is still loaded (never closed) and
            // `OnUnload` has the protocol's signature.
            unsafe { f() };
        }
    }
}

extern "C" fn at_exit() {
    unload_all();
}

fn register_exit_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registering a plain extern "C" function with atexit; this
        // library is never unloaded (it is a DT_NEEDED dependency).
        unsafe { libc::atexit(at_exit) };
    });
}
