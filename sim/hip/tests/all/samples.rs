//! The samples, linked against Debian's real ROCm 5.2 libraries, run
//! unmodified on the simulated ones (LD_LIBRARY_PATH), see the simulated
//! devices, and pass their own result checks.

use crate::support::*;

#[test]
fn samples_are_linked_against_the_real_libraries() {
    let dir = sim_dir();
    for app in ["vector_add", "multi_kernel"] {
        let out = std::process::Command::new("readelf")
            .args(["-V", "-W"])
            .arg(dir.join("bin").join(app))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("libamdhip64.so.5"),
            "{app} does not need libamdhip64.so.5"
        );
        assert!(
            text.contains("hip_4.2"),
            "{app} has no versioned HIP references"
        );
    }
}

#[test]
fn c_sample_runs_and_passes() {
    let out = run_sample("vector_add", &["4"], &[]);
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "vector_add failed:\n{text}\n{}",
        stderr(&out)
    );
    let devices = fields(&text, "DEVICES");
    assert_eq!(num(&devices, "n"), 1);
    assert_eq!(devices["arch"], "gfx90a");
    let counts = fields(&text, "COUNTS");
    // 4 workers × (3 kernels, 4 copies, 2 markers) + 1 marker at start.
    assert_eq!(num(&counts, "kernels"), 12);
    assert_eq!(num(&counts, "copies"), 16);
    assert_eq!(num(&counts, "markers"), 13);
    assert!(text.contains("RESULT PASS"), "{text}");
}

#[test]
fn hipcc_sample_runs_with_eight_threads_and_passes() {
    let out = run_sample("multi_kernel", &["--threads", "8"], &[]);
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "multi_kernel failed:\n{text}\n{}",
        stderr(&out)
    );
    assert!(
        text.contains("name=Simulated AMD Instinct MI210 arch=gfx90a"),
        "{text}"
    );
    let counts = fields(&text, "COUNTS");
    // 8 workers × (4 kernels, 3 linear copies and one pitched 2D copy).
    assert_eq!(num(&counts, "kernels"), 32);
    assert_eq!(num(&counts, "copies"), 32);
    assert!(text.contains("RESULT PASS"), "{text}");
}

#[test]
fn scenario_sets_devices() {
    let dir = scratch("devices");
    let scenario = dir.join("two.toml");
    std::fs::write(&scenario, "[[devices]]\narch = \"gfx90a\"\nname = \"Sim One\"\n[[devices]]\narch = \"gfx90a\"\nname = \"Sim Two\"\n").unwrap();
    let out = run_sample(
        "multi_kernel",
        &["--threads", "2"],
        &[("ROCWASM_SIM_SCENARIO", scenario.to_str().unwrap())],
    );
    let text = stdout(&out);
    assert!(
        text.contains("DEVICES n=2 name=Sim One arch=gfx90a"),
        "{text}\n{}",
        stderr(&out)
    );
    assert!(text.contains("RESULT PASS"));
    let out = run_sample("vector_add", &["1"], &[("ROCWASM_SIM_DEVICES", "3")]);
    assert!(stdout(&out).contains("DEVICES n=3 "), "{}", stdout(&out));
}

#[test]
fn kernel_names_match_the_code_object_notes() {
    let dir = sim_dir();
    let out = run_sample(
        "multi_kernel",
        &["--threads", "1"],
        &[("ROCWASM_SIM_LOG", "1")],
    );
    assert!(out.status.success());
    let mut registered: Vec<String> = stderr(&out)
        .lines()
        .filter_map(|l| {
            l.strip_prefix("sim-hip: registered kernel ")
                .map(str::to_string)
        })
        .collect();
    registered.sort();
    assert!(registered.len() >= 4, "{}", stderr(&out));

    // The code object, extracted with LLVM's own tools, and its notes.
    let scratch = scratch("notes");
    let llvm = std::fs::read_dir("/usr/lib")
        .unwrap()
        .flatten()
        .map(|e| e.path().join("bin"))
        .find(|p| p.join("clang-offload-bundler").exists() && p.join("llvm-readelf").exists())
        .expect("clang-offload-bundler and llvm-readelf (Debian's LLVM, installed with hipcc) are required");
    let fatbin = scratch.join("fatbin.bin");
    let status = std::process::Command::new("objcopy")
        .args(["-O", "binary", "--only-section=.hip_fatbin"])
        .arg(dir.join("bin/multi_kernel"))
        .arg(&fatbin)
        .status()
        .unwrap();
    assert!(status.success());
    let co = scratch.join("gfx90a.o");
    let status = std::process::Command::new(llvm.join("clang-offload-bundler"))
        .args([
            "--unbundle",
            "--type=o",
            "--targets=hipv4-amdgcn-amd-amdhsa--gfx90a",
        ])
        .arg(format!("--input={}", fatbin.display()))
        .arg(format!("--output={}", co.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let notes = std::process::Command::new(llvm.join("llvm-readelf"))
        .arg("--notes")
        .arg(&co)
        .output()
        .unwrap();
    let mut from_notes: Vec<String> = String::from_utf8_lossy(&notes.stdout)
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix(".name:")
                .map(|n| n.trim().to_string())
        })
        .collect();
    from_notes.sort();
    assert_eq!(registered, from_notes);
}

#[test]
fn injected_errors_surface_as_hip_error_codes() {
    let dir = scratch("errors");
    let scenario = dir.join("oom.toml");
    std::fs::write(
        &scenario,
        "[[errors]]\napi = \"hipMalloc\"\nafter = 3\nerror = \"hipErrorOutOfMemory\"\n",
    )
    .unwrap();
    let out = run_sample(
        "vector_add",
        &["1"],
        &[("ROCWASM_SIM_SCENARIO", scenario.to_str().unwrap())],
    );
    assert!(!out.status.success());
    assert!(stdout(&out).contains("RESULT FAIL"));
    let err = stderr(&out);
    assert!(
        err.contains("hipMalloc((void**)&de, N * sizeof(float)) failed: hipErrorOutOfMemory (2)"),
        "{err}"
    );

    let scenario = dir.join("nodev.toml");
    std::fs::write(
        &scenario,
        "[[errors]]\napi = \"hipGetDeviceCount\"\nerror = 100\n",
    )
    .unwrap();
    let out = run_sample(
        "multi_kernel",
        &[],
        &[("ROCWASM_SIM_SCENARIO", scenario.to_str().unwrap())],
    );
    assert!(
        stderr(&out).contains("hipGetDeviceCount: hipErrorNoDevice (100)"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("RESULT FAIL"));
}
