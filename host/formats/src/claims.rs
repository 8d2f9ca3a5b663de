//! The run's output-file registry lives in `rocwasm-plan`
//! ([`rocwasm_plan::claims`]): the profiled process's stages and the
//! launcher's sinks claim files in the same way.

pub use rocwasm_plan::claims::*;
