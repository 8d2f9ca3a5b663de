//! The GPU's counters, as the tool library reads them, turned into the
//! SDK's counter records.
//!
//! The tool library (`host/process/intercept`) knows how to read a GPU's
//! counters (the simulated runtime's counters extension); it tells this
//! crate the shape of each counter ([`set_hardware`]) and hands it a
//! [`Source`] for each dispatch it counts. Each counter a tool asked for
//! is evaluated with its architecture's definitions
//! (`crate::counter_info::Arch::evaluate`), and each of its instances
//! becomes one `rocprofiler_counter_record_t` value with the SDK's
//! instance id.

use std::sync::{Mutex, OnceLock};

use rocwasm_counters::{Dimension, Source, Tensor};

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

/// Says `message` on standard error the first time.
pub(crate) fn say_once(message: String) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.contains(&message) {
        eprintln!("rocwasm: {message}");
        said.push(message);
    }
}
