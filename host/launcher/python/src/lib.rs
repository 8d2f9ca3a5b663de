//! The Python package `rocwasm`: what the CLI's replay does, from Python.
//!
//! - [`recording`]: a recording (rocprofv3 CSV, JSON or rocpd; rocwasm's
//!   own outputs in those formats) read into Arrow record batches with the
//!   Parquet output's schema;
//! - [`session`]: a chain file's plugins, admitted by the site policy as
//!   the CLI admits them, run over one recording; each stage's tables,
//!   or its partial result (WIT 0.3.1's `merge`) to merge elsewhere.
//!
//! Both are plain Rust, tested without Python. `py` (feature `python`,
//! which maturin turns on) is the thin PyO3 layer over them: the module
//! `rocwasm._rocwasm`, whose record batches cross into pyarrow through the
//! Arrow C data interface (`arrow-pyarrow`), without copying columns. The
//! Python side (`rocwasm/__init__.py`, `rocwasm/dask.py`) is beside this
//! crate.

pub mod recording;
pub mod session;

#[cfg(feature = "python")]
mod py;
