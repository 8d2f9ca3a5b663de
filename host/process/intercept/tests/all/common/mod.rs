//! Helpers of the end-to-end tests: locate the tool library and the
//! simulated runtime, build the C test programs, run a program under the
//! tool with a run file, read the CSV outputs.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `target/<profile>/`: the test binary lives in its `deps/`.
pub fn target_profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The tool library cargo built for this test run.
pub fn tool_lib() -> PathBuf {
    let lib = target_profile_dir().join("librocwasm_intercept.so");
    assert!(
        lib.is_file(),
        "{} missing: cargo builds the cdylib before its tests",
        lib.display()
    );
    lib
}

/// `target/sim/lib` and `target/sim/bin`, when `cargo xtask build-sim` ran.
pub fn sim_dirs() -> Option<(PathBuf, PathBuf)> {
    let root = target_profile_dir().parent()?.join("sim");
    let (lib, bin) = (root.join("lib"), root.join("bin"));
    (lib.join("libamdhip64.so.5").is_file() && bin.is_dir()).then_some((lib, bin))
}

pub const REAL_HIP: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";

pub fn real_hip_installed() -> bool {
    Path::new(REAL_HIP).is_file() && Path::new("/usr/include/hip/hip_runtime_api.h").is_file()
}

/// Compiles `tests/programs/<name>.c` against the real HIP headers and library.
pub fn build_c(name: &str, out_dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(format!("{name}.c"));
    let exe = out_dir.join(name);
    // `cargo test` puts build-script output directories on LD_LIBRARY_PATH
    // (sim-hip's link stub of libhsa-runtime64 among them); ld would resolve
    // libamdhip64's own dependency there and fail, so link with a clean one.
    let status = Command::new("gcc")
        .env_remove("LD_LIBRARY_PATH")
        .args(["-O1", "-D__HIP_PLATFORM_AMD__", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(["-lamdhip64", "-lpthread"])
        .status()
        .expect("gcc");
    assert!(status.success(), "cannot compile {}", src.display());
    exe
}

/// A run file in `dir` for these kinds; outputs go to `<dir>/out/%pid%`.
pub fn run_file(dir: &Path, kinds: &[&str], extra: &str) -> PathBuf {
    run_file_with_buffer(dir, kinds, 1 << 20, 1 << 19, extra)
}

/// [`run_file`] with the run's buffer size and watermark.
pub fn run_file_with_buffer(
    dir: &Path,
    kinds: &[&str],
    size: u64,
    watermark: u64,
    extra: &str,
) -> PathBuf {
    let out = dir.join("out");
    let kinds: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
    let text = format!(
        r#"{{"version":3,"output":{{"directory":"{}/%pid%","formats":["csv","json"],"kinds":[{}]}},"buffer":{{"size":{size},"watermark":{watermark},"policy":"Lossless"}},"api_log":true{extra}}}"#,
        out.display(),
        kinds.join(",")
    );
    let path = dir.join("run.json");
    std::fs::write(&path, text).unwrap();
    path
}

/// A command for `exe` under the tool (and the sim's libraries, if given).
pub fn traced(exe: &Path, run: &Path, sim_lib: Option<&Path>) -> Command {
    let lib = tool_lib();
    let mut cmd = Command::new(exe);
    cmd.env("LD_PRELOAD", &lib)
        .env("HSA_TOOLS_LIB", &lib)
        .env("ROCWASM_RUN", run);
    if let Some(sim) = sim_lib {
        cmd.env("LD_LIBRARY_PATH", sim);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run the program");
    eprintln!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The output directory of process `pid`.
pub fn out_dir(dir: &Path, pid: u32) -> PathBuf {
    dir.join("out").join(pid.to_string())
}

/// Rows of a CSV output as maps (header → value); empty when the file is absent.
pub fn csv_rows(path: &Path) -> Vec<HashMap<String, String>> {
    let Ok(mut r) = csv::Reader::from_path(path) else {
        return Vec::new();
    };
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// The `COUNTS kernels=N copies=M markers=K hip_calls=H` line of a sim sample.
pub fn sample_counts(stdout: &str) -> HashMap<String, u64> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("COUNTS "))
        .expect("the sample prints COUNTS");
    line.split_whitespace()
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect()
}

/// A fresh scratch directory under the target dir (kept for inspection).
pub fn scratch(name: &str) -> PathBuf {
    let dir = target_profile_dir()
        .join("rocwasm-intercept-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
