//! Test plugin: per table, the records delivered, as one summary table
//! ("Records per table": `Table`, `Records`), merged across instances
//! (`MergeablePlugin`).
//!
//! Config `broken`: `drop` makes `merge-partial` accept a partial and fold
//! nothing (a wrong merge the check must catch); `refuse` makes it return
//! an error (a refusal the host must report). Config `trap_pid`: it traps
//! on a batch of the process with that pid (one rank of a job).

use std::collections::BTreeMap;

use rocwasm_plugin_sdk::prelude::*;

#[derive(Default)]
struct MergeCounter {
    broken: String,
    trap_pid: Option<u32>,
    records: BTreeMap<String, u64>,
}

const PARTIAL: &str = "merge-counter/1";

impl AnalysisPlugin for MergeCounter {
    fn init(&mut self) -> Result<(), String> {
        self.broken = config::get("broken").unwrap_or_default();
        self.trap_pid = config::get_parsed("trap_pid").map_err(|e| e.to_string())?;
        Ok(())
    }

    fn deliver_batch(&mut self, info: &DeliveryInfo, batch: &Batch) {
        if self.trap_pid == Some(info.process.pid) {
            panic!("merge-counter: trap_pid {} reached", info.process.pid);
        }
        let tables = [
            (kernel_dispatches::NAME, batch.kernel_dispatches().len()),
            (memory_copies::NAME, batch.memory_copies().len()),
            (api_calls::NAME, batch.api_calls().len()),
        ];
        for (table, n) in tables.into_iter().filter(|(_, n)| *n > 0) {
            *self.records.entry(table.to_string()).or_default() += n as u64;
        }
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let mut t = SummaryTable::new("Records per table", &["Table", "Records"]);
        for (table, n) in &self.records {
            t.push_row([table.clone(), n.to_string()]);
        }
        vec![t]
    }
}

impl MergeablePlugin for MergeCounter {
    fn take_partial(&mut self) -> Result<Vec<u8>, String> {
        let mut w = PartialWriter::new(PARTIAL);
        w.u64(self.records.len() as u64);
        for (table, n) in &self.records {
            w.str(table);
            w.u64(*n);
        }
        Ok(w.finish())
    }

    fn merge_partial(&mut self, partial: &[u8]) -> Result<(), String> {
        match self.broken.as_str() {
            "drop" => return Ok(()),
            "refuse" => return Err("merge-counter refuses every partial (broken = refuse)".into()),
            _ => {}
        }
        let mut r = PartialReader::new(partial, PARTIAL)?;
        let mut read = Vec::new();
        for _ in 0..r.u64()? {
            read.push((r.str()?, r.u64()?));
        }
        r.finish()?;
        for (table, n) in read {
            *self.records.entry(table).or_default() += n;
        }
        Ok(())
    }
}

rocwasm_plugin_sdk::export_mergeable_analysis!(MergeCounter);
