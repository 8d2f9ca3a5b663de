//! Records an output format has no place for.
//!
//! rocprofv3's CSV (and our Parquet tables, which follow its files) has one
//! file per API family it writes, its JSON one category per family; OpenMP
//! (OMPT) calls have neither; CSV, Parquet, rocpd and Perfetto have no
//! place for retired correlation ids and runtime initialisations (JSON
//! has). A sink counts the records it
//! leaves out, per kind, and says so once at the end
//! ([`crate::sink::Sink::notes`]) rather than dropping them without a word.

use std::collections::BTreeMap;

use rocwasm_core::{RetirementColumns, RuntimeInitializationColumns};

use crate::names::kind_name;

/// Per kind, the API calls left out of a format's files.
#[derive(Debug, Default)]
pub(crate) struct Unfiled(BTreeMap<u32, u64>);

impl Unfiled {
    /// Counts one call of `kind` left out.
    pub(crate) fn count(&mut self, kind: u32) {
        *self.0.entry(kind).or_default() += 1;
    }

    /// Counts the records of the tables a format that follows rocprofv3's
    /// has no place for: retired correlation ids and runtime
    /// initialisations (CSV, Parquet, rocpd, Perfetto). Each sink names
    /// every table of a batch where it decides (`let Batch { .. } = batch`),
    /// so a table the schema gains is a compile error there until the
    /// format writes it or counts it here.
    pub(crate) fn count_unplaced(
        &mut self,
        retirements: &RetirementColumns,
        runtime_initializations: &RuntimeInitializationColumns,
    ) {
        use rocwasm_core::BufferTracingKind as K;
        for (kind, n) in [
            (K::CorrelationIdRetirement, retirements.len()),
            (K::RuntimeInitialization, runtime_initializations.len()),
        ] {
            if n > 0 {
                *self.0.entry(kind.raw()).or_default() += n as u64;
            }
        }
    }

    /// One sentence per kind left out, for the run's notes (`format`: the
    /// output's name, `CSV`); empties the counts.
    pub(crate) fn take_notes(&mut self, format: &str) -> Vec<String> {
        std::mem::take(&mut self.0)
            .into_iter()
            .map(|(kind, n)| {
                format!(
                    "{n} {} record(s) are not in the {format} output: it has no place for them, \
                     as rocprofv3's has none",
                    kind_name(kind)
                )
            })
            .collect()
    }
}
