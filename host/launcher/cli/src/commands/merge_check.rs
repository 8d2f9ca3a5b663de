//! `rocwasm plugin test`'s merge check: a plugin that exports `merge`
//! (WIT 0.3.1) must give, from any split of a trace into parts and any
//! tree of merges, the tables one pass gives.
//!
//! The trace is read once and cut into small batches. One chain takes
//! them all (the reference); then the batches are split at random points
//! into parts, each part's chain ends with `take-partial`, and the
//! partials are merged in random binary trees (each inner node a fresh
//! instance that merges two partials in random order and takes its own
//! partial) until one is left, which a last instance merges and finishes
//! with `fini`. Its tables must equal the reference's, exactly. The
//! random choices come from one seed, printed, so a failure can be
//! replayed (`--merge-seed`).

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use rocwasm_core::{Batch, BufferId, ContextId, DeliveryInfo, Profiler, SymbolTable};
use rocwasm_formats::replay::ReplayOptions;
use rocwasm_pipeline::SymbolSync;
use rocwasm_plugin_host::{
    Chain, HostEnv, PartEnd, Partial, PluginEngine, StageSpec, SummaryTable, World,
};

/// Parts the trace is split into (fewer when it has fewer batches).
const PARTS: usize = 4;
/// Random merge trees tried.
const TREES: usize = 3;
/// Batches the trace is cut into, so that cuts fall inside what the
/// recording kept as one batch.
const BATCHES: usize = 64;

/// What the check found.
pub enum MergeVerdict {
    /// The component does not export `merge`.
    NotExported,
    /// Every tree gave the reference's tables.
    Equal {
        parts: usize,
        trees: usize,
        tables: usize,
    },
    /// What differed, one sentence each (the first tree that differed).
    Differs(Vec<String>),
}

/// One table as compared: title, columns, rows.
type Shape = (String, Vec<String>, Vec<Vec<String>>);

fn shapes(tables: &[SummaryTable]) -> Vec<Shape> {
    tables
        .iter()
        .map(|t| (t.title.clone(), t.columns.clone(), t.rows.clone()))
        .collect()
}

/// Runs the check of plugin `file` (stage `name`, `config` pairs) on
/// `trace` with `seed`.
pub fn check(
    engine: &Arc<PluginEngine>,
    name: &str,
    file: &Path,
    trace: &Path,
    config: &[String],
    seed: u64,
) -> anyhow::Result<MergeVerdict> {
    if !engine.compile(file)?.mergeable() {
        return Ok(MergeVerdict::NotExported);
    }
    let mut source = rocwasm_formats::replay::open_with(trace, &ReplayOptions::default())?;
    let mut all = Batch::default();
    while let Some(mut batch) = source.next_batch()? {
        all.append(&mut batch);
    }
    let symbols = source.symbols().clone();
    let rows = all.len().div_ceil(BATCHES).max(1);
    let batches = all.split(rows);
    let mut spec = StageSpec::new(name, file);
    spec.world = Some(World::Analysis);
    for kv in config {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("--config {kv}: expected KEY=VALUE"))?;
        spec = spec.with_config(k, v);
    }
    let runner = Runner {
        engine,
        spec,
        symbols,
    };

    let reference = runner.whole(&batches)?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let parts = PARTS.min(batches.len()).max(1);
    // Cut points: `parts - 1` distinct batch boundaries (a part may still
    // be empty when the trace has fewer batches than parts).
    let mut cuts: Vec<usize> = Vec::new();
    while cuts.len() + 1 < parts {
        let at = rng.usize(1..batches.len().max(2));
        if !cuts.contains(&at) {
            cuts.push(at);
        }
    }
    cuts.sort_unstable();
    let mut partials = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&batches.len())) {
        partials.push(runner.part(&batches[from..to], &[])?);
        from = to;
    }
    for tree in 0..TREES {
        let mut pool = partials.clone();
        while pool.len() > 1 {
            let a = pool.swap_remove(rng.usize(..pool.len()));
            let b = pool.swap_remove(rng.usize(..pool.len()));
            let pair = if rng.bool() { [a, b] } else { [b, a] };
            pool.push(runner.part(&[], &pair)?);
        }
        let merged = runner.merged(&pool)?;
        let differences = differences(&reference, &merged);
        if !differences.is_empty() {
            return Ok(MergeVerdict::Differs(
                differences
                    .into_iter()
                    .map(|d| format!("merge tree {} of {TREES}: {d}", tree + 1))
                    .collect(),
            ));
        }
    }
    Ok(MergeVerdict::Equal {
        parts,
        trees: TREES,
        tables: reference.len(),
    })
}

/// Where the merged tables differ from the reference, one sentence each.
fn differences(reference: &[Shape], merged: &[Shape]) -> Vec<String> {
    let mut out = Vec::new();
    if reference.len() != merged.len() {
        out.push(format!(
            "{} table(s) merged, {} in one pass",
            merged.len(),
            reference.len()
        ));
    }
    for (r, m) in reference.iter().zip(merged) {
        if r.0 != m.0 {
            out.push(format!("table `{}` came back titled `{}`", r.0, m.0));
        } else if r.1 != m.1 {
            out.push(format!("table `{}`: columns {:?}, not {:?}", r.0, m.1, r.1));
        } else if r.2 != m.2 {
            let row =
                r.2.iter()
                    .zip(&m.2)
                    .position(|(a, b)| a != b)
                    .unwrap_or(r.2.len().min(m.2.len()));
            out.push(format!(
                "table `{}`: {} row(s) merged, {} in one pass; first difference at row {}: {:?}, not {:?}",
                r.0,
                m.2.len(),
                r.2.len(),
                row + 1,
                m.2.get(row),
                r.2.get(row)
            ));
        }
    }
    out
}

/// Makes the check's chains: the stage alone, a fresh engine each (with
/// the trace's symbols), no output directory (a stage writes no files).
struct Runner<'a> {
    engine: &'a Arc<PluginEngine>,
    spec: StageSpec,
    symbols: Arc<SymbolTable>,
}

impl Runner<'_> {
    fn chain(&self) -> anyhow::Result<Chain> {
        let profiler = Arc::new(Profiler::new());
        SymbolSync::default().copy(&self.symbols, profiler.symbols());
        let env = HostEnv::new(profiler).with_replay(true);
        Chain::new(self.engine.clone(), env, vec![self.spec.clone()])
    }

    fn feed(chain: &Chain, batches: &[Batch]) -> anyhow::Result<()> {
        let info = DeliveryInfo {
            context: ContextId(1),
            buffer: BufferId(1),
            drop_count: 0,
            process: 0,
        };
        for b in batches {
            chain.deliver(info, b.clone())?;
        }
        Ok(())
    }

    /// Tables of one pass over `batches`.
    fn whole(&self, batches: &[Batch]) -> anyhow::Result<Vec<Shape>> {
        let chain = self.chain()?;
        Self::feed(&chain, batches)?;
        tables_of(chain)
    }

    /// A part: `partials` merged, `batches` delivered, its partial taken.
    fn part(&self, batches: &[Batch], partials: &[Partial]) -> anyhow::Result<Partial> {
        let chain = self.chain()?;
        for p in partials {
            chain.merge_partial(&self.spec.name, p)?;
        }
        Self::feed(&chain, batches)?;
        let out = chain.finish_partial()?;
        fail_on(&out.outcome.failures)?;
        match out.ends.into_iter().next().map(|(_, end)| end) {
            Some(PartEnd::Partial(p)) => Ok(p),
            Some(PartEnd::Lost(why)) => bail!("{why}"),
            Some(PartEnd::Tables(_)) | None => {
                Err(anyhow!("the stage took no partial (it does not merge)"))
            }
        }
    }

    /// The tables of an instance that merged `partials`, then `fini`.
    fn merged(&self, partials: &[Partial]) -> anyhow::Result<Vec<Shape>> {
        let chain = self.chain()?;
        for p in partials {
            chain.merge_partial(&self.spec.name, p)?;
        }
        tables_of(chain)
    }
}

/// The stage's tables when `chain` finishes (a failure fails the check).
fn tables_of(chain: Chain) -> anyhow::Result<Vec<Shape>> {
    let outcome = chain.finish()?;
    fail_on(&outcome.failures)?;
    Ok(outcome
        .summaries
        .first()
        .map(|(_, t)| shapes(t))
        .unwrap_or_default())
}

/// A failure in any instance fails the check, with its report.
fn fail_on(failures: &[rocwasm_plugin_host::FailureReport]) -> anyhow::Result<()> {
    match failures.first() {
        Some(f) => bail!("{f}"),
        None => Ok(()),
    }
}
