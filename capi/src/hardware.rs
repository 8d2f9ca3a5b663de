//! The GPU's counters, as the tool library reads them, turned into the
//! SDK's counter records.
//!
//! The tool library (`host/process/intercept`) knows how to read a GPU's
//! counters (the simulated runtime's counters extension); it tells this
//! crate the shape of each counter once ([`set_hardware`]) and hands it a
//! [`Source`] for each dispatch it counts. Here each counter a tool asked
//! for is evaluated with its architecture's definitions
//! ([`crate::counter_info`]) and each of its instances becomes one
//! `rocprofiler_counter_record_t` value with the SDK's instance id.

use std::sync::{Mutex, OnceLock};

use rocwasm_counters::{Dimension, Source, Tensor};

use crate::counter_info::Arch;

/// What the tool library tells about the GPU's counters.
pub trait Hardware: Send + Sync {
    /// The dimensions, with their extents, of hardware counter or agent
    /// property `counter` on GPU agent `agent` (a record's agent id);
    /// `None` when the GPU cannot count it.
    fn dimensions(&self, agent: u64, counter: &str) -> Option<Vec<(Dimension, u32)>>;
}

static HARDWARE: OnceLock<Box<dyn Hardware>> = OnceLock::new();

/// Installs the tool library's reader (once; later calls are ignored).
pub fn set_hardware(hardware: Box<dyn Hardware>) {
    let _ = HARDWARE.set(hardware);
}

/// Zeros over a counter's instances.
pub(crate) fn zeros(dims: Vec<(Dimension, u32)>) -> Tensor {
    Tensor {
        values: vec![0.0; dims.iter().map(|&(_, n)| n.max(1) as usize).product()],
        dims,
    }
}

/// Reads zeros over each counter's instances: evaluating a counter
/// through it gives the counter's shape.
pub(crate) struct Idle {
    /// The agent (a record's agent id).
    pub agent: u64,
}

impl Source for Idle {
    fn read(&self, counter: &str, _block: &str) -> Option<Tensor> {
        Some(zeros(HARDWARE.get()?.dimensions(self.agent, counter)?))
    }
}

/// The dimensions of counter `name` of `arch` on GPU `agent`: those its
/// evaluation leaves (a `reduce` over every dimension leaves one
/// instance); `None` when the GPU cannot count it.
pub(crate) fn dimensions_of(agent: u64, arch: &Arch, name: &str) -> Option<Vec<(Dimension, u32)>> {
    arch.catalog
        .evaluate(name, &Idle { agent })
        .ok()
        .map(|t| t.dims)
}

/// Counter `id` of `arch` evaluated over `source`: `each(instance id,
/// value)` for every instance. A counter that cannot be evaluated is said
/// once, on standard error, and gives no record.
pub(crate) fn evaluate(arch: &Arch, id: u64, source: &dyn Source, mut each: impl FnMut(u64, f64)) {
    let Some(counter) = arch.counter(id) else {
        return;
    };
    match arch.catalog.evaluate(&counter.name, source) {
        Ok(t) => {
            for (i, &v) in t.values.iter().enumerate() {
                each(crate::counter_ids::instance_id(id, &t.position(i)), v);
            }
        }
        Err(e) => say_once(format!(
            "counter {} ({}): {e}; a native tool gets no value for it",
            counter.name, arch.name
        )),
    }
}

/// Says `message` on standard error the first time.
pub(crate) fn say_once(message: String) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.contains(&message) {
        eprintln!("rocwasm: {message}");
        said.push(message);
    }
}
