//! C plugins: `plugins/c/<name>/*.c` → components in
//! `target/plugins/<name>.wasm`, next to the Rust ones.
//!
//! The route (bindings generated in-process by wit-bindgen-c, clang-14 +
//! wasi-libc as a reactor, the component made in-process by wit-component,
//! WASI imports refused) is [`rocwasm_kit::c`]'s, shared with
//! `rocwasm plugin build`. What is particular to this repository: the list
//! of plugins, `plugins/c/include` (`rocwasm.h`) on the include path,
//! `-Werror` on our own sources, the work directory `target/plugins-c`, and
//! installing the Debian packages when the kit reports one missing.

use anyhow::Result;
use rocwasm_kit::c::{self as recipe, Sources, Toolchain};

use crate::util::root;

/// The C plugins: directory under `plugins/c/` (= the component's name) and
/// the WIT world it implements.
pub const C_PLUGINS: &[(&str, &str)] = &[("queue-occupancy", "analysis-plugin")];

/// The kit's toolchain, installing the Debian packages first when a piece
/// is missing.
fn toolchain() -> Result<Toolchain> {
    match Toolchain::find() {
        Ok(t) => Ok(t),
        Err(missing) => {
            eprintln!("{missing}; installing packages");
            crate::setup::ensure_packages()?;
            Ok(Toolchain::find()?)
        }
    }
}

/// Builds every C plugin; `(name, component bytes)` for each, which the
/// caller checks and installs as it does the Rust ones.
pub fn build_all() -> Result<Vec<(String, Vec<u8>)>> {
    let root = root();
    let toolchain = toolchain()?;
    let work = root.join("target/plugins-c");
    let mut built = Vec::new();
    for (name, world) in C_PLUGINS {
        let src = Sources {
            name: name.to_string(),
            world: world.to_string(),
            files: recipe::c_files(&root.join("plugins/c").join(name))?,
            includes: vec![root.join("plugins/c/include")],
            werror: true,
        };
        built.push((
            name.to_string(),
            recipe::build(&toolchain, &root.join("wit"), &src, &work)?,
        ));
    }
    Ok(built)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn rocwasm_h_compiles_against_both_worlds_bindings() {
        let dir = tempfile::tempdir().unwrap();
        for world in ["analysis-plugin", "transform-plugin"] {
            let out = dir.path().join(world);
            recipe::generate_bindings(&root().join("wit"), world, &out).unwrap();
            let c = world.replace('-', "_");
            for file in [
                format!("{c}.h"),
                format!("{c}.c"),
                format!("{c}_component_type.o"),
            ] {
                assert!(out.join(&file).is_file(), "{world}: no {file}");
            }
        }
        // rocwasm.h compiles cleanly against either world's bindings (the
        // transform world has no profiler or delivery imports). Needs the
        // Debian toolchain, which `cargo xtask test` installs first.
        let toolchain = Toolchain::find().expect("clang-14 and wasi-libc (cargo xtask setup)");
        for (world, define) in [
            ("analysis-plugin", None),
            ("transform-plugin", Some("-DROCWASM_WORLD_TRANSFORM")),
        ] {
            let source = dir.path().join(format!("{world}.c"));
            fs::write(&source, "#include \"rocwasm.h\"\n").unwrap();
            let mut cmd = toolchain.command();
            cmd.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-c"])
                .args(define)
                .arg("-I")
                .arg(dir.path().join(world))
                .arg("-I")
                .arg(root().join("plugins/c/include"))
                .arg(&source)
                .arg("-o")
                .arg(source.with_extension("o"));
            crate::util::run(&mut cmd).unwrap();
        }
        let header =
            fs::read_to_string(dir.path().join("analysis-plugin/analysis_plugin.h")).unwrap();
        assert!(header.contains("exports_rocwasm_plugin_analysis_deliver_batch"));
        assert!(
            recipe::generate_bindings(&root().join("wit"), "no-such-world", dir.path()).is_err()
        );
    }
}
