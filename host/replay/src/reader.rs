//! What the format readers (`csv_reader`, `json_reader`, `rocpd_reader`)
//! have in common: the [`BatchReader`] trait the source drives them through,
//! and the [`State`] they fill as they go.

use std::sync::Arc;

use rocwasm_core::{Batch, SymbolTable};
use rocwasm_output::{OperationNames, RunMetadata};

use crate::error::Result;
use crate::progress;

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
}
