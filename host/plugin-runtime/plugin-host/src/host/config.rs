//! The `config` interface: the stage's `config` table from the chain file,
//! flattened to string keys and values (see `StageSpec::config`).

use std::collections::BTreeMap;

use crate::bindings::analysis::rocwasm::plugin::config;

/// The `config` imports of one plugin: a read-only copy of its stage's
/// configuration, in key order.
#[derive(Debug, Default)]
pub(crate) struct ConfigHost {
    entries: BTreeMap<String, String>,
}

impl ConfigHost {
    /// Answers from `entries` (a stage's flattened `config` table).
    pub fn new(entries: BTreeMap<String, String>) -> Self {
        ConfigHost { entries }
    }
}

impl config::Host for ConfigHost {
    fn get(&mut self, key: String) -> Option<String> {
        self.entries.get(&key).cloned()
    }
    fn entries(&mut self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}
