//! Recordings as rocprofv3 of ROCm 7.x writes them: `_EXT` HIP domains,
//! ABI-versioned function names, the four HSA tables, `Agent N` agent ids.
//! Every record maps; the durations per (kind, function) equal those
//! computed here from the literal; an unknown domain is counted, not lost
//! silently.

use std::collections::BTreeMap;
use std::path::Path;

use rocwasm_core::BufferTracingKind as K;
use rocwasm_formats::replay::{open_with, ReadReport, Reason, ReplayOptions};

/// The header rocprofv3 (ROCm 7.0) writes for the API trace files.
const API_HEADER: &str = "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"";

pub const HIP_ROWS: &[(&str, &str, u64, u64)] = &[
    ("HIP_COMPILER_API_EXT", "__hipRegisterFatBinary", 1000, 1040),
    ("HIP_COMPILER_API_EXT", "__hipRegisterFunction", 1050, 1060),
    (
        "HIP_RUNTIME_API_EXT",
        "hipGetDevicePropertiesR0600",
        2000,
        2900,
    ),
    ("HIP_RUNTIME_API_EXT", "hipMalloc", 3000, 3075),
    ("HIP_RUNTIME_API_EXT", "hipMalloc", 3100, 3130),
    ("HIP_RUNTIME_API_EXT", "hipMemcpy", 3200, 4200),
    ("HIP_RUNTIME_API_EXT", "hipLaunchKernel", 4300, 4321),
    ("HIP_RUNTIME_API_EXT", "hipDeviceSynchronize", 4400, 5400),
    ("HIP_RUNTIME_API_EXT", "hipFree", 5500, 5560),
];

pub const HSA_ROWS: &[(&str, &str, u64, u64)] = &[
    ("HSA_CORE_API", "hsa_init", 100, 900),
    ("HSA_CORE_API", "hsa_agent_get_info", 910, 915),
    ("HSA_AMD_EXT_API", "hsa_amd_memory_pool_get_info", 920, 930),
    ("HSA_CORE_API", "hsa_queue_create", 940, 990),
    ("HSA_AMD_EXT_API", "hsa_amd_memory_async_copy", 1000, 1010),
];

/// A file of `rows` with the ROCm 7 header and quoting.
pub fn api_file(rows: &[(&str, &str, u64, u64)]) -> String {
    let mut s = format!("{API_HEADER}\n");
    for (i, (domain, function, start, end)) in rows.iter().enumerate() {
        s += &format!(
            "\"{domain}\",\"{function}\",4242,4243,{},{start},{end}\n",
            i + 1
        );
    }
    s
}

/// Writes the ROCm 7 `hip_api_trace.csv` and `hsa_api_trace.csv` into `dir`.
pub fn write_rocm7(dir: &Path) {
    std::fs::write(dir.join("hip_api_trace.csv"), api_file(HIP_ROWS)).unwrap();
    std::fs::write(dir.join("hsa_api_trace.csv"), api_file(HSA_ROWS)).unwrap();
}

type Durations = BTreeMap<(String, String), Vec<u64>>;

/// Replays `path`: durations by (kind name, operation name), and the report.
fn replay(path: &Path) -> (Durations, ReadReport) {
    let opts = ReplayOptions {
        chunk_rows: 3,
        progress: false,
        names: None,
    };
    let mut src = open_with(path, &opts).unwrap();
    let mut calls = Vec::new();
    while let Some(b) = src.next_batch().unwrap() {
        let a = &b.api_calls;
        for i in 0..a.len() {
            calls.push((a.kind[i], a.operation[i], a.end[i] - a.start[i]));
        }
    }
    let mut out = Durations::new();
    for (kind, op, d) in calls {
        let kind = K::from_raw(kind).unwrap().name().to_string();
        let name = src.names().name(K::from_name(&kind).unwrap().raw(), op);
        out.entry((kind, name.to_string())).or_default().push(d);
    }
    (out, src.report().clone())
}

#[test]
fn rocm7_api_traces_map_every_record_to_the_kinds_a_live_run_records() {
    let dir = tempfile::tempdir().unwrap();
    write_rocm7(dir.path());
    let (got, report) = replay(dir.path());

    // Computed from the literal: the `_EXT` kinds are the plain kinds; the
    // ABI-versioned `…R0600` keeps the name it was recorded under.
    let mut want = Durations::new();
    for (domain, function, start, end) in HIP_ROWS.iter().chain(HSA_ROWS) {
        let kind = domain.trim_end_matches("_EXT").to_string();
        want.entry((kind, function.to_string()))
            .or_default()
            .push(end - start);
    }
    assert!(
        got.keys().any(|(_, f)| f == "hipGetDevicePropertiesR0600"),
        "the versioned operation keeps its recorded name: {got:?}"
    );
    assert_eq!(got, want);
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.read(), (HIP_ROWS.len() + HSA_ROWS.len()) as u64);
    assert_eq!(report.mapped(), report.read());
    assert_eq!(report.files.len(), 2);
}

#[test]
fn an_unknown_domain_is_counted_with_its_name_and_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = HIP_ROWS.to_vec();
    rows.insert(1, ("HIP_FOO_API", "hipMalloc", 10, 20));
    rows.push(("HIP_FOO_API", "hipFree", 30, 40));
    rows.push(("HIP_RUNTIME_API_EXT", "hipNotYetInvented", 50, 60));
    let p = dir.path().join("hip_api_trace.csv");
    std::fs::write(&p, api_file(&rows)).unwrap();
    let (got, report) = replay(&p);

    let replayed: usize = got.values().map(Vec::len).sum();
    assert_eq!(replayed, HIP_ROWS.len() + 1);
    let file = &report.files[0];
    assert_eq!((file.read, file.mapped, file.lost()), (12, 10, 2));
    let unknown = file
        .issues
        .iter()
        .find(|i| matches!(&i.reason, Reason::UnknownKind { name } if name == "HIP_FOO_API"))
        .unwrap();
    assert_eq!((unknown.count, unknown.lines.as_slice()), (2, &[3, 12][..]));
    // A function this build does not know is replayed under its own name,
    // and said so.
    assert_eq!(
        got[&("HIP_RUNTIME_API".into(), "hipNotYetInvented".into())],
        [10]
    );
    assert_eq!(
        report.lines(),
        [
            "hip_api_trace.csv: 2 record(s) of domain HIP_FOO_API not mapped (first at line 3)",
            "hip_api_trace.csv: 1 record(s) of HIP_RUNTIME_API operations this build does not know, kept under new numbers with their recorded names (first at line 13: hipNotYetInvented)",
        ]
    );
}

#[test]
fn agents_written_as_agent_n_and_unknown_columns() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("memory_copy_trace.csv");
    std::fs::write(
        &p,
        "\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Queue_Flavour\"\n\
         \"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",0,\"Agent 0\",\"Agent 2\",7,100,300,x\n",
    )
    .unwrap();
    let opts = ReplayOptions {
        chunk_rows: 3,
        progress: false,
        names: None,
    };
    let mut src = open_with(&p, &opts).unwrap();
    let b = src.next_batch().unwrap().unwrap();
    assert_eq!(b.memory_copies.src_agent_id, [0]);
    assert_eq!(b.memory_copies.dst_agent_id, [2]);
    assert!(src.next_batch().unwrap().is_none());
    assert_eq!(
        src.report().lines(),
        ["memory_copy_trace.csv: column Queue_Flavour is not replayed"]
    );
}
