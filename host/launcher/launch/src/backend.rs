//! Who measures a run (`--backend`, `[settings] backend`) and on which
//! runtime: AMD's rocprofiler-sdk and runtimes where installed, rocwasm's
//! own otherwise.

use std::path::PathBuf;

use rocwasm_plan::Backend;

use crate::error::{LaunchError, Result};
use crate::install::{Install, SDK_TOOL_LIB};

/// Who measures the run, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Measurer {
    /// rocwasm's interception.
    Builtin,
    /// A rocprofiler-sdk library with rocwasm's tool (`client`): AMD's
    /// (`amd`), else rocwasm's own tool library.
    Sdk {
        /// rocwasm's rocprofiler-sdk tool, which runs the chain.
        client: PathBuf,
        /// AMD's `librocprofiler-sdk.so.1`, when installed.
        amd: Option<PathBuf>,
    },
}

impl Measurer {
    /// Resolves `backend` for `app`: `auto` is the SDK when AMD's library
    /// is installed and `app` links rocprofiler-register (its HIP registers
    /// with the SDK), else built-in. rocwasm's tool comes from `install`.
    pub fn choose(backend: Backend, app: &str, install: &Install) -> Result<Measurer> {
        let amd = amd_sdk_library();
        let sdk = match backend {
            Backend::Builtin => false,
            Backend::RocprofilerSdk => true,
            Backend::Auto => amd.is_some() && links_rocprofiler_register(app),
        };
        if !sdk {
            return Ok(Measurer::Builtin);
        }
        let client = install.sdk_tool().ok_or_else(|| {
            LaunchError::runtime(format!(
                "--backend rocprofiler-sdk: cannot find {SDK_TOOL_LIB} next to the rocwasm binary \
                 or in the target directory (build it with `cargo build -p rocwasm-sdk-tool`, or \
                 set ROCWASM_SDK_TOOL_LIB)"
            ))
        })?;
        Ok(Measurer::Sdk { client, amd })
    }
}

impl std::fmt::Display for Measurer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Measurer::Builtin => write!(f, "builtin (rocwasm's interception)"),
            Measurer::Sdk { amd: Some(amd), .. } => {
                write!(f, "rocprofiler-sdk (AMD's {})", amd.display())
            }
            Measurer::Sdk { amd: None, .. } => write!(
                f,
                "rocprofiler-sdk (rocwasm's librocprofiler-sdk: no AMD library installed)"
            ),
        }
    }
}

/// AMD's `librocprofiler-sdk.so.1`: under `$ROCM_PATH/lib`, `/opt/rocm/lib`
/// or where the loader looks (`LD_LIBRARY_PATH`, the system directories).
fn amd_sdk_library() -> Option<PathBuf> {
    const NAME: &str = "librocprofiler-sdk.so.1";
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(root) = std::env::var_os("ROCM_PATH") {
        dirs.push(PathBuf::from(root).join("lib"));
    }
    dirs.extend(
        std::env::var("LD_LIBRARY_PATH")
            .unwrap_or_default()
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from),
    );
    for d in [
        "/opt/rocm/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs.into_iter()
        .map(|d| d.join(NAME))
        // rocwasm's own library has this SONAME too (its file is named
        // after the crate): a file of this name is AMD's.
        .find(|p| p.is_file())
}

/// True when `app`'s dynamic dependencies include rocprofiler-register
/// (HIP ≥ 6.2 links it to hand its tables to the SDK).
fn links_rocprofiler_register(app: &str) -> bool {
    std::process::Command::new("ldd")
        .arg(app)
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("librocprofiler-register"))
}

/// True when a real ROCm HIP or HSA runtime is installed where the dynamic
/// loader looks (LD_LIBRARY_PATH, the ROCm prefix, the system directories).
pub fn amd_runtime_installed() -> bool {
    let mut dirs: Vec<PathBuf> = std::env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect();
    for d in [
        "/opt/rocm/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs.iter().any(|d| {
        d.join("libamdhip64.so.5").exists()
            || d.join("libamdhip64.so.6").exists()
            || d.join("libhsa-runtime64.so.1").exists()
    })
}
