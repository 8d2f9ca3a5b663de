//! `rocwasm plugin inspect FILE`: what a component is before anyone runs it
//! (world, imports, exports, size, digest), from rocwasm-plugin-host's
//! [`PluginEngine::inspect`]. Nothing is instantiated.

use std::path::Path;

use anyhow::Context;
use rocwasm_plugin_host::{EngineConfig, PluginEngine};

use crate::failure::{Failure, Result};

pub fn inspect(file: &Path) -> Result {
    let meta =
        std::fs::metadata(file).map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    if !meta.is_file() {
        return Err(Failure::usage(format!("{}: not a file", file.display())));
    }
    let runtime =
        PluginEngine::new(EngineConfig::default()).context("starting the Wasm runtime")?;
    let info = runtime
        .inspect(file)
        .with_context(|| format!("{} is not a loadable component", file.display()))?;
    println!("file:     {}", info.path.display());
    println!("size:     {} bytes", info.size);
    println!("sha256:   {}", info.digest);
    match &info.world {
        Ok(world) => println!(
            "world:    {} (rocwasm:plugin@{})",
            world.wit_name(),
            info.version.as_str()
        ),
        Err(why) => println!("world:    none ({why})"),
    }
    println!(
        "wasi:     {}",
        if info.imports_wasi {
            "imported (a deny-all context is linked)"
        } else {
            "not imported"
        }
    );
    if info.world == Ok(rocwasm_plugin_host::World::Analysis) {
        println!(
            "merge:    {}",
            if info.mergeable {
                "exported (its results merge across instances and processes)"
            } else {
                "not exported (its results are per process)"
            }
        );
    }
    println!("imports:");
    for i in &info.imports {
        println!("  {i}");
    }
    println!("exports:");
    for e in &info.exports {
        println!("  {e}");
    }
    Ok(())
}
