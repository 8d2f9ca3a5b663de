//! `kernel-filter` (transform stage): lets through only the kernel
//! dispatches later stages should see; every other table passes unchanged.
//!
//! Config keys:
//! - `pattern`: matched against the demangled kernel name. With `*` (any
//!   run of characters) or `?` (one character) it is a glob over the whole
//!   name (`*gemm*`, `void scale<?>*`); without them, a substring
//!   (`gemm` matches `Cijk_gemm_NN`).
//! - `case-sensitive`: default `true`.
//! - `min-duration-ns`: keep dispatches with `end - start >= min-duration-ns`.
//! - `mode`: `all` (default: every configured condition must hold) or `any`
//!   (one is enough).
//! - `invert`: default `false`; `true` drops what would be kept.
//!
//! With neither `pattern` nor `min-duration-ns` everything passes (a warning
//! says so). `fini` returns a table of kept and dropped dispatches per kernel.

mod filter;

use std::collections::{BTreeMap, HashMap};

use rocwasm_plugin_sdk::prelude::*;

use filter::{Filter, Mode, Pattern};

#[derive(Default)]
struct KernelFilter {
    filter: Filter,
    names: KernelNames,
    /// Whether each kernel id's name matches `pattern` (globbed once per id).
    name_matches: HashMap<u64, bool>,
    /// Per kernel id: (kept, dropped).
    counts: HashMap<u64, (u64, u64)>,
}

impl KernelFilter {
    /// Whether the filter keeps a dispatch of kernel `kernel_id` that
    /// lasted `duration` ns.
    fn keeps(&mut self, kernel_id: u64, duration: u64) -> bool {
        let (names, pattern, cache) = (&self.names, &self.filter.pattern, &mut self.name_matches);
        let name_matches = || {
            *cache.entry(kernel_id).or_insert_with(|| {
                pattern
                    .as_ref()
                    .is_some_and(|p| p.matches(names.name(kernel_id)))
            })
        };
        self.filter.keep(name_matches, duration)
    }
}

impl TransformPlugin for KernelFilter {
    fn init(&mut self) -> Result<(), String> {
        let case_sensitive = config::get_bool("case-sensitive", true)?;
        let mode = match config::get("mode").as_deref().map(str::trim) {
            None | Some("all") => Mode::All,
            Some("any") => Mode::Any,
            Some(other) => {
                return Err(format!(
                    "config key `mode`: expected `all` or `any`, got `{other}`"
                ))
            }
        };
        self.filter = Filter {
            pattern: config::get("pattern").map(|p| Pattern::new(&p, case_sensitive)),
            min_duration_ns: config::get_parsed("min-duration-ns")?,
            mode,
            invert: config::get_bool("invert", false)?,
        };
        if self.filter.is_pass_through() {
            warn!("kernel-filter: neither `pattern` nor `min-duration-ns` is set; every dispatch passes");
        }
        // What the filter reads; the host still applies the edits to every
        // column and passes the other tables on whole.
        kernel_dispatches::select(&["kernel_id", "start", "end"])
            .context("delivery.select-columns")?;
        counter_samples::select(&["kernel_id", "start", "end"])
            .context("delivery.select-columns")?;
        delivery::receive_only(&[kernel_dispatches::NAME, counter_samples::NAME])
            .context("delivery.select-columns")?;
        Ok(())
    }

    fn transform_batch(&mut self, _info: &DeliveryInfo, batch: &Batch, edits: &mut Edits) {
        let dispatches = batch.kernel_dispatches();
        let samples = batch.counter_samples();
        if dispatches.is_empty() && samples.is_empty() {
            return;
        }
        if self.filter.pattern.is_some() {
            self.names.resolve(dispatches.kernel_id);
            self.names.resolve(samples.kernel_id);
        }
        let mask: Vec<bool> = dispatches
            .iter()
            .map(|d| {
                let keep = self.keeps(d.kernel_id, d.duration());
                let count = self.counts.entry(d.kernel_id).or_default();
                if keep {
                    count.0 += 1;
                } else {
                    count.1 += 1;
                }
                keep
            })
            .collect();
        if mask.iter().any(|keep| !keep) {
            edits.keep(kernel_dispatches::TABLE, &mask);
        }
        // A dispatch's counter samples go where it goes.
        let mask: Vec<bool> = samples
            .iter()
            .map(|c| self.keeps(c.kernel_id, c.duration()))
            .collect();
        if mask.iter().any(|keep| !keep) {
            edits.keep(counter_samples::TABLE, &mask);
        }
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let mut by_name: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        let ids: Vec<u64> = self.counts.keys().copied().collect();
        self.names.resolve(&ids);
        for (id, (kept, dropped)) in &self.counts {
            let entry = by_name.entry(self.names.name(*id).to_string()).or_default();
            entry.0 += kept;
            entry.1 += dropped;
        }
        let (kept, dropped) = by_name.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let mut table = SummaryTable::new(
            format!("Kernel filter ({kept} dispatches kept, {dropped} dropped)"),
            &["Kernel", "Kept", "Dropped"],
        );
        for (name, (k, d)) in by_name {
            table.push_row([name, k.to_string(), d.to_string()]);
        }
        vec![table]
    }
}

rocwasm_plugin_sdk::export_transform!(KernelFilter);
