//! Names of kinds and operations, asked of the host and cached.
//!
//! Operation numbers (which HIP function, which roctx call) are only
//! meaningful together with the host's name tables, so a plugin asks for
//! names through the `names` interface. [`OperationNames`] remembers every
//! answer, so a stats plugin that names thousands of calls asks the host once
//! per distinct `(kind, operation)`.
//!
//! ```no_run
//! use rocwasm_plugin_sdk::{kind, names::OperationNames};
//! let mut names = OperationNames::new();
//! let name = names.buffer_operation(kind::buffer::HIP_RUNTIME_API, 42).to_string();
//! ```

use std::collections::HashMap;

pub use crate::bindings::rocwasm::plugin::names::*;

/// A memo of name lookups keyed by `K`; misses are answered by a lookup
/// function and stored, including "unknown" (as a placeholder name).
#[derive(Debug, Clone)]
pub struct NameCache<K> {
    names: HashMap<K, String>,
}

impl<K> Default for NameCache<K> {
    fn default() -> Self {
        Self {
            names: HashMap::new(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Copy> NameCache<K> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached name of `key`, asking `lookup` on a miss and falling back to
    /// `unknown(key)` when it has no answer.
    pub fn get_or_lookup(
        &mut self,
        key: K,
        lookup: impl FnOnce(K) -> Option<String>,
        unknown: impl FnOnce(K) -> String,
    ) -> &str {
        self.names
            .entry(key)
            .or_insert_with(|| lookup(key).unwrap_or_else(|| unknown(key)))
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Cached kind and operation names from the host.
#[derive(Debug, Clone, Default)]
pub struct OperationNames {
    buffer_ops: NameCache<(u32, u32)>,
    callback_ops: NameCache<(u32, u32)>,
}

impl OperationNames {
    pub fn new() -> Self {
        Self::default()
    }

    /// The name of operation `op` of buffer kind `kind` (e.g. `hipMemcpy`);
    /// `"<KIND>#<op>"` when the host does not know it.
    pub fn buffer_operation(&mut self, kind: u32, op: u32) -> &str {
        self.buffer_ops.get_or_lookup(
            (kind, op),
            |(k, o)| buffer_operation_name(k, o),
            |(k, o)| {
                format!(
                    "{}#{o}",
                    crate::kind::buffer_kind_name(k).unwrap_or("UNKNOWN")
                )
            },
        )
    }

    /// Like [`OperationNames::buffer_operation`], for callback-tracing kinds.
    pub fn callback_operation(&mut self, kind: u32, op: u32) -> &str {
        self.callback_ops.get_or_lookup(
            (kind, op),
            |(k, o)| callback_operation_name(k, o),
            |(k, o)| {
                format!(
                    "{}#{o}",
                    crate::kind::callback_kind_name(k).unwrap_or("UNKNOWN")
                )
            },
        )
    }
}

/// The number of the callback-tracing operation called `name` in `kind`
/// (e.g. `roctxRangePushA` in `MARKER_CORE_API`), asked of the host.
pub fn find_callback_operation(kind: u32, name: &str) -> Option<u32> {
    callback_kind_operations(kind)
        .into_iter()
        .find(|&op| callback_operation_name(kind, op).is_some_and(|n| n == name))
}

/// The number of the buffer-tracing operation called `name` in `kind`.
pub fn find_buffer_operation(kind: u32, name: &str) -> Option<u32> {
    buffer_kind_operations(kind)
        .into_iter()
        .find(|&op| buffer_operation_name(kind, op).is_some_and(|n| n == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_asks_once_per_key_and_remembers_unknowns() {
        let mut cache = NameCache::new();
        let mut asked = 0;
        for _ in 0..3 {
            let name = cache.get_or_lookup(
                (5u32, 1u32),
                |_| {
                    asked += 1;
                    Some("hipMalloc".to_string())
                },
                |_| unreachable!(),
            );
            assert_eq!(name, "hipMalloc");
        }
        assert_eq!(asked, 1);
        assert_eq!(
            cache.get_or_lookup((5, 999), |_| None, |(k, o)| format!("{k}#{o}")),
            "5#999"
        );
        assert_eq!(
            cache.get_or_lookup((5, 999), |_| Some("late".into()), |_| String::new()),
            "5#999"
        );
        assert_eq!(cache.len(), 2);
    }
}
