//! Turning a record's ids into what a trace file prints: kernel names and
//! register counts, agents' logical node indices, operation names.
//!
//! Every trace format that writes names (CSV, Parquet) resolves them here,
//! so a kernel, an agent or an API function reads the same in every file of
//! a run. Lookups are cached per sink: a record costs a slice index or a
//! hash lookup (FxHash: the keys are our own ids), never a string
//! allocation.
//!
//! - Kernels: the demangled name when the symbol has one, else its mangled
//!   name; `kernel_<id>` for an id the symbol table does not know (yet).
//! - Agents: the logical node index (the number rocprofv3 prints in
//!   `Agent_Id`), or the raw id when the agent is unknown.
//! - Operations: [`OperationNames::name`](crate::OperationNames::name), so
//!   an unnamed number prints as `<KIND>_OP_<n>`.

use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use rocwasm_core::SymbolTable;

use crate::sink::SinkContext;

/// Operation numbers are table slots (hundreds); from this one up a name
/// is not cached, rather than sizing a table after the number.
pub(crate) const UNCACHED_OP: u32 = 1 << 14;

/// Values kept by kind and operation number: a short list of kinds, each
/// with a table indexed by the operation (a lookup per row, no hashing).
/// Operations from [`UNCACHED_OP`] up are the caller's to keep out.
pub(crate) struct ByOperation<T> {
    by_kind: Vec<(u32, Vec<Option<T>>)>,
}

impl<T> Default for ByOperation<T> {
    fn default() -> Self {
        ByOperation {
            by_kind: Vec::new(),
        }
    }
}

impl<T> ByOperation<T> {
    /// The value of `op` of `kind`, made by `make` the first time.
    pub(crate) fn get_or_insert_with(
        &mut self,
        kind: u32,
        op: u32,
        make: impl FnOnce() -> T,
    ) -> &T {
        debug_assert!(op < UNCACHED_OP, "operation {op} is not a table slot");
        let at = match self.by_kind.iter().position(|(k, _)| *k == kind) {
            Some(at) => at,
            None => {
                self.by_kind.push((kind, Vec::new()));
                self.by_kind.len() - 1
            }
        };
        let values = &mut self.by_kind[at].1;
        let i = op as usize;
        if values.len() <= i {
            values.resize_with(i + 1, || None);
        }
        values[i].get_or_insert_with(make)
    }

    /// Forgets every value.
    pub(crate) fn clear(&mut self) {
        self.by_kind.clear();
    }
}

/// Kernel facts a kernel trace repeats on every row.
#[derive(Clone)]
pub(crate) struct KernelFacts {
    /// The demangled name (or the mangled one, or `kernel_<id>`).
    pub(crate) name: Arc<str>,
    /// Architectural vector registers.
    pub(crate) vgpr: u32,
    /// Accumulation vector registers.
    pub(crate) accum_vgpr: u32,
    /// Scalar registers.
    pub(crate) sgpr: u32,
}

/// One sink's caches of resolved names. See the module docs.
#[derive(Default)]
pub(crate) struct Resolver {
    kernels: HashMap<u64, KernelFacts>,
    agents: HashMap<u64, u64>,
    /// Operation names (a lookup per row).
    ops: ByOperation<Arc<str>>,
    /// The last name of an operation number too large to cache.
    last_uncached: Option<(u32, u32, Arc<str>)>,
    /// The last kernel looked up that the symbol table did not know.
    unknown_kernel: Option<KernelFacts>,
}

impl Resolver {
    /// The name of operation `op` of `kind`.
    pub(crate) fn op_name(&mut self, ctx: &SinkContext<'_>, kind: u32, op: u32) -> Arc<str> {
        if op >= UNCACHED_OP {
            return ctx.op_name(kind, op);
        }
        self.ops
            .get_or_insert_with(kind, op, || ctx.op_name(kind, op))
            .clone()
    }

    /// [`Self::op_name`], borrowed from the cache (a row need not touch
    /// a reference count).
    pub(crate) fn op_name_ref(&mut self, ctx: &SinkContext<'_>, kind: u32, op: u32) -> &str {
        if op >= UNCACHED_OP {
            let name = ctx.op_name(kind, op);
            return &self.last_uncached.insert((kind, op, name)).2;
        }
        self.ops
            .get_or_insert_with(kind, op, || ctx.op_name(kind, op))
    }

    /// The kernel `id`'s name and register counts.
    pub(crate) fn kernel(&mut self, symbols: &SymbolTable, id: u64) -> KernelFacts {
        self.kernel_ref(symbols, id).clone()
    }

    /// [`Self::kernel`], borrowed from the cache.
    pub(crate) fn kernel_ref(&mut self, symbols: &SymbolTable, id: u64) -> &KernelFacts {
        // Cache hits only: a symbol registered later must still be found,
        // so an unknown id's facts are kept only until the next lookup.
        if !self.kernels.contains_key(&id) {
            let Some(s) = symbols.kernel(id) else {
                return self.unknown_kernel.insert(KernelFacts {
                    name: Arc::from(rocwasm_core::unknown_kernel_name(id)),
                    vgpr: 0,
                    accum_vgpr: 0,
                    sgpr: 0,
                });
            };
            let facts = KernelFacts {
                name: Arc::from(s.display_name()),
                vgpr: s.arch_vgpr_count,
                accum_vgpr: s.accum_vgpr_count,
                sgpr: s.sgpr_count,
            };
            self.kernels.insert(id, facts);
        }
        &self.kernels[&id]
    }

    /// The number rocprofv3 prints for agent `id`: its logical node index.
    pub(crate) fn agent(&mut self, symbols: &SymbolTable, id: u64) -> u64 {
        if let Some(&n) = self.agents.get(&id) {
            return n;
        }
        match symbols.agent(id) {
            Some(a) => {
                self.agents.insert(id, u64::from(a.node_id));
                u64::from(a.node_id)
            }
            None => id,
        }
    }
}
