//! The plugin host's integration tests, in one binary: each test file is a
//! module here, so wasmtime is linked once for all of them.
//!
//! They load the real stock and test components from `target/plugins`
//! (`cargo xtask build-plugins`), Rust and C.

mod common;

mod c_plugins;
mod containment;
mod external_correlation;
mod lifecycle;
mod merge;
mod operation_filters;
mod projection;
mod python_js_plugins;
mod replay_names;
mod restart;
mod shared_delivery;
mod stock_plugins;
mod wit_versions;
