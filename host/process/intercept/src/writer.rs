//! Without a launcher: the outputs written at the process's end by the
//! `rocwasm` program, from the journal this process kept.
//!
//! A process given a plan by hand (`ROCWASM_RUN`, a job script's preload)
//! has no `rocwasm run` waiting for it. The tool library links no output
//! format, so at its end of run it runs `rocwasm write-journal DIR` and
//! waits for it: the files are there when the process exits, as they would
//! be under `rocwasm run`. The program is `$ROCWASM_BIN`, else the
//! `rocwasm` beside this library (a cargo target directory) or in `../bin`
//! (an install), else the first on `PATH`. Without one, or if the process
//! is killed before its end, the journal stays and the message says how to
//! write it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `rocwasm write-journal dir` and waits; a sentence when the outputs
/// could not be written.
pub fn write_outputs(dir: &Path) -> Result<(), String> {
    let keep = |why: String| {
        format!(
            "{why}; the records are kept in {}: `rocwasm write-journal {}` writes the outputs",
            dir.display(),
            dir.display()
        )
    };
    let program = find_rocwasm().ok_or_else(|| {
        keep(
            "no `rocwasm` program to write the outputs (set ROCWASM_BIN, or put rocwasm on PATH)"
                .into(),
        )
    })?;
    let status = Command::new(&program)
        .arg("write-journal")
        .arg(dir)
        // The application's standard output is its own.
        .stdout(Stdio::null())
        // Not profiled itself, whatever this process's environment says.
        .env_remove("LD_PRELOAD")
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("ROCWASM_RUN")
        .status()
        .map_err(|e| keep(format!("cannot run {}: {e}", program.display())))?;
    if status.success() {
        Ok(())
    } else {
        Err(keep(format!(
            "{} write-journal failed ({status})",
            program.display()
        )))
    }
}

/// See the module docs.
fn find_rocwasm() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ROCWASM_BIN") {
        return Some(PathBuf::from(p));
    }
    let here = rocwasm_capi::registration::defining_object(write_outputs as *const () as usize)
        .map(PathBuf::from)
        .and_then(|p| p.parent().map(Path::to_path_buf));
    if let Some(dir) = here {
        for candidate in [dir.join("rocwasm"), dir.join("../bin/rocwasm")] {
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("rocwasm"))
        .find(|p| p.is_file())
}
