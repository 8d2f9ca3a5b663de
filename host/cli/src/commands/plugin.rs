//! `rocwasm plugin inspect FILE`: what a component is before anyone runs it.

use std::path::Path;

use anyhow::Context;
use rocwasm_config::resolve::sha256_of;

use crate::failure::{Failure, Result};

pub fn inspect(file: &Path) -> Result {
    let meta =
        std::fs::metadata(file).map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    if !meta.is_file() {
        return Err(Failure::usage(format!("{}: not a file", file.display())));
    }
    let digest = sha256_of(file).with_context(|| format!("reading {}", file.display()))?;
    println!("file:    {}", file.display());
    println!("size:    {} bytes", meta.len());
    println!("sha256:  {digest}");
    Ok(())
}
