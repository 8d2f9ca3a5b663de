//! C plugins: `plugins/c/<name>/*.c` → components in
//! `target/plugins/<name>.wasm`, next to the Rust ones.
//!
//! The route, and why (CI time matters: the whole CI budget is ~20 min):
//!
//! 1. **Bindings** are generated here, in-process, by the `wit-bindgen-c`
//!    crate used as a library over `wit/` (parsed by `wit-parser`), into
//!    `target/plugins-c/gen/<world>/`: `<world>.h`, `<world>.c` and
//!    `<world>_component_type.o` (the world's type information, linked into
//!    the core module so step 3 knows which WIT the module implements).
//!    `cargo install wit-bindgen-cli` would cost ~4 min per fresh machine;
//!    the crates compile into the xtask binary instead, and the wasm-tools
//!    crates (0.254) are the generation wasmtime 48 uses.
//! 2. **Compile and link** with Debian's `clang-14` for `wasm32-wasi`
//!    against Debian 12's `wasi-libc` (malloc, memcpy, string functions),
//!    with `libclang-rt-14-dev-wasm32` for compiler builtins and `lld-14`'s
//!    `wasm-ld`: a *reactor* (`-mexec-model=reactor`), whose `_initialize`
//!    runs the C constructors and which has no `main`. Each `.c` is compiled
//!    separately: the plugin's own sources with `-Wall -Wextra -Werror`, the
//!    generated file without `-Werror` (its warnings are not ours to fix).
//! 3. **Component**: `wit-component`'s `ComponentEncoder` turns the core
//!    module into a component, in-process (no `wasm-tools` or `jco`, no
//!    WASI adapter). `_initialize` becomes the component's start function.
//!
//! The hot path imports no WASI: before step 3 the core module's imports are
//! checked, and an import from anywhere but the world's `rocwasm:plugin/*`
//! interfaces (a `wasi_snapshot_preview1` function pulled in by `printf`,
//! `fopen`, `getenv`, `exit`, …) fails the build and names the function,
//! instead of being papered over with an adapter.
//!
//! Optimisation is `-O2` in both `--debug` and release builds: the C build
//! takes about a second either way.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};

use crate::util::root;

/// The C plugins: directory under `plugins/c/` (= the component's name) and
/// the WIT world it implements.
pub const C_PLUGINS: &[(&str, &str)] = &[("queue-occupancy", "analysis-plugin")];

/// The WIT package's interfaces: the only imports a no-WASI plugin may have.
const WIT_NAMESPACE: &str = "rocwasm:plugin/";

/// Paths of the Debian 12 toolchain (clang-14, lld-14, wasi-libc,
/// libclang-rt-14-dev-wasm32).
struct Toolchain {
    clang: PathBuf,
}

impl Toolchain {
    const CLANG: &'static str = "/usr/bin/clang-14";
    const WASM_LD: &'static str = "/usr/lib/llvm-14/bin/wasm-ld";
    const LIBC: &'static str = "/usr/lib/wasm32-wasi/libc.a";
    const CRT_REACTOR: &'static str = "/usr/lib/wasm32-wasi/crt1-reactor.o";

    fn find() -> Option<Toolchain> {
        let ready = [Self::CLANG, Self::WASM_LD, Self::LIBC, Self::CRT_REACTOR]
            .iter()
            .all(|p| Path::new(p).is_file())
            && builtins().is_some();
        ready.then(|| Toolchain {
            clang: PathBuf::from(Self::CLANG),
        })
    }

    fn detect() -> Result<Toolchain> {
        if let Some(t) = Self::find() {
            return Ok(t);
        }
        eprintln!("the C toolchain for wasm is incomplete; installing packages");
        crate::setup::ensure_packages()?;
        Self::find().context(
            "no C toolchain for wasm: need /usr/bin/clang-14, lld-14's wasm-ld, wasi-libc and \
             libclang_rt.builtins-wasm32.a (apt-get install clang-14 lld-14 wasi-libc \
             libclang-rt-14-dev-wasm32, or `cargo xtask setup`)",
        )
    }

    /// Flags shared by compiling and linking.
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.clang);
        cmd.args([
            "--target=wasm32-wasi",
            // Debian's wasi-libc lives in /usr/{include,lib}/wasm32-wasi.
            "--sysroot=/usr",
            "-isystem",
            "/usr/include/wasm32-wasi",
            "-O2",
        ]);
        cmd
    }
}

/// `libclang_rt.builtins-wasm32.a` of clang 14 (the patch version varies).
fn builtins() -> Option<PathBuf> {
    fs::read_dir("/usr/lib/llvm-14/lib/clang")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("lib/wasi/libclang_rt.builtins-wasm32.a"))
        .find(|p| p.is_file())
}

/// Builds every C plugin; `(name, component bytes)` for each, which the
/// caller checks and installs as it does the Rust ones.
pub fn build_all() -> Result<Vec<(String, Vec<u8>)>> {
    let root = root();
    let toolchain = Toolchain::detect()?;
    let work = root.join("target/plugins-c");
    let mut built = Vec::new();
    for (name, world) in C_PLUGINS {
        let gen = work.join("gen").join(world);
        generate_bindings(&root.join("wit"), world, &gen)?;
        let core = compile(&toolchain, &root, name, world, &gen, &work.join(name))?;
        built.push((name.to_string(), componentize(name, &fs::read(&core)?)?));
    }
    Ok(built)
}

/// Writes the C bindings of `world` (from the WIT package in `wit_dir`) into
/// `out`; files whose contents are unchanged are left untouched.
pub fn generate_bindings(wit_dir: &Path, world: &str, out: &Path) -> Result<()> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_dir(wit_dir)
        .with_context(|| format!("parsing the WIT package in {}", wit_dir.display()))?;
    let world_id = resolve
        .select_world(&[package], Some(world))
        .with_context(|| format!("no world `{world}` in {}", wit_dir.display()))?;
    let mut files = wit_bindgen_core::Files::default();
    wit_bindgen_c::Opts::default()
        .build()
        .generate(&mut resolve, world_id, &mut files)
        .with_context(|| format!("generating C bindings for `{world}`"))?;
    fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for (file, contents) in files.iter() {
        let path = out.join(file);
        if fs::read(&path).ok().as_deref() != Some(contents) {
            fs::write(&path, contents)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}

/// Compiles and links one plugin; the path of its core module.
fn compile(
    toolchain: &Toolchain,
    root: &Path,
    name: &str,
    world: &str,
    gen: &Path,
    work: &Path,
) -> Result<PathBuf> {
    let src_dir = root.join("plugins/c").join(name);
    let include = root.join("plugins/c/include");
    let mut sources: Vec<PathBuf> = fs::read_dir(&src_dir)
        .with_context(|| format!("cannot read {}", src_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    ensure!(!sources.is_empty(), "{} has no .c files", src_dir.display());
    fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let c_world = world.replace('-', "_");
    let generated = gen.join(format!("{c_world}.c"));
    let mut objects = vec![gen.join(format!("{c_world}_component_type.o"))];
    for (source, own) in sources
        .iter()
        .map(|s| (s, true))
        .chain([(&generated, false)])
    {
        let object = work.join(source.file_name().unwrap()).with_extension("o");
        let mut cmd = toolchain.command();
        cmd.args(["-std=c11", "-c"]);
        if own {
            cmd.args(["-Wall", "-Wextra", "-Werror"]);
        }
        cmd.arg("-I")
            .arg(gen)
            .arg("-I")
            .arg(&include)
            .arg(source)
            .arg("-o")
            .arg(&object);
        crate::util::run(&mut cmd)?;
        objects.push(object);
    }
    let core = work.join(format!("{name}.core.wasm"));
    let mut link = toolchain.command();
    // --strip-debug: Debian's wasi-libc carries DWARF (~50 KB); the name
    // section stays, so trap backtraces still name functions.
    link.args([
        "-mexec-model=reactor",
        "-L",
        "/usr/lib/wasm32-wasi",
        "-Wl,--strip-debug",
    ])
    .args(&objects)
    .arg("-o")
    .arg(&core);
    crate::util::run(&mut link)?;
    Ok(core)
}

/// Checks the core module imports nothing but the world's interfaces, then
/// encodes it as a component.
pub fn componentize(name: &str, core: &[u8]) -> Result<Vec<u8>> {
    let foreign = foreign_imports(core)?;
    if !foreign.is_empty() {
        bail!(
            "C plugin `{name}` imports {} — functions from outside the WIT world \
             (most likely wasi-libc's stdio, files, environment or exit: a plugin must \
             not call printf, puts, fopen, getenv or exit; log through the `log` interface)",
            foreign.join(", ")
        );
    }
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(core)
        .with_context(|| format!("C plugin `{name}`: reading the core module"))?
        .encode()
        .with_context(|| format!("C plugin `{name}`: encoding the component"))
}

/// `module::name` of every import outside `rocwasm:plugin/*`.
fn foreign_imports(core: &[u8]) -> Result<Vec<String>> {
    let mut foreign = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(core) {
        if let wasmparser::Payload::ImportSection(reader) = payload? {
            for import in reader.into_imports() {
                let import = import?;
                if !import.module.starts_with(WIT_NAMESPACE) {
                    foreign.push(format!("{}::{}", import.module, import.name));
                }
            }
        }
    }
    Ok(foreign)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core module importing `imports` (module, name) as `() -> ()` functions.
    fn module_importing(imports: &[(&str, &str)]) -> Vec<u8> {
        fn name(out: &mut Vec<u8>, s: &str) {
            out.push(s.len() as u8);
            out.extend_from_slice(s.as_bytes());
        }
        let mut section = vec![imports.len() as u8];
        for (module, field) in imports {
            name(&mut section, module);
            name(&mut section, field);
            section.extend_from_slice(&[0x00, 0x00]); // function of type 0
        }
        let mut wasm = vec![0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
        wasm.extend_from_slice(&[0x01, 0x04, 0x01, 0x60, 0x00, 0x00]); // type 0: () -> ()
        wasm.push(0x02);
        wasm.push(section.len() as u8);
        wasm.extend_from_slice(&section);
        wasm
    }

    #[test]
    fn only_imports_outside_the_wit_package_are_foreign() {
        let wasm = module_importing(&[
            ("rocwasm:plugin/log@0.1.0", "log"),
            ("wasi_snapshot_preview1", "fd_write"),
        ]);
        assert_eq!(
            foreign_imports(&wasm).unwrap(),
            ["wasi_snapshot_preview1::fd_write"]
        );
        assert!(
            foreign_imports(&module_importing(&[("rocwasm:plugin/log@0.1.0", "log")]))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_module_importing_wasi_is_refused_with_the_function_named() {
        let wasm = module_importing(&[("wasi_snapshot_preview1", "fd_write")]);
        let err = componentize("demo", &wasm).unwrap_err().to_string();
        assert!(
            err.contains("`demo` imports wasi_snapshot_preview1::fd_write"),
            "{err}"
        );
        assert!(err.contains("printf"), "{err}");
    }

    #[test]
    fn bindings_are_generated_for_both_worlds() {
        let dir = tempfile::tempdir().unwrap();
        for world in ["analysis-plugin", "transform-plugin"] {
            let out = dir.path().join(world);
            generate_bindings(&root().join("wit"), world, &out).unwrap();
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
        assert!(generate_bindings(&root().join("wit"), "no-such-world", dir.path()).is_err());
    }
}
