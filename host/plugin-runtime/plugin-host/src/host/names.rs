//! The `names` interface: kinds and operations by number and by name.
//!
//! Kind names are this build's (`rocwasm_core::kind`). Operation names come
//! from the core registry, and first from the run's [`OperationNameTable`]
//! when the host has one: a replayed trace may name operations this build
//! does not know, which the replay registered under synthetic numbers; the
//! records carry those numbers, so plugins must be able to name them.
//! Callback kinds share their operations with the buffer kind of the same
//! domain, so the table (keyed by buffer kind) answers for both. A
//! `MARKER_CORE_RANGE_API` operation is a marker's message, which the run's
//! symbol table interned (`SymbolTable::intern_marker`).

use std::sync::Arc;

use rocwasm_core::{ops, BufferTracingKind, CallbackTracingKind, Domain, Profiler};

use crate::bindings::analysis::rocwasm::plugin::names;
use crate::env::OperationNameTable;

/// The `names` imports of one plugin: the run's extra operation names, if
/// it has any (`HostEnv::operation_names`).
#[derive(Default)]
pub(crate) struct NamesHost {
    table: Option<Arc<dyn OperationNameTable>>,
    /// The run's engine, whose symbol table names markers' messages.
    markers: Option<Arc<Profiler>>,
}

impl NamesHost {
    /// Answers from the registry, and first from `table` when there is one.
    pub fn new(table: Option<Arc<dyn OperationNameTable>>) -> Self {
        NamesHost {
            table,
            markers: None,
        }
    }

    /// Names `MARKER_CORE_RANGE_API` operations by the messages `profiler`
    /// interned.
    pub fn with_markers(mut self, profiler: Arc<Profiler>) -> Self {
        self.markers = Some(profiler);
        self
    }

    /// The messages of markers, when `kind` is `MARKER_CORE_RANGE_API`.
    fn markers(&self, kind: BufferTracingKind) -> Option<&Profiler> {
        self.markers
            .as_deref()
            .filter(|_| kind == BufferTracingKind::MarkerCoreRangeApi)
    }

    fn table(&self) -> Option<&dyn OperationNameTable> {
        self.table.as_deref()
    }

    /// Registry operations of `kind` plus the table's, sorted, deduplicated.
    fn buffer_operations(&self, kind: BufferTracingKind) -> Vec<u32> {
        let mut ops: Vec<u32> = ops::operations(kind).map(|(n, _)| n).collect();
        if let Some(t) = self.table() {
            ops.extend(t.operations(kind.raw()));
        }
        if let Some(p) = self.markers(kind) {
            ops.extend(p.symbols().markers().into_iter().map(|(op, _)| op));
        }
        ops.sort_unstable();
        ops.dedup();
        ops
    }

    fn buffer_op_name(&self, kind: BufferTracingKind, op: u32) -> Option<String> {
        self.table()
            .and_then(|t| t.operation_name(kind.raw(), op))
            .or_else(|| Some(self.markers(kind)?.symbols().marker(op)?.to_string()))
            .or_else(|| ops::operation_name(kind, op).map(str::to_string))
    }
}

/// The buffer kind whose operations `kind` shares (same domain).
fn buffer_twin(kind: CallbackTracingKind) -> Option<BufferTracingKind> {
    Domain::from_callback_kind(kind).and_then(|d| d.buffer_kind())
}

impl names::Host for NamesHost {
    fn buffer_kinds(&mut self) -> Vec<u32> {
        BufferTracingKind::ALL.iter().map(|k| k.raw()).collect()
    }
    fn buffer_kind_name(&mut self, kind: u32) -> Option<String> {
        BufferTracingKind::from_raw(kind).map(|k| k.name().to_string())
    }
    fn buffer_kind_operations(&mut self, kind: u32) -> Vec<u32> {
        BufferTracingKind::from_raw(kind)
            .map(|k| self.buffer_operations(k))
            .unwrap_or_default()
    }
    fn buffer_operation_name(&mut self, kind: u32, op: u32) -> Option<String> {
        let k = BufferTracingKind::from_raw(kind)?;
        self.buffer_op_name(k, op)
    }
    fn callback_kinds(&mut self) -> Vec<u32> {
        CallbackTracingKind::ALL.iter().map(|k| k.raw()).collect()
    }
    fn callback_kind_name(&mut self, kind: u32) -> Option<String> {
        CallbackTracingKind::from_raw(kind).map(|k| k.name().to_string())
    }
    fn callback_kind_operations(&mut self, kind: u32) -> Vec<u32> {
        let Some(k) = CallbackTracingKind::from_raw(kind) else {
            return Vec::new();
        };
        match (buffer_twin(k), self.table()) {
            (Some(b), Some(_)) => self.buffer_operations(b),
            _ => ops::operations(k).map(|(n, _)| n).collect(),
        }
    }
    fn callback_operation_name(&mut self, kind: u32, op: u32) -> Option<String> {
        let k = CallbackTracingKind::from_raw(kind)?;
        let from_table =
            buffer_twin(k).and_then(|b| self.table().and_then(|t| t.operation_name(b.raw(), op)));
        from_table.or_else(|| ops::operation_name(k, op).map(str::to_string))
    }
}
