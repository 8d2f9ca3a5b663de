//! The vocabulary of a stage and of the chain's buffer.
//!
//! These types are defined here once: the chain file's model
//! (`rocwasm-config`) fills them from TOML, the plan carries them to the
//! process that runs the chain, and the plugin host (`rocwasm-plugin-host`)
//! enforces them. On disk, durations are whole nanoseconds.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rocwasm_ids::BufferPolicy;
use serde::{Deserialize, Serialize};

use crate::serde_ids::nanos;

/// Resource caps of one plugin instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Linear memory the guest may grow to, in bytes (all memories together).
    pub memory_bytes: u64,
    /// Wall-clock budget of one delivery (`deliver-batch`, `transform-batch`)
    /// and of each life-cycle call.
    #[serde(with = "nanos", rename = "deadline_ns")]
    pub deadline: Duration,
    /// Budget of one synchronous call on an application thread
    /// (`on-callback`, `on-external-correlation-request`): the application
    /// waits for it, so it is much shorter.
    #[serde(with = "nanos", rename = "callback_deadline_ns")]
    pub callback_deadline: Duration,
    /// Total bytes the plugin may write through `output` in one run.
    pub output_bytes: u64,
    /// Log messages per second before messages are dropped (and counted).
    pub log_per_second: u32,
}

impl Limits {
    /// Default linear-memory cap: 256 MiB.
    pub const DEFAULT_MEMORY: u64 = 256 << 20;
    /// Default budget of one delivery or life-cycle call: 1 s.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(1);
    /// Default budget of one synchronous call on an application thread: 50 ms.
    pub const DEFAULT_CALLBACK_DEADLINE: Duration = Duration::from_millis(50);
    /// Default output quota: 1 GiB per run.
    pub const DEFAULT_OUTPUT_BYTES: u64 = 1 << 30;
    /// Default log rate: 100 messages per second.
    pub const DEFAULT_LOG_PER_SECOND: u32 = 100;

    /// The memory cap as a host size (saturating on 32-bit hosts).
    pub fn memory_usize(&self) -> usize {
        usize::try_from(self.memory_bytes).unwrap_or(usize::MAX)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: Self::DEFAULT_MEMORY,
            deadline: Self::DEFAULT_DEADLINE,
            callback_deadline: Self::DEFAULT_CALLBACK_DEADLINE,
            output_bytes: Self::DEFAULT_OUTPUT_BYTES,
            log_per_second: Self::DEFAULT_LOG_PER_SECOND,
        }
    }
}

/// What a stage does when its plugin traps, exceeds a limit or returns a
/// malformed reply. The application and the other stages always run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "kebab-case", deny_unknown_fields)]
pub enum FailurePolicy {
    /// Lose the batch (or callback) that failed, start a fresh instance at
    /// once and go on. The plugin's in-memory state is lost with the instance.
    Skip,
    /// Stop calling the plugin for the rest of the run (the default: the safe
    /// choice for an analysis nobody watches).
    #[default]
    Disable,
    /// Start a fresh instance after `backoff` (doubling after every further
    /// failure), at most `max` times; then disable. In a live run, records
    /// arriving while the plugin waits are missed (and counted, and the
    /// stage's tables say so); in a replay the next batch waits for the new
    /// instance, so it misses only the batch that failed.
    Restart {
        /// How many restarts at most.
        max: u32,
        /// The first wait before a restart.
        #[serde(with = "nanos", rename = "backoff_ns")]
        backoff: Duration,
    },
    /// Stop the whole run: finalise every stage and exit with status 1 when
    /// the application ends.
    Abort,
}

impl FailurePolicy {
    /// Default restart budget of `on_failure = "restart"`.
    pub const DEFAULT_MAX_RESTARTS: u32 = 3;
    /// Default first delay before a restart (doubled after each restart).
    pub const DEFAULT_RESTART_BACKOFF: Duration = Duration::from_millis(100);

    /// The chain file's name of the policy: `skip`, `disable`, `restart`, `abort`.
    pub fn name(self) -> &'static str {
        match self {
            FailurePolicy::Skip => "skip",
            FailurePolicy::Disable => "disable",
            FailurePolicy::Restart { .. } => "restart",
            FailurePolicy::Abort => "abort",
        }
    }
}

/// A chain's shared delivery buffer: size, watermark and policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSettings {
    /// Bytes in each of the buffer's two halves.
    pub size: u64,
    /// Delivery starts when this many bytes are buffered (≤ `size`).
    pub watermark: u64,
    /// Lossless (producers wait) or discard (records are dropped and counted).
    pub policy: BufferPolicy,
}

impl BufferSettings {
    /// The chain file's default buffer size: 4 MiB.
    pub const DEFAULT_SIZE: u64 = 4 << 20;
    /// The chain file's default watermark, in percent of the size.
    pub const DEFAULT_WATERMARK_PERCENT: u64 = 75;
}

impl Default for BufferSettings {
    /// A small buffer (1 MiB, delivery at half), for chains built in code.
    /// A chain file's default is [`Self::DEFAULT_SIZE`] at
    /// [`Self::DEFAULT_WATERMARK_PERCENT`].
    fn default() -> Self {
        BufferSettings {
            size: 1 << 20,
            watermark: 1 << 19,
            policy: BufferPolicy::Lossless,
        }
    }
}

/// The synchronous services a stage may configure. Callback tracing and
/// external-correlation requests both run the plugin *on the application's
/// own threads*, at every traced call: a chain grants or withholds them per
/// stage (`callbacks`, `external_correlation`), and a site policy may
/// withhold them (`[capabilities]`). `None`: the chain does not say, and the
/// service is granted unless the policy withholds it; `Some(true)` is an
/// explicit ask, which a withholding policy refuses before the run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Services {
    /// `configure-callback-tracing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callbacks: Option<bool>,
    /// `configure-external-correlation-request`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_correlation: Option<bool>,
}

impl Services {
    /// Neither said nor decided: what a plan leaves out of its file.
    pub fn is_default(&self) -> bool {
        *self == Services::default()
    }

    /// Whether callback tracing is granted (not withheld).
    pub fn callbacks_granted(&self) -> bool {
        self.callbacks != Some(false)
    }

    /// Whether external-correlation requests are granted (not withheld).
    pub fn external_correlation_granted(&self) -> bool {
        self.external_correlation != Some(false)
    }
}

/// A stage's right to write files through the WIT `output` interface.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputGrant {
    /// No grant: every `output` call fails (the default: least privilege).
    #[default]
    None,
    /// The run's output directory (`output = true`).
    RunDirectory,
    /// A subdirectory of the run's output directory (`output = "name"`).
    Subdirectory(String),
}

impl OutputGrant {
    /// The directory the grant opens, under the run's expanded output directory.
    pub fn directory(&self, run_dir: &Path) -> Option<PathBuf> {
        match self {
            OutputGrant::None => None,
            OutputGrant::RunDirectory => Some(run_dir.to_path_buf()),
            OutputGrant::Subdirectory(sub) => Some(run_dir.join(sub)),
        }
    }
}

/// Where a stage runs (the chain file's `placement`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// In the profiled process, on the engine's buffers: what answers in
    /// the call path (callbacks, external correlation) and transforms must
    /// run here. Its tables are lost if the process is killed.
    #[default]
    Application,
    /// In the `rocwasm` process that launched the application, on the
    /// batches of its record journal: an analysis that only reads batches.
    /// It never slows the application, and its results cover every record
    /// the application left, however it ended.
    Rocwasm,
}

impl Placement {
    /// Every placement, in the chain file's order.
    pub const ALL: &'static [Placement] = &[Placement::Application, Placement::Rocwasm];

    /// The chain file's name: `application` or `rocwasm`.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Application => "application",
            Placement::Rocwasm => "rocwasm",
        }
    }

    /// True for the default, [`Placement::Application`] (left out of plans).
    pub fn is_default(&self) -> bool {
        *self == Placement::Application
    }
}

/// The two plugin worlds of the WIT package (`wit/worlds.wit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum World {
    /// `analysis-plugin`: a tool with life cycle, deliveries and callbacks.
    #[default]
    Analysis,
    /// `transform-plugin`: a batch in, a batch out.
    Transform,
}

impl World {
    /// The chain file's name: `analysis` or `transform`.
    pub fn name(self) -> &'static str {
        match self {
            World::Analysis => "analysis",
            World::Transform => "transform",
        }
    }

    /// The WIT world's name: `analysis-plugin` or `transform-plugin`.
    pub fn wit_name(self) -> &'static str {
        match self {
            World::Analysis => "analysis-plugin",
            World::Transform => "transform-plugin",
        }
    }

    /// Either name.
    pub fn from_name(s: &str) -> Option<World> {
        match s {
            "analysis" | "analysis-plugin" => Some(World::Analysis),
            "transform" | "transform-plugin" => Some(World::Transform),
            _ => None,
        }
    }
}

impl std::fmt::Display for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.wit_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_policies_round_trip_in_nanoseconds() {
        let limits = Limits {
            deadline: Duration::from_millis(500),
            ..Limits::default()
        };
        let json = serde_json::to_string(&limits).unwrap();
        assert!(json.contains("\"deadline_ns\":500000000"), "{json}");
        assert_eq!(serde_json::from_str::<Limits>(&json).unwrap(), limits);
        let policy = FailurePolicy::Restart {
            max: 3,
            backoff: Duration::from_millis(100),
        };
        let json = serde_json::to_string(&policy).unwrap();
        assert_eq!(
            json,
            r#"{"policy":"restart","max":3,"backoff_ns":100000000}"#
        );
        assert_eq!(
            serde_json::from_str::<FailurePolicy>(&json).unwrap(),
            policy
        );
    }

    #[test]
    fn grants_resolve_under_the_run_directory() {
        let run = Path::new("/out/run");
        assert_eq!(OutputGrant::None.directory(run), None);
        assert_eq!(OutputGrant::RunDirectory.directory(run).unwrap(), run);
        assert_eq!(
            OutputGrant::Subdirectory("bw".into())
                .directory(run)
                .unwrap(),
            Path::new("/out/run/bw")
        );
    }
}
