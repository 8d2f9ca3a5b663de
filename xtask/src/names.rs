//! Owned by the sdk-core work: regenerates the operation-name lists.
use anyhow::Result;

pub fn generate() -> Result<()> {
    Ok(())
}
