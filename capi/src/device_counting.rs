//! `device_counting_service.h`: an agent's counters over a window of time
//! rather than per dispatch.
//!
//! When a context with device counting starts, the tool's setup callback
//! is called for each configured agent and picks a counter configuration
//! (through the `set_config` function it is handed). From then on every
//! kernel dispatch that completes on the agent while the context is active
//! adds its hardware counters to the context's totals ([`add`], called by
//! the tool library); `rocprofiler_sample_device_counting_service` reads
//! the configuration's counters over those totals (derived counters are
//! evaluated over the summed hardware counters, agent properties are the
//! agent's). Totals start again when the context starts; reading does not
//! reset them, as reading the hardware's counters does not.
//!
//! This is what device counting means on the simulated GPU, whose counter
//! model is per dispatch: an idle agent counts nothing (no `GRBM_COUNT`
//! between dispatches).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rocwasm_core::{BufferId, ContextId, Status};
use rocwasm_counters::{Kind, Source, Tensor};

use crate::abi::records::CounterRecord;
use crate::abi::Handle;
use crate::counter_config::{self, Config};
use crate::guard::guard;
use crate::hardware::Idle;
use crate::state::engine;
use crate::status::{code, Code, SUCCESS};

/// `rocprofiler_device_counting_agent_cb_t`: how the setup callback picks
/// the configuration.
pub type SetConfig = extern "C" fn(Handle, Handle) -> Code;

/// `rocprofiler_device_counting_service_cb_t`.
pub type SetupCallback = unsafe extern "C-unwind" fn(Handle, Handle, SetConfig, *mut c_void);

/// `ROCPROFILER_COUNTER_FLAG_ASYNC`.
const FLAG_ASYNC: i32 = 1;

/// One agent's device counting in one context.
struct Device {
    ctx: ContextId,
    buffer: Option<BufferId>,
    agent: u64,
    setup: SetupCallback,
    setup_data: usize,
    state: Mutex<Totals>,
}

/// The chosen configuration and the hardware counters added up since the
/// context started.
#[derive(Default)]
struct Totals {
    config: Option<Arc<Config>>,
    /// Hardware counters: summed over the dispatches, per instance.
    sums: HashMap<String, Tensor>,
    /// Agent properties: as the last dispatch read them.
    properties: HashMap<String, Tensor>,
}

static DEVICES: RwLock<Vec<Arc<Device>>> = RwLock::new(Vec::new());
/// Some context configured device counting (checked on every dispatch).
static ANY: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The device whose setup callback is running on this thread.
    static SETTING: RefCell<Option<Arc<Device>>> = const { RefCell::new(None) };
}

fn devices_of(ctx: ContextId) -> Vec<Arc<Device>> {
    DEVICES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|d| d.ctx == ctx)
        .cloned()
        .collect()
}

/// `rocprofiler_configure_device_counting_service`: counts `agent_id` in
/// the context, into `buffer_id` too when it is not 0 (CONTEXT_INVALID,
/// AGENT_NOT_FOUND for an agent that is no GPU of the run,
/// SERVICE_ALREADY_CONFIGURED for an agent configured twice,
/// INVALID_ARGUMENT without a callback).
#[no_mangle]
pub extern "C" fn rocprofiler_configure_device_counting_service(
    context_id: Handle,
    buffer_id: Handle,
    agent_id: Handle,
    cb: Option<SetupCallback>,
    user_data: *mut c_void,
) -> Code {
    guard("rocprofiler_configure_device_counting_service", || {
        let setup = cb.ok_or(Status::InvalidArgument)?;
        let ctx = ContextId(context_id.handle);
        crate::counter_info::arch_of(agent_id.handle).ok_or(Status::AgentNotFound)?;
        let existing = devices_of(ctx);
        if existing.iter().any(|d| d.agent == agent_id.handle) {
            return Err(Status::ServiceAlreadyConfigured);
        }
        if existing.is_empty() {
            engine()?.configure_device_counting(ctx)?;
        }
        DEVICES
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::new(Device {
                ctx,
                buffer: (buffer_id.handle != 0).then_some(BufferId(buffer_id.handle)),
                agent: agent_id.handle,
                setup,
                setup_data: user_data as usize,
                state: Mutex::new(Totals::default()),
            }));
        ANY.store(true, Ordering::Release);
        Ok(())
    })
}

/// The `set_config` a setup callback is handed: CONTEXT_INVALID outside
/// the callback or for another context, PROFILE_NOT_FOUND for an unknown
/// configuration, AGENT_MISMATCH for one made for another agent.
extern "C" fn set_config(context_id: Handle, config_id: Handle) -> Code {
    let result = SETTING.with(|s| {
        let s = s.borrow();
        let device = s
            .as_ref()
            .filter(|d| d.ctx.0 == context_id.handle)
            .ok_or(Status::ContextInvalid)?;
        let config = counter_config::get(config_id.handle).ok_or(Status::ProfileNotFound)?;
        if config.agent != device.agent {
            return Err(Status::AgentMismatch);
        }
        device
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .config = Some(config);
        Ok(())
    });
    result.map_or_else(code, |()| SUCCESS)
}

/// The context started: each of its devices starts counting from zero and
/// asks its tool for the configuration.
pub(crate) fn on_start(ctx: ContextId) {
    for device in devices_of(ctx) {
        *device.state.lock().unwrap_or_else(|e| e.into_inner()) = Totals::default();
        SETTING.with(|s| *s.borrow_mut() = Some(device.clone()));
        crate::foreign::call_tool("a native tool's device counting setup callback", || {
            // SAFETY: the tool's callback with the documented arguments.
            unsafe {
                (device.setup)(
                    Handle { handle: ctx.0 },
                    Handle {
                        handle: device.agent,
                    },
                    set_config,
                    device.setup_data as *mut c_void,
                )
            }
        });
        SETTING.with(|s| *s.borrow_mut() = None);
    }
}

/// True when some context configured device counting (one atomic load:
/// asked on every dispatch).
pub fn any() -> bool {
    ANY.load(Ordering::Acquire)
}

/// True when some context counts agent `agent`'s device.
pub fn counts(agent: u64) -> bool {
    any()
        && DEVICES
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|d| d.agent == agent)
}

/// Remembers every hardware counter and property an evaluation reads.
struct Recorder<'a> {
    inner: &'a dyn Source,
    seen: RefCell<HashMap<String, Tensor>>,
}

impl Source for Recorder<'_> {
    fn read(&self, counter: &str, block: &str) -> Option<Tensor> {
        if let Some(t) = self.seen.borrow().get(counter) {
            return Some(t.clone());
        }
        let t = self.inner.read(counter, block)?;
        self.seen
            .borrow_mut()
            .insert(counter.to_string(), t.clone());
        Some(t)
    }
}

/// A kernel dispatch completed on `agent`; `source` reads its counters.
/// Each active context counting the agent adds them to its totals.
pub fn add(agent: u64, source: &dyn Source) {
    let Ok(engine) = engine() else { return };
    let devices: Vec<Arc<Device>> = DEVICES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|d| d.agent == agent)
        .filter(|d| engine.is_context_active(d.ctx).unwrap_or(false))
        .cloned()
        .collect();
    for device in devices {
        let mut totals = device.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(config) = totals.config.clone() else {
            continue;
        };
        let recorder = Recorder {
            inner: source,
            seen: RefCell::new(HashMap::new()),
        };
        for &id in &config.counters {
            if let Some(c) = config.arch.counter(id) {
                let _ = config
                    .arch
                    .with_catalog(|cat| cat.evaluate(&c.name, &recorder));
            }
        }
        for (name, t) in recorder.seen.into_inner() {
            let constant = config
                .arch
                .with_catalog(|cat| cat.get(&name).is_some_and(|c| c.kind == Kind::Constant));
            if constant {
                totals.properties.insert(name, t);
                continue;
            }
            match totals.sums.get_mut(&name) {
                Some(sum) if sum.dims == t.dims => {
                    sum.values
                        .iter_mut()
                        .zip(&t.values)
                        .for_each(|(s, v)| *s += v);
                }
                _ => {
                    totals.sums.insert(name, t);
                }
            }
        }
    }
}

/// Reads the totals (zeros for a counter no dispatch has added to yet).
struct Totalled<'a> {
    totals: &'a Totals,
    agent: u64,
}

impl Source for Totalled<'_> {
    fn read(&self, counter: &str, block: &str) -> Option<Tensor> {
        self.totals
            .sums
            .get(counter)
            .or_else(|| self.totals.properties.get(counter))
            .cloned()
            .or_else(|| Idle { agent: self.agent }.read(counter, block))
    }
}

/// `rocprofiler_sample_device_counting_service`: reads the context's
/// counters now. The values go to the context's buffers (those given when
/// configuring) and, when `output_records` is not NULL, into it:
/// `*rec_count` is its capacity on entry and the number written on return
/// (OUT_OF_RESOURCES with the number needed when it is too small).
/// CONTEXT_NOT_FOUND for context 0, CONTEXT_NOT_STARTED for a context that
/// is not active, CONTEXT_INVALID for one without device counting,
/// INVALID_ARGUMENT for an output array with the ASYNC flag or without a
/// count.
///
/// # Safety
/// `output_records` must be NULL or point to `*rec_count` writable
/// records; `rec_count` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_sample_device_counting_service(
    context_id: Handle,
    user_data: u64,
    flags: i32,
    output_records: *mut CounterRecord,
    rec_count: *mut usize,
) -> Code {
    guard("rocprofiler_sample_device_counting_service", || {
        if context_id.handle == 0 {
            return Err(Status::ContextNotFound);
        }
        let ctx = ContextId(context_id.handle);
        if !engine()?.is_context_active(ctx).unwrap_or(false) {
            return Err(Status::ContextNotStarted);
        }
        let devices = devices_of(ctx);
        if devices.is_empty() {
            return Err(Status::ContextInvalid);
        }
        if !output_records.is_null() {
            if rec_count.is_null() || flags & FLAG_ASYNC != 0 {
                return Err(Status::InvalidArgument);
            }
            // SAFETY: checked non-null; the caller's count.
            if unsafe { *rec_count } == 0 {
                return Err(Status::OutOfResources);
            }
        }
        let mut all = Vec::new();
        for device in devices {
            let totals = device.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(config) = totals.config.clone() else {
                continue;
            };
            let source = Totalled {
                totals: &totals,
                agent: device.agent,
            };
            let mut records = Vec::new();
            for &id in &config.counters {
                config.arch.evaluate(id, &source, |instance, value| {
                    records.push(CounterRecord {
                        id: instance,
                        counter_value: value,
                        dispatch_id: 0,
                        user_data,
                        agent_id: Handle {
                            handle: device.agent,
                        },
                    });
                });
            }
            drop(totals);
            if let Some(buffer) = device.buffer {
                crate::buffer::keep_values(buffer, records.clone());
            }
            all.extend(records);
        }
        if !output_records.is_null() {
            // SAFETY: checked above; the caller's capacity.
            let capacity = unsafe { *rec_count };
            // SAFETY: as above.
            unsafe { *rec_count = all.len() };
            if all.len() > capacity {
                return Err(Status::OutOfResources);
            }
            // SAFETY: the caller's array holds `capacity` ≥ `all.len()`
            // records.
            unsafe { std::ptr::copy_nonoverlapping(all.as_ptr(), output_records, all.len()) };
        }
        Ok(())
    })
}
