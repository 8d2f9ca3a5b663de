//! # rocwasm plugin SDK
//!
//! Write rocwasm analyses in Rust. A plugin is a WebAssembly component
//! implementing one of the two worlds of the `rocwasm:plugin@0.3.2` WIT
//! package (`wit/` at the repository root): an
//! **analysis** (ROCprofiler-SDK tool life cycle, buffered batches,
//! callbacks, external-correlation requests) or a **transform** stage (a
//! batch in, edits out). This crate sits thinly on `wit-bindgen` and adds
//! what makes a plugin short:
//!
//! - [`AnalysisPlugin`] / [`TransformPlugin`]: traits with a default for every
//!   method, and [`export_analysis!`] / [`export_transform!`] to export one;
//! - the [`Batch`] read in place ([`batch`]): `batch.kernel_dispatches()` is a
//!   view whose columns are slices into the delivered buffer, and `.iter()`
//!   yields [`KernelDispatch`] structs ([`rows`]); owned tables and
//!   [`Tables`] build batches for tests; a transform answers [`Edits`];
//! - column selection ([`delivery`]): `kernel_dispatches::select(&["kernel_id",
//!   "start", "end"])` in `init`, and the host sends only those columns of
//!   the table (a column not sent is an empty slice and reads as 0);
//! - [`symbols::KernelNames`] (kernel names, one host call per batch) and
//!   [`names::OperationNames`] (API function names), both cached;
//! - [`stats`] (exact duration series, [`stats::IdSums`] for per-id hot
//!   loops, and rocprofv3 `--stats` tables: the `rocwasm-stats` crate the
//!   host uses too), [`output`]
//!   (CSV and files; [`output::write_result`] for a file that repeats a
//!   summary table, silent when the chain grants the stage no output
//!   directory), [`config`] (typed stage configuration), logging macros
//!   ([`info!`], [`warn!`], …), kind constants ([`kind`]) and
//!   [`services::trace_buffers`] for the usual `init`.
//!
//! ## Example: count kernel launches per kernel
//!
//! ```
//! use std::collections::BTreeMap;
//! use rocwasm_plugin_sdk::prelude::*;
//!
//! #[derive(Default)]
//! struct Launches {
//!     names: KernelNames,
//!     counts: BTreeMap<String, u64>,
//! }
//!
//! impl AnalysisPlugin for Launches {
//!     fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
//!         self.names.resolve(batch.kernel_dispatches().kernel_id);
//!         for d in batch.kernel_dispatches().iter() {
//!             *self.counts.entry(self.names.name(d.kernel_id).to_string()).or_default() += 1;
//!         }
//!     }
//!
//!     fn fini(&mut self) -> Vec<SummaryTable> {
//!         let mut table = SummaryTable::new("Kernel launches", &["Kernel", "Launches"]);
//!         for (name, n) in &self.counts {
//!             table.push_row([name.clone(), n.to_string()]);
//!         }
//!         vec![table]
//!     }
//! }
//!
//! rocwasm_plugin_sdk::export_analysis!(Launches);
//! # fn main() {}
//! ```
//!
//! Add `rocwasm-plugin-sdk` as a dependency (the crate must be reachable as
//! `rocwasm_plugin_sdk`: the generated bindings name it), make the crate a
//! `cdylib`, and build with `cargo xtask build-plugins` from the repository
//! root (see `plugins/README.md`).
//!
//! ## Testing
//!
//! The crate also compiles for the host target, so a plugin's pure logic can
//! have ordinary `#[test]`s run with `cargo test`. Host imports are not
//! available there (calling one panics), except logging, which goes to
//! standard error. Keep logic that needs the host at the edges.
//!
//! ## Why the bindings are generated in the plugin crate
//!
//! A component exports exactly one world. The SDK generates the *imports*
//! (`profiler`, `names`, …, and all types) once, here; the export macros
//! generate the chosen world's *exports* in the plugin crate, reusing the
//! SDK's types and imports through `wit-bindgen`'s `with`. So one SDK serves
//! both worlds without feature flags, and a plugin imports only the host
//! functions it actually calls.

pub mod batch;
pub mod config;
pub mod delivery;
pub mod kind;
pub mod log;
pub mod names;
pub mod output;
pub mod partial;
mod plugin;
pub mod rows;
pub mod run;
pub mod services;
pub mod stats;
pub mod symbols;

pub use batch::{Batch, Edits};
pub use plugin::{AnalysisPlugin, MergeablePlugin, TransformPlugin};
pub use rows::{
    ApiCall, CounterSample, KernelDispatch, MemoryAllocation, MemoryCopy, Retirement,
    RuntimeInitialization, ScratchMemory, Tables,
};

/// Bindings generated from the WIT package for every host import.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        inline: "
            package rocwasm:plugin-sdk;

            /// Everything a plugin may import; used only to generate the
            /// shared types and import functions once.
            world host-imports {
                import rocwasm:plugin/types@0.3.2;
                import rocwasm:plugin/profiler@0.3.2;
                import rocwasm:plugin/delivery@0.3.2;
                import rocwasm:plugin/names@0.3.2;
                import rocwasm:plugin/symbols@0.3.2;
                import rocwasm:plugin/clock@0.3.2;
                import rocwasm:plugin/log@0.3.2;
                import rocwasm:plugin/output@0.3.2;
                import rocwasm:plugin/config@0.3.2;
                import rocwasm:plugin/run@0.3.2;
            }
        ",
        world: "rocwasm:plugin-sdk/host-imports",
        generate_all,
        generate_unused_types: true,
    });
}

/// The host clock (`now()`), in the records' time base.
pub use bindings::rocwasm::plugin::clock;
/// The SDK verbs (contexts, buffers, services, external correlation ids),
/// exactly as the WIT declares them. See [`services`] for the common setup.
pub use bindings::rocwasm::plugin::profiler;
/// The WIT types: `ToolInfo`, `DeliveryInfo`, `Status`, … (the batch is
/// [`Batch`], read from the buffer the WIT hands over).
pub use bindings::rocwasm::plugin::types;

/// What most plugins need, in one import.
pub mod prelude {
    pub use crate::config;
    pub use crate::delivery::{self, select_columns};
    pub use crate::kind::*;
    pub use crate::names::OperationNames;
    pub use crate::output::{self, CsvWriter, OutputError};
    pub use crate::partial::{PartialReader, PartialWriter};
    pub use crate::profiler;
    pub use crate::rows::*;
    pub use crate::services::{self, StatusContext};
    pub use crate::stats::{IdSums, KeyedSums, Series, StatsTable, ToSummary};
    pub use crate::symbols::{CounterNames, KernelNames};
    pub use crate::types::{
        CallbackPayload, CallbackRecord, DeliveryInfo, ExternalCorrelationRequest, LogLevel, Phase,
        Status, SummaryTable, ToolInfo,
    };
    pub use crate::{debug, error, info, trace, warn};
    pub use crate::{AnalysisPlugin, Batch, Edits, MergeablePlugin, Tables, TransformPlugin};
}

// `__rocwasm_with_wit_dir!`, written by build.rs with the WIT directory's path.
include!(concat!(env!("OUT_DIR"), "/wit_dir.rs"));

#[doc(hidden)]
pub mod __private {
    pub use wit_bindgen;

    pub use crate::plugin::{install_panic_hook, read_batch};
}

/// Generates one world's bindings in the calling crate (see the crate docs).
#[doc(hidden)]
#[macro_export]
macro_rules! __generate_world {
    ($dir:literal; analysis) => {
        $crate::__generate_world!($dir; @analysis "rocwasm:plugin/analysis-plugin@0.3.2");
    };
    ($dir:literal; mergeable) => {
        $crate::__generate_world!($dir; @analysis "rocwasm:plugin/mergeable-analysis-plugin@0.3.2");
    };
    ($dir:literal; @analysis $world:literal) => {
        $crate::__private::wit_bindgen::generate!({
            path: $dir,
            world: $world,
            runtime_path: "::rocwasm_plugin_sdk::__private::wit_bindgen::rt",
            with: {
                "rocwasm:plugin/types@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::types,
                "rocwasm:plugin/profiler@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::profiler,
                "rocwasm:plugin/delivery@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::delivery,
                "rocwasm:plugin/names@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::names,
                "rocwasm:plugin/symbols@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::symbols,
                "rocwasm:plugin/clock@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::clock,
                "rocwasm:plugin/log@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::log,
                "rocwasm:plugin/output@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::output,
                "rocwasm:plugin/config@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::config,
                "rocwasm:plugin/run@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::run,
            },
        });
    };
    ($dir:literal; transform) => {
        $crate::__private::wit_bindgen::generate!({
            path: $dir,
            world: "rocwasm:plugin/transform-plugin@0.3.2",
            runtime_path: "::rocwasm_plugin_sdk::__private::wit_bindgen::rt",
            with: {
                "rocwasm:plugin/types@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::types,
                "rocwasm:plugin/delivery@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::delivery,
                "rocwasm:plugin/names@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::names,
                "rocwasm:plugin/symbols@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::symbols,
                "rocwasm:plugin/clock@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::clock,
                "rocwasm:plugin/log@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::log,
                "rocwasm:plugin/output@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::output,
                "rocwasm:plugin/config@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::config,
                "rocwasm:plugin/run@0.3.2": ::rocwasm_plugin_sdk::bindings::rocwasm::plugin::run,
            },
        });
    };
}

/// Keeps the one plugin instance of a component and lends it to exports.
#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_slot {
    ($plugin:ty) => {
        ::std::thread_local! {
            static PLUGIN: ::std::cell::RefCell<::std::option::Option<$plugin>> =
                const { ::std::cell::RefCell::new(::std::option::Option::None) };
        }

        fn with_plugin<R>(f: impl FnOnce(&mut $plugin) -> R) -> R {
            $crate::__private::install_panic_hook();
            PLUGIN.with_borrow_mut(|slot| {
                f(slot.get_or_insert_with(::std::default::Default::default))
            })
        }
    };
}

/// The `lifecycle` and `analysis` exports of an analysis, routed to the
/// plugin slot (used by the two analysis export macros).
#[doc(hidden)]
#[macro_export]
macro_rules! __analysis_adapter {
    ($plugin:ty) => {
        struct Adapter;

        impl exports::rocwasm::plugin::lifecycle::Guest for Adapter {
            fn configure(info: $crate::types::ToolInfo) -> bool {
                with_plugin(|p| $crate::AnalysisPlugin::configure(p, &info))
            }
            fn init() -> ::std::result::Result<(), ::std::string::String> {
                with_plugin(|p| $crate::AnalysisPlugin::init(p))
            }
            fn fini() -> ::std::vec::Vec<$crate::types::SummaryTable> {
                with_plugin(|p| $crate::AnalysisPlugin::fini(p))
            }
        }

        impl exports::rocwasm::plugin::analysis::Guest for Adapter {
            fn deliver_batch(info: $crate::types::DeliveryInfo, batch: ::std::vec::Vec<u8>) {
                if let Some(batch) = $crate::__private::read_batch(batch) {
                    with_plugin(|p| $crate::AnalysisPlugin::deliver_batch(p, &info, &batch))
                }
            }
            fn on_callback(record: $crate::types::CallbackRecord, user_data: u64) -> u64 {
                with_plugin(|p| $crate::AnalysisPlugin::on_callback(p, &record, user_data))
            }
            fn on_external_correlation_request(
                request: $crate::types::ExternalCorrelationRequest,
            ) -> ::std::option::Option<u64> {
                with_plugin(|p| {
                    $crate::AnalysisPlugin::on_external_correlation_request(p, &request)
                })
            }
        }
    };
}

/// Exports a type implementing [`AnalysisPlugin`] as the component's
/// `analysis-plugin` world. Use once, at the crate root of a `cdylib`.
#[macro_export]
macro_rules! export_analysis {
    ($plugin:ty) => {
        #[doc(hidden)]
        #[allow(unused_imports, dead_code, clippy::all)]
        mod __rocwasm_export {
            use super::*;
            $crate::__rocwasm_with_wit_dir!($crate::__generate_world; analysis);
            $crate::__plugin_slot!($plugin);
            $crate::__analysis_adapter!($plugin);

            export!(Adapter);
        }
    };
}

/// Exports a type implementing [`MergeablePlugin`] as the component's
/// `mergeable-analysis-plugin` world (an analysis whose results merge,
/// WIT 0.3.1). Use once, at the crate root of a `cdylib`.
#[macro_export]
macro_rules! export_mergeable_analysis {
    ($plugin:ty) => {
        #[doc(hidden)]
        #[allow(unused_imports, dead_code, clippy::all)]
        mod __rocwasm_export {
            use super::*;
            $crate::__rocwasm_with_wit_dir!($crate::__generate_world; mergeable);
            $crate::__plugin_slot!($plugin);
            $crate::__analysis_adapter!($plugin);

            impl exports::rocwasm::plugin::merge::Guest for Adapter {
                fn take_partial() -> ::std::result::Result<::std::vec::Vec<u8>, ::std::string::String> {
                    with_plugin(|p| $crate::MergeablePlugin::take_partial(p))
                }
                fn merge_partial(
                    partial: ::std::vec::Vec<u8>,
                ) -> ::std::result::Result<(), ::std::string::String> {
                    with_plugin(|p| $crate::MergeablePlugin::merge_partial(p, &partial))
                }
            }

            export!(Adapter);
        }
    };
}

/// Exports a type implementing [`TransformPlugin`] as the component's
/// `transform-plugin` world. Use once, at the crate root of a `cdylib`.
#[macro_export]
macro_rules! export_transform {
    ($plugin:ty) => {
        #[doc(hidden)]
        #[allow(unused_imports, dead_code, clippy::all)]
        mod __rocwasm_export {
            use super::*;
            $crate::__rocwasm_with_wit_dir!($crate::__generate_world; transform);
            $crate::__plugin_slot!($plugin);

            struct Adapter;

            impl exports::rocwasm::plugin::lifecycle::Guest for Adapter {
                fn configure(info: $crate::types::ToolInfo) -> bool {
                    with_plugin(|p| $crate::TransformPlugin::configure(p, &info))
                }
                fn init() -> ::std::result::Result<(), ::std::string::String> {
                    with_plugin(|p| $crate::TransformPlugin::init(p))
                }
                fn fini() -> ::std::vec::Vec<$crate::types::SummaryTable> {
                    with_plugin(|p| $crate::TransformPlugin::fini(p))
                }
            }

            impl exports::rocwasm::plugin::transform::Guest for Adapter {
                fn transform_batch(
                    info: $crate::types::DeliveryInfo,
                    batch: ::std::vec::Vec<u8>,
                ) -> $crate::types::BatchEdits {
                    let mut edits = $crate::Edits::default();
                    if let Some(batch) = $crate::__private::read_batch(batch) {
                        with_plugin(|p| $crate::TransformPlugin::transform_batch(p, &info, &batch, &mut edits));
                    }
                    edits.to_wit()
                }
            }

            export!(Adapter);
        }
    };
}
