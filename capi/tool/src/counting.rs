//! `--pmc` on the rocprofiler-sdk back end: the run's counters collected
//! by the SDK's buffered dispatch counting, into the tool's buffer.
//!
//! For each dispatch the SDK asks [`choose`] (on the launching thread)
//! which configuration counts it: the run's counters that the dispatch's
//! agent has (by name, `NAME:device=N` only on GPU N), made once per agent
//! with `rocprofiler_create_counter_config`. The SDK delivers, in the
//! buffer, a header record per dispatch followed by one value per counter
//! instance; [`Values`] sums each counter's instances (what rocprofv3's
//! `counter_collection.csv` writes) and imports them into the engine
//! ([`rocwasm_core::Profiler::import_counter_samples`]), whose counting
//! contexts turn them into the run's counter samples.
//!
//! The samples follow the dispatch's own KERNEL_DISPATCH record, from the
//! same buffer: its launching thread (which the header does not name), and
//! the dispatch filter's verdict on it (`--kernel-include-regex` and the
//! like: a dropped dispatch's counters are dropped too, a renamed one's
//! renamed; the filter is asked once per dispatch, as it counts
//! iterations). Values whose dispatch record has not come yet wait for it;
//! at the end, those whose record never came are filtered on their own,
//! with the thread that wrote the packet (the SDK calls the dispatch
//! callback there, and it is kept in the user data).

use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::sync::{Mutex, OnceLock};

use rocprofiler_sdk_sys::api;
use rocprofiler_sdk_sys::enums::rocprofiler_counter_info_version_id as info_version;
use rocprofiler_sdk_sys::records::{
    CounterInfoV0, CounterRecord, DispatchCountingData, DispatchCountingRecord,
};
use rocprofiler_sdk_sys::{Handle, UserData};
use rocwasm_capi_convert::ids::async_correlation_from_c;
use rocwasm_capi_convert::records::dispatch_info_from_c;
use rocwasm_core::{AgentType, KernelDispatch, Profiler};

/// The run's counters, as `--pmc` named them (`NAME` or `NAME:device=N`).
static WANTED: OnceLock<Vec<String>> = OnceLock::new();
/// Each agent's configuration (0: none of the counters is the agent's).
static CONFIGS: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);
/// Each agent's GPU index (`:device=N`), from the engine's agents.
static GPU_INDEX: OnceLock<HashMap<u64, u64>> = OnceLock::new();

/// Configures buffered dispatch counting of `counters` in `context`, into
/// `buffer`.
pub fn configure(
    profiler: &Profiler,
    context: Handle,
    buffer: Handle,
    counters: &[String],
) -> Result<(), String> {
    let _ = WANTED.set(counters.to_vec());
    let _ = GPU_INDEX.set(
        profiler
            .symbols()
            .agents()
            .into_iter()
            .filter(|a| a.agent_type == AgentType::Gpu)
            .map(|a| (a.id, u64::from(a.node_id.saturating_sub(1))))
            .collect(),
    );
    // SAFETY: a context and buffer this tool created; `choose` has the
    // callback's type.
    crate::guard::check("count dispatches", unsafe {
        api::rocprofiler_configure_buffer_dispatch_counting_service(
            context,
            buffer,
            choose,
            std::ptr::null_mut(),
        )
    })
}

/// The counters of `agent`: id and name of each.
fn counters_of(agent: Handle) -> Vec<(Handle, String)> {
    unsafe extern "C-unwind" fn each(
        _agent: Handle,
        ids: *mut Handle,
        n: usize,
        data: *mut c_void,
    ) -> api::Status {
        // SAFETY: `data` is the Vec below; `ids` holds `n` ids for the call.
        let (out, ids) = unsafe {
            (
                &mut *(data as *mut Vec<(Handle, String)>),
                std::slice::from_raw_parts(ids, n),
            )
        };
        for &id in ids {
            if let Some(name) = name_of(id) {
                out.push((id, name));
            }
        }
        0
    }
    let mut out: Vec<(Handle, String)> = Vec::new();
    // SAFETY: `each` has the callback's type and `out` outlives the call.
    unsafe {
        api::rocprofiler_iterate_agent_supported_counters(
            agent,
            each,
            (&mut out as *mut Vec<(Handle, String)>).cast(),
        )
    };
    out
}

/// A counter's name (kept: the SDK asks it once per counter).
fn name_of(id: Handle) -> Option<String> {
    static NAMES: Mutex<Option<HashMap<u64, String>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = names.get_or_insert_with(HashMap::new);
    if let Some(n) = names.get(&id.handle) {
        return Some(n.clone());
    }
    // SAFETY: an all-zero `rocprofiler_counter_info_v0_t` is valid (null
    // pointers, id 0); the SDK fills it.
    let mut info: CounterInfoV0 = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is the version-0 struct the call fills.
    let status = unsafe {
        api::rocprofiler_query_counter_info(
            id,
            info_version::ROCPROFILER_COUNTER_INFO_VERSION_0 as i32,
            (&mut info as *mut CounterInfoV0).cast(),
        )
    };
    if status != 0 || info.name.is_null() {
        return None;
    }
    // SAFETY: the SDK's NUL-terminated name, kept for the process.
    let name = unsafe { CStr::from_ptr(info.name) }
        .to_string_lossy()
        .into_owned();
    names.insert(id.handle, name.clone());
    Some(name)
}

/// The configuration for `agent`, made on first use (0 when the agent has
/// none of the run's counters or the SDK refuses the set: said once).
fn config_for(agent: Handle) -> u64 {
    let mut configs = CONFIGS.lock().unwrap_or_else(|e| e.into_inner());
    let configs = configs.get_or_insert_with(HashMap::new);
    if let Some(&c) = configs.get(&agent.handle) {
        return c;
    }
    let gpu = GPU_INDEX.get().and_then(|m| m.get(&agent.handle)).copied();
    let available = counters_of(agent);
    let mut ids = Vec::new();
    for token in WANTED.get().into_iter().flatten() {
        let (name, device) = match token.split_once(":device=") {
            Some((n, d)) => (n, d.parse::<u64>().ok()),
            None => (token.as_str(), None),
        };
        if device.is_some_and(|d| Some(d) != gpu) {
            continue;
        }
        match available.iter().find(|(_, n)| n == name) {
            Some((id, _)) => ids.push(*id),
            None => eprintln!(
                "rocwasm: the SDK has no counter {name} on agent {}: it is not collected there",
                agent.handle
            ),
        }
    }
    let mut config = Handle::default();
    if !ids.is_empty() {
        // SAFETY: `ids` and `config` outlive the call.
        let status = unsafe {
            api::rocprofiler_create_counter_config(agent, ids.as_ptr(), ids.len(), &mut config)
        };
        if let Err(e) = crate::guard::check("make a counter configuration", status) {
            eprintln!(
                "rocwasm: the SDK refused the counters for agent {}: {e}",
                agent.handle
            );
            config = Handle::default();
        }
    }
    configs.insert(agent.handle, config.handle);
    config.handle
}

/// A counter value whose counter the SDK does not name: not collected,
/// said once on standard error.
fn unnamed(instance: u64) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "rocwasm: the SDK gave a counter value (instance id {instance:#x}) whose counter it \
             does not name: such values are not collected"
        );
    }
}

/// The SDK's dispatch counting callback: the agent's configuration, and
/// the launching thread in the user data.
unsafe extern "C-unwind" fn choose(
    data: DispatchCountingData,
    config: *mut Handle,
    user_data: *mut UserData,
    _args: *mut c_void,
) {
    crate::guard::contained("its dispatch counting callback", || {
        let chosen = config_for(data.dispatch_info.agent_id);
        let mut thread = 0u64;
        // SAFETY: an out-parameter local to this call.
        unsafe { api::rocprofiler_get_thread_id(&mut thread) };
        // SAFETY: the SDK's out-parameters, valid during the callback.
        unsafe {
            (*config).handle = chosen;
            (*user_data).value = thread;
        }
    })
    .unwrap_or_default()
}

/// A dispatch's header and the values read so far (a delivery may end
/// between a header and its values: the rest come in the next one), and
/// the dispatches as the filter kept them.
#[derive(Default)]
pub struct Values {
    open: Option<(DispatchCountingRecord, Vec<CounterRecord>)>,
    /// Dispatch id → the dispatch as its record was imported (`None`: the
    /// filter dropped it), for dispatch records whose values have not come
    /// yet.
    seen: HashMap<u64, Option<KernelDispatch>>,
    /// Summed values waiting for their dispatch's record.
    waiting: HashMap<u64, (KernelDispatch, Vec<(String, f64)>)>,
}

// SAFETY: the records' user-data unions are numbers here (the thread id
// `choose` set), never dereferenced.
unsafe impl Send for Values {}

impl Values {
    /// A dispatch's header: what was open is imported as it is.
    pub fn header(&mut self, profiler: &Profiler, h: &DispatchCountingRecord) {
        self.finish(profiler);
        self.open = Some((*h, Vec::with_capacity(h.num_records as usize)));
        if h.num_records == 0 {
            self.finish(profiler);
        }
    }

    /// One value; imports the dispatch once its values are all here. A
    /// value without a header (device counting's) is not the run's.
    pub fn value(&mut self, profiler: &Profiler, v: &CounterRecord) -> bool {
        let Some((h, values)) = &mut self.open else {
            return false;
        };
        values.push(*v);
        if values.len() as u64 >= h.num_records {
            self.finish(profiler);
        }
        true
    }

    /// A dispatch's KERNEL_DISPATCH record was imported: `kept` is the
    /// dispatch as the filter kept it (`None`: dropped). Values waiting for
    /// it are imported (or dropped) now.
    pub fn dispatch_seen(
        &mut self,
        profiler: &Profiler,
        dispatch_id: u64,
        kept: Option<KernelDispatch>,
    ) {
        if WANTED.get().is_none_or(|w| w.is_empty()) {
            return;
        }
        match self.waiting.remove(&dispatch_id) {
            Some((_, sums)) => {
                if let Some(d) = kept {
                    profiler.import_counter_samples(d, &sums);
                }
            }
            None => {
                self.seen.insert(dispatch_id, kept);
            }
        }
    }

    /// The end of the run: the open dispatch and every one still waiting
    /// for its record are imported, through the filter.
    pub fn end(&mut self, profiler: &Profiler) {
        self.finish(profiler);
        for (_, (dispatch, sums)) in std::mem::take(&mut self.waiting) {
            if let Some(d) = profiler.filter_dispatch(dispatch) {
                profiler.import_counter_samples(d, &sums);
            }
        }
    }

    /// Imports the open dispatch (or keeps it until its record comes).
    fn finish(&mut self, profiler: &Profiler) {
        let Some((h, values)) = self.open.take() else {
            return;
        };
        let mut sums: Vec<(String, f64)> = Vec::new();
        let mut thread = 0;
        for v in &values {
            thread = v.user_data;
            let mut counter = Handle::default();
            // SAFETY: an out-parameter local to this call.
            let decoded =
                unsafe { api::rocprofiler_query_record_counter_id(v.id, &mut counter) } == 0;
            let Some(name) = decoded.then(|| name_of(counter)).flatten() else {
                unnamed(v.id);
                continue;
            };
            match sums.iter_mut().find(|(n, _)| *n == name) {
                Some((_, s)) => *s += v.counter_value,
                None => sums.push((name, v.counter_value)),
            }
        }
        let dispatch = dispatch_info_from_c(
            async_correlation_from_c(&h.correlation_id),
            thread,
            (h.start_timestamp, h.end_timestamp),
            &h.dispatch_info,
        );
        match self.seen.remove(&dispatch.dispatch_id) {
            Some(Some(kept)) => profiler.import_counter_samples(kept, &sums),
            Some(None) => {}
            None => {
                self.waiting.insert(dispatch.dispatch_id, (dispatch, sums));
            }
        }
    }
}
