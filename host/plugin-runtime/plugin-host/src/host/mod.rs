//! The host side of the WIT imports: one small struct per interface.
//!
//! Each file implements one interface's generated `Host` trait on a struct
//! of its own that holds what that interface needs and nothing more, as
//! wasmtime's WASI crate does: `profiler` ([`ProfilerHost`]: the SDK verbs,
//! delegating to the `rocwasm_core` engine), `delivery` ([`DeliveryHost`]:
//! the columns a plugin is sent), `names` ([`NamesHost`]: kinds and
//! operations), `symbols` ([`SymbolsHost`]), `clock` ([`ClockHost`]), `log`
//! ([`LogHost`]), `output` ([`OutputHost`]: files in the granted directory),
//! `config` ([`ConfigHost`]) and `run` ([`RunHost`]: the processes' command
//! lines and back ends).
//!
//! A plugin's store data (`crate::state::PluginState`) holds one of each and
//! links every interface to its own field, so these files know nothing of
//! the store, the plugin or the chain: each can be read and tested alone.

mod clock;
mod config;
mod delivery;
mod log;
mod names;
mod output;
mod profiler;
mod run;
mod symbols;

pub(crate) use clock::ClockHost;
pub(crate) use config::ConfigHost;
pub(crate) use delivery::DeliveryHost;
pub(crate) use log::LogHost;
pub(crate) use names::NamesHost;
pub(crate) use output::OutputHost;
pub(crate) use profiler::{ProfilerHost, SetupMode, StageLink};
pub(crate) use run::{ProcessDetails, ProcessInfo, RunHost};
pub(crate) use symbols::SymbolsHost;
