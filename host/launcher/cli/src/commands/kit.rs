//! The plugin kit's commands, for an author working outside this
//! repository: `rocwasm plugin wit`, `new`, `build` and `test`.
//!
//! The recipes (templates, toolchains, the WIT package) live in
//! rocwasm-kit, which `cargo xtask build-plugins` uses too; this module
//! only turns arguments into calls and results into lines. A missing tool
//! is a usage failure (status 2) whose one line names the tool and the
//! command that installs it. `test` runs the plugin alone on a trace twice
//! through [`super::alone::measure`] (shared with `plugin vet`): once as a
//! run would (wall time per record), once counting Wasm instructions.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use rocwasm_kit::expect::{Expected, Table as ExpectedTable};
use rocwasm_kit::project::{self, Lang, NewProject};
use rocwasm_kit::MissingTool;
use rocwasm_plugin_host::{EngineConfig, PluginEngine};

use super::alone;
use super::merge_check::{self, MergeVerdict};
use crate::failure::{Failure, Result};

/// `rocwasm plugin wit --out DIR`.
pub fn wit(out: &Path) -> Result {
    let written = rocwasm_kit::wit::write(out)?;
    println!(
        "wrote the WIT package {} ({} files) to {}",
        rocwasm_kit::wit::PACKAGE,
        written.len(),
        out.display()
    );
    println!("worlds: {}", rocwasm_kit::wit::BUILD_WORLDS.join(", "));
    Ok(())
}

/// `rocwasm plugin new NAME --lang L [--world W]`.
pub fn new(name: &Path, lang: &str, world: &str) -> Result {
    let lang = Lang::from_name(lang).ok_or_else(|| {
        let names: Vec<_> = Lang::ALL.iter().map(|l| l.name()).collect();
        Failure::usage(format!(
            "unknown language `{lang}` (expected one of: {})",
            names.join(", ")
        ))
    })?;
    let world = match world {
        "analysis" | "analysis-plugin" => "analysis-plugin",
        "transform" | "transform-plugin" => "transform-plugin",
        other => {
            return Err(Failure::usage(format!(
                "unknown world `{other}` (expected analysis or transform)"
            )))
        }
    };
    let plugin = name
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Failure::usage(format!("`{}` names no directory", name.display())))?;
    let p = NewProject {
        dir: name.to_path_buf(),
        name: plugin.clone(),
        lang,
        world: world.to_string(),
        sdk: project::sdk_path(),
    };
    let files = project::create(&p).map_err(Failure::Usage)?;
    println!(
        "created {} ({} {}), {} files:",
        name.display(),
        lang.name(),
        world,
        files.len()
    );
    for f in &files {
        println!("  {}", f.display());
    }
    println!("next:");
    println!("  rocwasm plugin build {}", name.display());
    println!(
        "  rocwasm plugin test {} --trace TRACE",
        name.join("target").join(format!("{plugin}.wasm")).display()
    );
    Ok(())
}

/// `rocwasm plugin build [DIR]`.
pub fn build(dir: Option<&Path>) -> Result {
    let dir = dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    // Not a project at all is the user's to fix (status 2), as is a tool
    // missing; a build that fails is status 1.
    Lang::detect(&dir).map_err(Failure::Usage)?;
    let started = std::time::Instant::now();
    match project::build(&dir, &rocwasm_kit::tools_dir()) {
        Ok(out) => {
            let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
            println!(
                "built {} ({size} bytes) in {:.1} s",
                out.display(),
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Err(e) => Err(match MissingTool::find(&e) {
            Some(missing) => Failure::usage(missing),
            None => Failure::Runtime(e.context(format!("building {}", dir.display()))),
        }),
    }
}

/// `rocwasm plugin test PLUGIN --trace TRACE [--config K=V]…`.
pub fn test(
    file: &Path,
    trace: &Path,
    config: &[String],
    expect: Option<&Path>,
    merge_seed: Option<u64>,
) -> Result {
    if !file.is_file() {
        return Err(Failure::usage(format!("{}: no such file", file.display())));
    }
    // Before the (slow) runs: a malformed expectation is a usage error.
    let expected = expect
        .map(|path| Expected::read(path).map(|e| (path, e)))
        .transpose()
        .map_err(Failure::usage)?;
    if !trace.exists() {
        return Err(Failure::usage(format!(
            "{}: no such trace",
            trace.display()
        )));
    }
    let name = file
        .file_stem()
        .map_or("plugin".into(), |s| s.to_string_lossy().into_owned());
    let timed =
        Arc::new(PluginEngine::new(EngineConfig::default()).context("starting the Wasm runtime")?);
    let info = timed
        .inspect(file)
        .with_context(|| format!("{} is not a loadable component", file.display()))?;
    let world = info.world.map_err(|why| {
        Failure::usage(format!("{} is not a rocwasm plugin: {why}", file.display()))
    })?;
    println!(
        "plugin:  {} ({}, {} bytes, WASI {})",
        file.display(),
        world.wit_name(),
        info.size,
        if info.imports_wasi {
            "imported"
        } else {
            "not imported"
        }
    );
    let run = alone::measure(&timed, &name, file, world, trace, config)?;
    // The fuel-counting compile is cached like any other: the cache keys
    // compiled code by the engine's settings too, so it never hands this
    // engine the timed one's code (or a run's), and a second `plugin test`
    // of the same build skips both compiles.
    let counting = Arc::new(
        PluginEngine::new(EngineConfig {
            consume_fuel: true,
            ..EngineConfig::default()
        })
        .context("starting the Wasm runtime")?,
    );
    let counted = alone::measure(&counting, &name, file, world, trace, config)?;

    println!("trace:   {} ({} records)", trace.display(), run.records);
    for t in &run.summaries {
        print!("{}", rocwasm_pipeline::render_table(&name, t));
        println!();
    }
    if run.summaries.is_empty() {
        println!("(no summary tables)");
    }
    println!(
        "files:   {}",
        if run.files.is_empty() {
            "none".to_string()
        } else {
            run.files.join(", ")
        }
    );
    let per_record = |total: f64| {
        if run.records == 0 {
            "n/a (no records)".to_string()
        } else {
            format!("{:.1}", total / run.records as f64)
        }
    };
    println!("cost:");
    println!(
        "  wall ns per record:       {} ({:.3} ms delivering and finishing)",
        per_record(run.wall.as_nanos() as f64),
        run.wall.as_secs_f64() * 1e3
    );
    match counted.instructions {
        Some(n) => println!(
            "  instructions per record:  {} ({n} in all)",
            per_record(n as f64)
        ),
        None => println!("  instructions per record:  not counted"),
    }
    println!(
        "  peak memory:              {} bytes",
        run.peak_memory.max(counted.peak_memory)
    );
    let mut failures: Vec<String> = run.failures.into_iter().chain(counted.failures).collect();
    // Only for a plugin that ran clean: a failing one fails the merge too.
    if failures.is_empty() {
        let seed = merge_seed.unwrap_or_else(|| fastrand::u64(..));
        match merge_check::check(&timed, &name, file, trace, config, seed)
            .with_context(|| format!("the merge check (seed {seed})"))?
        {
            MergeVerdict::NotExported => println!(
                "merge:   not exported (its results are per process: a run over many \
                 processes cannot merge them; export `merge`, WIT 0.3.1, to make them merge)"
            ),
            MergeVerdict::Equal {
                parts,
                trees,
                tables,
            } => println!(
                "merge:   {parts} parts at random cuts, merged in {trees} random trees: \
                 the {tables} table(s) of one pass (seed {seed})"
            ),
            MergeVerdict::Differs(why) => {
                for d in &why {
                    println!("differs: {d}");
                }
                failures.push(format!(
                    "merged partial results differ from one pass (seed {seed}, \
                     `--merge-seed {seed}` repeats it): {}",
                    why.join("; ")
                ));
            }
        }
    }
    if let Some((path, expected)) = &expected {
        let got: Vec<ExpectedTable> = run
            .summaries
            .iter()
            .map(|t| ExpectedTable {
                title: t.title.clone(),
                columns: t.columns.clone(),
                rows: t.rows.clone(),
            })
            .collect();
        let differences = expected.differences(&got);
        if !differences.is_empty() {
            for d in &differences {
                println!("differs: {d}");
            }
            return Err(Failure::runtime(format!(
                "{} does not return the tables {} expects on {}: {}",
                file.display(),
                path.display(),
                trace.display(),
                differences.join("; ")
            )));
        }
        println!(
            "expect:  {} table(s) as {} expects",
            expected.tables.len(),
            path.display()
        );
    }
    if failures.is_empty() {
        return Ok(());
    }
    for f in &failures {
        println!("failure: {f}");
    }
    Err(Failure::runtime(format!(
        "{} failed on {}: {}",
        file.display(),
        trace.display(),
        failures.join("; ")
    )))
}
