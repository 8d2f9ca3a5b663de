//! What the format readers (`csv_reader`, `json_reader`, `rocpd_reader`)
//! have in common: the [`BatchReader`] trait the source drives them through,
//! the [`State`] they fill as they go, and the mapping of recorded operation
//! names onto this build's numbers.

use std::sync::Arc;

use crate::names::SYNTHETIC_BASE;
use crate::{OperationNames, RunMetadata};
use rocwasm_core::{ApiFamily, Batch, BufferTracingKind, SymbolTable};
use rocwasm_ids::recorded::recorded_operation;

use crate::replay::error::Result;
use crate::replay::progress;
use crate::replay::report::ReadReport;

/// What a format reader produces, one batch at a time.
pub(crate) trait BatchReader: Send {
    fn next_batch(&mut self, state: &mut State) -> Result<Option<Batch>>;
}

/// What readers share with the source: the tables they fill as they go.
pub(crate) struct State {
    pub meta: RunMetadata,
    pub symbols: Arc<SymbolTable>,
    pub names: Arc<OperationNames>,
    pub progress: progress::Progress,
    pub chunk_rows: usize,
    /// What was read, mapped and not mapped, per file.
    pub report: ReadReport,
}

/// The operation number of the recorded name `name` of `kind`, and whether
/// this build knows that operation (`false`: a synthetic number was given
/// to the name, see [`OperationNames`]). Recorded spellings of known
/// operations (`hipGetDevicePropertiesR0600`) get the known number.
pub(crate) fn operation(
    names: &OperationNames,
    kind: BufferTracingKind,
    name: &str,
) -> (u32, bool) {
    if let Some(op) = names.lookup(kind.raw(), name) {
        return (op, op < SYNTHETIC_BASE);
    }
    if let Some(op) = recorded_operation(kind, name) {
        return (op, true);
    }
    (names.resolve_or_register(kind.raw(), name), false)
}

/// True when an unknown operation name of `kind` is worth reporting: marker
/// kinds carry free text (the roctx message) where other kinds carry a
/// function name.
pub(crate) fn names_are_functions(kind: BufferTracingKind) -> bool {
    ApiFamily::of(kind) != Some(ApiFamily::Marker)
}
