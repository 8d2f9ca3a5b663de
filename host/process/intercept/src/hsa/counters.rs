//! Hardware counters of a completed dispatch, read from the runtime and
//! evaluated as the run asked (`--pmc`).
//!
//! The simulated runtime models counters and answers through its
//! extension table (`sim-hsa`'s `counters` module, extension `0x2F0`):
//! which counters an agent has, over which instances, and their values
//! for the dispatch that completed a signal. Derived counters are
//! evaluated here from those, with the run's definitions
//! (`rocwasm_counters`). A runtime without the table (a real ROCm, which
//! counts through AQL profiling packets rocwasm does not write yet) gives
//! no values: the run says so once.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::sync::{Mutex, OnceLock};

use rocwasm_counters::{Catalog, Definitions, Dimension, Source, Tensor};

use super::{agents, rt};

/// The simulated runtime's counters extension.
const EXTENSION: u16 = 0x2F0;

type DimensionsFn = extern "C" fn(u64, *const c_char, *mut u32, *mut u32, usize, *mut usize) -> i32;
type SampleFn = extern "C" fn(u64, u64, *const c_char, *mut f64, usize, *mut usize) -> i32;

/// The extension's table (version 1), as `sim-hsa` lays it out.
#[repr(C)]
#[derive(Clone, Copy)]
struct Table {
    dimensions: DimensionsFn,
    sample: SampleFn,
}

/// The runtime's table, once; `None` when it has none.
fn table() -> Option<Table> {
    static TABLE: OnceLock<Option<Table>> = OnceLock::new();
    *TABLE.get_or_init(|| {
        let mut t = std::mem::MaybeUninit::<Table>::zeroed();
        // SAFETY: the runtime writes at most `size_of::<Table>()` bytes of
        // function pointers into `t`, or fails and writes nothing.
        let status = unsafe {
            rt::hsa_system_get_major_extension_table(
                EXTENSION,
                1,
                std::mem::size_of::<Table>(),
                t.as_mut_ptr().cast::<c_void>(),
            )
        }?;
        if status != 0 {
            return None;
        }
        // SAFETY: success: both pointers were written (non-null functions).
        Some(unsafe { t.assume_init() })
    })
}

/// The run's definitions: `--counter-defs` (the plan's path), else
/// rocwasm's own. A file that cannot be read is said once and the shipped
/// definitions are used.
fn definitions(path: Option<&str>) -> &'static Definitions {
    static DEFS: OnceLock<Definitions> = OnceLock::new();
    DEFS.get_or_init(|| match path {
        Some(p) => Definitions::read(std::path::Path::new(p)).unwrap_or_else(|e| {
            eprintln!("rocwasm: {e}; using rocwasm's own counter definitions");
            Definitions::shipped()
        }),
        None => Definitions::shipped(),
    })
}

/// One dispatch's hardware counters, as the extension reads them.
struct Dispatch {
    table: Table,
    agent: u64,
    signal: u64,
}

/// The dimensions of `counter` on `agent` (an HSA handle), as the
/// extension tells them.
fn dimensions(table: &Table, agent: u64, counter: &str) -> Option<Vec<(Dimension, u32)>> {
    let name = CString::new(counter).ok()?;
    let (mut ids, mut extents) = ([0u32; 8], [0u32; 8]);
    let mut n = 0usize;
    let status = (table.dimensions)(
        agent,
        name.as_ptr(),
        ids.as_mut_ptr(),
        extents.as_mut_ptr(),
        ids.len(),
        &mut n,
    );
    if status != 0 {
        return None;
    }
    Some(
        ids[..n]
            .iter()
            .zip(&extents[..n])
            .filter_map(|(&id, &extent)| Some((Dimension::from_id(id)?, extent)))
            .collect(),
    )
}

impl Source for Dispatch {
    fn read(&self, counter: &str, _block: &str) -> Option<Tensor> {
        let name = CString::new(counter).ok()?;
        let dims = dimensions(&self.table, self.agent, counter)?;
        let count: usize = dims.iter().map(|&(_, e)| e as usize).product();
        let mut values = vec![0f64; count.max(1)];
        let mut written = 0usize;
        let status = (self.table.sample)(
            self.agent,
            self.signal,
            name.as_ptr(),
            values.as_mut_ptr(),
            values.len(),
            &mut written,
        );
        if status != 0 || written != count {
            return None;
        }
        Some(Tensor { dims, values })
    }
}

/// What native tools' counting services read ([`rocwasm_capi::hardware`]):
/// the counters' dimensions, from the extension.
pub struct Gpu;

impl rocwasm_capi::hardware::Hardware for Gpu {
    fn dimensions(&self, agent: u64, counter: &str) -> Option<Vec<(Dimension, u32)>> {
        let handle = agents::by_id(agent)?.handle;
        dimensions(&table()?, handle, counter)
    }
}

/// Native tools' counting for a dispatch that completed `signal` on
/// `agent` (an HSA handle) at `start..end`: the dispatch counting services
/// that chose a configuration for it, and the device counting of the
/// agent. Before the signal is destroyed.
pub fn for_tools(
    agent: u64,
    signal: u64,
    chosen: Vec<rocwasm_capi::dispatch_counting::Chosen>,
    (start, end): (u64, u64),
) {
    if chosen.is_empty() && !rocwasm_capi::device_counting::any() {
        return;
    }
    let id = agents::id_of(agent);
    let device = rocwasm_capi::device_counting::counts(id);
    if chosen.is_empty() && !device {
        return;
    }
    let Some(table) = table() else {
        warn_once("the runtime has no counters rocwasm can read (only the simulated GPU's yet): native tools' counting gets no values".into());
        return;
    };
    let source = Dispatch {
        table,
        agent,
        signal,
    };
    rocwasm_capi::dispatch_counting::complete(chosen, start, end, &source);
    if device {
        rocwasm_capi::device_counting::add(id, &source);
    }
}

/// Each GPU agent's counters, built on first use.
fn catalog(agent: u64, defs: &'static Definitions) -> Option<&'static Catalog> {
    static CATALOGS: OnceLock<Mutex<HashMap<u64, &'static Catalog>>> = OnceLock::new();
    let mut map = CATALOGS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(c) = map.get(&agent) {
        return Some(c);
    }
    let arch = agents::by_handle(agent)?.info.name.clone();
    // The agent's properties the expressions name (`CU_NUM` reads
    // `simd_count`): the runtime answers for them as for any counter.
    let properties = defs.properties_named(&arch);
    let properties: Vec<&str> = properties.iter().map(String::as_str).collect();
    let c: &'static Catalog = Box::leak(Box::new(defs.catalog(&arch, &properties)));
    map.insert(agent, c);
    Some(c)
}

/// The values of `requested` (`NAME` or `NAME:device=N`) for the dispatch
/// that completed `signal` on `agent`: `(name, sum over its instances)` for
/// each counter that applies to this agent and could be evaluated. What
/// cannot be is said once per counter, never given a value.
pub fn sample(
    agent: u64,
    signal: u64,
    requested: &[String],
    defs: Option<&str>,
) -> Vec<(String, f64)> {
    let Some(table) = table() else {
        warn_once("the runtime has no counters rocwasm can read (only the simulated GPU's yet): no counter_collection rows".into());
        return Vec::new();
    };
    let Some(catalog) = catalog(agent, definitions(defs)) else {
        return Vec::new();
    };
    // The GPU's index among GPUs (`:device=N`): HSA numbers the CPU node 0.
    let gpu = agents::by_handle(agent).map(|a| u64::from(a.info.node_id.saturating_sub(1)));
    let source = Dispatch {
        table,
        agent,
        signal,
    };
    let mut out = Vec::with_capacity(requested.len());
    for token in requested {
        let (name, device) = match token.split_once(":device=") {
            Some((n, d)) => (n, d.parse::<u64>().ok()),
            None => (token.as_str(), None),
        };
        if device.is_some_and(|d| Some(d) != gpu) {
            continue;
        }
        match catalog.evaluate(name, &source) {
            Ok(t) => out.push((name.to_string(), t.total())),
            Err(e) => warn_once(format!("counter {name}: {e}")),
        }
    }
    out
}

fn warn_once(message: String) {
    static SAID: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let mut said = SAID
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if !said.contains(&message) {
        eprintln!("rocwasm: {message}");
        said.push(message);
    }
}
