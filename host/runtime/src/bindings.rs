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
//! [`Batch`]: rocwasm_core::Batch

/// The `analysis-plugin` world.
pub mod analysis {
    wasmtime::component::bindgen!({
        world: "analysis-plugin",
        path: "../../wit",
    });
}

/// The `transform-plugin` world, reusing [`analysis`]'s types and host interfaces.
pub mod transform {
    wasmtime::component::bindgen!({
        world: "transform-plugin",
        path: "../../wit",
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

/// Interface names as they appear in a component's imports and exports.
pub mod names {
    pub const LIFECYCLE: &str = "rocwasm:plugin/lifecycle@0.1.0";
    pub const ANALYSIS: &str = "rocwasm:plugin/analysis@0.1.0";
    pub const TRANSFORM: &str = "rocwasm:plugin/transform@0.1.0";
    pub const PROFILER: &str = "rocwasm:plugin/profiler@0.1.0";
    pub const DELIVERY: &str = "rocwasm:plugin/delivery@0.1.0";
    /// Host interfaces both worlds import.
    pub const COMMON_IMPORTS: &[&str] = &[
        "rocwasm:plugin/types@0.1.0",
        "rocwasm:plugin/names@0.1.0",
        "rocwasm:plugin/symbols@0.1.0",
        "rocwasm:plugin/clock@0.1.0",
        "rocwasm:plugin/log@0.1.0",
        "rocwasm:plugin/output@0.1.0",
        "rocwasm:plugin/config@0.1.0",
    ];
}
