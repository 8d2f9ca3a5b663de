//! Owned by the simulated-runtime work: builds sim/ and the sample apps.
use anyhow::Result;
use std::path::PathBuf;

pub fn build() -> Result<PathBuf> {
    Ok(crate::util::root().join("target/sim"))
}
