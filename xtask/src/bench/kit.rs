//! The plugin kit's sample analysis in every guest language: what the same
//! plugin costs in Rust, C, Python and JS.
//!
//! Each language's template (`rocwasm plugin new kit-LANG --lang LANG`: the
//! same analysis, dispatches and their total time, in each language) is
//! built with `rocwasm plugin build` and measured like an author would:
//! its size, its cold compile and warm (cached) load with the `load` bench,
//! and `rocwasm plugin test` on a synthetic kernel trace for wall time and
//! Wasm instructions per record. The per-record rows compare each language
//! with the Rust build of the same analysis. `docs/FIRST_PLUGIN.md` quotes
//! these rows.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use super::load;
use super::table::{Quantity, Row};
use super::trace;
use crate::util::root;

/// What the kit rows need from the bench run (passed in: this module sits
/// below the bench driver).
pub(super) struct Tools<'a> {
    /// The `rocwasm` CLI of the bench build.
    pub rocwasm: &'a Path,
    /// The `load` bench executable.
    pub load: &'a Path,
    /// Dispatches of the synthetic trace.
    pub records: u64,
    /// Cold and warm loads of the load bench.
    pub load_runs: (u32, u32),
    /// Runs a command to completion, its stdout (the driver's `output`).
    pub run: &'a dyn Fn(&mut Command) -> Result<String>,
}

/// The languages, as `--lang` spells them, and as the table names them.
const LANGS: [(&str, &str); 4] = [
    ("rust", "Rust"),
    ("c", "C"),
    ("python", "Python"),
    ("js", "JS"),
];

fn figure(lang: &str, what: &str) -> String {
    format!("kit sample, {lang}: {what}")
}

const SIZE: &str = "component size";
const COLD: &str = "cold compile vs wasmtime compile";
const WARM: &str = "warm load vs cold";
const WALL: &str = "wall per record (plugin test) vs Rust";
const INSTRUCTIONS: &str = "Wasm instructions per record vs Rust";

/// What `plugin test` measured for one language.
struct PerRecord {
    wall_ns: f64,
    instructions: f64,
}

/// Every language's rows; a language whose toolchain is missing is rows
/// saying so.
pub(super) fn rows(tools: &Tools<'_>, work: &Path) -> Vec<Row> {
    let dir = work.join("kit");
    let trace = match trace::kernel_trace(&dir, tools.records) {
        Ok(t) => t,
        Err(e) => {
            return LANGS
                .iter()
                .map(|(_, l)| Row::not_measured(figure(l, WALL), format!("{e:#}")))
                .collect()
        }
    };
    let mut rust: Option<PerRecord> = None;
    let mut rows = Vec::new();
    for (lang, name) in LANGS {
        match measure(tools, &dir, &trace, lang) {
            Ok((size, cold, compiler, warm, per)) => {
                let reference = rust.as_ref();
                rows.push(Row::measured(figure(name, SIZE), size, None));
                rows.push(Row::measured(figure(name, COLD), cold, Some(compiler)));
                rows.push(Row::measured(figure(name, WARM), warm, Some(cold)));
                rows.push(Row::measured(
                    figure(name, WALL),
                    Quantity::Ns(per.wall_ns),
                    reference.map(|r| Quantity::Ns(r.wall_ns)),
                ));
                rows.push(Row::measured(
                    figure(name, INSTRUCTIONS),
                    Quantity::Count(per.instructions),
                    reference.map(|r| Quantity::Count(r.instructions)),
                ));
                if lang == "rust" {
                    rust = Some(per);
                }
            }
            Err(e) => {
                let why = format!("{e:#}");
                for what in [SIZE, COLD, WARM, WALL, INSTRUCTIONS] {
                    rows.push(Row::not_measured(figure(name, what), why.clone()));
                }
            }
        }
    }
    rows
}

type Measured = (Quantity, Quantity, Quantity, Quantity, PerRecord);

/// Builds and measures one language's sample.
fn measure(tools: &Tools<'_>, dir: &Path, trace: &Path, lang: &str) -> Result<Measured> {
    let name = format!("kit-{lang}");
    let project = dir.join(&name);
    let _ = std::fs::remove_dir_all(&project);
    let rocwasm = tools.rocwasm;
    let target = root().join("target");
    let kit = |cmd: &mut Command| -> Result<String> {
        (tools.run)(
            cmd.env("ROCWASM_TOOLS_DIR", &target)
                .env("ROCWASM_CARGO_TARGET_DIR", target.join("plugin-kit-rust")),
        )
    };
    kit(Command::new(rocwasm)
        .args(["plugin", "new"])
        .arg(&project)
        .args(["--lang", lang]))?;
    kit(Command::new(rocwasm)
        .args(["plugin", "build"])
        .arg(&project))?;
    let wasm = project.join("target").join(format!("{name}.wasm"));
    let size = std::fs::metadata(&wasm)
        .with_context(|| format!("{} was not built", wasm.display()))?
        .len();
    let ms = load::bench(tools.run, tools.load, &wasm, tools.load_runs)?;
    let tested = kit(Command::new(rocwasm)
        .args(["plugin", "test"])
        .arg(&wasm)
        .arg("--trace")
        .arg(trace))?;
    let per = PerRecord {
        wall_ns: field(&tested, "wall ns per record:")?,
        instructions: field(&tested, "instructions per record:")?,
    };
    Ok((
        Quantity::Bytes(size as f64),
        ms("/cold_ms")?,
        ms("/compiler_ms")?,
        ms("/warm_ms")?,
        per,
    ))
}

/// The number after `label` in `plugin test`'s cost lines.
fn field(text: &str, label: &str) -> Result<f64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("`rocwasm plugin test` printed no `{label}` figure:\n{text}"))
}
