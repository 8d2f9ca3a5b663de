//! A chain file's plugins over one recording, ended with their tables or
//! their partial results.
//!
//! The chain is loaded, its stock plugins resolved, its plan admitted by
//! the site policy (`ROCWASM_POLICY` / `/etc/rocwasm/policy.toml`:
//! signatures, digests, services) exactly as `rocwasm replay` does it
//! (`rocwasm_launch::{chain_for, admit_plan}`); a refused plugin is an
//! error with the policy's sentence. One session takes one recording:
//! kernel, agent and operation ids are per process, so several processes
//! go through several sessions whose partial results merge
//! ([`Session::finish_partial`], [`Session::merge`]; `rocwasm.dask` does
//! this over a job's ranks).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use rocwasm_config::{PlanOptions, TraceFlags};
use rocwasm_core::{BufferId, ContextId, DeliveryInfo, Profiler};
use rocwasm_formats::replay::{open_with, ReplayOptions};
use rocwasm_formats::OperationNames;
use rocwasm_launch::{admit_plan, chain_for, Install};
use rocwasm_pipeline::{SymbolSync, TraceNames};
use rocwasm_plan::ProcessInfo;
use rocwasm_plugin_host::{
    Chain, EngineConfig, HostEnv, PartEnd, Partial, PluginEngine, Processes, SummaryTable,
    TracedProcess,
};
use rocwasm_record::live::traced_process;
use rocwasm_record::stages::stage_specs;

/// How a session finds and places its plugins' files.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Directories searched first for stock plugin names (then
    /// `ROCWASM_PLUGIN_PATH`).
    pub plugin_path: Vec<PathBuf>,
    /// Where stages granted an output directory write their files (the
    /// chain file's `[output] directory` is not used: it names a live
    /// run's processes). `None`: no stage writes a file.
    pub output_dir: Option<PathBuf>,
}

/// How a session ended.
pub struct Finished {
    /// Per stage, in chain order: its `fini` tables (empty for a stage
    /// that ended as a partial).
    pub tables: Vec<(String, Vec<SummaryTable>)>,
    /// Per stage, when the session ended as a part: its partial result,
    /// its own tables (a stage that does not merge) or why it has none.
    pub parts: Vec<(String, PartEnd)>,
    /// Plugin failures, one sentence each.
    pub failures: Vec<String>,
    /// What the reader could not map, one sentence each.
    pub notes: Vec<String>,
}

/// A chain's plugins and the recording they took.
pub struct Session {
    chain: Chain,
    profiler: Arc<Profiler>,
    processes: Processes,
    names: Arc<OperationNames>,
    stages: Vec<String>,
    recording: Option<PathBuf>,
    notes: Vec<String>,
    records: u64,
}

impl Session {
    /// Loads `chain_file` and starts its plugins (configure, init).
    pub fn open(chain_file: &Path, options: &SessionOptions) -> Result<Session> {
        let mut install = Install::default();
        for dir in &options.plugin_path {
            install = install.with_plugin_dir(dir);
        }
        let flags = TraceFlags {
            output_directory: options.output_dir.as_ref().map(|d| d.display().to_string()),
            ..TraceFlags::default()
        };
        // Shipped plugins (`oci://…` with their `sha256`) are pulled into
        // this node's cache and verified, as the CLI does.
        let load = install.load_options(rocwasm_registry::fetcher());
        let chain = chain_for(Some(chain_file), &flags, None, &load).map_err(|e| anyhow!("{e}"))?;
        let mut plan = chain.to_plan(&PlanOptions {
            stats: false,
            default_plugin_cache: EngineConfig::default().cache_dir,
            api_log: false,
            command: Vec::new(),
        });
        let admission = admit_plan(&plan).map_err(|e| anyhow!("{e}"))?;
        for stage in &mut plan.stages {
            if let Some(a) = admission.plugins.iter().find(|a| a.stage == stage.name) {
                stage.services = a.services;
            }
        }
        let mut specs = stage_specs(&plan, &ProcessInfo::current());
        for spec in &mut specs {
            if options.output_dir.is_none() {
                spec.output_dir = None;
            }
            if let Some(dir) = &spec.output_dir {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
        }
        let engine = Arc::new(
            PluginEngine::new(EngineConfig {
                cache_dir: plan.plugin_cache.clone(),
                site_cache_dir: admission.site_cache.clone(),
                ..EngineConfig::default()
            })
            .context("starting the Wasm runtime")?,
        );
        let profiler = Arc::new(Profiler::new());
        let names = Arc::new(OperationNames::new());
        // Index 0 stays unnamed: the recording's process is added when it
        // is read.
        let processes = Processes::new(TracedProcess::default());
        let env = HostEnv::new(profiler.clone())
            .with_replay(true)
            .with_operation_names(Arc::new(TraceNames(names.clone())))
            .with_processes(processes.clone());
        let stages = specs.iter().map(|s| s.name.clone()).collect();
        let chain = Chain::new(engine, env, specs).context("loading the chain's plugins")?;
        Ok(Session {
            chain,
            profiler,
            processes,
            names,
            stages,
            recording: None,
            notes: Vec::new(),
            records: 0,
        })
    }

    /// The stages, in chain order.
    pub fn stages(&self) -> &[String] {
        &self.stages
    }

    /// True when stage `stage`'s plugin exports `merge`.
    pub fn merges(&self, stage: &str) -> bool {
        self.chain.stage_merges(stage)
    }

    /// Records delivered.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Delivers every record of the recording at `path`; its records.
    pub fn replay(&mut self, path: &Path) -> Result<u64> {
        if let Some(first) = &self.recording {
            bail!(
                "this chain already took {}: a chain takes one process's recording (ids are per \
                 process); run one chain per recording and merge their partial results \
                 (rocwasm.dask does)",
                first.display()
            );
        }
        self.recording = Some(path.to_path_buf());
        let options = ReplayOptions {
            progress: false,
            names: Some(self.names.clone()),
            ..ReplayOptions::default()
        };
        let mut source = open_with(path, &options)?;
        let process = self.processes.add(traced_process(source.meta()));
        let info = DeliveryInfo {
            context: ContextId(1),
            buffer: BufferId(1),
            drop_count: 0,
            process,
        };
        let mut symbols = SymbolSync::default();
        while let Some(batch) = source.next_batch()? {
            symbols.copy(source.symbols(), self.profiler.symbols());
            self.chain.deliver(info, batch)?;
        }
        self.notes.extend(source.report().lines());
        self.records += source.records();
        Ok(source.records())
    }

    /// Folds `partial`, taken by another session of the same chain, into
    /// stage `stage`.
    pub fn merge(&self, stage: &str, partial: &Partial) -> Result<()> {
        self.chain.merge_partial(stage, partial)
    }

    /// Ends the session: each stage's `fini`.
    pub fn finish(self) -> Result<Finished> {
        let outcome = self.chain.finish()?;
        Ok(Finished {
            tables: outcome.summaries,
            parts: Vec::new(),
            failures: outcome.failures.iter().map(|f| f.to_string()).collect(),
            notes: self.notes,
        })
    }

    /// Ends the session as a part: each mergeable stage's partial result,
    /// each other stage's own tables.
    pub fn finish_partial(self) -> Result<Finished> {
        let out = self.chain.finish_partial()?;
        Ok(Finished {
            tables: out.outcome.summaries,
            parts: out.ends,
            failures: out.outcome.failures.iter().map(|f| f.to_string()).collect(),
            notes: self.notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
    }

    fn options() -> SessionOptions {
        SessionOptions {
            plugin_path: vec![repo().join("target/plugins")],
            output_dir: None,
        }
    }

    fn calls(f: &Finished) -> Vec<String> {
        let (_, tables) = f.tables.iter().find(|(s, _)| s == "kernel-stats").unwrap();
        tables[0].rows.iter().map(|r| r[1].clone()).collect()
    }

    #[test]
    fn two_sessions_partials_merge_into_a_third() {
        let chain = repo().join("examples/chains/stats.toml");
        let sample = repo().join("examples/traces/sample");
        let mut once = Session::open(&chain, &options()).unwrap();
        once.replay(&sample).unwrap();
        let once = once.finish().unwrap();
        assert!(once.failures.is_empty(), "{:?}", once.failures);

        let reducer = Session::open(&chain, &options()).unwrap();
        for _ in 0..2 {
            let mut part = Session::open(&chain, &options()).unwrap();
            part.replay(&sample).unwrap();
            let err = part.replay(&sample).unwrap_err().to_string();
            assert!(err.contains("one process's recording"), "{err}");
            for (stage, end) in part.finish_partial().unwrap().parts {
                match end {
                    PartEnd::Partial(p) => reducer.merge(&stage, &p).unwrap(),
                    other => panic!("{stage}: {other:?}"),
                }
            }
        }
        let twice = reducer.finish().unwrap();
        let doubled: Vec<String> = calls(&once)
            .iter()
            .map(|c| (2 * c.parse::<u64>().unwrap()).to_string())
            .collect();
        assert_eq!(calls(&twice), doubled);
    }
}
