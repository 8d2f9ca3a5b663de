//! Many processes' recordings through one pipeline: the ranks of an MPI
//! job, analysed at once.
//!
//! ```text
//! reader threads (one recording at a time each)
//!   └─ (process, batch) ─bounded channel─> ids made unique ─> Pipeline::deliver
//!                                                         └─> per-process statistics
//! ```
//!
//! Recordings are read in parallel, a few at a time (one thread per core,
//! each taking the next recording when it finishes one), and their batches
//! are delivered in arrival order on the calling thread: one chain
//! instance sees every process, so a plugin's totals cover the job.
//!
//! Ids: each recording numbers its agents, code objects and kernels from 1,
//! and the engine has one symbol table. So every recording's ids are
//! mapped to fresh ids, unique across the replay, in its symbols and in its
//! records (`agent_id`, `kernel_id`, the copies' agents) before delivery;
//! names are unchanged, so statistics by name add up across processes.
//! Operation names are shared: all readers map with one table, so an
//! operation this build does not know has one number in every recording.
//! Correlation ids stay as recorded: they are unique within a process only.
//!
//! Each process is added to the pipeline's process table, so plugins see
//! which one a batch came from (`delivery-info.process`: host, pid, rank).
//!
//! With `by_process`, each process's records (after the chain's transforms
//! and rocprofv3's filters, as the sinks see them) also feed their own
//! statistics, for `--summary-by-rank`.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;

use anyhow::Result;
use rocwasm_core::schema::{ColumnMut, Role, TABLES};
use rocwasm_core::{Batch, SymbolTable};
use rocwasm_formats::replay::{ReadReport, ReplayError, ReplaySource};
use rocwasm_formats::{OperationNames, RunMetadata, StatsAccumulator, StatsReport};
use rocwasm_plan::{ProcessInfo, RunPlan};

use crate::pipeline::{Pipeline, Recording, RunReport};
use crate::replay::TraceNames;

/// One process's recording, opened (with the shared operation names, see
/// [`ManyReplay::names`]).
pub struct ProcessRecording {
    /// How reports name the process when its recording names no rank.
    pub label: String,
    /// The opened recording.
    pub source: ReplaySource,
}

/// What one process contributed.
pub struct ProcessSummary {
    /// Its rank (`3`) when the recording names one, else its label.
    pub name: String,
    /// The recorded process (pid, host, rank as far as the format tells).
    pub meta: RunMetadata,
    /// Records read.
    pub records: u64,
    /// What its reader read, mapped and could not map.
    pub read: ReadReport,
    /// Its own statistics, with `by_process`.
    pub stats: Option<StatsReport>,
}

/// A finished replay of many processes.
pub struct ManyReport {
    /// The run's report (chain, outputs), as for one recording.
    pub run: RunReport,
    /// Per process, in input order.
    pub processes: Vec<ProcessSummary>,
    /// Batches delivered.
    pub batches: u64,
    /// The output directory: the plan's template, expanded.
    pub dir: std::path::PathBuf,
}

/// Many recordings through one pipeline.
pub struct ManyReplay;

impl ManyReplay {
    /// The operation-name table every recording of one replay must be
    /// opened with (`ReplayOptions::names`).
    pub fn names() -> Arc<OperationNames> {
        Arc::new(OperationNames::new())
    }

    /// Replays `recordings` (opened with `names`) through the pipeline of
    /// `plan`; `progress` is called on the calling thread after each batch
    /// with the records delivered so far. The first error (a recording that
    /// cannot be read, an `abort` policy) stops every reader and is returned.
    pub fn run(
        plan: RunPlan,
        process: &ProcessInfo,
        names: Arc<OperationNames>,
        recordings: Vec<ProcessRecording>,
        by_process: bool,
        mut progress: impl FnMut(u64),
    ) -> Result<ManyReport> {
        let meta = recordings
            .first()
            .map(|r| r.source.meta().clone())
            .unwrap_or_default();
        let recording = Recording {
            meta,
            names: names.clone(),
            plugin_names: Arc::new(TraceNames(names.clone())),
            symbols: Arc::new(SymbolTable::new()),
        };
        let pipeline = Pipeline::start(plan, process, recording, Vec::new())?;
        let engine_symbols = pipeline.profiler().symbols();

        let mut procs: Vec<Proc> = recordings
            .iter()
            .map(|r| Proc {
                label: r.label.clone(),
                symbols: r.source.symbols().clone(),
                ids: IdMap::default(),
                index: pipeline.add_process(r.source.meta()),
                stats: by_process.then(StatsAccumulator::new),
                finished: None,
            })
            .collect();
        let mut space = IdSpace::default();

        let workers = thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, recordings.len().max(1));
        let (tx, rx) = sync_channel::<Msg>(workers * 2);
        let queue = Arc::new(Mutex::new(
            recordings.into_iter().enumerate().collect::<Vec<_>>(),
        ));
        queue.lock().unwrap_or_else(|e| e.into_inner()).reverse();
        let mut handles = Vec::new();
        for _ in 0..workers {
            let (tx, queue) = (tx.clone(), queue.clone());
            handles.push(thread::spawn(move || loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                let Some((i, mut rec)) = next else { return };
                let last = loop {
                    let msg = match rec.source.next_batch() {
                        Ok(Some(b)) => Msg::Batch(i, Box::new(b)),
                        Ok(None) => break None,
                        Err(e) => break Some(Msg::Failed(i, e)),
                    };
                    // The receiver is gone after an error: stop quietly.
                    if tx.send(msg).is_err() {
                        return;
                    }
                };
                let last = last.unwrap_or_else(|| Msg::Done(i, Box::new(rec.source)));
                if tx.send(last).is_err() {
                    return;
                }
            }));
        }
        drop(tx);

        let result = deliver_all(
            &pipeline,
            &rx,
            &mut procs,
            &mut space,
            engine_symbols,
            &mut progress,
        );
        // On an error, unblock and stop the readers before waiting for them.
        drop(rx);
        for h in handles {
            let _ = h.join();
        }
        let batches = result?;
        let dir = pipeline.dir().to_path_buf();
        let run = pipeline
            .finish()
            .expect("a replay's pipeline is finished once, here");
        let processes = procs
            .into_iter()
            .map(|p| {
                let source = p.finished.expect("every recording was read to its end");
                let meta = source.meta().clone();
                ProcessSummary {
                    name: meta.rank.map_or_else(|| p.label.clone(), |r| r.to_string()),
                    records: source.records(),
                    read: source.report().clone(),
                    stats: p.stats.map(|s| s.report(engine_symbols, &names)),
                    meta,
                }
            })
            .collect();
        Ok(ManyReport {
            run,
            processes,
            batches,
            dir,
        })
    }
}

enum Msg {
    /// Boxed: a batch is its columns' headers, ~1.5 KB, the other
    /// variants a few words.
    Batch(usize, Box<Batch>),
    Done(usize, Box<ReplaySource>),
    Failed(usize, ReplayError),
}

/// One process during the replay.
struct Proc {
    label: String,
    /// Its index in the pipeline's process table (`delivery-info.process`).
    index: u32,
    symbols: Arc<SymbolTable>,
    ids: IdMap,
    stats: Option<StatsAccumulator>,
    finished: Option<Box<ReplaySource>>,
}

/// Delivers every batch as it arrives; the batches delivered.
fn deliver_all(
    pipeline: &Pipeline,
    rx: &Receiver<Msg>,
    procs: &mut [Proc],
    space: &mut IdSpace,
    engine: &SymbolTable,
    progress: &mut impl FnMut(u64),
) -> Result<u64> {
    let (mut batches, mut records) = (0u64, 0u64);
    for msg in rx.iter() {
        match msg {
            Msg::Batch(i, mut batch) => {
                let p = &mut procs[i];
                p.ids.copy_symbols(&p.symbols, engine, space);
                p.ids.remap(&mut batch, space);
                records += batch.len() as u64;
                let stats = &mut p.stats;
                pipeline.deliver_observed(p.index, *batch, |out| {
                    if let Some(s) = stats.as_mut() {
                        s.add_batch(out);
                    }
                })?;
                batches += 1;
                progress(records);
            }
            Msg::Done(i, source) => {
                // Symbols found after the last batch (e.g. a CSV file of
                // kernels no dispatch used) still name the process's ids.
                let p = &mut procs[i];
                p.ids.copy_symbols(&p.symbols, engine, space);
                p.finished = Some(source);
            }
            Msg::Failed(i, e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("reading the recording of {}", procs[i].label)));
            }
        }
    }
    Ok(batches)
}

/// The next fresh id of each kind, across the replay.
#[derive(Default)]
struct IdSpace {
    agents: u64,
    code_objects: u64,
    kernels: u64,
}

/// One recording's ids and the replay's ids they became.
#[derive(Default)]
struct IdMap {
    agents: HashMap<u64, u64>,
    code_objects: HashMap<u64, u64>,
    kernels: HashMap<u64, u64>,
    /// Counter ids: the same name gets the replay's one id in every
    /// recording.
    counters: HashMap<u32, u32>,
    /// Symbols copied so far (readers only add).
    copied: (usize, usize, usize, usize),
}

fn fresh(map: &mut HashMap<u64, u64>, next: &mut u64, id: u64) -> u64 {
    *map.entry(id).or_insert_with(|| {
        *next += 1;
        *next
    })
}

impl IdMap {
    fn agent(&mut self, id: u64, space: &mut IdSpace) -> u64 {
        fresh(&mut self.agents, &mut space.agents, id)
    }

    fn code_object(&mut self, id: u64, space: &mut IdSpace) -> u64 {
        fresh(&mut self.code_objects, &mut space.code_objects, id)
    }

    fn kernel(&mut self, id: u64, space: &mut IdSpace) -> u64 {
        fresh(&mut self.kernels, &mut space.kernels, id)
    }

    /// Copies the symbols `from` gained since the last call into `to`,
    /// under the replay's ids.
    fn copy_symbols(&mut self, from: &SymbolTable, to: &SymbolTable, space: &mut IdSpace) {
        let agents = from.agents();
        if agents.len() != self.copied.0 {
            self.copied.0 = agents.len();
            for mut a in agents {
                a.id = self.agent(a.id, space);
                to.insert_agent(a);
            }
        }
        let cos = from.code_objects();
        if cos.len() != self.copied.1 {
            self.copied.1 = cos.len();
            for mut c in cos {
                c.id = self.code_object(c.id, space);
                c.agent_id = self.agent(c.agent_id, space);
                to.insert_code_object(c);
            }
        }
        let kernels = from.kernels();
        if kernels.len() != self.copied.2 {
            self.copied.2 = kernels.len();
            for mut k in kernels {
                k.id = self.kernel(k.id, space);
                k.code_object_id = self.code_object(k.code_object_id, space);
                to.insert_kernel(k);
            }
        }
        let counters = from.counters();
        if counters.len() != self.copied.3 {
            self.copied.3 = counters.len();
            for (id, name) in counters {
                self.counters.insert(id, to.intern_counter(&name));
            }
        }
    }

    /// Rewrites the batch's agent and kernel ids into the replay's: every
    /// column the schema marks as holding one (`rocwasm_schema::Role`).
    fn remap(&mut self, batch: &mut Batch, space: &mut IdSpace) {
        for table in TABLES {
            for column in table.columns {
                let Some(role) = column.role else { continue };
                match batch.column_mut(table.id, column.id) {
                    Some(ColumnMut::U64(ids)) => {
                        for id in ids.iter_mut() {
                            *id = match role {
                                Role::Agent => self.agent(*id, space),
                                Role::Kernel => self.kernel(*id, space),
                                Role::Counter => *id,
                            };
                        }
                    }
                    Some(ColumnMut::U32(ids)) if role == Role::Counter => {
                        for id in ids.iter_mut() {
                            *id = self.counters.get(id).copied().unwrap_or(*id);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_recording_gets_its_own_ids_and_keeps_them() {
        let mut space = IdSpace::default();
        let (mut a, mut b) = (IdMap::default(), IdMap::default());
        assert_eq!(a.kernel(7, &mut space), 1);
        assert_eq!(b.kernel(7, &mut space), 2);
        assert_eq!(a.kernel(7, &mut space), 1);
        assert_eq!(b.kernel(1, &mut space), 3);
        assert_eq!((a.agent(1, &mut space), b.agent(1, &mut space)), (1, 2));
    }

    /// Every column the schema marks as an agent or kernel id is
    /// rewritten, and no other.
    #[test]
    fn remap_rewrites_every_id_column_of_the_schema() {
        use rocwasm_core::{KernelDispatch, MemoryAllocation, MemoryCopy, ScratchMemory};
        let mut space = IdSpace::default();
        let mut other = IdMap::default();
        // Another recording took the first fresh ids: agent 1 and kernel 1.
        other.agent(9, &mut space);
        other.kernel(9, &mut space);
        let mut batch = Batch::default();
        batch.kernel_dispatches.push(KernelDispatch {
            agent_id: 5,
            kernel_id: 5,
            queue_id: 5,
            ..Default::default()
        });
        batch.memory_copies.push(MemoryCopy {
            dst_agent_id: 5,
            src_agent_id: 6,
            bytes: 5,
            ..Default::default()
        });
        batch.memory_allocations.push(MemoryAllocation {
            agent_id: 6,
            ..Default::default()
        });
        batch.scratch_memory.push(ScratchMemory {
            agent_id: 5,
            ..Default::default()
        });
        let mut ids = IdMap::default();
        ids.remap(&mut batch, &mut space);
        let k = batch.kernel_dispatches.row(0);
        assert_eq!((k.agent_id, k.kernel_id, k.queue_id), (2, 2, 5));
        let c = batch.memory_copies.row(0);
        assert_eq!((c.dst_agent_id, c.src_agent_id, c.bytes), (2, 3, 5));
        assert_eq!(batch.memory_allocations.agent_id, [3]);
        assert_eq!(batch.scratch_memory.agent_id, [2]);
    }
}
