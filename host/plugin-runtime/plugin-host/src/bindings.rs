//! Rust bindings for the two plugin worlds, generated from `wit/` by
//! `wasmtime::component::bindgen!`.
//!
//! Both worlds share the `types` interface and six host interfaces. The
//! transform world is generated with `with:` pointing at the analysis world's
//! modules, so there is one Rust type per WIT type and one host implementation
//! (in `crate::host`) serves both worlds.
//!
//! Every WIT `list<u64>` becomes a `Vec<u64>` and the column records have the
//! same field names as `rocwasm_core::batch`, so a core [`Batch`] moves into a
//! WIT batch column by column (`crate::convert`) without touching records;
//! lowering a `Vec<u64>` into the guest is then one copy per column.
//!
//! The worlds' generated `add_to_linker` functions are not used: they would
//! link every interface to one type. `crate::state::add_to_linker` links
//! each interface's generated `add_to_linker` to its own host struct instead.
//!
//! [`Batch`]: rocwasm_core::Batch

/// The `analysis-plugin` world.
///
/// The generated items carry the WIT's own doc comments. What the WIT leaves
/// undocumented (e.g. the fields of `summary-table`, which the crate root
/// re-exports as [`SummaryTable`](crate::SummaryTable)) can only be
/// documented in `wit/`, hence the `allow`.
#[allow(missing_docs)]
pub mod analysis {
    wasmtime::component::bindgen!({
        world: "analysis-plugin",
        path: "../../../wit",
    });
}

/// The `transform-plugin` world, reusing [`analysis`]'s types and host interfaces.
pub mod transform {
    wasmtime::component::bindgen!({
        world: "transform-plugin",
        path: "../../../wit",
        with: {
            "rocwasm:plugin/types": super::analysis::rocwasm::plugin::types,
            "rocwasm:plugin/names": super::analysis::rocwasm::plugin::names,
            "rocwasm:plugin/symbols": super::analysis::rocwasm::plugin::symbols,
            "rocwasm:plugin/clock": super::analysis::rocwasm::plugin::clock,
            "rocwasm:plugin/log": super::analysis::rocwasm::plugin::log,
            "rocwasm:plugin/output": super::analysis::rocwasm::plugin::output,
            "rocwasm:plugin/config": super::analysis::rocwasm::plugin::config,
            "rocwasm:plugin/lifecycle": super::analysis::exports::rocwasm::plugin::lifecycle,
        },
    });
}

/// The shared WIT types (`rocwasm:plugin/types`).
pub use analysis::rocwasm::plugin::types;

/// Writes the interface names of one version of the package.
macro_rules! interface_names {
    ($version:literal) => {
        /// The package version these names carry.
        pub const VERSION: &str = $version;
        /// The life cycle (`configure`, `init`, `fini`), which every plugin exports.
        pub const LIFECYCLE: &str = concat!("rocwasm:plugin/lifecycle@", $version);
        /// The deliveries an analysis exports; exporting it makes a component an analysis.
        pub const ANALYSIS: &str = concat!("rocwasm:plugin/analysis@", $version);
        /// `transform-batch`; exporting it makes a component a transform.
        pub const TRANSFORM: &str = concat!("rocwasm:plugin/transform@", $version);
        /// The SDK verbs, which only an analysis may import.
        pub const PROFILER: &str = concat!("rocwasm:plugin/profiler@", $version);
        /// The column choice, which only an analysis may import.
        pub const DELIVERY: &str = concat!("rocwasm:plugin/delivery@", $version);
        /// Host interfaces both worlds import.
        pub const COMMON_IMPORTS: [&str; 7] = [
            concat!("rocwasm:plugin/types@", $version),
            concat!("rocwasm:plugin/names@", $version),
            concat!("rocwasm:plugin/symbols@", $version),
            concat!("rocwasm:plugin/clock@", $version),
            concat!("rocwasm:plugin/log@", $version),
            concat!("rocwasm:plugin/output@", $version),
            concat!("rocwasm:plugin/config@", $version),
        ];
    };
}

/// Interface names of the current package (`wit/`), as they appear in a
/// component's imports and exports.
pub mod names {
    interface_names!("0.2.0");

    /// The same names in `rocwasm:plugin@0.1.0` (`wit/legacy/0.1.0/`),
    /// whose components the host keeps loading (`crate::legacy`).
    pub mod v0_1_0 {
        interface_names!("0.1.0");
    }

    /// The same names in `rocwasm:plugin@0.3.0` (`wit/next/`, not yet
    /// released), whose components the host loads (`crate::packed_world`).
    pub mod v0_3_0 {
        interface_names!("0.3.0");
    }
}
