//! `rocwasm-plugin-host`: the WebAssembly plugin host.
//!
//! Plugins are Wasm *components* implementing one of the two worlds of the
//! `rocwasm:plugin` WIT package (`wit/worlds.wit`): an **analysis** (a
//! ROCprofiler-SDK tool: life cycle, batch deliveries, callbacks, external
//! correlation requests) or a **transform** (a batch in, a batch out). This
//! crate compiles, sandboxes and drives them:
//!
//! - [`PluginEngine`]: one wasmtime [`Engine`](wasmtime::Engine) per process with
//!   epoch interruption and a ticker thread, an on-disk cache of compiled
//!   components ([`cache`]), world detection ([`world`]), and
//!   [`PluginEngine::inspect`] for `rocwasm plugin inspect`.
//! - `Plugin` (internal): one long-lived instance in its own `Store` with a
//!   memory cap, a per-call deadline and, only for guests that import WASI,
//!   a deny-all WASI context ([`sandbox`]). Host imports live in `host/`,
//!   one small struct per WIT interface; the store's data holds them.
//! - [`failure`]: what happens when a plugin traps, overruns its deadline or
//!   hits its memory cap ([`FailurePolicy`]), and the [`FailureReport`]s.
//! - What the host accepts from a guest is capped: one call copies at most
//!   [`sandbox::MAX_CALL_COPY_BYTES`] out of it, `fini`'s summary tables are
//!   cut to [`summary_caps`], a log message to 4 KiB, output to the stage's
//!   quota; what goes over is refused and reported once
//!   ([`FailureCause::Oversized`]).
//! - [`Chain`]: the ordered stages of a run, their life cycle, and delivery.
//!
//! A run goes: [`PluginEngine::new`] → [`Chain::new`] with [`StageSpec`]s (compiles,
//! configures, initialises, locks configuration) → [`Chain::deliver`] per batch →
//! [`Chain::finish`] (final flush, `fini` once per plugin, summaries, reports).
//!
//! # Modules, bottom to top
//!
//! Each module uses only modules listed before it (`cargo xtask
//! check-layers` fails on an import cycle):
//!
//! 1. The vocabulary: `bindings` (generated from the WIT), `env`
//!    ([`HostEnv`]: what the embedder gives every plugin, and the run's
//!    [`Processes`]), `convert` (core batches to WIT and back), [`filter`],
//!    `guest_log` (a guest's text in the host's log, rate-limited: the `log`
//!    interface's gate, WASI stdout/stderr), [`sandbox`], [`failure`] (and
//!    its `classify`: which cause a wasmtime error is), [`spec`], [`world`],
//!    [`summary_caps`], `owned_files` (the trust rule and atomic write of
//!    the cache's files), [`digest_memo`] and [`cache`].
//! 2. `host`: the WIT imports, one small struct per interface, each knowing
//!    only its own state; the profiler imports reach their stage through a
//!    link the stage hands them, not by naming it.
//! 3. `state`: a plugin store's data, holding one of each host struct, and
//!    the linking of each interface to its own field (under the current
//!    package version's names and every earlier one's); `legacy`: the
//!    exports of components built against an earlier version.
//! 4. [`engine`]: the engine, the cache and the linkers; compiled plugins.
//! 5. `plugin`: one instance, its store and its failure policy; its
//!    children: `instance` (the store and the instance of either world),
//!    `recovery` (the policy applied after a failure), `lifecycle` and
//!    `delivery` (the calls a stage makes).
//! 6. `stage`: a plugin behind its lock, and the engine's sinks into it.
//! 7. [`chain`]: the stages of a run and their shared delivery.

mod bindings;
pub mod cache;
pub mod chain;
mod convert;
pub mod digest_memo;
pub mod engine;
mod env;
pub mod failure;
pub mod filter;
mod guest_log;
mod host;
mod legacy;
mod owned_files;
mod packed_world;
mod plugin;
pub mod sandbox;
pub mod spec;
mod stage;
mod state;
pub mod summary_caps;
pub mod world;

pub use chain::{Chain, ChainOutcome, ChainOutput, PartOutcome};
pub use engine::{CompiledPlugin, EngineConfig, PluginEngine, PluginInfo};
pub use env::{HostEnv, OperationNameTable, OutputClaim, Processes, TracedProcess};
pub use failure::{FailureCause, FailurePolicy, FailureReport};
pub use filter::{KindFilter, OpFilter, StageView};
pub use plugin::{PartEnd, Partial, StageMetrics};
pub use spec::{BufferSettings, Limits, StageSpec};
pub use world::World;

/// A summary table returned by a plugin's `fini` (e.g. the `--stats` columns).
pub use bindings::types::SummaryTable;
