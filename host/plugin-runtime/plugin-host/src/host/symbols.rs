//! The `symbols` interface: agents, code objects, kernel symbols and (from
//! 0.3.2) counter names by id,
//! from the engine's symbol table (`rocwasm_core::Profiler::symbols`), so a
//! plugin can turn the ids in its records into names.

use std::sync::Arc;

use rocwasm_core::Profiler;

use crate::bindings::analysis::rocwasm::plugin::symbols;
use crate::bindings::types as wit;
use crate::convert;

/// The `symbols` imports of one plugin: a handle on the run's engine, whose
/// symbol table every plugin reads.
pub(crate) struct SymbolsHost {
    profiler: Arc<Profiler>,
}

impl SymbolsHost {
    /// Answers from `profiler`'s symbol table.
    pub fn new(profiler: Arc<Profiler>) -> Self {
        SymbolsHost { profiler }
    }

    /// `counter-names` (0.3.2, linked by hand: the typed bindings are
    /// 0.2.0's): each counter id's name, empty for an unknown id.
    pub fn counter_names(&self, ids: &[u32]) -> Vec<String> {
        let symbols = self.profiler.symbols();
        ids.iter()
            .map(|&id| {
                symbols
                    .counter_name(id)
                    .map_or_else(String::new, |n| n.to_string())
            })
            .collect()
    }
}

impl symbols::Host for SymbolsHost {
    fn agents(&mut self) -> Vec<wit::Agent> {
        self.profiler
            .symbols()
            .agents()
            .into_iter()
            .map(convert::agent_to_wit)
            .collect()
    }
    fn lookup_agent(&mut self, id: u64) -> Option<wit::Agent> {
        self.profiler.symbols().agent(id).map(convert::agent_to_wit)
    }
    fn lookup_code_object(&mut self, id: u64) -> Option<wit::CodeObject> {
        self.profiler
            .symbols()
            .code_object(id)
            .map(convert::code_object_to_wit)
    }
    fn lookup_kernel_symbol(&mut self, id: u64) -> Option<wit::KernelSymbol> {
        self.profiler
            .symbols()
            .kernel(id)
            .map(convert::kernel_symbol_to_wit)
    }
    fn kernel_names(&mut self, ids: Vec<u64>) -> Vec<String> {
        ids.iter()
            .map(|id| {
                self.profiler
                    .symbols()
                    .kernel(*id)
                    .map(|k| k.demangled_name)
                    .unwrap_or_default()
            })
            .collect()
    }
}
