//! `counters.h`: the counters of an agent and their descriptions.
//!
//! The counters are the definitions' for the agent's architecture
//! (`rocwasm_counters::Definitions::discover`: `$ROCPROFILER_METRICS_PATH`,
//! an installed ROCm's file, else rocwasm's own for gfx90a and gfx942).
//! Ids are numbered as the SDK numbers them: one count across the run's
//! architectures (each architecture's counters in the definitions' order),
//! so an id names one counter of one architecture. The agent properties the
//! expressions read (`CU_NUM`'s `simd_count`) have ids too (before the
//! definitions' counters), but are not listed as the agent's counters. A
//! counter's dimensions and instances (info version 1) are the GPU's, read
//! through [`crate::hardware`]; what the GPU cannot count is told when it
//! is collected, never given a value.

use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use rocwasm_core::{AgentType, Status};
use rocwasm_counters::{Body, Catalog, Counter, Definitions, Dimension, Kind, Source, Tensor};

use crate::abi::records::{
    CounterDimensionInfo, CounterDimensionPosition, CounterInfoV0, CounterInfoV1,
    CounterInstanceInfo,
};
use crate::abi::Handle;
use crate::guard::guard;
use crate::state::engine_if_bound;
use crate::status::{Code, SUCCESS};

/// `ROCPROFILER_COUNTER_INFO_VERSION_0`.
const VERSION_0: u32 = 1;

/// One counter's strings, kept for the life of the process (tools keep
/// the pointers).
struct Strings {
    name: CString,
    description: CString,
    block: CString,
    expression: CString,
    flags: u8,
}

/// One architecture's counters: its catalog, the id of its first counter,
/// and the counters' strings.
pub(crate) struct Arch {
    /// `gfx90a` and the like.
    pub name: String,
    /// The SDK id of `catalog.counters[0]`.
    pub base: u64,
    /// The definitions' counters, in id order.
    catalog: Catalog,
    strings: Vec<Strings>,
    /// The catalog with the counters tools defined
    /// (`rocprofiler_create_counter`), once one did.
    extended: RwLock<Option<Arc<Catalog>>>,
}

/// A counter a tool defined, by id (ids after every architecture's).
struct Defined {
    id: u64,
    arch: &'static Arch,
    name: String,
    strings: &'static Strings,
}

static DEFINED: RwLock<Vec<Defined>> = RwLock::new(Vec::new());

fn defined() -> std::sync::RwLockReadGuard<'static, Vec<Defined>> {
    DEFINED.read().unwrap_or_else(|e| e.into_inner())
}

impl Arch {
    /// Runs `f` on the architecture's counters (with those tools defined).
    pub fn with_catalog<R>(&self, f: impl FnOnce(&Catalog) -> R) -> R {
        let extended = self.extended.read().unwrap_or_else(|e| e.into_inner());
        f(extended.as_deref().unwrap_or(&self.catalog))
    }

    /// The counter with SDK id `id`, when it is one of this architecture's.
    pub fn counter(&self, id: u64) -> Option<Counter> {
        if let Some(c) = id
            .checked_sub(self.base)
            .and_then(|i| self.catalog.counters.get(usize::try_from(i).ok()?))
        {
            return Some(c.clone());
        }
        let name = defined()
            .iter()
            .find(|d| d.id == id && std::ptr::eq(d.arch, self))?
            .name
            .clone();
        self.with_catalog(|c| c.get(&name).cloned())
    }

    /// The strings of counter `id`.
    fn strings(&'static self, id: u64) -> Option<&'static Strings> {
        if let Some(s) = id
            .checked_sub(self.base)
            .and_then(|i| self.strings.get(usize::try_from(i).ok()?))
        {
            return Some(s);
        }
        defined()
            .iter()
            .find(|d| d.id == id && std::ptr::eq(d.arch, self))
            .map(|d| d.strings)
    }

    /// Defines counter `name` as `text` (`rocprofiler_create_counter`):
    /// a new id. INVALID_ARGUMENT, said on standard error with the reason,
    /// for a name the architecture has or an expression that does not
    /// parse or names no counter of it.
    pub fn define(&'static self, name: &str, text: &str, description: &str) -> Result<u64, Status> {
        let refuse = |why: String| {
            crate::hardware::say_once(format!(
                "rocprofiler_create_counter {name:?} on {}: {why}",
                self.name
            ));
            Status::InvalidArgument
        };
        if name.trim().is_empty() {
            return Err(refuse("the name is empty".into()));
        }
        let expr = rocwasm_counters::expr::parse(text)
            .map_err(|e| refuse(format!("expression {text:?}: {e}")))?;
        let mut extended = self.extended.write().unwrap_or_else(|e| e.into_inner());
        let mut catalog = extended.as_deref().unwrap_or(&self.catalog).clone();
        if catalog.get(name).is_some() {
            return Err(refuse("a counter of that name exists".into()));
        }
        if let Some(unknown) = expr
            .counters()
            .into_iter()
            .find(|n| catalog.get(n).is_none())
        {
            return Err(refuse(format!("{unknown} is no counter of it")));
        }
        catalog.counters.push(Counter {
            id: catalog.counters.len() as u64,
            name: name.to_string(),
            description: description.to_string(),
            kind: Kind::Defined(Body::Derived {
                text: text.to_string(),
                expr,
            }),
        });
        *extended = Some(Arc::new(catalog));
        let mut all = DEFINED.write().unwrap_or_else(|e| e.into_inner());
        let id = registry().end + all.len() as u64;
        let strings: &'static Strings = Box::leak(Box::new(Strings {
            name: c(name),
            description: c(description),
            block: c(""),
            expression: c(text),
            flags: 2,
        }));
        all.push(Defined {
            id,
            arch: self,
            name: name.to_string(),
            strings,
        });
        Ok(id)
    }

    /// The ids of the counters tools defined on this architecture.
    fn defined_ids(&self) -> Vec<u64> {
        defined()
            .iter()
            .filter(|d| std::ptr::eq(d.arch, self))
            .map(|d| d.id)
            .collect()
    }

    /// The dimensions of counter `name` on GPU `agent`: those its
    /// evaluation leaves (a `reduce` over every dimension leaves one
    /// instance); `None` when the GPU cannot count it.
    pub fn dimensions_of(&self, agent: u64, name: &str) -> Option<Vec<(Dimension, u32)>> {
        self.with_catalog(|c| c.evaluate(name, &crate::hardware::Idle { agent }))
            .ok()
            .map(|t| t.dims)
    }

    /// Counter `id` evaluated over `source`: `each(instance id, value)`
    /// for every instance. A counter that cannot be evaluated is said
    /// once, on standard error, and gives no record.
    pub fn evaluate(&self, id: u64, source: &dyn Source, mut each: impl FnMut(u64, f64)) {
        let Some(counter) = self.counter(id) else {
            return;
        };
        match self.with_catalog(|c| c.evaluate(&counter.name, source)) {
            Ok(t) => {
                for (i, &v) in t.values.iter().enumerate() {
                    each(crate::counter_ids::instance_id(id, &t.position(i)), v);
                }
            }
            Err(e) => crate::hardware::say_once(format!(
                "counter {} ({}): {e}; a native tool gets no value for it",
                counter.name, self.name
            )),
        }
    }
}

/// Each architecture's counters.
struct Registry {
    archs: Vec<Arch>,
    /// The id after every architecture's: tools' counters are numbered
    /// from here.
    end: u64,
}

/// The architecture named `name`, when the run has a GPU of it.
pub(crate) fn arch(name: &str) -> Option<&'static Arch> {
    registry().archs.iter().find(|a| a.name == name)
}

/// The counter with SDK id `id` and its architecture.
pub(crate) fn counter(id: u64) -> Option<(&'static Arch, Counter)> {
    let arch = match registry().archs.iter().find(|a| {
        id.checked_sub(a.base)
            .is_some_and(|i| i < a.catalog.counters.len() as u64)
    }) {
        Some(a) => a,
        None => defined().iter().find(|d| d.id == id)?.arch,
    };
    Some((arch, arch.counter(id)?))
}

fn c(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let defs = Definitions::discover(None).unwrap_or_else(|e| {
            eprintln!("rocwasm: {e}; the counters are rocwasm's own definitions");
            Definitions::shipped()
        });
        let mut names: Vec<String> = engine_if_bound()
            .map(|e| e.symbols().agents())
            .unwrap_or_default()
            .into_iter()
            .filter(|a| a.agent_type == AgentType::Gpu)
            .map(|a| a.name)
            .collect();
        names.sort();
        names.dedup();
        let mut base = 0u64;
        let mut archs = Vec::new();
        for arch in names {
            let properties = defs.properties_named(&arch);
            let properties: Vec<&str> = properties.iter().map(String::as_str).collect();
            let catalog = defs.catalog(&arch, &properties);
            let strings = catalog
                .counters
                .iter()
                .map(|k| {
                    let (block, expression, flags) = match &k.kind {
                        Kind::Constant => ("", "", 1),
                        Kind::Defined(Body::Hardware { block, .. }) => (block.as_str(), "", 0),
                        Kind::Defined(Body::Derived { text, .. }) => ("", text.as_str(), 2),
                    };
                    Strings {
                        name: c(&k.name),
                        description: c(&k.description),
                        block: c(block),
                        expression: c(expression),
                        flags,
                    }
                })
                .collect();
            let n = catalog.counters.len() as u64;
            archs.push(Arch {
                name: arch,
                base,
                catalog,
                strings,
                extended: RwLock::new(None),
            });
            base += n;
        }
        Registry { archs, end: base }
    })
}

/// The architecture of agent `id`, when it is a GPU the run knows.
pub(crate) fn arch_of(agent: u64) -> Option<String> {
    engine_if_bound()?
        .symbols()
        .agents()
        .into_iter()
        .find(|a| a.id == agent && a.agent_type == AgentType::Gpu)
        .map(|a| a.name)
}

/// `rocprofiler_iterate_agent_supported_counters`: calls `cb` once with
/// every counter of the agent's architecture (INVALID_ARGUMENT for an agent
/// that is no GPU of the run; AGENT_ARCH_NOT_SUPPORTED without definitions
/// for its architecture); returns what `cb` returns.
///
/// # Safety
/// `cb` must be callable with the SDK's signature; `user_data` is passed
/// through.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_iterate_agent_supported_counters(
    agent_id: Handle,
    cb: Option<unsafe extern "C" fn(Handle, *mut Handle, usize, *mut c_void) -> Code>,
    user_data: *mut c_void,
) -> Code {
    let mut ids = Vec::new();
    let found = guard("rocprofiler_iterate_agent_supported_counters", || {
        cb.ok_or(Status::InvalidArgument)?;
        let arch = arch_of(agent_id.handle).ok_or(Status::InvalidArgument)?;
        let a = self::arch(&arch).ok_or(Status::AgentArchNotSupported)?;
        if a.catalog.counters.is_empty() {
            return Err(Status::AgentArchNotSupported);
        }
        // The agent's properties are not listed (they are no counters of
        // the definitions); the expressions that read them are.
        ids = (0..a.catalog.counters.len() as u64)
            .filter(|&i| a.catalog.counters[i as usize].kind != Kind::Constant)
            .map(|i| a.base + i)
            .chain(a.defined_ids())
            .map(|handle| Handle { handle })
            .collect();
        Ok(())
    });
    if found != SUCCESS {
        return found;
    }
    let Some(cb) = cb else { return found };
    // SAFETY: the tool's callback, with its own user data and a list that
    // outlives the call.
    unsafe { cb(agent_id, ids.as_mut_ptr(), ids.len(), user_data) }
}

/// `ROCPROFILER_COUNTER_INFO_VERSION_1`.
const VERSION_1: u32 = 2;

/// A counter's dimensions and instances as info version 1 hands them out,
/// built once per counter and kept for the life of the process (tools keep
/// the pointers).
struct Shape {
    dims: Vec<CounterDimensionInfo>,
    dim_ptrs: Vec<*const CounterDimensionInfo>,
    /// Each instance's positions, then the pointers to them.
    _positions: Vec<Vec<CounterDimensionPosition>>,
    _position_ptrs: Vec<Vec<*const CounterDimensionPosition>>,
    instances: Vec<CounterInstanceInfo>,
    instance_ptrs: Vec<*const CounterInstanceInfo>,
}

// SAFETY: a Shape is immutable once built; its pointers point into itself
// and to 'static strings.
unsafe impl Send for Shape {}
// SAFETY: as above.
unsafe impl Sync for Shape {}

/// Counter `id`'s shape on a GPU of its architecture (`None` when the GPU
/// cannot count it).
fn shape(id: u64) -> Option<&'static Shape> {
    static SHAPES: OnceLock<Mutex<HashMap<u64, Option<&'static Shape>>>> = OnceLock::new();
    let mut shapes = SHAPES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = shapes.get(&id) {
        return *s;
    }
    let built = build_shape(id).map(|s| &*Box::leak(Box::new(s)));
    shapes.insert(id, built);
    built
}

fn build_shape(id: u64) -> Option<Shape> {
    let (arch, counter) = counter(id)?;
    let agent = engine_if_bound()?
        .symbols()
        .agents()
        .into_iter()
        .find(|a| a.agent_type == AgentType::Gpu && a.name == arch.name)?;
    let dims = arch.dimensions_of(agent.id, &counter.name)?;
    let tensor = Tensor {
        values: vec![0.0; dims.iter().map(|&(_, n)| n.max(1) as usize).product()],
        dims,
    };
    let dim_infos: Vec<CounterDimensionInfo> = tensor
        .dims
        .iter()
        .map(|&(d, n)| CounterDimensionInfo {
            name: dimension_name(d).as_ptr(),
            instance_size: n as usize,
            id: d as u64,
        })
        .collect();
    let positions: Vec<Vec<CounterDimensionPosition>> = (0..tensor.values.len())
        .map(|i| {
            tensor
                .position(i)
                .into_iter()
                .map(|(d, p)| CounterDimensionPosition {
                    size: std::mem::size_of::<CounterDimensionPosition>() as u64,
                    dimension_name: dimension_name(d).as_ptr(),
                    index: p as usize,
                })
                .collect()
        })
        .collect();
    let position_ptrs: Vec<Vec<*const CounterDimensionPosition>> = positions
        .iter()
        .map(|p| p.iter().map(|x| x as *const _).collect())
        .collect();
    let instances: Vec<CounterInstanceInfo> = (0..tensor.values.len())
        .map(|i| CounterInstanceInfo {
            size: std::mem::size_of::<CounterInstanceInfo>() as u64,
            instance_id: crate::counter_ids::instance_id(id, &tensor.position(i)),
            counter_id: id,
            dimensions_count: position_ptrs[i].len() as u64,
            dimensions: position_ptrs[i].as_ptr(),
        })
        .collect();
    let mut shape = Shape {
        dim_ptrs: Vec::new(),
        dims: dim_infos,
        _positions: positions,
        _position_ptrs: position_ptrs,
        instance_ptrs: Vec::new(),
        instances,
    };
    // The vectors are not touched again, so these pointers stay valid.
    shape.dim_ptrs = shape.dims.iter().map(|d| d as *const _).collect();
    shape.instance_ptrs = shape.instances.iter().map(|d| d as *const _).collect();
    Some(shape)
}

/// The SDK's name of a dimension, as a C string.
pub(crate) fn dimension_name(d: Dimension) -> &'static CStr {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| Dimension::ALL.iter().map(|d| c(d.name())).collect());
    &names[Dimension::ALL.iter().position(|x| *x == d).unwrap_or(0)]
}

/// `rocprofiler_query_counter_info`: version 0 (id, name, description,
/// block or expression, constant/derived) or version 1 (the same, with the
/// counter's dimensions and every instance it produces on a GPU of its
/// architecture; none when the GPU cannot count it). INVALID_ARGUMENT for
/// an unknown id or version.
///
/// # Safety
/// `info` must be NULL or point to a writable struct of the version asked.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_counter_info(
    counter_id: Handle,
    version: u32,
    info: *mut c_void,
) -> Code {
    guard("rocprofiler_query_counter_info", || {
        if info.is_null() {
            return Err(Status::InvalidArgument);
        }
        let id = counter_id.handle;
        let (arch, _) = counter(id).ok_or(Status::InvalidArgument)?;
        let s = arch.strings(id).ok_or(Status::InvalidArgument)?;
        let v0 = CounterInfoV0 {
            id: counter_id,
            name: s.name.as_ptr(),
            description: s.description.as_ptr(),
            block: s.block.as_ptr(),
            expression: s.expression.as_ptr(),
            flags: s.flags,
        };
        match version {
            VERSION_0 => {
                // SAFETY: checked non-null; the caller passes a writable
                // `rocprofiler_counter_info_v0_t`, whose layout this is.
                unsafe { std::ptr::write(info.cast::<CounterInfoV0>(), v0) };
            }
            VERSION_1 => {
                let (dims, instances): (&[_], &[_]) = match shape(id) {
                    Some(sh) => (&sh.dim_ptrs, &sh.instance_ptrs),
                    None => (&[], &[]),
                };
                let out = CounterInfoV1 {
                    size: std::mem::size_of::<CounterInfoV1>() as u64,
                    id: v0.id,
                    name: v0.name,
                    description: v0.description,
                    block: v0.block,
                    expression: v0.expression,
                    flags: v0.flags,
                    dimensions_count: dims.len() as u64,
                    dimensions: dims.as_ptr(),
                    dimensions_instances_count: instances.len() as u64,
                    dimensions_instances: instances.as_ptr(),
                };
                // SAFETY: checked non-null; the caller passes a writable
                // `rocprofiler_counter_info_v1_t`, whose layout this is.
                unsafe { std::ptr::write(info.cast::<CounterInfoV1>(), out) };
            }
            _ => return Err(Status::InvalidArgument),
        }
        Ok(())
    })
}

/// `rocprofiler_iterate_counter_dimensions` (deprecated): calls `cb` once
/// with the counter's dimensions (none when the GPU cannot count it);
/// returns what `cb` returns. INVALID_ARGUMENT for an unknown counter.
///
/// # Safety
/// `cb` must be callable with the SDK's signature.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_iterate_counter_dimensions(
    counter_id: Handle,
    cb: Option<
        unsafe extern "C" fn(Handle, *const CounterDimensionInfo, usize, *mut c_void) -> Code,
    >,
    user_data: *mut c_void,
) -> Code {
    let found = guard("rocprofiler_iterate_counter_dimensions", || {
        cb.ok_or(Status::InvalidArgument)?;
        counter(counter_id.handle)
            .map(|_| ())
            .ok_or(Status::InvalidArgument)
    });
    let Some(cb) = cb.filter(|_| found == SUCCESS) else {
        return found;
    };
    let dims: &[CounterDimensionInfo] = shape(counter_id.handle).map_or(&[], |s| &s.dims);
    // SAFETY: the tool's callback, with a list that lives for the process.
    unsafe { cb(counter_id, dims.as_ptr(), dims.len(), user_data) }
}

/// `rocprofiler_query_counter_instance_count` (deprecated): how many
/// instances the counter has on the agent (0 when the GPU cannot count
/// it). AGENT_NOT_FOUND for an agent that is no GPU of the run,
/// METRIC_NOT_VALID_FOR_AGENT for another architecture's counter.
///
/// # Safety
/// `instance_count` must be NULL or point to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_counter_instance_count(
    agent_id: Handle,
    counter_id: Handle,
    instance_count: *mut usize,
) -> Code {
    guard("rocprofiler_query_counter_instance_count", || {
        if instance_count.is_null() {
            return Err(Status::InvalidArgument);
        }
        let arch = arch_of(agent_id.handle).ok_or(Status::AgentNotFound)?;
        let (a, _) = counter(counter_id.handle).ok_or(Status::CounterNotFound)?;
        if a.name != arch {
            return Err(Status::MetricNotValidForAgent);
        }
        let n = shape(counter_id.handle).map_or(0, |s| s.instances.len());
        // SAFETY: checked non-null; the caller passes a writable size_t.
        unsafe { *instance_count = n };
        Ok(())
    })
}
