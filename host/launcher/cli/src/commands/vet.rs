//! `rocwasm plugin vet FILE [--pub KEY.pub]… [--trace TRACE]`: what an
//! admin needs to decide whether to admit a plugin, in one report.
//!
//! 1. the file: size, plugin digest, signers (and whether one of `--pub`
//!    signed it);
//! 2. the component: world, imports, WASI (the plugin host compiles it,
//!    as a run would);
//! 3. the site policy's verdict on a one-stage plan of it;
//! 4. with `--trace`, a replay of the recording through it alone on an
//!    engine that counts Wasm instructions (wasmtime fuel): instructions
//!    per record and peak linear memory, the numbers to set its budgets by
//!    (the replay is [`alone::measure`], which `rocwasm plugin test` shares).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use rocwasm_plan::{OutputPlan, PathTemplate, RunPlan, StagePlan};
use rocwasm_plugin_host::{EngineConfig, PluginEngine, StageSpec};
use rocwasm_policy::{admit, PublicKey, Signatures, SitePolicy};

use super::alone;
use crate::failure::{Failure, Result};

pub fn vet(file: &Path, public: &[PathBuf], trace: Option<&Path>, config: &[String]) -> Result {
    let bytes =
        std::fs::read(file).map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    let name = file
        .file_stem()
        .map_or("plugin".into(), |s| s.to_string_lossy().into_owned());
    println!("file:        {}", file.display());
    println!("size:        {} bytes", bytes.len());
    let signatures =
        Signatures::of(&bytes).map_err(|e| Failure::runtime(format!("{}: {e}", file.display())))?;
    println!("digest:      {}", signatures.digest);
    let signers: Vec<String> = signatures
        .valid
        .iter()
        .map(|k| k.id().to_string())
        .collect();
    println!(
        "signers:     {}",
        if signers.is_empty() {
            "none".into()
        } else {
            signers.join(", ")
        }
    );
    for id in &signatures.invalid {
        println!("signers:     {id} INVALID (changed after signing)");
    }
    let mut failed = Vec::new();
    if !public.is_empty() {
        let mut keys = Vec::new();
        for p in public {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::usage(format!("{}: {e}", p.display())))?;
            keys.push(
                PublicKey::parse(&text)
                    .map_err(|e| Failure::usage(format!("{}: {e}", p.display())))?,
            );
        }
        match signatures.trusted_signer(&keys) {
            Ok(id) => println!("trusted:     yes, key {id}"),
            Err(e) => {
                println!("trusted:     no: {e}");
                failed.push(format!("signature: {e}"));
            }
        }
    }

    let engine = Arc::new(
        PluginEngine::new(EngineConfig {
            cache_dir: None,
            consume_fuel: true,
            ..EngineConfig::default()
        })
        .context("starting the Wasm runtime")?,
    );
    let info = engine
        .inspect(file)
        .with_context(|| format!("{} is not a loadable component", file.display()))?;
    let world = match &info.world {
        Ok(w) => {
            println!(
                "world:       {} (rocwasm:plugin@{})",
                w.wit_name(),
                info.version.as_str()
            );
            Some(*w)
        }
        Err(why) => {
            println!("world:       none ({why})");
            failed.push(format!("world: {why}"));
            None
        }
    };
    println!(
        "wasi:        {}",
        if info.imports_wasi {
            "imported"
        } else {
            "not imported"
        }
    );
    println!("imports:");
    for i in &info.imports {
        println!("  {i}");
    }

    // The site policy's verdict on a run of this plugin alone.
    let plan = one_stage_plan(&name, file, world);
    let policy = SitePolicy::current()?;
    let refused = match (&policy, admit(&plan, policy.as_ref())) {
        (None, _) => {
            println!("policy:      no site policy");
            None
        }
        (Some(p), Ok(a)) => {
            println!(
                "policy:      admitted by {} ({:?})",
                p.file.display(),
                a.plugins[0].admitted_by
            );
            None
        }
        (Some(_), Err(r)) => {
            println!("policy:      REFUSED: {r}");
            Some(r)
        }
    };

    if let (Some(trace), Some(world)) = (trace, world) {
        match alone::measure(&engine, &name, file, world, trace, config) {
            Ok(m) => {
                if !m.files.is_empty() {
                    println!("wrote:       {}", m.files.join(", "));
                }
                println!("trace:       {} ({} record(s))", trace.display(), m.records);
                match m.instructions {
                    Some(n) if m.records > 0 => println!(
                        "instructions per record: {:.1} ({n} in all)",
                        n as f64 / m.records as f64
                    ),
                    Some(n) => println!("instructions: {n} (no records)"),
                    None => println!("instructions: not counted"),
                }
                println!("peak memory: {} bytes", m.peak_memory);
                for f in &m.failures {
                    println!("failure:     {f}");
                    failed.push(f.clone());
                }
            }
            Err(e) => failed.push(format!("trace: {e:#}")),
        }
    }

    if let Some(r) = refused {
        return Err(Failure::usage(r));
    }
    match failed.len() {
        0 => Ok(()),
        _ => Err(Failure::runtime(format!(
            "{} did not pass: {}",
            file.display(),
            failed.join("; ")
        ))),
    }
}

/// A plan that runs only this plugin, with the default limits, no output
/// grant and no traced domains (what the policy judges it by).
fn one_stage_plan(name: &str, file: &Path, world: Option<rocwasm_plugin_host::World>) -> RunPlan {
    let defaults = StageSpec::new(name, file);
    RunPlan {
        version: RunPlan::VERSION,
        chain: None,
        output: OutputPlan {
            directory: PathTemplate::literal("."),
            file_prefix: None,
            formats: Vec::new(),
            stats: false,
            write: Default::default(),
            kinds: Vec::new(),
            summary: false,
            api_args: false,
            parquet_root: None,
        },
        stages: vec![StagePlan {
            name: name.to_string(),
            wasm: file.to_path_buf(),
            source: None,
            world,
            kinds: None,
            domains: Vec::new(),
            operations: Default::default(),
            config: Default::default(),
            limits: defaults.limits,
            failure: defaults.failure,
            output: Default::default(),
            services: Default::default(),
            placement: Default::default(),
        }],
        buffer: defaults.buffer,
        plugin_cache: None,
        fork: Default::default(),
        api_log: false,
        command: Vec::new(),
        kernels: Default::default(),
        collection: Default::default(),
        summary: Default::default(),
        journal: None,
    }
}
