//! `rocwasm check CHAIN`: validate a chain file and print what it would run.

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
use rocwasm_config::{Chain, LoadOptions};

use crate::cli::CheckArgs;
use crate::commands::chain::load_options;
use crate::failure::Result;

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
