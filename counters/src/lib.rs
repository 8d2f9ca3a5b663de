//! `rocwasm-counters`: hardware counters as rocprofiler-sdk defines them.
//!
//! A GPU counts events in its hardware blocks; rocprofiler-sdk names them
//! in a *definitions file* (per architecture: a block and an event number,
//! or an expression over other counters) and evaluates the expressions
//! over the instances the hardware reports. This crate is that model,
//! without a GPU:
//!
//! - [`defs`]: definitions files in rocprofiler-sdk's schema (and the one
//!   rocwasm ships for its simulated agents, [`defs::SHIPPED`]);
//! - [`expr`]: the expression language (`+ - * /`, `reduce`, `accumulate`,
//!   `select`), parsed with positions for errors;
//! - [`catalog`]: one agent's counters with ids, evaluation over the
//!   instances a [`Source`] reads (the simulated GPU's model, or samples),
//!   dimensions, and the one-pass register limit of each block.
//!
//! ```
//! use rocwasm_counters::Definitions;
//! let defs = Definitions::shipped();
//! let gfx90a = defs.catalog("gfx90a", &[]);
//! // GPU_UTIL needs GRBM_COUNT and GRBM_GUI_ACTIVE: two of GRBM's two registers.
//! assert_eq!(gfx90a.hardware_of("GPU_UTIL").unwrap().len(), 2);
//! assert!(gfx90a.check_one_pass(&["GPU_UTIL", "SQ_WAVES"]).is_ok());
//! ```

#![forbid(unsafe_code)]

pub mod catalog;
pub mod defs;
pub mod expr;

pub use catalog::{
    block_limit, Catalog, CheckError, Counter, Dimension, EvalError, Kind, OverLimit, Source,
    Tensor,
};
pub use defs::{BadExpression, Body, Definitions, DefsError};
