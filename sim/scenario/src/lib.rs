//! The scenario that drives the simulated AMD runtime.
//!
//! A scenario says what the virtual machine looks like (how many GPUs, their
//! names), how long simulated work takes (per-kernel cost, copy bandwidth,
//! where the virtual clock starts), which calls fail on purpose, and which
//! host functions stand in for kernels. It comes from the TOML file named by
//! `ROCWASM_SIM_SCENARIO`, then a few environment variables override it
//! (`ROCWASM_SIM_DEVICES`, `ROCWASM_SIM_ARCH`). With neither, [`Scenario::default`]
//! describes one gfx90a GPU.
//!
//! Both `libhsa-runtime64` and `libamdhip64` read the scenario on their own
//! (each is a separate shared library), so it is parsed once per library and
//! must be a pure function of the file and the environment.
//!
//! The timing model lives here too ([`Scenario::kernel_duration_ns`],
//! [`Scenario::copy_duration_ns`]) so tests can predict every timestamp.

pub mod counters;
mod errors;
mod model;

pub use counters::{Launch, Shape};
pub use errors::{ErrorInjector, InjectedError};
pub use model::{Clock, Copy, Device, Effect, KernelCost, Kernels, Mix, ResolvedMix, Scenario};

use std::path::Path;

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario file could not be read.
    #[error("cannot read scenario {path}: {source}")]
    Read {
        /// The file, as displayed (from `ROCWASM_SIM_SCENARIO` when loaded by
        /// [`Scenario::from_env`]).
        path: String,
        /// The I/O error from reading it.
        source: std::io::Error,
    },
    /// The scenario text is not valid TOML or does not fit the model
    /// (unknown keys are refused).
    #[error("invalid scenario {path}: {source}")]
    Parse {
        /// The label given to [`Scenario::from_toml`], usually the file path.
        path: String,
        /// The parser's error, with the line and column.
        source: toml::de::Error,
    },
    /// An override environment variable has a value that cannot be used.
    #[error("invalid value {value:?} for {var}: {reason}")]
    Env {
        /// The variable, e.g. `ROCWASM_SIM_DEVICES`.
        var: &'static str,
        /// Its value, as found.
        value: String,
        /// Why it was refused.
        reason: String,
    },
}

impl Scenario {
    /// Parses a scenario from TOML text (`path` only labels errors).
    pub fn from_toml(text: &str, path: &str) -> Result<Self, ScenarioError> {
        toml::from_str(text).map_err(|source| ScenarioError::Parse {
            path: path.into(),
            source,
        })
    }

    /// Reads a scenario file.
    pub fn from_file(path: &Path) -> Result<Self, ScenarioError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::from_toml(&text, &shown)
    }

    /// The scenario of this process: `ROCWASM_SIM_SCENARIO` (if set), then
    /// the environment overrides.
    pub fn from_env() -> Result<Self, ScenarioError> {
        let mut scenario = match std::env::var_os("ROCWASM_SIM_SCENARIO") {
            Some(path) if !path.is_empty() => Self::from_file(Path::new(&path))?,
            _ => Self::default(),
        };
        if let Ok(value) = std::env::var("ROCWASM_SIM_DEVICES") {
            let count: usize =
                value
                    .trim()
                    .parse()
                    .map_err(|e: std::num::ParseIntError| ScenarioError::Env {
                        var: "ROCWASM_SIM_DEVICES",
                        value: value.clone(),
                        reason: e.to_string(),
                    })?;
            scenario.resize_devices(count);
        }
        if let Ok(arch) = std::env::var("ROCWASM_SIM_ARCH") {
            for device in &mut scenario.devices {
                device.arch = arch.clone();
            }
        }
        Ok(scenario)
    }

    /// Like [`Scenario::from_env`], but a broken scenario is reported on
    /// stderr and replaced by the default: a runtime library must not abort
    /// the application it was loaded into.
    pub fn from_env_or_default(component: &str) -> Self {
        Self::from_env().unwrap_or_else(|e| {
            eprintln!("{component}: {e}; using the default scenario");
            Self::default()
        })
    }

    /// Sets the number of GPUs, repeating the last one described (or the
    /// default GPU) when growing.
    pub fn resize_devices(&mut self, count: usize) {
        let template = self.devices.last().cloned().unwrap_or_default();
        self.devices.resize(count, template);
    }
}

#[cfg(test)]
mod tests;
