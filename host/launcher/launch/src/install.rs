//! Where rocwasm's own files are: the tool library a run preloads, the
//! rocprofiler-sdk tool, the simulated runtime, the stock plugins.
//!
//! An installed rocwasm keeps them beside its binary (`bin/rocwasm`,
//! `lib/librocwasm_intercept.so`, `lib/rocwasm/plugins/`); a build tree
//! has them in the cargo target directory (`target/debug/rocwasm`,
//! `target/debug/librocwasm_intercept.so`, `target/sim/lib/`,
//! `target/plugins/`). An [`Install`] is that place, given by the caller
//! (the CLI passes its own executable's), so nothing here depends on which
//! program is running; a file set explicitly ([`Install::with_tool_library`],
//! …) wins over the environment variables, which win over the place.

use std::path::{Path, PathBuf};

use rocwasm_config::{Fetcher, LoadOptions};

/// The tool library's file name.
pub const TOOL_LIB: &str = "librocwasm_intercept.so";

/// rocwasm's rocprofiler-sdk tool's file name (`rocwasm-sdk-tool`).
pub const SDK_TOOL_LIB: &str = "librocwasm_sdk_tool.so";

/// The simulated HIP runtime's file name: a directory holding it holds the
/// simulated runtime.
pub const SIM_HIP_LIB: &str = "libamdhip64.so.5";

/// Where rocwasm's files are: the directory of the `rocwasm` binary (or of
/// a program laid out like it), and files set explicitly.
#[derive(Debug, Clone, Default)]
pub struct Install {
    exe: Option<PathBuf>,
    tool_library: Option<PathBuf>,
    sdk_tool: Option<PathBuf>,
    sim_libs: Option<PathBuf>,
    plugin_dirs: Vec<PathBuf>,
}

impl Install {
    /// The files of the rocwasm whose binary is `exe` (it need not exist:
    /// only its directory is used).
    pub fn beside(exe: &Path) -> Install {
        Install {
            exe: Some(exe.to_path_buf()),
            ..Install::default()
        }
    }

    /// The files of the running program, as if it were the `rocwasm`
    /// binary ([`std::env::current_exe`]); only the environment variables
    /// when its path is unknown.
    pub fn current_exe() -> Install {
        match std::env::current_exe() {
            Ok(exe) => Install::beside(&exe),
            Err(_) => Install::default(),
        }
    }

    /// Uses the tool library `path` (else `ROCWASM_INTERCEPT_LIB`, else
    /// [`TOOL_LIB`] beside the binary).
    pub fn with_tool_library(mut self, path: impl Into<PathBuf>) -> Install {
        self.tool_library = Some(path.into());
        self
    }

    /// Uses the rocprofiler-sdk tool `path` (else `ROCWASM_SDK_TOOL_LIB`,
    /// else [`SDK_TOOL_LIB`] beside the binary).
    pub fn with_sdk_tool(mut self, path: impl Into<PathBuf>) -> Install {
        self.sdk_tool = Some(path.into());
        self
    }

    /// Uses the simulated runtime in `dir` (else `ROCWASM_SIM_LIB`, else
    /// `sim/lib` near the binary).
    pub fn with_sim_libs(mut self, dir: impl Into<PathBuf>) -> Install {
        self.sim_libs = Some(dir.into());
        self
    }

    /// Searches `dir` for stock plugins first, before the standard search
    /// path (`ROCWASM_PLUGIN_PATH`, then the plugins installed beside the
    /// binary).
    pub fn with_plugin_dir(mut self, dir: impl Into<PathBuf>) -> Install {
        self.plugin_dirs.push(dir.into());
        self
    }

    /// The tool library: set explicitly, `ROCWASM_INTERCEPT_LIB`, next to
    /// the binary, in `../lib`, or in the cargo target directory the
    /// binary was built into.
    pub fn tool_library(&self) -> Option<PathBuf> {
        self.tool_library
            .clone()
            .or_else(|| self.find("ROCWASM_INTERCEPT_LIB", TOOL_LIB))
    }

    /// rocwasm's rocprofiler-sdk tool, found as the tool library is
    /// (`ROCWASM_SDK_TOOL_LIB`).
    pub fn sdk_tool(&self) -> Option<PathBuf> {
        self.sdk_tool
            .clone()
            .or_else(|| self.find("ROCWASM_SDK_TOOL_LIB", SDK_TOOL_LIB))
    }

    /// The simulated runtime's directory (`target/sim/lib`): set
    /// explicitly, `ROCWASM_SIM_LIB`, or relative to the binary.
    pub fn sim_libs(&self) -> Option<PathBuf> {
        if let Some(dir) = &self.sim_libs {
            return Some(dir.clone());
        }
        if let Some(p) = std::env::var_os("ROCWASM_SIM_LIB") {
            return Some(PathBuf::from(p));
        }
        let dir = self.exe.as_deref()?.parent()?;
        [
            dir.join("../sim/lib"),
            dir.join("../../sim/lib"),
            dir.join("sim/lib"),
        ]
        .into_iter()
        .find(|p| p.join(SIM_HIP_LIB).is_file())
        .map(|p| p.canonicalize().unwrap_or(p))
    }

    /// The directories searched for stock plugin names: those set
    /// explicitly, then `ROCWASM_PLUGIN_PATH`, then `../plugins` and
    /// `../lib/rocwasm/plugins` from the binary.
    pub fn plugin_path(&self) -> Vec<PathBuf> {
        let mut dirs = self.plugin_dirs.clone();
        dirs.extend(rocwasm_config::resolve::standard_plugin_path(
            self.exe.as_deref(),
        ));
        dirs
    }

    /// How a chain file is loaded with this install's plugins; `fetcher`
    /// pulls shipped plugins (`oci://…`), `None` refuses them.
    pub fn load_options(&self, fetcher: Option<Fetcher>) -> LoadOptions {
        let options = LoadOptions {
            plugin_path: self.plugin_path(),
            check_plugins: true,
            fetcher,
        };
        tracing::debug!(search_path = ?options.plugin_path, "plugin search path");
        options
    }

    /// A library rocwasm installs beside itself: the one environment
    /// variable `env` names, else `name` next to the binary, in `../lib`,
    /// or in the cargo target directory the binary was built into.
    fn find(&self, env: &str, name: &str) -> Option<PathBuf> {
        if let Some(p) = std::env::var_os(env) {
            return Some(PathBuf::from(p));
        }
        let dir = self.exe.as_deref()?.parent()?;
        let candidates = [
            dir.join(name),
            dir.join("../lib").join(name),
            // `target/debug/deps/rocwasm-…` (test binaries) → `target/debug/`.
            dir.join("..").join(name),
        ];
        candidates
            .into_iter()
            .find(|p| p.is_file())
            .map(|p| p.canonicalize().unwrap_or(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_found_beside_the_binary_and_explicit_ones_win() {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        let lib = root.path().join("lib");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(lib.join(TOOL_LIB), b"").unwrap();
        let install = Install::beside(&bin.join("rocwasm"));
        // `../lib` from the binary (unless the environment names one).
        if std::env::var_os("ROCWASM_INTERCEPT_LIB").is_none() {
            assert_eq!(
                install.tool_library(),
                Some(lib.join(TOOL_LIB).canonicalize().unwrap())
            );
        }
        if std::env::var_os("ROCWASM_SDK_TOOL_LIB").is_none() {
            assert_eq!(install.sdk_tool(), None);
        }
        let explicit = install
            .clone()
            .with_tool_library("/elsewhere/tool.so")
            .with_sim_libs("/elsewhere/sim")
            .with_plugin_dir("/elsewhere/plugins");
        assert_eq!(
            explicit.tool_library(),
            Some(PathBuf::from("/elsewhere/tool.so"))
        );
        assert_eq!(explicit.sim_libs(), Some(PathBuf::from("/elsewhere/sim")));
        let path = explicit.plugin_path();
        assert_eq!(path[0], Path::new("/elsewhere/plugins"));
        assert!(path.contains(&bin.join("../plugins")), "{path:?}");
    }
}
