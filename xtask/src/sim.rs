//! `cargo xtask build-sim`: the simulated AMD runtime and the sample apps.
//!
//! Produces `<root>/target/sim/`:
//! - `lib/libhsa-runtime64.so.1`, `lib/libamdhip64.so.5`, `lib/libroctx64.so.4`
//!   (the `sim-*` cdylibs under their real names) plus unversioned symlinks;
//! - `bin/vector_add` (C, gcc, linked against Debian's real libamdhip64),
//!   `bin/vector_add_kernels.co` (its code object, `hipcc --genco`), and
//!   `bin/multi_kernel` (hipcc `--offload-arch=gfx90a`), and
//!   `bin/crash_after_kernels` (C, gcc: launches kernels, then exits,
//!   crashes or kills itself).
//!
//! Run a sample on the simulated GPU with
//! `LD_LIBRARY_PATH=target/sim/lib target/sim/bin/multi_kernel`.
//! [`build_release_libraries`] adds `lib-release/`, the same libraries
//! optimised, for the benches.
//! The libraries are always built into `<root>/target` (whatever
//! `CARGO_TARGET_DIR` says) so every caller finds them in the same place.
//! Sample apps are rebuilt only when a source is newer than the output.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::util::{root, run};

/// `(cargo artefact, real file name, unversioned link name)`.
const LIBRARIES: &[(&str, &str, &str)] = &[
    (
        "libsim_hsa.so",
        "libhsa-runtime64.so.1",
        "libhsa-runtime64.so",
    ),
    ("libsim_hip.so", "libamdhip64.so.5", "libamdhip64.so"),
    ("libsim_roctx.so", "libroctx64.so.4", "libroctx64.so"),
];

/// Builds everything and returns `<root>/target/sim`.
pub fn build() -> Result<PathBuf> {
    build_with(&["-p", "sim-hsa", "-p", "sim-hip", "-p", "sim-roctx"])
}

/// As [`build`], with `cargo build` given `selection` (which packages and
/// targets) instead of the three `sim-*` crates: `cargo xtask test` builds
/// the whole workspace here in one go, with the features `cargo test`
/// will use (see [`crate::util::TEST_BUILD`]).
pub fn build_with(selection: &[&str]) -> Result<PathBuf> {
    let root = root();
    let target = root.join("target");
    let out = target.join("sim");
    let (lib, bin) = (out.join("lib"), out.join("bin"));
    std::fs::create_dir_all(&lib).with_context(|| format!("cannot create {}", lib.display()))?;
    std::fs::create_dir_all(&bin).with_context(|| format!("cannot create {}", bin.display()))?;

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo)
        .arg("build")
        .args(selection)
        .arg("--target-dir")
        .arg(&target)
        .current_dir(&root))?;
    install_libraries(&target.join("debug"), &lib)?;

    let apps = root.join("examples/apps");
    let roctx = lib.join("libroctx64.so.4");
    let kernels_src = apps.join("vector_add_kernels.hip");
    let kernels_co = bin.join("vector_add_kernels.co");
    if stale(&kernels_co, &[&kernels_src]) {
        run(compiler("hipcc")?
            .args(["--genco", "--offload-arch=gfx90a", "-O2"])
            .arg(&kernels_src)
            .arg("-o")
            .arg(&kernels_co))?;
    }
    let c_src = apps.join("vector_add.c");
    let c_bin = bin.join("vector_add");
    if stale(&c_bin, &[&c_src, &roctx]) {
        // Linked against Debian's real libamdhip64 (default search path);
        // roctx by file, because Debian ships no libroctx64.
        run(compiler("gcc")?
            .args(["-D__HIP_PLATFORM_AMD__", "-O2", "-Wall"])
            .arg(&c_src)
            .arg("-o")
            .arg(&c_bin)
            .args(["-lamdhip64", "-lpthread"])
            .arg(&roctx))?;
    }
    let crash_src = apps.join("crash_after_kernels.c");
    let crash_bin = bin.join("crash_after_kernels");
    if stale(&crash_bin, &[&crash_src]) {
        run(compiler("gcc")?
            .args(["-D__HIP_PLATFORM_AMD__", "-O2", "-Wall"])
            .arg(&crash_src)
            .arg("-o")
            .arg(&crash_bin)
            .arg("-lamdhip64"))?;
    }
    let hip_src = apps.join("multi_kernel.hip");
    let hip_bin = bin.join("multi_kernel");
    if stale(&hip_bin, &[&hip_src, &roctx]) {
        run(compiler("hipcc")?
            .args(["--offload-arch=gfx90a", "-O2"])
            .arg(&hip_src)
            .arg("-o")
            .arg(&hip_bin)
            // `-Wl,` so hipcc hands the library to the linker instead of
            // taking `.so.4` for a source file.
            .arg(format!("-Wl,{}", roctx.display()))
            .arg("-lpthread"))?;
    }
    Ok(out)
}

/// The simulated runtime's libraries built optimised (`cargo build
/// --release`), in `<root>/target/sim/lib-release`, for the benches: the
/// HIP-call and end-to-end rows compare a traced run with an untraced one
/// on the same runtime, and an unoptimised runtime would make the extra HSA
/// work tracing asks of it (signals, completion handlers) look many times
/// dearer than a real runtime's. The sample apps of [`build`] load these
/// through `LD_LIBRARY_PATH` (they name the libraries by soname).
pub fn build_release_libraries() -> Result<PathBuf> {
    let root = root();
    let target = root.join("target");
    let lib = target.join("sim/lib-release");
    std::fs::create_dir_all(&lib).with_context(|| format!("cannot create {}", lib.display()))?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo)
        .args(["build", "--release", "--lib"])
        .args(["-p", "sim-hsa", "-p", "sim-hip", "-p", "sim-roctx"])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(&root))?;
    install_libraries(&target.join("release"), &lib)?;
    Ok(lib)
}

/// Copies the `sim-*` cdylibs of cargo's `profile_dir` into `lib` under
/// their real names, with the unversioned links.
fn install_libraries(profile_dir: &Path, lib: &Path) -> Result<()> {
    for (artefact, name, link) in LIBRARIES {
        let from = profile_dir.join(artefact);
        let to = lib.join(name);
        if !stale(&to, &[&from]) {
            continue;
        }
        // Copy through a temporary file so a running program never sees a
        // half-written library.
        let tmp = lib.join(format!(".{name}.tmp"));
        std::fs::copy(&from, &tmp).with_context(|| format!("cannot copy {}", from.display()))?;
        std::fs::rename(&tmp, &to)?;
        let link_path = lib.join(link);
        let _ = std::fs::remove_file(&link_path);
        std::os::unix::fs::symlink(name, &link_path)
            .with_context(|| format!("cannot link {}", link_path.display()))?;
    }
    Ok(())
}

/// True if `output` is missing or older than any input.
fn stale(output: &Path, inputs: &[&Path]) -> bool {
    let Ok(built) = std::fs::metadata(output).and_then(|m| m.modified()) else {
        return true;
    };
    inputs.iter().any(|i| {
        std::fs::metadata(i)
            .and_then(|m| m.modified())
            .map_or(true, |t| t > built)
    })
}

/// A compiler command with a clean library path: under `cargo test`,
/// `LD_LIBRARY_PATH` holds build-script directories (one has sim-hip's HSA
/// link stub, named `libhsa-runtime64.so.1`), and the linker would resolve
/// the real libamdhip64's dependencies against it.
fn compiler(name: &str) -> Result<Command> {
    let mut cmd = Command::new(tool(name)?);
    cmd.env_remove("LD_LIBRARY_PATH");
    Ok(cmd)
}

/// Finds a build tool on PATH, with a hint when it is missing.
fn tool(name: &str) -> Result<&str> {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output();
    match found {
        Ok(o) if o.status.success() => Ok(name),
        _ => bail!("{name} not found: the sample apps need Debian's ROCm 5.2 packages (run `cargo xtask setup`)"),
    }
}
