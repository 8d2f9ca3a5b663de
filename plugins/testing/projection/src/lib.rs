//! `projection` (test plugin): selects columns through
//! `delivery.select-columns` and reports exactly what it received, for the
//! runtime's projection tests.
//!
//! Config keys:
//! - `select`: `table:col,col;table:col,…` with WIT names
//!   (`kernel-dispatches:kernel-id,start;memory-copies:`); an empty column
//!   list drops the table. Absent: no selection (every column arrives).
//!
//! `fini` returns two tables:
//! - "Columns": for every column of `api-calls`, `kernel-dispatches` and
//!   `memory-copies`, the values received over all deliveries and their
//!   wrapping sum (`Table`, `Column`, `Values`, `Sum`);
//! - "Calls": the status of every `select-columns` call made in `init`
//!   (`ok` or the status name) and of one more made during the first
//!   delivery, which must be refused (`late`).

use rocwasm_plugin_sdk::delivery::select_columns_raw;
use rocwasm_plugin_sdk::prelude::*;

/// Per column: values received and their wrapping sum.
#[derive(Default, Clone, Copy)]
struct Seen {
    values: u64,
    sum: u64,
}

#[derive(Default)]
struct Projection {
    calls: Vec<(String, String)>,
    late_tried: bool,
    /// (table, column) → what arrived, in WIT order.
    seen: Vec<((&'static str, String), Seen)>,
}

/// Calls `$f(table, column, values)` for every column of the covered tables
/// (`column` as the Rust field name).
macro_rules! each_column {
    ($batch:expr, $f:expr; $($table:ident = $wit:literal { $($col:ident),+ })+) => {
        $($(
            $f($wit, stringify!($col), &$batch.$table().$col);
        )+)+
    };
}

trait Column {
    fn values(&self) -> (u64, u64);
}

impl Column for &[u64] {
    fn values(&self) -> (u64, u64) {
        (
            self.len() as u64,
            self.iter().fold(0, |a, &x| a.wrapping_add(x)),
        )
    }
}

impl Column for &[u32] {
    fn values(&self) -> (u64, u64) {
        (
            self.len() as u64,
            self.iter().fold(0, |a, &x| a.wrapping_add(x as u64)),
        )
    }
}

fn status_text<T>(r: Result<T, Status>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(s) => s.name().to_string(),
    }
}

impl Projection {
    fn record(&mut self, table: &'static str, column: &'static str, data: &dyn Column) {
        let (values, sum) = data.values();
        let key = (table, rocwasm_plugin_sdk::delivery::wit_name(column));
        match self.seen.iter_mut().find(|(k, _)| *k == key) {
            Some((_, s)) => {
                s.values += values;
                s.sum = s.sum.wrapping_add(sum);
            }
            None => self.seen.push((key, Seen { values, sum })),
        }
    }
}

impl AnalysisPlugin for Projection {
    fn init(&mut self) -> Result<(), String> {
        let Some(select) = config::get("select") else {
            return Ok(());
        };
        for part in select.split(';').filter(|p| !p.trim().is_empty()) {
            let (table, columns) = part
                .split_once(':')
                .ok_or_else(|| format!("`select`: `{part}` has no `:`"))?;
            let columns: Vec<String> = columns
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect();
            let r = select_columns_raw(table.trim(), &columns);
            self.calls.push((part.to_string(), status_text(r)));
        }
        Ok(())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
        if !self.late_tried {
            self.late_tried = true;
            let r = select_columns_raw("kernel-dispatches", &[]);
            self.calls.push(("late".into(), status_text(r)));
        }
        each_column!(batch, |t, c, d: &dyn Column| self.record(t, c, d);
            api_calls = "api-calls" {
                kind, operation, correlation_id, external_correlation_id, ancestor, thread_id,
                start, end
            }
            kernel_dispatches = "kernel-dispatches" {
                correlation_id, external_correlation_id, thread_id, start, end, agent_id,
                queue_id, stream_id, kernel_id, dispatch_id, private_segment_size,
                group_segment_size, workgroup_x, workgroup_y, workgroup_z, grid_x, grid_y, grid_z
            }
            memory_copies = "memory-copies" {
                operation, correlation_id, external_correlation_id, thread_id, start, end,
                dst_agent_id, src_agent_id, stream_id, bytes, dst_address, src_address
            }
        );
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let mut columns = SummaryTable::new("Columns", &["Table", "Column", "Values", "Sum"]);
        for ((table, column), s) in &self.seen {
            columns.push_row([
                table.to_string(),
                column.to_string(),
                s.values.to_string(),
                s.sum.to_string(),
            ]);
        }
        let mut calls = SummaryTable::new("Calls", &["Call", "Status"]);
        for (call, status) in &self.calls {
            calls.push_row([call.clone(), status.clone()]);
        }
        vec![columns, calls]
    }
}

rocwasm_plugin_sdk::export_analysis!(Projection);
