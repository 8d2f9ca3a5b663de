//! `rocwasm check CHAIN`: validate a chain file and print what it would run.
//!
//! Unless `--no-plugins`, each stage's plugin is compiled and checked as a
//! component of the stage's world by the plugin host itself
//! ([`PluginEngine::compile_stage`], what a run does before running any
//! plugin code), so a core module, a component of another world or a file
//! that is not Wasm fails here, status 2, with the message the run would
//! give. The compiled components land in the cache the run loads them from.

use anyhow::Context;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use rocwasm_config::{Chain, LoadOptions, PlanOptions};
use rocwasm_plugin_host::{EngineConfig, PluginEngine};

use crate::cli::CheckArgs;
use crate::commands::chain::{admit_plan, load_options};
use crate::failure::{Failure, Result};

pub fn check(args: CheckArgs) -> Result {
    let options = if args.no_plugins {
        LoadOptions {
            check_plugins: false,
            ..load_options()
        }
    } else {
        load_options()
    };
    let chain = Chain::load(&args.chain, &options)?;
    if options.check_plugins {
        check_components(&chain)?;
        // The site policy, as a run of this chain would meet it.
        admit_plan(&chain.to_plan(&PlanOptions {
            stats: false,
            default_plugin_cache: None,
            api_log: false,
            command: Vec::new(),
        }))?;
    }
    let summary = chain.summary();

    println!("{}: ok, {} stage(s)", summary.source, summary.stages.len());
    for (key, value) in &summary.settings {
        println!("  {key:<20} {value}");
    }
    if !summary.stages.is_empty() {
        let mut table = Table::new();
        table
            .load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_header(rocwasm_config::StageSummary::HEADERS);
        for stage in &summary.stages {
            table.add_row(stage.cells());
        }
        println!("{table}");
    }
    Ok(())
}

/// Every stage's component, compiled and checked against the stage's world.
/// A plugin that would not load is the chain's fault: status 2.
fn check_components(chain: &Chain) -> Result {
    if chain.stages.is_empty() {
        return Ok(());
    }
    let engine = PluginEngine::new(EngineConfig::default()).context("starting the Wasm runtime")?;
    for stage in &chain.stages {
        engine
            .compile_stage(&stage.name, &stage.plugin.path, Some(stage.world))
            .map_err(Failure::Usage)?;
    }
    Ok(())
}
