//! Agents, code objects and kernel symbols, and kernel-name and
//! counter-name caches.
//!
//! Dispatch records carry a `kernel_id`; its name lives in the host's symbol
//! table. [`KernelNames`] asks for every id of a batch it has not seen yet in
//! one `symbols.kernel-names` call, then answers from memory:
//!
//! ```no_run
//! # use rocwasm_plugin_sdk::prelude::*;
//! # fn f(batch: &Batch, names: &mut KernelNames) {
//! names.resolve(batch.kernel_dispatches().kernel_id);
//! for d in batch.kernel_dispatches().iter() {
//!     let name: &str = names.name(d.kernel_id);
//! }
//! # }
//! ```

use std::collections::HashMap;

use crate::stats::FastHash;

pub use crate::bindings::rocwasm::plugin::symbols::*;

/// Kernel id → demangled name, filled from the host a batch at a time.
#[derive(Debug, Clone, Default)]
pub struct KernelNames {
    names: HashMap<u64, String, FastHash>,
}

impl KernelNames {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes sure every id in `ids` has a name, asking the host once for all
    /// the ids not cached yet.
    pub fn resolve(&mut self, ids: &[u64]) {
        self.resolve_with(ids, kernel_names);
    }

    /// [`KernelNames::resolve`] with another lookup (tests, or a plugin that
    /// wants mangled names). `lookup` gets distinct unknown ids and returns
    /// one name per id, empty for an id it does not know.
    ///
    /// Cost per id: one lookup in a map with a fast hash, skipped when the
    /// id repeats the previous one (dispatch ids come in runs). Analyses
    /// that only need names for a report can call this once, at the end,
    /// with the distinct ids they kept (see `stats::IdSums::ids`).
    pub fn resolve_with(&mut self, ids: &[u64], lookup: impl FnOnce(&[u64]) -> Vec<String>) {
        let mut previous = None;
        let missing = ids
            .iter()
            .copied()
            .filter(|&id| previous.replace(id) != Some(id) && !self.names.contains_key(&id))
            .collect();
        fill(&mut self.names, missing, lookup, unknown_kernel);
    }

    /// The name of a resolved id; for an id never resolved, a placeholder
    /// (`<unknown kernel 7>`), the same one an unknown id resolves to.
    pub fn name(&self, id: u64) -> &str {
        self.names
            .get(&id)
            .map(String::as_str)
            .unwrap_or("<unknown kernel>")
    }

    /// Resolves (if needed) and returns one name.
    pub fn get(&mut self, id: u64) -> &str {
        self.resolve(&[id]);
        self.name(id)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Counter id → name (the `counter-id` column of the counter samples,
/// WIT 0.3.2's `symbols.counter-names`), filled from the host a batch at a
/// time:
///
/// ```no_run
/// # use rocwasm_plugin_sdk::prelude::*;
/// # fn f(batch: &Batch, names: &mut CounterNames) {
/// names.resolve(batch.counter_samples().counter_id);
/// for s in batch.counter_samples().iter() {
///     let (counter, value): (&str, f64) = (names.name(s.counter_id), s.value());
/// }
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct CounterNames {
    names: HashMap<u32, String, FastHash>,
}

impl CounterNames {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes sure every id in `ids` has a name, asking the host once for
    /// the ids not cached yet.
    pub fn resolve(&mut self, ids: &[u32]) {
        self.resolve_with(ids, counter_names);
    }

    /// [`CounterNames::resolve`] with another lookup (tests): `lookup` gets
    /// distinct unknown ids and returns one name per id, empty for an id
    /// it does not know.
    pub fn resolve_with(&mut self, ids: &[u32], lookup: impl FnOnce(&[u32]) -> Vec<String>) {
        let missing = ids
            .iter()
            .copied()
            .filter(|id| !self.names.contains_key(id))
            .collect();
        fill(&mut self.names, missing, lookup, |id| {
            format!("<unknown counter {id}>")
        });
    }

    /// The name of a resolved id (`<unknown counter>` for one never
    /// resolved).
    pub fn name(&self, id: u32) -> &str {
        self.names
            .get(&id)
            .map(String::as_str)
            .unwrap_or("<unknown counter>")
    }
}

/// Asks `lookup` once for the distinct ids of `missing` (sorted) and keeps
/// its answers; an id it gives no name (empty, or a short answer) gets
/// `unknown(id)`.
fn fill<K: Copy + Ord + std::hash::Hash>(
    names: &mut HashMap<K, String, FastHash>,
    mut missing: Vec<K>,
    lookup: impl FnOnce(&[K]) -> Vec<String>,
    unknown: impl Fn(K) -> String,
) {
    if missing.is_empty() {
        return;
    }
    missing.sort_unstable();
    missing.dedup();
    let answers = lookup(&missing);
    for (i, id) in missing.into_iter().enumerate() {
        let name = answers
            .get(i)
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| unknown(id));
        names.insert(id, name);
    }
}

fn unknown_kernel(id: u64) -> String {
    format!("<unknown kernel {id}>")
}

/// A short label for an agent: `GPU 1 (gfx90a)`, `CPU 0`, or `agent 0x…`
/// when the host does not know the id.
pub fn agent_label(id: u64) -> String {
    match lookup_agent(id) {
        Some(agent) => label_of(&agent),
        None => format!("agent {id:#x}"),
    }
}

/// The label [`agent_label`] gives a known agent.
pub fn label_of(agent: &Agent) -> String {
    use crate::types::AgentType;
    match agent.agent_type {
        AgentType::Gpu if !agent.name.is_empty() => {
            format!("GPU {} ({})", agent.node_id, agent.name)
        }
        AgentType::Gpu => format!("GPU {}", agent.node_id),
        AgentType::Cpu => format!("CPU {}", agent.node_id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::AgentType;

    #[test]
    fn resolves_each_unknown_id_once_in_one_call() {
        let mut names = KernelNames::new();
        let mut calls = Vec::new();
        names.resolve_with(&[3, 1, 3, 2], |ids| {
            calls.push(ids.to_vec());
            ids.iter()
                .map(|id| {
                    if *id == 2 {
                        String::new()
                    } else {
                        format!("k{id}")
                    }
                })
                .collect()
        });
        names.resolve_with(&[1, 2, 3], |_| panic!("everything is cached"));
        assert_eq!(calls, vec![vec![1, 2, 3]]);
        assert_eq!(names.name(1), "k1");
        assert_eq!(names.name(2), "<unknown kernel 2>");
        assert_eq!(names.name(9), "<unknown kernel>");
    }

    #[test]
    fn counter_names_are_asked_once_per_id() {
        let mut names = CounterNames::new();
        let mut calls = Vec::new();
        names.resolve_with(&[4, 2, 4], |ids| {
            calls.push(ids.to_vec());
            vec!["SQ_WAVES".into(), String::new()]
        });
        names.resolve_with(&[2, 4], |_| panic!("cached"));
        assert_eq!(calls, vec![vec![2, 4]]);
        assert_eq!(names.name(2), "SQ_WAVES");
        assert_eq!(names.name(4), "<unknown counter 4>");
    }

    #[test]
    fn short_answers_count_as_unknown() {
        let mut names = KernelNames::new();
        names.resolve_with(&[5, 6], |_| vec!["only".into()]);
        assert_eq!(names.name(5), "only");
        assert_eq!(names.name(6), "<unknown kernel 6>");
    }

    #[test]
    fn agent_labels() {
        let gpu = Agent {
            id: 9,
            node_id: 2,
            agent_type: AgentType::Gpu,
            name: "gfx90a".into(),
            product_name: "MI210".into(),
        };
        assert_eq!(label_of(&gpu), "GPU 2 (gfx90a)");
        let cpu = Agent {
            id: 1,
            node_id: 0,
            agent_type: AgentType::Cpu,
            name: "EPYC".into(),
            product_name: String::new(),
        };
        assert_eq!(label_of(&cpu), "CPU 0");
    }
}
