//! End to end on the simulated runtime (`cargo xtask build-sim`): the sim's
//! sample applications run under the tool, HSA tracing arrives through
//! `OnLoad`, kernels and copies are timed through intercept queues and
//! profiling signals, and the records agree with what the samples say they
//! did and with the scenario's duration formulas (sim/README.md).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::common::*;

const KINDS: &[&str] = &[
    "HIP_RUNTIME_API",
    "HIP_COMPILER_API",
    "HSA_CORE_API",
    "HSA_AMD_EXT_API",
    "KERNEL_DISPATCH",
    "MEMORY_COPY",
    "MEMORY_ALLOCATION",
    "MARKER_CORE_API",
    "MARKER_CORE_RANGE_API",
];

/// The default scenario: kernels cost 4000 ns + 10 ps per work-item, copies
/// 1000 ns + bytes / 16 000 per µs.
fn kernel_ns(grid: u64) -> u64 {
    4000 + (grid * 10).div_ceil(1000)
}

fn copy_ns(bytes: u64) -> u64 {
    1000 + (bytes * 1000).div_ceil(16_000)
}

struct Run {
    counts: HashMap<String, u64>,
    dir: std::path::PathBuf,
    stderr: String,
}

fn run_sample(name: &str, args: &[&str]) -> Run {
    run_sample_with(name, "", args, &[])
}

/// `tag` keeps concurrent runs of one sample in their own scratch directories.
fn run_sample_with(name: &str, tag: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let Some((lib, bin)) = sim_dirs() else {
        panic!("the simulated runtime is not built: run `cargo xtask build-sim`");
    };
    let dir = scratch(&format!("sim-{name}{tag}"));
    let run = run_file(&dir, KINDS, "");
    let child = traced(&bin.join(name), &run, Some(&lib))
        .envs(env.iter().copied())
        .args(args)
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("{stdout}{stderr}");
    assert!(out.status.success());
    assert!(stdout.contains("RESULT PASS"));
    Run {
        counts: sample_counts(&stdout),
        dir: out_dir(&dir, pid),
        stderr,
    }
}

fn rows(dir: &Path, file: &str) -> Vec<HashMap<String, String>> {
    csv_rows(&dir.join(file))
}

fn num(r: &HashMap<String, String>, k: &str) -> u64 {
    r[k].parse().unwrap_or_else(|_| panic!("{k} = {:?}", r[k]))
}

/// Everything the acceptance asks of one sample run.
fn check(run: &Run) {
    let d = &run.dir;
    let hip = rows(d, "hip_api_trace.csv");
    let kernels = rows(d, "kernel_trace.csv");
    let copies = rows(d, "memory_copy_trace.csv");
    let markers = rows(d, "marker_api_trace.csv");
    let hsa = rows(d, "hsa_api_trace.csv");

    // Counts equal what the sample says it did.
    let runtime_calls = hip
        .iter()
        .filter(|r| r["Domain"] == "HIP_RUNTIME_API")
        .count() as u64;
    assert_eq!(runtime_calls, run.counts["hip_calls"], "HIP runtime calls");
    assert_eq!(
        kernels.len() as u64,
        run.counts["kernels"],
        "kernel dispatches"
    );
    assert_eq!(copies.len() as u64, run.counts["copies"], "memory copies");
    let f = |name: &str| markers.iter().filter(|r| r["Function"] == name).count() as u64;
    assert_eq!(
        f("roctxMarkA") + f("roctxRangePushA") + f("roctxRangeStartA"),
        run.counts["markers"],
        "markers"
    );
    assert_eq!(f("roctxRangePop"), f("roctxRangePushA"));
    assert_eq!(f("roctxRangeStop"), f("roctxRangeStartA"));
    // Beside the calls, what was marked (rocprofv3's MARKER_CORE_RANGE_API):
    // one record per mark and per closed range, named by its message.
    let ranges: Vec<_> = markers
        .iter()
        .filter(|r| r["Domain"] == "MARKER_CORE_RANGE_API")
        .collect();
    assert_eq!(ranges.len() as u64, run.counts["markers"], "marked ranges");
    assert!(
        ranges.iter().all(|r| !r["Function"].starts_with("roctx")
            && num(r, "End_Timestamp") >= num(r, "Start_Timestamp")),
        "{ranges:?}"
    );

    // Marker callbacks carry the message (how plugins follow ranges).
    let log = std::fs::read_to_string(d.join("api_calls.txt")).unwrap();
    assert!(log.lines().any(
        |l| l.contains("roctxRangePushA(message: const char * = ") && !l.contains("= nullptr")
    ));

    // Every dispatch carries the id of the HIP launch that caused it, on the launching thread.
    let launches: HashMap<&str, &HashMap<String, String>> = hip
        .iter()
        .filter(|r| {
            r["Function"].starts_with("hipLaunch") || r["Function"] == "hipModuleLaunchKernel"
        })
        .map(|r| (r["Correlation_Id"].as_str(), r))
        .collect();
    for k in &kernels {
        let launch = launches
            .get(k["Correlation_Id"].as_str())
            .unwrap_or_else(|| panic!("dispatch {k:?}"));
        assert_eq!(launch["Thread_Id"], k["Thread_Id"]);
    }
    // Every copy carries the id of the HSA async copy that issued it (as
    // the SDK's records do), made inside the HIP copy that asked for it
    // (that HSA call's ancestor) on the same thread.
    let hsa_by_id: HashMap<&str, &HashMap<String, String>> = hsa
        .iter()
        .map(|r| (r["Correlation_Id"].as_str(), r))
        .collect();
    for c in &copies {
        let issued = hsa_by_id
            .get(c["Correlation_Id"].as_str())
            .unwrap_or_else(|| panic!("no HSA call has the copy's id: {c:?}"));
        assert!(
            issued["Function"].starts_with("hsa_amd_memory_async_copy"),
            "{issued:?}"
        );
        let (start, end) = (num(issued, "Start_Timestamp"), num(issued, "End_Timestamp"));
        assert!(
            hip.iter().any(|h| h["Function"].starts_with("hipMemcpy")
                && h["Thread_Id"] == issued["Thread_Id"]
                && num(h, "Start_Timestamp") <= start
                && end <= num(h, "End_Timestamp")),
            "no hipMemcpy* encloses {issued:?}"
        );
    }

    // Durations follow the scenario's formulas; names are the loaded symbols.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("results.json")).unwrap()).unwrap();
    let tool = &json["rocprofiler-sdk-tool"][0];
    let loaded: HashSet<&str> = tool["kernel_symbols"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["code_object_id"].as_u64() != Some(0))
        .map(|s| s["demangled_kernel_name"].as_str().unwrap())
        .collect();
    assert!(
        !loaded.is_empty(),
        "code-object tracing registered the kernels"
    );
    for k in &kernels {
        assert!(
            loaded.contains(k["Kernel_Name"].as_str()),
            "{} is a loaded kernel",
            k["Kernel_Name"]
        );
        let grid = num(k, "Grid_Size_X") * num(k, "Grid_Size_Y") * num(k, "Grid_Size_Z");
        assert_eq!(
            num(k, "End_Timestamp") - num(k, "Start_Timestamp"),
            kernel_ns(grid),
            "{k:?}"
        );
    }
    let json_copies = tool["buffer_records"]["memory_copy"].as_array().unwrap();
    assert_eq!(json_copies.len(), copies.len());
    for c in json_copies {
        let (start, end) = (
            c["start_timestamp"].as_u64().unwrap(),
            c["end_timestamp"].as_u64().unwrap(),
        );
        assert_eq!(end - start, copy_ns(c["bytes"].as_u64().unwrap()), "{c}");
    }

    // HSA API tracing through OnLoad sees the HIP layer's calls.
    let h = |name: &str| hsa.iter().filter(|r| r["Function"] == name).count() as u64;
    assert_eq!(
        h("hsa_amd_memory_async_copy") + h("hsa_amd_memory_async_copy_rect"),
        run.counts["copies"]
    );
    assert!(h("hsa_queue_add_write_index_scacq_screl") >= run.counts["kernels"]);
    assert!(h("hsa_queue_create") >= 1 && h("hsa_executable_freeze") >= 1);
    assert!(
        h("hsa_signal_store_screlease") >= run.counts["kernels"],
        "doorbells"
    );

    // Memory allocations: one record per pool allocation and free the HIP
    // layer made, each naming a known agent (device memory: the GPU's),
    // frees repeating their allocation's agent and size.
    let allocs = rows(d, "memory_allocation_trace.csv");
    let ops = |op: &str| allocs.iter().filter(|r| r["Operation"] == op).count() as u64;
    assert_eq!(
        ops("MEMORY_ALLOCATION_ALLOCATE"),
        h("hsa_amd_memory_pool_allocate")
    );
    assert_eq!(ops("MEMORY_ALLOCATION_FREE"), h("hsa_amd_memory_pool_free"));
    let agents: HashMap<u64, u64> = tool["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["id"]["handle"].as_u64().unwrap(),
                a["type"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut live: HashMap<&str, (&str, &str)> = HashMap::new();
    for a in &allocs {
        assert!(
            agents.contains_key(&num(a, "Agent_Id")),
            "{a:?} names a known agent"
        );
        assert!(
            num(a, "Start_Timestamp") <= num(a, "End_Timestamp"),
            "{a:?}"
        );
        let key = (a["Agent_Id"].as_str(), a["Allocation_Size"].as_str());
        if a["Operation"] == "MEMORY_ALLOCATION_ALLOCATE" {
            live.insert(a["Address"].as_str(), key);
        } else if let Some(allocated) = live.remove(a["Address"].as_str()) {
            assert_eq!(allocated, key, "a free repeats its allocation: {a:?}");
        }
    }
    const GPU: u64 = 2;
    assert!(
        allocs.iter().any(|a| agents[&num(a, "Agent_Id")] == GPU),
        "device allocations name the GPU agent"
    );

    // No record lost or duplicated: ids unique across API records.
    let (ranges, calls): (Vec<_>, Vec<_>) = markers
        .iter()
        .partition(|r| r["Domain"] == "MARKER_CORE_RANGE_API");
    let ids: Vec<&str> = hip
        .iter()
        .chain(&hsa)
        .chain(calls.iter().copied())
        .map(|r| r["Correlation_Id"].as_str())
        .collect();
    let unique: HashSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "API correlation ids are unique");
    // A mark or range keeps the id of the roctx call that opened it.
    let call_ids: HashMap<&str, &str> = calls
        .iter()
        .map(|r| (r["Correlation_Id"].as_str(), r["Function"].as_str()))
        .collect();
    for r in &ranges {
        let opened_by = call_ids.get(r["Correlation_Id"].as_str());
        assert!(
            matches!(
                opened_by,
                Some(&"roctxMarkA" | &"roctxRangePushA" | &"roctxRangeStartA")
            ),
            "{r:?} opened by {opened_by:?}"
        );
    }
}

#[test]
fn vector_add_on_the_simulated_gpu() {
    check(&run_sample("vector_add", &["4"]));
}

#[test]
fn multi_kernel_with_eight_threads() {
    let run = run_sample("multi_kernel", &["--threads", "8"]);
    check(&run);
    // ≥ 8 launching threads, each with the same share of dispatches.
    let kernels = rows(&run.dir, "kernel_trace.csv");
    let mut per_thread: HashMap<&str, usize> = HashMap::new();
    for k in &kernels {
        *per_thread.entry(k["Thread_Id"].as_str()).or_default() += 1;
    }
    assert!(per_thread.len() >= 8, "{per_thread:?}");
    let shares: HashSet<usize> = per_thread.values().copied().collect();
    assert_eq!(
        shares.len(),
        1,
        "every thread launched the same number: {per_thread:?}"
    );
    let ids: HashSet<&str> = kernels
        .iter()
        .map(|k| k["Correlation_Id"].as_str())
        .collect();
    assert_eq!(ids.len(), kernels.len(), "one launch per dispatch");

    // Each worker's pitched 2D copy (hipMemcpy2DAsync → the runtime's
    // hsa_amd_memory_async_copy_rect, whose id the record carries) is one
    // device-to-host copy record.
    let copy_2d = rows(&run.dir, "hip_api_trace.csv")
        .into_iter()
        .filter(|r| r["Function"] == "hipMemcpy2DAsync")
        .count();
    assert_eq!(copy_2d, 8);
    let rect_ids: HashSet<String> = rows(&run.dir, "hsa_api_trace.csv")
        .into_iter()
        .filter(|r| r["Function"] == "hsa_amd_memory_async_copy_rect")
        .map(|r| r["Correlation_Id"].clone())
        .collect();
    assert_eq!(rect_ids.len(), 8);
    let copies = rows(&run.dir, "memory_copy_trace.csv");
    let rect: Vec<_> = copies
        .iter()
        .filter(|c| rect_ids.contains(&c["Correlation_Id"]))
        .collect();
    assert_eq!(rect.len(), 8, "one record per 2D copy");
    assert!(rect
        .iter()
        .all(|c| c["Direction"] == "MEMORY_COPY_DEVICE_TO_HOST"));

    // Register counts decoded from each kernel's descriptor (gfx90a). The
    // code object's own metadata (`llvm-readelf --notes`) says `.vgpr_count`
    // 8, 3, 4, 10 and `.sgpr_count` 11, 11, 11, 14; the hardware allocates
    // VGPRs in granules of 4 (split at ACCUM_OFFSET, total in granules of 8)
    // and SGPRs in granules of 16.
    let expected: HashMap<&str, (u64, u64, u64)> = [
        (
            "vector_add(float const*, float const*, float*, int)",
            (8, 0, 16),
        ),
        ("scale(float*, float, int)", (4, 4, 16)),
        ("square(float const*, float*, int)", (4, 4, 16)),
        ("block_sum(float const*, float*, int)", (12, 4, 16)),
    ]
    .into();
    for k in &kernels {
        let counts = (
            num(k, "VGPR_Count"),
            num(k, "Accum_VGPR_Count"),
            num(k, "SGPR_Count"),
        );
        assert_eq!(
            Some(&counts),
            expected.get(k["Kernel_Name"].as_str()),
            "{}",
            k["Kernel_Name"]
        );
    }
}

/// The ROCm ≥ 6.2 path end to end, as far as the simulated runtime goes: its
/// exports call through 6.2-layout dispatch tables, which it hands to the
/// tool's `rocprofiler_set_api_table` (`ROCWASM_SIM_HIP_TABLES=1`, and a tool
/// present as rocprofiler-register decides it: see sim/hip/src/dispatch.rs).
/// Every call is then traced by the table wrapper and the `LD_PRELOAD`
/// interposer only forwards: the records must be exactly those of the 5.x
/// path (a call traced twice would break the counts and the id uniqueness
/// `check` asserts).
#[test]
fn multi_kernel_through_rocm6_dispatch_tables() {
    let run = run_sample_with(
        "multi_kernel",
        "-tables",
        &["--threads", "8"],
        &[
            ("ROCWASM_SIM_HIP_TABLES", "1"),
            ("ROCPROFILER_REGISTER_FORCE_LOAD", "1"),
            ("ROCWASM_DEBUG", "1"),
        ],
    );
    for wrapped in [
        "HIP table `hip_compiler`: 9 slots, 9 traced",
        "HIP table `hip`: 452 slots, 370 traced",
    ] {
        assert!(run.stderr.contains(wrapped), "{wrapped:?} not reported");
    }
    check(&run);
    let per_function = |run: &Run| {
        let mut n: HashMap<String, usize> = HashMap::new();
        for r in rows(&run.dir, "hip_api_trace.csv") {
            *n.entry(r["Function"].clone()).or_default() += 1;
        }
        n
    };
    let by_preload = run_sample_with("multi_kernel", "-preload", &["--threads", "8"], &[]);
    assert_eq!(per_function(&run), per_function(&by_preload));
}

/// Without any of rocprofiler-register's "a tool is present" signals the
/// tables are not handed over, and the `LD_PRELOAD` path traces as before.
#[test]
fn dispatch_tables_need_a_tool_present_signal() {
    let run = run_sample_with(
        "vector_add",
        "-no-tool-signal",
        &["4"],
        &[
            ("ROCWASM_SIM_HIP_TABLES", "1"),
            ("ROCPROFILER_REGISTER_FORCE_LOAD", "0"),
            ("ROCWASM_DEBUG", "1"),
        ],
    );
    assert!(!run.stderr.contains("HIP table"), "{}", run.stderr);
    check(&run);
}
