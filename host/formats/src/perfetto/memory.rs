//! Memory allocations and scratch memory as counter tracks, the way
//! rocprofv3's Perfetto output shows them: per agent, the bytes allocated
//! over time (`ALLOCATE BYTES on Agent [n] (GPU)`: each allocation adds its
//! size when it starts, each free takes the size of the allocation at its
//! address away) and the scratch memory held (`SCRATCH MEMORY on Agent [n]
//! (GPU)`: an allocation's size from its start, 0 from a free or a
//! reclaim).
//!
//! Records arrive in delivery order, not in time, so the steps are kept
//! (a few numbers a record) and each track's values are computed in time
//! order when the trace is finished. A free of an address no traced
//! allocation returned (allocated before tracing began, or a null pointer
//! the runtime frees) moves no track; those are counted and said.

use std::collections::{BTreeMap, HashMap};

use rocwasm_core::ops::{allocation, scratch};
use rocwasm_core::{MemoryAllocationColumns, ScratchMemoryColumns};

/// Which of an agent's two counter tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Counter {
    /// Bytes allocated (memory allocation records).
    Allocated,
    /// Scratch memory held (scratch memory records).
    Scratch,
}

impl Counter {
    /// The track's title before the agent's name, as rocprofv3's.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Counter::Allocated => "ALLOCATE BYTES",
            Counter::Scratch => "SCRATCH MEMORY",
        }
    }
}

/// What a record does to its track at its start.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// An allocation of `size` bytes at `address` on the record's agent.
    Allocate { address: u64, size: u64 },
    /// A free of `address` (the agent and size are its allocation's).
    Free { address: u64 },
    /// Sets the value (scratch memory).
    Set(u64),
}

/// The steps of every track, gathered as batches come.
#[derive(Debug, Default)]
pub(crate) struct MemoryCounters {
    /// (timestamp, arrival order, agent, counter, step). The arrival order
    /// keeps steps at the same time in the order they came.
    steps: Vec<(u64, u64, u64, Counter, Step)>,
    /// Frees whose allocation was not traced, and their first address
    /// (known once [`Self::tracks`] ran).
    unpaired_frees: (u64, Option<u64>),
    /// Records of an operation this build does not know.
    unknown: u64,
    /// Allocations at an address still allocated (its free was not
    /// traced): the earlier allocation is taken as freed then.
    reallocated: u64,
}

impl MemoryCounters {
    /// Takes a batch's memory allocation and scratch memory records.
    pub(crate) fn add(&mut self, m: &MemoryAllocationColumns, s: &ScratchMemoryColumns) {
        for i in 0..m.len() {
            let step = match m.operation[i] {
                allocation::ALLOCATE | allocation::VMEM_ALLOCATE => Step::Allocate {
                    address: m.address[i],
                    size: m.allocation_size[i],
                },
                allocation::FREE | allocation::VMEM_FREE => Step::Free {
                    address: m.address[i],
                },
                _ => {
                    self.unknown += 1;
                    continue;
                }
            };
            self.push(m.start[i], m.agent_id[i], Counter::Allocated, step);
        }
        for i in 0..s.len() {
            let step = match s.operation[i] {
                scratch::ALLOC => Step::Set(s.allocation_size[i]),
                scratch::FREE | scratch::ASYNC_RECLAIM => Step::Set(0),
                _ => {
                    self.unknown += 1;
                    continue;
                }
            };
            self.push(s.start[i], s.agent_id[i], Counter::Scratch, step);
        }
    }

    fn push(&mut self, at: u64, agent: u64, counter: Counter, step: Step) {
        let order = self.steps.len() as u64;
        self.steps.push((at, order, agent, counter, step));
    }

    /// Each track's values in time order, by (agent, track): one value per
    /// record that moved it, the track's value after it. A track starts at
    /// 0; a free is paired with the allocation of its address before it.
    pub(crate) fn tracks(&mut self) -> BTreeMap<(u64, Counter), Vec<(u64, u64)>> {
        let mut steps = std::mem::take(&mut self.steps);
        steps.sort_unstable_by_key(|&(at, order, ..)| (at, order));
        let mut live: HashMap<u64, (u64, u64)> = HashMap::new();
        let mut value: HashMap<(u64, Counter), u64> = HashMap::new();
        let mut out: BTreeMap<(u64, Counter), Vec<(u64, u64)>> = BTreeMap::new();
        for (at, _, agent, counter, step) in steps {
            let (key, new) = match step {
                Step::Allocate { address, size } => {
                    if let Some((old_agent, old_size)) = live.insert(address, (agent, size)) {
                        self.reallocated += 1;
                        let v = value.entry((old_agent, counter)).or_default();
                        *v = v.saturating_sub(old_size);
                        if old_agent != agent {
                            out.entry((old_agent, counter)).or_default().push((at, *v));
                        }
                    }
                    let v = value.entry((agent, counter)).or_default();
                    *v = v.saturating_add(size);
                    ((agent, counter), *v)
                }
                Step::Free { address } => match live.remove(&address) {
                    Some((agent, size)) => {
                        let v = value.entry((agent, counter)).or_default();
                        *v = v.saturating_sub(size);
                        ((agent, counter), *v)
                    }
                    None => {
                        self.unpaired_frees.0 += 1;
                        self.unpaired_frees.1.get_or_insert(address);
                        continue;
                    }
                },
                Step::Set(v) => {
                    value.insert((agent, counter), v);
                    ((agent, counter), v)
                }
            };
            out.entry(key).or_default().push((at, new));
        }
        out
    }

    /// What moved no track, one sentence each (after [`Self::tracks`]).
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let (n @ 1.., first) = self.unpaired_frees {
            notes.push(format!(
                "{n} memory free(s) of an address no traced allocation returned (first {:#x}: \
                 allocated before tracing began, or a null pointer the runtime frees) are not on \
                 the Perfetto trace's ALLOCATE BYTES tracks",
                first.unwrap_or(0)
            ));
        }
        if self.reallocated > 0 {
            notes.push(format!(
                "{} memory allocation(s) returned an address that was still allocated (its free \
                 was not traced): the Perfetto trace's ALLOCATE BYTES tracks take the earlier \
                 allocation as freed then",
                self.reallocated
            ));
        }
        if self.unknown > 0 {
            notes.push(format!(
                "{} memory allocation or scratch memory record(s) of an operation this build does \
                 not know are not on the Perfetto trace's memory tracks",
                self.unknown
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::Batch;
    use rocwasm_core::{MemoryAllocation, ScratchMemory};

    fn alloc(op: u32, agent: u64, start: u64, address: u64, size: u64) -> MemoryAllocation {
        MemoryAllocation {
            operation: op,
            agent_id: agent,
            start,
            end: start + 5,
            address,
            allocation_size: size,
            ..Default::default()
        }
    }

    #[test]
    fn allocations_add_up_in_time_order_and_frees_take_their_size_away() {
        let mut m = MemoryCounters::default();
        let mut late = Batch::default();
        // Delivered first, happened last: the free of 0x10.
        late.memory_allocations
            .push(alloc(allocation::FREE, 0, 300, 0x10, 0));
        let mut early = Batch::default();
        early
            .memory_allocations
            .push(alloc(allocation::ALLOCATE, 7, 100, 0x10, 64));
        early
            .memory_allocations
            .push(alloc(allocation::VMEM_ALLOCATE, 7, 200, 0x20, 1000));
        early
            .memory_allocations
            .push(alloc(allocation::FREE, 0, 250, 0x99, 0));
        m.add(&late.memory_allocations, &late.scratch_memory);
        m.add(&early.memory_allocations, &early.scratch_memory);
        let tracks = m.tracks();
        assert_eq!(
            tracks[&(7, Counter::Allocated)],
            [(100, 64), (200, 1064), (300, 1000)]
        );
        let notes = m.notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("1 memory free(s)") && notes[0].contains("0x99"));
    }

    #[test]
    fn an_address_allocated_again_without_a_traced_free_replaces_its_allocation() {
        let mut m = MemoryCounters::default();
        let mut b = Batch::default();
        b.memory_allocations
            .push(alloc(allocation::ALLOCATE, 7, 100, 0x10, 64));
        b.memory_allocations
            .push(alloc(allocation::ALLOCATE, 7, 200, 0x10, 32));
        b.memory_allocations
            .push(alloc(allocation::FREE, 0, 300, 0x10, 0));
        m.add(&b.memory_allocations, &b.scratch_memory);
        assert_eq!(
            m.tracks()[&(7, Counter::Allocated)],
            [(100, 64), (200, 32), (300, 0)]
        );
        let notes = m.notes();
        assert!(
            notes[0].starts_with("1 memory allocation(s) returned an address"),
            "{notes:?}"
        );
    }

    #[test]
    fn scratch_memory_holds_the_last_allocation_until_a_free_or_reclaim() {
        let mut m = MemoryCounters::default();
        let mut b = Batch::default();
        for (op, at, size) in [
            (scratch::ALLOC, 10, 4096),
            (scratch::ASYNC_RECLAIM, 20, 0),
            (scratch::ALLOC, 30, 8192),
            (scratch::FREE, 40, 8192),
        ] {
            b.scratch_memory.push(ScratchMemory {
                operation: op,
                agent_id: 3,
                start: at,
                end: at + 1,
                allocation_size: size,
                ..Default::default()
            });
        }
        m.add(&b.memory_allocations, &b.scratch_memory);
        assert_eq!(
            m.tracks()[&(3, Counter::Scratch)],
            [(10, 4096), (20, 0), (30, 8192), (40, 0)]
        );
        assert!(m.notes().is_empty());
    }
}
