//! End to end against Debian's real ROCm 5.2 `libamdhip64` with no GPU:
//! every HIP call is recorded with the runtime's real status codes, kernel
//! names are registered at start-up, the exit status is unchanged, and the
//! life cycle (exit from a worker, SIGTERM, fork, many threads) leaves
//! complete outputs.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use crate::common::*;

const HIP_API: &[&str] = &["HIP_RUNTIME_API", "HIP_COMPILER_API"];

fn count_calls(rows: &[HashMap<String, String>], function: &str) -> usize {
    rows.iter().filter(|r| r["Function"] == function).count()
}

macro_rules! require_real_hip {
    () => {
        if !real_hip_installed() {
            panic!("Debian's libamdhip64-5 / libamdhip64-dev are not installed: run `cargo xtask setup`");
        }
    };
}

#[test]
fn real_status_codes_and_exit_status() {
    require_real_hip!();
    let dir = scratch("probe");
    let exe = build_c("probe", &dir);
    let run = run_file(&dir, HIP_API, "");
    let mut cmd = traced(&exe, &run, None);
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(7), "the application's exit status");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("hipGetDeviceCount 100"),
        "no GPU here: {stdout}"
    );

    let o = out_dir(&dir, pid);
    let log = std::fs::read_to_string(o.join("api_calls.txt")).unwrap();
    // The real runtime's codes, as the application saw them.
    assert!(log.contains("hipGetDeviceCount(count: int * = 0x"), "{log}");
    assert!(
        log.lines()
            .any(|l| l.contains("hipGetDeviceCount(") && l.ends_with("-> 100")),
        "{log}"
    );
    assert!(log.lines().any(|l| l.contains("hipMalloc(")
        && l.contains("size: size_t = 1024")
        && l.ends_with("-> 101")));
    assert!(log
        .lines()
        .any(|l| l.contains("hipSetDevice(") && l.ends_with("-> 101")));
    let rows = csv_rows(&o.join("hip_api_trace.csv"));
    for f in ["hipGetDeviceCount", "hipMalloc", "hipSetDevice"] {
        assert_eq!(count_calls(&rows, f), 1, "{f} recorded once");
    }
    assert!(o.join("rocwasm-summary.txt").is_file());
}

#[test]
fn kernels_registered_at_startup_are_named() {
    require_real_hip!();
    if Command::new("hipcc").arg("--version").output().is_err() {
        panic!("hipcc is not installed: run `cargo xtask setup`");
    }
    let dir = scratch("hipcc");
    let src = dir.join("kernels.hip");
    std::fs::write(
        &src,
        r#"#include <hip/hip_runtime.h>
__global__ void vectorAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i];
}
template <typename T> __global__ void scale(T* x, T s) { x[threadIdx.x] *= s; }
int main() {
  hipLaunchKernelGGL(vectorAdd, dim3(4), dim3(256), 0, 0, nullptr, nullptr, nullptr, 1024);
  hipLaunchKernelGGL(scale<float>, dim3(1), dim3(64), 0, 0, nullptr, 2.0f);
  return 3;
}
"#,
    )
    .unwrap();
    let exe = dir.join("kernels");
    let status = Command::new("hipcc")
        .env_remove("LD_LIBRARY_PATH") // see common::build_c
        .args(["--offload-arch=gfx90a", "-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    let run = run_file(&dir, HIP_API, "");
    let child = traced(&exe, &run, None).spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));

    let o = out_dir(&dir, pid);
    let log = std::fs::read_to_string(o.join("api_calls.txt")).unwrap();
    assert!(
        log.contains("deviceName: const char * = _Z9vectorAddPKfS0_Pfi"),
        "{log}"
    );
    assert!(
        log.contains("deviceName: const char * = _Z5scaleIfEvPT_S0_"),
        "{log}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(o.join("results.json")).unwrap()).unwrap();
    let symbols = &json["rocprofiler-sdk-tool"][0]["kernel_symbols"];
    let names: HashSet<(String, String)> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["kernel_name"].as_str().unwrap().into(),
                s["demangled_kernel_name"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(names.contains(&(
        "_Z9vectorAddPKfS0_Pfi".into(),
        "vectorAdd(float const*, float const*, float*, int)".into()
    )));
    assert!(names.contains(&(
        "_Z5scaleIfEvPT_S0_".into(),
        "void scale<float>(float*, float)".into()
    )));
}

#[test]
fn exit_from_a_worker_thread_leaves_complete_outputs() {
    require_real_hip!();
    let dir = scratch("worker-exit");
    let exe = build_c("exit_paths", &dir);
    let run = run_file(&dir, HIP_API, "");
    let child = traced(&exe, &run, None)
        .args(["worker-exit", "500"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(5));
    let rows = csv_rows(&out_dir(&dir, pid).join("hip_api_trace.csv"));
    assert_eq!(count_calls(&rows, "hipGetDeviceCount"), 500);
    assert!(out_dir(&dir, pid).join("rocwasm-summary.txt").is_file());
}

#[test]
fn sigterm_mid_run_leaves_complete_outputs() {
    require_real_hip!();
    let dir = scratch("sigterm");
    let exe = build_c("exit_paths", &dir);
    let run = run_file(&dir, HIP_API, "");
    let mut child = traced(&exe, &run, None)
        .args(["sigterm", "300"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(libc::SIGTERM),
        "dies of the same signal"
    );
    let rows = csv_rows(&out_dir(&dir, pid).join("hip_api_trace.csv"));
    assert_eq!(count_calls(&rows, "hipGetDeviceCount"), 300);
}

#[test]
fn a_forked_child_gets_its_own_run() {
    require_real_hip!();
    let dir = scratch("fork");
    let exe = build_c("exit_paths", &dir);
    let run = run_file(&dir, HIP_API, "");
    let child = traced(&exe, &run, None)
        .args(["fork", "10", "20", "30"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let child_pid: u32 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("child "))
        .expect("the child reports its pid")
        .trim()
        .parse()
        .unwrap();
    let parent = csv_rows(&out_dir(&dir, pid).join("hip_api_trace.csv"));
    assert_eq!(
        count_calls(&parent, "hipGetDeviceCount"),
        10 + 30,
        "parent: before and after the fork"
    );
    let child_rows = csv_rows(&out_dir(&dir, child_pid).join("hip_api_trace.csv"));
    assert_eq!(
        count_calls(&child_rows, "hipGetDeviceCount"),
        20,
        "child: its own calls only"
    );
    let parent_ids: HashSet<&String> = parent.iter().map(|r| &r["Process_Id"]).collect();
    assert_eq!(parent_ids.len(), 1);
}

#[test]
fn many_threads_lose_and_duplicate_nothing() {
    require_real_hip!();
    let dir = scratch("threads");
    let exe = build_c("exit_paths", &dir);
    let run = run_file(&dir, HIP_API, "");
    let (threads, per) = (12, 2000);
    let child = traced(&exe, &run, None)
        .args(["threads", &threads.to_string(), &per.to_string()])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tids: HashSet<String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("tid "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(tids.len(), threads);
    let rows = csv_rows(&out_dir(&dir, pid).join("hip_api_trace.csv"));
    let calls: Vec<_> = rows
        .iter()
        .filter(|r| r["Function"] == "hipGetDeviceCount")
        .collect();
    assert_eq!(calls.len(), threads * per);
    let mut per_thread: HashMap<&str, usize> = HashMap::new();
    for r in &calls {
        *per_thread.entry(r["Thread_Id"].as_str()).or_default() += 1;
    }
    for tid in &tids {
        assert_eq!(per_thread.get(tid.as_str()), Some(&per), "thread {tid}");
    }
    let ids: HashSet<&str> = rows.iter().map(|r| r["Correlation_Id"].as_str()).collect();
    assert_eq!(ids.len(), rows.len(), "correlation ids are unique");
}
