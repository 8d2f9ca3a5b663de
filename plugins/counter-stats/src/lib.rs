//! `counter-stats`: per-kernel hardware counter statistics, from the
//! counter samples of a run with `--pmc` (or a replay of its
//! `counter_collection.csv`, rocpd database or `results.json`).
//!
//! For every kernel name and counter: `Dispatches`, `Mean`, `Min`, `Max`
//! and `Total` of the counter's per-dispatch values (each already summed
//! over the counter's instances, as `counter_collection.csv` has them),
//! sorted by kernel, then counter. Returned from `fini` as the summary
//! table "Hardware counters per kernel", and written as
//! `counter_stats.csv` through the host's `output` interface when the
//! stage has an output grant.
//!
//! Records: counter samples (table `counter-samples`, WIT 0.3.x), which
//! the host delivers with the kernel dispatches to a stage whose domains
//! include `KERNEL_DISPATCH`. Only `kernel_id`, `counter_id` and `value`
//! are selected, and no other table. Kernel and counter names are asked
//! from the host (`symbols.kernel-names`, and WIT 0.3.2's
//! `symbols.counter-names`) for the ids seen; rows are per *name*, so the
//! same kernel on two agents is one row, as in rocprofv3.
//!
//! Config keys: `file` (default `counter_stats.csv`; empty string = no
//! file).
//!
//! Without `--pmc` there are no counter samples: the table is empty and
//! the plugin says so once, at `fini`.

use std::collections::BTreeMap;

use rocwasm_plugin_sdk::prelude::*;

/// One counter's values over one kernel's dispatches.
#[derive(Debug, Clone, Copy)]
struct Values {
    count: u64,
    total: f64,
    min: f64,
    max: f64,
}

impl Values {
    fn new(x: f64) -> Values {
        Values {
            count: 1,
            total: x,
            min: x,
            max: x,
        }
    }

    fn add(&mut self, x: f64) {
        self.count += 1;
        self.total += x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    fn merge(&mut self, other: &Values) {
        self.count += other.count;
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// The table's columns.
const COLUMNS: [&str; 7] = [
    "Kernel",
    "Counter",
    "Dispatches",
    "Mean",
    "Min",
    "Max",
    "Total",
];

#[derive(Default)]
struct CounterStats {
    file: String,
    /// (kernel id, counter id) → values: the per-record loop's map.
    by_id: BTreeMap<(u64, u32), Values>,
    kernels: KernelNames,
    counters: CounterNames,
}

/// A value as the CSV writes counters: six decimals.
fn number(x: f64) -> String {
    format!("{x:.6}")
}

impl CounterStats {
    /// (kernel name, counter name) → values, over every id pair seen.
    fn by_name(&mut self) -> BTreeMap<(String, String), Values> {
        let kernel_ids: Vec<u64> = self.by_id.keys().map(|(k, _)| *k).collect();
        let counter_ids: Vec<u32> = self.by_id.keys().map(|(_, c)| *c).collect();
        self.kernels.resolve(&kernel_ids);
        self.counters.resolve(&counter_ids);
        let mut out: BTreeMap<(String, String), Values> = BTreeMap::new();
        for (&(k, c), v) in &self.by_id {
            let key = (
                self.kernels.name(k).to_string(),
                self.counters.name(c).to_string(),
            );
            match out.get_mut(&key) {
                Some(existing) => existing.merge(v),
                None => {
                    out.insert(key, *v);
                }
            }
        }
        out
    }
}

impl AnalysisPlugin for CounterStats {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        if !info.domains.is_empty() && !info.domains.contains(&buffer::KERNEL_DISPATCH) {
            warn!(
                "counter-stats: the stage's domains do not include KERNEL_DISPATCH; it will see \
                 no counter samples"
            );
        }
        true
    }

    fn init(&mut self) -> Result<(), String> {
        self.file = config::get_or("file", "counter_stats.csv".to_string())?;
        counter_samples::select(&["kernel_id", "counter_id", "value"])
            .context("delivery.select-columns")?;
        delivery::receive_only(&[counter_samples::NAME]).context("delivery.select-columns")?;
        Ok(())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
        let samples = batch.counter_samples();
        for s in samples.iter() {
            let x = s.value();
            self.by_id
                .entry((s.kernel_id, s.counter_id))
                .and_modify(|v| v.add(x))
                .or_insert_with(|| Values::new(x));
        }
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let rows = self.by_name();
        if rows.is_empty() {
            info!("counter-stats: no counter samples (collect counters with --pmc)");
        }
        let mut table = SummaryTable::new("Hardware counters per kernel", &COLUMNS);
        let mut csv = CsvWriter::new(&COLUMNS);
        for ((kernel, counter), v) in &rows {
            let cells = [
                kernel.clone(),
                counter.clone(),
                v.count.to_string(),
                number(v.total / v.count as f64),
                number(v.min),
                number(v.max),
                number(v.total),
            ];
            csv.row(cells.iter());
            table.push_row(cells.to_vec());
        }
        if !self.file.is_empty() {
            output::write_result("counter-stats", &self.file, csv.finish());
        }
        vec![table]
    }
}

rocwasm_plugin_sdk::export_analysis!(CounterStats);
