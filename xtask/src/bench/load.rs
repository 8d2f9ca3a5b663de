//! Plugin load: the `load` bench's cold compile and warm (cached) load of
//! one built plugin per guest language.

use std::path::Path;
use std::process::Command;

use anyhow::Result;

use super::artifacts::Built;
use super::command::{or_unmeasured, output};
use super::parse;
use super::sizes::Sizes;
use super::table::{Quantity, Row, Target};
use crate::util::root;

/// The plugin each guest language is measured with (a built stock or
/// sample plugin of `target/plugins`), and its warm-load target.
const LOAD_PLUGINS: [(&str, &str, f64); 4] = [
    ("Rust", "kernel-stats", 5.0),
    ("C", "queue-occupancy", 5.0),
    ("Python", "range-kernel-time", 10.0),
    ("JS", "copy-histogram", 10.0),
];

fn load_cold(lang: &str, plugin: &str) -> String {
    format!("plugin load, {lang} ({plugin}), cold: PluginEngine vs wasmtime compile")
}

fn load_warm(lang: &str, plugin: &str) -> String {
    format!("plugin load, {lang} ({plugin}), warm cache vs cold")
}

/// Cold compile and warm (cached) load per guest language: the load bench
/// run once per language's plugin. A plugin that is not built is a row
/// saying so, not a failure.
pub(super) fn rows(built: &Built, sizes: &Sizes) -> Vec<Row> {
    let mut rows = Vec::new();
    for (lang, plugin, warm_target) in LOAD_PLUGINS {
        let (cold, warm) = (load_cold(lang, plugin), load_warm(lang, plugin));
        let file = root().join("target/plugins").join(format!("{plugin}.wasm"));
        let measured = (|| {
            anyhow::ensure!(
                file.is_file(),
                "{} is not built (cargo xtask build-plugins)",
                file.display()
            );
            let ms = bench(&output, built.bench("load")?, &file, sizes.load_runs)?;
            Ok(vec![
                Row::measured(cold.clone(), ms("/cold_ms")?, Some(ms("/compiler_ms")?)),
                Row::measured(warm.clone(), ms("/warm_ms")?, Some(ms("/cold_ms")?))
                    .target(Target::MaxMs(warm_target)),
            ])
        })();
        rows.extend(or_unmeasured(
            measured,
            &[
                (cold.as_str(), &[]),
                (warm.as_str(), &[Target::MaxMs(warm_target)]),
            ],
        ));
    }
    rows
}

/// Runs the `load` bench on `plugin` (`runs`: its cold and warm loads)
/// with `run`, and returns its figures in milliseconds by JSON pointer
/// (`/cold_ms`, `/warm_ms`, `/compiler_ms`). The kit rows use it too.
pub(super) fn bench(
    run: &dyn Fn(&mut Command) -> Result<String>,
    exe: &Path,
    plugin: &Path,
    runs: (u32, u32),
) -> Result<impl Fn(&str) -> Result<Quantity>> {
    let out = run(Command::new(exe)
        .arg("--plugin")
        .arg(plugin)
        .args(["--json", "--cold", &runs.0.to_string()])
        .args(["--warm", &runs.1.to_string()]))?;
    let v = parse::json(&out, "load")?;
    Ok(move |p: &str| parse::number(&v, p, "load").map(Quantity::Ms))
}
