//! Lists generated from Debian's ROCm 5.2 packages by `cargo xtask gen-names`
//! and committed, so that nothing needs ROCm installed to build.

#[rustfmt::skip]
pub mod hip_runtime_api;
#[rustfmt::skip]
pub mod hsa_api_tables;
