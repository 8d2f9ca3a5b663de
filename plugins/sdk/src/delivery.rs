//! Column projection: receive only the columns the analysis reads.
//!
//! Every column a plugin receives is copied into its memory on each
//! delivery. A kernel dispatch has 18 columns (~128 bytes); a per-kernel
//! timing analysis reads three of them (24 bytes). Declaring those in `init`
//! makes the host copy only them:
//!
//! ```no_run
//! use rocwasm_plugin_sdk::prelude::*;
//! # fn init() -> Result<(), String> {
//! KernelDispatchColumns::select(&["kernel_id", "start", "end"]).context("select-columns")?;
//! # Ok(()) }
//! ```
//!
//! What then arrives: the selected columns, and no other column of that
//! table. The views stay usable — a table's `len()` is its longest column
//! and an absent column is an empty slice that reads as 0 in
//! [`row`](crate::rows::kernel_dispatches::View::row) and `iter()` — but an
//! analysis should read only what it selected.
//!
//! Tables you never select arrive whole when they have rows (that is the
//! default, for every table, when a plugin selects nothing). `select(&[])`
//! drops a table; [`receive_only`] drops every table but the ones named.
//! Select in `configure` or `init`: once batches flow the host answers
//! [`Status::ConfigurationLocked`]. Transform stages select too: the host
//! applies their [`Edits`](crate::Edits) to every column of the batch,
//! received or not.

use crate::types::Status;

/// The raw host call: keep only `columns` (WIT names, e.g. `kernel-id`) of
/// `table` (a WIT field of `batch`, e.g. `kernel-dispatches`).
pub use crate::bindings::rocwasm::plugin::delivery::select_columns as select_columns_raw;

/// Keeps only `columns` of `table` in this plugin's deliveries.
///
/// Names may be given as WIT names (`kernel-id`) or as the Rust field names
/// (`kernel_id`); the table as `kernel-dispatches` or `kernel_dispatches`.
/// Prefer the typed form, `KernelDispatchColumns::select(&[...])`, which
/// checks the names before asking the host.
pub fn select_columns(table: &str, columns: &[&str]) -> Result<(), Status> {
    let columns: Vec<String> = columns.iter().map(|c| wit_name(c)).collect();
    select_columns_raw(&wit_name(table), &columns).map(|_ids| ())
}

/// Receive no column of any table but `tables` (WIT names, e.g.
/// `kernel_dispatches::NAME`), whose selection is left as it is: for a
/// plugin that reads one table. A table this SDK does not know is never
/// sent to it anyway, and one the host does not know (an older host's
/// `invalid-argument`) cannot be: both are fine.
pub fn receive_only(tables: &[&str]) -> Result<(), Status> {
    for table in rocwasm_schema::TABLES {
        if !tables.contains(&table.wit) {
            match select_columns_raw(table.wit, &[]) {
                Ok(_) | Err(Status::InvalidArgument) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// `kernel_id` → `kernel-id` (WIT names are kebab-case).
pub fn wit_name(rust_name: &str) -> String {
    rust_name.replace('_', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_names_become_wit_names() {
        assert_eq!(wit_name("kernel_id"), "kernel-id");
        assert_eq!(
            wit_name("external_correlation_id"),
            "external-correlation-id"
        );
        assert_eq!(wit_name("start"), "start");
        assert_eq!(wit_name("kernel-dispatches"), "kernel-dispatches");
    }
}
