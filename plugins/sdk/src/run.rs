//! What the host knows of the processes deliveries name, beyond
//! [`DeliveryInfo::process`](crate::types::DeliveryInfo): each process's
//! command line and the back end that measured its records (WIT `run`, new
//! in `rocwasm:plugin@0.3.1`).
//!
//! A live run knows its own process; a replay knows what each recording
//! kept (rocpd and rocprofv3's JSON keep the command line, its CSV files
//! keep none, rocwasm's record journal keeps both).
//!
//! ```no_run
//! use rocwasm_plugin_sdk::prelude::*;
//! # fn f(info: &DeliveryInfo) {
//! if let Some(p) = rocwasm_plugin_sdk::run::describe(&info.process) {
//!     let program = p.command.first().map(String::as_str).unwrap_or("not recorded");
//!     let back_end = if p.back_end.is_empty() { "not recorded" } else { &p.back_end };
//!     rocwasm_plugin_sdk::info!("{program} measured by {back_end}");
//! }
//! # }
//! ```

use crate::bindings::rocwasm::plugin::run as host;
use crate::types::ProcessInfo;

/// What the host knows of one process: `command` (program first; empty
/// when not known) and `back_end` (`builtin`, `rocprofiler-sdk`; "" when
/// not known).
pub use host::ProcessDetails;

/// The details of `process`, as a delivery named it; `None` for a process
/// no delivery named (and, on a 0.3.0 host, the plugin does not load: the
/// interface is 0.3.1's).
pub fn describe(process: &ProcessInfo) -> Option<ProcessDetails> {
    host::describe_process(process)
}
