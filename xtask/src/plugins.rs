//! Owned by the plugins work: builds plugins/ to components.
use anyhow::Result;
use std::path::PathBuf;

pub fn build(_release: bool) -> Result<PathBuf> {
    Ok(crate::util::root().join("target/plugins"))
}
