//! `rocwasm-launch` end to end, without the `rocwasm` binary: a replay of
//! the recorded sample through the default chain, and a live run of a
//! sample program on the simulated GPU, each called as a library and
//! checked by its outcome, its files and its console text.
//!
//! Needs the stock plugins (`cargo xtask build-plugins`) and the simulated
//! runtime (`cargo xtask build-sim`); fails (never skips) with the command
//! that builds what is missing. The tool library is built fresh by the
//! end-to-end tests' support library (`rocwasm_tests::rocwasm_bin`).

mod earlier_run;
mod output_names;
mod replay;
mod run;

use std::path::{Path, PathBuf};

/// The source tree.
fn workspace() -> PathBuf {
    rocwasm_tests::workspace()
}

/// Data rows of a CSV file (its lines but the header).
fn csv_rows(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().count().saturating_sub(1)
}

/// Every file `files` names exists and holds bytes.
fn assert_written(files: &[PathBuf]) {
    for f in files {
        let len = std::fs::metadata(f)
            .unwrap_or_else(|e| panic!("{} was not written: {e}", f.display()))
            .len();
        assert!(len > 0, "{} is empty", f.display());
    }
}
