//! C plugins: `.c` files → a component, with no WASI.
//!
//! The route, and why (a fresh machine should not spend minutes on tools):
//!
//! 1. **Bindings** are generated in-process by the `wit-bindgen-c` crate
//!    used as a library over the WIT package ([`generate_bindings`]):
//!    `<world>.h`, `<world>.c` and `<world>_component_type.o` (the world's
//!    type information, linked into the core module so step 3 knows which
//!    WIT the module implements). No `cargo install wit-bindgen-cli`.
//! 2. **Compile and link** ([`compile`]) with Debian's `clang-14` (found on
//!    `PATH`) for `wasm32-wasi` against Debian 12's `wasi-libc` (malloc,
//!    memcpy, string functions), with `libclang-rt-14-dev-wasm32` for
//!    compiler builtins and `lld-14`'s `wasm-ld`: a *reactor*
//!    (`-mexec-model=reactor`), whose `_initialize` runs the C constructors
//!    and which has no `main`. Each `.c` is compiled separately: the
//!    plugin's own sources with `-Wall -Wextra` (and `-Werror` when asked),
//!    the generated file without `-Werror` (its warnings are not ours).
//! 3. **Component** ([`componentize`]): `wit-component`'s
//!    `ComponentEncoder` turns the core module into a component, in-process
//!    (no `wasm-tools` or `jco`, no WASI adapter).
//!
//! The hot path imports no WASI: before step 3 the core module's imports are
//! checked, and an import from anywhere but the `rocwasm:plugin/*`
//! interfaces (a `wasi_snapshot_preview1` function pulled in by `printf`,
//! `fopen`, `getenv`, `exit`, …) fails the build and names the function,
//! instead of being papered over with an adapter.
//!
//! Optimisation is always `-O2`: the C build takes about a second.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};

use crate::missing::MissingTool;
use crate::process::{run, which};

/// The WIT package's interfaces: the only imports a no-WASI plugin may have.
const WIT_NAMESPACE: &str = "rocwasm:plugin/";

/// The Debian 12 packages of the C route.
pub const DEBIAN_PACKAGES: &str = "clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32";

/// Paths of the Debian 12 toolchain (clang-14, lld-14, wasi-libc,
/// libclang-rt-14-dev-wasm32).
#[derive(Debug, Clone)]
pub struct Toolchain {
    clang: PathBuf,
}

impl Toolchain {
    const WASM_LD: &'static str = "/usr/lib/llvm-14/bin/wasm-ld";
    const LIBC: &'static str = "/usr/lib/wasm32-wasi/libc.a";
    const CRT_REACTOR: &'static str = "/usr/lib/wasm32-wasi/crt1-reactor.o";

    /// The toolchain, or the first piece missing and how to install it.
    pub fn find() -> Result<Toolchain, MissingTool> {
        let missing = |tool: &str| {
            MissingTool::new(
                tool,
                "building C plugins",
                format!("apt-get install {DEBIAN_PACKAGES}"),
            )
        };
        let clang = which("clang-14").ok_or_else(|| missing("clang-14"))?;
        for (file, tool) in [
            (Self::WASM_LD, "wasm-ld (lld-14)"),
            (Self::LIBC, "wasi-libc"),
            (Self::CRT_REACTOR, "wasi-libc"),
        ] {
            if !Path::new(file).is_file() {
                return Err(missing(tool));
            }
        }
        if builtins().is_none() {
            return Err(missing(
                "libclang_rt.builtins-wasm32.a (libclang-rt-14-dev-wasm32)",
            ));
        }
        Ok(Toolchain { clang })
    }

    /// clang with the flags shared by compiling and linking.
    pub fn command(&self) -> Command {
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

/// What one C plugin is made of.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The plugin's name (names the core module in `work`).
    pub name: String,
    /// The world it implements.
    pub world: String,
    /// Its `.c` files.
    pub files: Vec<PathBuf>,
    /// Include directories besides the bindings' (e.g. `rocwasm.h`'s).
    pub includes: Vec<PathBuf>,
    /// Whether a warning in the plugin's own sources fails the build.
    pub werror: bool,
}

/// Every `.c` file directly in `dir`, sorted.
pub fn c_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    Ok(files)
}

/// Compiles and links `src` against the bindings in `gen` (see
/// [`generate_bindings`]); the path of its core module, in `work`.
pub fn compile(toolchain: &Toolchain, src: &Sources, gen: &Path, work: &Path) -> Result<PathBuf> {
    ensure!(
        !src.files.is_empty(),
        "C plugin `{}` has no .c files",
        src.name
    );
    fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let c_world = src.world.replace('-', "_");
    let generated = gen.join(format!("{c_world}.c"));
    let mut objects = vec![gen.join(format!("{c_world}_component_type.o"))];
    for (source, own) in src
        .files
        .iter()
        .map(|s| (s, true))
        .chain([(&generated, false)])
    {
        let file = source.file_name().unwrap_or(source.as_os_str());
        let object = work.join(file).with_extension("o");
        let mut cmd = toolchain.command();
        cmd.args(["-std=c11", "-c"]);
        if own {
            cmd.args(["-Wall", "-Wextra"]);
            if src.werror {
                cmd.arg("-Werror");
            }
        }
        cmd.arg("-I").arg(gen);
        for include in &src.includes {
            cmd.arg("-I").arg(include);
        }
        cmd.arg(source).arg("-o").arg(&object);
        run(&mut cmd)?;
        objects.push(object);
    }
    let core = work.join(format!("{}.core.wasm", src.name));
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
    run(&mut link)?;
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

/// Bindings, compile, link, component: the whole route for one plugin.
/// Generated files go to `work/gen/<world>`, objects to `work/<name>`.
pub fn build(toolchain: &Toolchain, wit_dir: &Path, src: &Sources, work: &Path) -> Result<Vec<u8>> {
    let gen = work.join("gen").join(&src.world);
    generate_bindings(wit_dir, &src.world, &gen)?;
    let core = compile(toolchain, src, &gen, &work.join(&src.name))?;
    let bytes = fs::read(&core).with_context(|| format!("cannot read {}", core.display()))?;
    componentize(&src.name, &bytes)
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
}
