//! JavaScript plugins: `plugins/js/<name>/plugin.js` → components in
//! `target/plugins/<name>.wasm`, with componentize-js.
//!
//! The recipe — componentize-js pinned at
//! [`rocwasm_kit::js::COMPONENTIZE_JS`], installed with `npm install
//! --prefix` into a directory of its own (here `target/js-tools`), run
//! with node ≥ 20, `-d http fetch-event` so the component does not import
//! `wasi:http` — is [`rocwasm_kit::js`]'s, shared with `rocwasm plugin
//! build`. Here: the list of plugins (each importing `../rocwasm.js`) and
//! skipping a plugin whose inputs are unchanged ([`super::stamp`]): a
//! componentize run takes ~10–30 s.

use std::fs;

use anyhow::{Context, Result};
use rocwasm_kit::js::{componentize, ensure_tool, COMPONENTIZE_JS};

use super::stamp;
use crate::util::root;

/// The JS plugins: directory under `plugins/js/` (= the component's name)
/// and the WIT world it implements.
pub const JS_PLUGINS: &[(&str, &str)] = &[("copy-histogram", "analysis-plugin")];

/// Builds every JS plugin; `(name, component bytes)` for each.
pub fn build_all() -> Result<Vec<(String, Vec<u8>)>> {
    let root = root();
    let work = root.join("target/plugins-js");
    fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let mut cli = None;
    let mut built = Vec::new();
    for (name, world) in JS_PLUGINS {
        let src = root.join("plugins/js").join(name);
        let inputs = [
            src.clone(),
            root.join("plugins/js/rocwasm.js"),
            root.join("wit"),
        ];
        let fp = stamp::fingerprint(
            &format!("componentize-js {COMPONENTIZE_JS}"),
            world,
            &inputs,
        )?;
        let out = work.join(format!("{name}.wasm"));
        if let Some(bytes) = stamp::reuse(&out, &fp) {
            eprintln!("  {name}: inputs unchanged, reusing {}", out.display());
            built.push((name.to_string(), bytes));
            continue;
        }
        let cli = match &cli {
            Some(c) => c,
            None => {
                // A Node.js new enough, on this process's PATH.
                crate::setup::ensure_node()?;
                cli.insert(ensure_tool(&root.join("target/js-tools"), ["node", "npm"])?)
            }
        };
        componentize(cli, &src.join("plugin.js"), &root.join("wit"), world, &out)
            .with_context(|| format!("componentize-js could not build the JS plugin `{name}`"))?;
        stamp::record(&out, &fp)?;
        built.push((name.to_string(), fs::read(&out)?));
    }
    Ok(built)
}
