//! One delivered [`Batch`] as Arrow record batches, one per trace table.
//!
//! Column by column, not row by row: a numeric column is one copy of the
//! batch's own vector (or of the rows an API file selects); a name column
//! resolves each row's id through the sink's [`Resolver`] caches. The
//! columns come out in [`schema`]'s order because they are produced by
//! walking [`TraceFile::columns`]; a column a table cannot fill is an error
//! naming both (a unit test fills every column of every table).

use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use rocwasm_core::{Batch, BufferTracingKind};

use super::schema::{file_name, schema};
use crate::csv::{Column, TraceFile};
use crate::names::kind_name;
use crate::resolve::Resolver;
use crate::sink::SinkContext;
use crate::unfiled::Unfiled;

/// The identity columns' values for the rows of one batch.
pub(crate) struct Identity<'a> {
    pub(crate) hostname: &'a str,
    pub(crate) rank: u32,
    pub(crate) job: &'a str,
    pub(crate) pid: u32,
}

impl<'a> Identity<'a> {
    /// The process `ctx` describes: rank 0 and job `0` when its metadata
    /// has none (as `%rank%` and `%job%` expand).
    pub(crate) fn of(ctx: &SinkContext<'a>) -> Self {
        Identity {
            hostname: &ctx.meta.hostname,
            rank: ctx.meta.rank.unwrap_or(0),
            job: ctx.meta.job.as_deref().unwrap_or("0"),
            pid: ctx.meta.pid,
        }
    }
}

fn u64s(values: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(values))
}

fn u32s(values: impl Iterator<Item = u32>) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(values))
}

fn texts<'s>(values: impl Iterator<Item = &'s str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

/// One record batch of `file` with `n` rows: the identity columns, then
/// each of the file's columns from `column` (`None`: the table has no such
/// column, an error).
fn record_batch(
    file: TraceFile,
    n: usize,
    id: &Identity<'_>,
    mut column: impl FnMut(Column) -> Option<ArrayRef>,
) -> Result<RecordBatch> {
    let mut arrays: Vec<ArrayRef> = vec![
        texts(std::iter::repeat_n(id.hostname, n)),
        u32s(std::iter::repeat_n(id.rank, n)),
        texts(std::iter::repeat_n(id.job, n)),
        u32s(std::iter::repeat_n(id.pid, n)),
    ];
    for &c in file.columns() {
        let array = column(c).ok_or_else(|| {
            anyhow!(
                "{} has a column `{}` that its records do not fill",
                file_name(file),
                c.name()
            )
        })?;
        arrays.push(array);
    }
    RecordBatch::try_new(schema(file), arrays)
        .with_context(|| format!("building rows of {}", file_name(file)))
}

/// The record batches `batch` adds to each table: `(table, rows)` for
/// every table with at least one row, in [`TraceFile::ALL`] order. API
/// calls of kinds that have no trace table (as in the CSV output) are left
/// out.
pub(crate) fn tables(
    batch: &Batch,
    ctx: &SinkContext<'_>,
    resolve: &mut Resolver,
    unfiled: &mut Unfiled,
) -> Result<Vec<(TraceFile, RecordBatch)>> {
    // Every table by name: one the schema gains fails to compile here
    // until Parquet writes it (below, each in its own table) or counts it
    // as left out.
    let Batch {
        api_calls: _,
        kernel_dispatches: _,
        memory_copies: _,
        memory_allocations: _,
        scratch_memory: _,
        retirements,
        runtime_initializations,
        counter_samples: _,
    } = batch;
    unfiled.count_unplaced(retirements, runtime_initializations);
    let consistent = [
        ("API call", batch.api_calls.is_consistent()),
        ("kernel dispatch", batch.kernel_dispatches.is_consistent()),
        ("memory copy", batch.memory_copies.is_consistent()),
        (
            "memory allocation",
            batch.memory_allocations.is_consistent(),
        ),
        ("scratch memory", batch.scratch_memory.is_consistent()),
        ("counter sample", batch.counter_samples.is_consistent()),
    ];
    if let Some((table, _)) = consistent.iter().find(|(_, ok)| !ok) {
        return Err(anyhow!(
            "a batch's {table} columns have different lengths; its records cannot be written"
        ));
    }
    let id = Identity::of(ctx);
    let mut out = Vec::new();
    if !batch.kernel_dispatches.is_empty() {
        out.push((TraceFile::KernelTrace, kernels(batch, ctx, resolve, &id)?));
    }
    // Each API row's file, found once: its row numbers, file by file (in
    // `TraceFile::API` order); a row of a kind with no file is counted.
    let mut api_rows: [Vec<usize>; TraceFile::API.len()] = Default::default();
    for (i, &kind) in batch.api_calls.kind.iter().enumerate() {
        match TraceFile::of_api_kind(kind) {
            Some(file) => {
                let at = TraceFile::API.iter().position(|f| *f == file);
                api_rows[at.expect("an API file")].push(i);
            }
            None => unfiled.count(kind),
        }
    }
    for (file, rows) in TraceFile::API.into_iter().zip(api_rows) {
        if !rows.is_empty() {
            out.push((file, api_calls(file, &rows, batch, ctx, resolve, &id)?));
        }
    }
    if !batch.memory_copies.is_empty() {
        out.push((TraceFile::MemoryCopy, copies(batch, ctx, resolve, &id)?));
    }
    if !batch.memory_allocations.is_empty() {
        out.push((
            TraceFile::MemoryAllocation,
            allocations(batch, ctx, resolve, &id)?,
        ));
    }
    if !batch.scratch_memory.is_empty() {
        out.push((TraceFile::ScratchMemory, scratch(batch, ctx, resolve, &id)?));
    }
    if !batch.counter_samples.is_empty() {
        out.push((
            TraceFile::CounterCollection,
            counters(batch, ctx, resolve, &id)?,
        ));
    }
    Ok(out)
}

/// `counter_collection`: as the CSV file (sizes as products, LDS in
/// 512-byte blocks), the value a float64.
fn counters(
    batch: &Batch,
    ctx: &SinkContext<'_>,
    resolve: &mut Resolver,
    id: &Identity<'_>,
) -> Result<RecordBatch> {
    let p = &batch.counter_samples;
    let n = p.len();
    let facts: Vec<_> = p
        .kernel_id
        .iter()
        .map(|&k| resolve.kernel(ctx.symbols, k))
        .collect();
    let names: Vec<_> = p
        .counter_id
        .iter()
        .map(|&c| ctx.symbols.counter_name(c))
        .collect();
    let agents = u64s(p.agent_id.iter().map(|&a| resolve.agent(ctx.symbols, a)));
    let all = |v: &[u64]| u64s(v.iter().copied());
    let product = |x: &[u32], y: &[u32], z: &[u32]| {
        u64s((0..n).map(|i| u64::from(x[i]) * u64::from(y[i]) * u64::from(z[i])))
    };
    record_batch(TraceFile::CounterCollection, n, id, |c| {
        Some(match c {
            Column::CorrelationId => all(&p.correlation_id),
            Column::DispatchId => all(&p.dispatch_id),
            Column::AgentId => agents.clone(),
            Column::QueueId => all(&p.queue_id),
            Column::ProcessId => u32s(std::iter::repeat_n(ctx.meta.pid, n)),
            Column::ThreadId => all(&p.thread_id),
            Column::GridSize => product(&p.grid_x, &p.grid_y, &p.grid_z),
            Column::KernelId => all(&p.kernel_id),
            Column::KernelName => texts(facts.iter().map(|f| &*f.name)),
            Column::WorkgroupSize => product(&p.workgroup_x, &p.workgroup_y, &p.workgroup_z),
            Column::LdsBlockSize => {
                u32s(p.group_segment_size.iter().map(|&g| g.div_ceil(512) * 512))
            }
            Column::ScratchSize => u32s(p.private_segment_size.iter().copied()),
            Column::VgprCount => u32s(facts.iter().map(|f| f.vgpr)),
            Column::AccumVgprCount => u32s(facts.iter().map(|f| f.accum_vgpr)),
            Column::SgprCount => u32s(facts.iter().map(|f| f.sgpr)),
            Column::CounterName => texts(
                names
                    .iter()
                    .map(|n| n.as_deref().unwrap_or("unknown_counter")),
            ),
            Column::CounterValue => Arc::new(Float64Array::from_iter_values(
                p.value.iter().map(|&v| f64::from_bits(v)),
            )),
            Column::StartTimestamp => all(&p.start),
            Column::EndTimestamp => all(&p.end),
            _ => return None,
        })
    })
}

fn kernels(
    batch: &Batch,
    ctx: &SinkContext<'_>,
    resolve: &mut Resolver,
    id: &Identity<'_>,
) -> Result<RecordBatch> {
    let k = &batch.kernel_dispatches;
    let n = k.len();
    let facts: Vec<_> = k
        .kernel_id
        .iter()
        .map(|&kid| resolve.kernel(ctx.symbols, kid))
        .collect();
    let agents: Vec<u64> = k
        .agent_id
        .iter()
        .map(|&a| resolve.agent(ctx.symbols, a))
        .collect();
    let all = |v: &[u64]| u64s(v.iter().copied());
    let all32 = |v: &[u32]| u32s(v.iter().copied());
    record_batch(TraceFile::KernelTrace, n, id, |c| {
        Some(match c {
            Column::Kind => texts(std::iter::repeat_n("KERNEL_DISPATCH", n)),
            Column::AgentId => all(&agents),
            Column::QueueId => all(&k.queue_id),
            Column::StreamId => all(&k.stream_id),
            Column::ThreadId => all(&k.thread_id),
            Column::DispatchId => all(&k.dispatch_id),
            Column::KernelId => all(&k.kernel_id),
            Column::KernelName => texts(facts.iter().map(|f| &*f.name)),
            Column::CorrelationId => all(&k.correlation_id),
            Column::StartTimestamp => all(&k.start),
            Column::EndTimestamp => all(&k.end),
            Column::LdsBlockSize => all32(&k.group_segment_size),
            Column::ScratchSize => all32(&k.private_segment_size),
            Column::VgprCount => u32s(facts.iter().map(|f| f.vgpr)),
            Column::AccumVgprCount => u32s(facts.iter().map(|f| f.accum_vgpr)),
            Column::SgprCount => u32s(facts.iter().map(|f| f.sgpr)),
            Column::WorkgroupSizeX => all32(&k.workgroup_x),
            Column::WorkgroupSizeY => all32(&k.workgroup_y),
            Column::WorkgroupSizeZ => all32(&k.workgroup_z),
            Column::GridSizeX => all32(&k.grid_x),
            Column::GridSizeY => all32(&k.grid_y),
            Column::GridSizeZ => all32(&k.grid_z),
            _ => return None,
        })
    })
}

/// The rows `rows` of the batch's API calls, all of `file` (one of
/// [`TraceFile::API`]).
fn api_calls(
    file: TraceFile,
    rows: &[usize],
    batch: &Batch,
    ctx: &SinkContext<'_>,
    resolve: &mut Resolver,
    id: &Identity<'_>,
) -> Result<RecordBatch> {
    let a = &batch.api_calls;
    let n = rows.len();
    let domains: Vec<String> = rows
        .iter()
        .map(|&i| kind_name(a.kind[i]).into_owned())
        .collect();
    let functions: Vec<_> = rows
        .iter()
        .map(|&i| resolve.op_name(ctx, a.kind[i], a.operation[i]))
        .collect();
    let sel = |v: &[u64]| u64s(rows.iter().map(|&i| v[i]));
    record_batch(file, n, id, |c| {
        Some(match c {
            Column::Domain => texts(domains.iter().map(String::as_str)),
            Column::Function => texts(functions.iter().map(|f| &**f)),
            Column::ProcessId => u32s(std::iter::repeat_n(id.pid, n)),
            Column::ThreadId => sel(&a.thread_id),
            Column::CorrelationId => sel(&a.correlation_id),
            Column::StartTimestamp => sel(&a.start),
            Column::EndTimestamp => sel(&a.end),
            _ => return None,
        })
    })
}

fn copies(
    batch: &Batch,
    ctx: &SinkContext<'_>,
    resolve: &mut Resolver,
    id: &Identity<'_>,
) -> Result<RecordBatch> {
    let c = &batch.memory_copies;
    let n = c.len();
    let kind = BufferTracingKind::MemoryCopy.raw();
    let directions: Vec<_> = c
        .operation
        .iter()
        .map(|&op| resolve.op_name(ctx, kind, op))
        .collect();
    let mut agents = |v: &[u64]| u64s(v.iter().map(|&a| resolve.agent(ctx.symbols, a)));
    let (src, dst) = (agents(&c.src_agent_id), agents(&c.dst_agent_id));
    let all = |v: &[u64]| u64s(v.iter().copied());
    record_batch(TraceFile::MemoryCopy, n, id, |col| {
        Some(match col {
            Column::Kind => texts(std::iter::repeat_n("MEMORY_COPY", n)),
            Column::Direction => texts(directions.iter().map(|d| &**d)),
            Column::StreamId => all(&c.stream_id),
            Column::SourceAgentId => src.clone(),
            Column::DestinationAgentId => dst.clone(),
            Column::CorrelationId => all(&c.correlation_id),
            Column::StartTimestamp => all(&c.start),
            Column::EndTimestamp => all(&c.end),
            Column::Bytes => all(&c.bytes),
            _ => return None,
        })
    })
}

fn allocations(
    batch: &Batch,
    ctx: &SinkContext<'_>,
    resolve: &mut Resolver,
    id: &Identity<'_>,
) -> Result<RecordBatch> {
    let m = &batch.memory_allocations;
    let n = m.len();
    let kind = BufferTracingKind::MemoryAllocation.raw();
    let ops: Vec<_> = m
        .operation
        .iter()
        .map(|&op| resolve.op_name(ctx, kind, op))
        .collect();
    let agents = u64s(m.agent_id.iter().map(|&a| resolve.agent(ctx.symbols, a)));
    let all = |v: &[u64]| u64s(v.iter().copied());
    record_batch(TraceFile::MemoryAllocation, n, id, |c| {
        Some(match c {
            Column::Kind => texts(std::iter::repeat_n("MEMORY_ALLOCATION", n)),
            Column::Operation => texts(ops.iter().map(|o| &**o)),
            Column::AgentId => agents.clone(),
            Column::AllocationSize => all(&m.allocation_size),
            Column::Address => all(&m.address),
            Column::CorrelationId => all(&m.correlation_id),
            Column::StartTimestamp => all(&m.start),
            Column::EndTimestamp => all(&m.end),
            _ => return None,
        })
    })
}

fn scratch(
    batch: &Batch,
    ctx: &SinkContext<'_>,
    resolve: &mut Resolver,
    id: &Identity<'_>,
) -> Result<RecordBatch> {
    let s = &batch.scratch_memory;
    let n = s.len();
    let kind = BufferTracingKind::ScratchMemory.raw();
    let ops: Vec<_> = s
        .operation
        .iter()
        .map(|&op| resolve.op_name(ctx, kind, op))
        .collect();
    let agents = u64s(s.agent_id.iter().map(|&a| resolve.agent(ctx.symbols, a)));
    let all = |v: &[u64]| u64s(v.iter().copied());
    record_batch(TraceFile::ScratchMemory, n, id, |c| {
        Some(match c {
            Column::Kind => texts(std::iter::repeat_n("SCRATCH_MEMORY", n)),
            Column::Operation => texts(ops.iter().map(|o| &**o)),
            Column::AgentId => agents.clone(),
            Column::QueueId => all(&s.queue_id),
            Column::ThreadId => all(&s.thread_id),
            Column::AllocFlags => u32s(s.flags.iter().copied()),
            Column::StartTimestamp => all(&s.start),
            Column::EndTimestamp => all(&s.end),
            Column::AllocationSize => all(&s.allocation_size),
            _ => return None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::OperationNames;
    use crate::synthetic::sample_run;

    /// Every table's every column is filled, and its rows are the batch's.
    #[test]
    fn a_sample_batch_fills_every_column_of_every_table() {
        let names = OperationNames::new();
        let run = sample_run(3, 200, 1 << 20, &names).with_counter_samples();
        let ctx = run.context(&names);
        let mut resolve = Resolver::default();
        let mut seen = Vec::new();
        for b in &run.batches {
            for (file, rb) in tables(b, &ctx, &mut resolve, &mut Unfiled::default()).unwrap() {
                assert_eq!(rb.schema(), schema(file));
                seen.push(file);
            }
        }
        // The sample run has no RCCL, rocDecode or rocJPEG calls: a batch
        // of one call each fills those tables.
        let mut extra = Batch::default();
        for kind in [
            BufferTracingKind::RcclApi,
            BufferTracingKind::RocdecodeApi,
            BufferTracingKind::RocjpegApi,
        ] {
            extra.api_calls.push(rocwasm_core::ApiCall {
                kind: kind.raw(),
                start: 1,
                end: 2,
                ..Default::default()
            });
        }
        for (file, rb) in tables(&extra, &ctx, &mut resolve, &mut Unfiled::default()).unwrap() {
            assert_eq!(rb.schema(), schema(file));
            assert_eq!(rb.num_rows(), 1, "{file:?}");
            seen.push(file);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen, TraceFile::ALL, "every table is filled");
        let b = &run.batches[0];
        let rows = tables(b, &ctx, &mut resolve, &mut Unfiled::default()).unwrap();
        let kernels = &rows[0].1;
        assert_eq!(kernels.num_rows(), b.kernel_dispatches.len());
    }
}
