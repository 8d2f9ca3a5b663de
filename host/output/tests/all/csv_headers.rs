//! The CSV files carry exactly rocprofv3's headers (FACTS §3), and the stats
//! files agree with the native accumulator.

use crate::common;

use rocwasm_output::{CsvSink, StatsAccumulator, StatsDomain, StatsSink};

// Written out literally (not taken from the crate's constants) so that a
// change of a constant fails here.
const EXPECTED: &[(&str, &str)] = &[
    ("run_kernel_trace.csv", "Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z"),
    ("run_hip_api_trace.csv", "Domain,Function,Process_Id,Thread_Id,Correlation_Id,Start_Timestamp,End_Timestamp"),
    ("run_hsa_api_trace.csv", "Domain,Function,Process_Id,Thread_Id,Correlation_Id,Start_Timestamp,End_Timestamp"),
    ("run_marker_api_trace.csv", "Domain,Function,Process_Id,Thread_Id,Correlation_Id,Start_Timestamp,End_Timestamp"),
    ("run_memory_copy_trace.csv", "Kind,Direction,Stream_Id,Source_Agent_Id,Destination_Agent_Id,Correlation_Id,Start_Timestamp,End_Timestamp"),
    ("run_memory_allocation_trace.csv", "Kind,Operation,Agent_Id,Allocation_Size,Address,Correlation_Id,Start_Timestamp,End_Timestamp"),
    ("run_scratch_memory_trace.csv", "Kind,Operation,Agent_Id,Queue_Id,Thread_Id,Alloc_Flags,Start_Timestamp,End_Timestamp,Allocation_Size"),
    ("run_kernel_stats.csv", "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev"),
    ("run_hip_api_stats.csv", "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev"),
    ("run_hsa_api_stats.csv", "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev"),
    ("run_marker_api_stats.csv", "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev"),
    ("run_memory_copy_stats.csv", "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev"),
    ("run_domain_stats.csv", "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev"),
];

#[test]
fn every_file_has_the_exact_rocprofv3_header() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = common::sample(1, 200);
    let files = common::write_run(
        &run,
        &names,
        &mut [
            Box::new(CsvSink::new(dir.path(), Some("run".into()))),
            Box::new(StatsSink::new(dir.path(), Some("run".into()))),
        ],
    );
    assert_eq!(files.len(), EXPECTED.len(), "files: {files:?}");
    for (file, header) in EXPECTED {
        let path = dir.path().join(file);
        assert!(path.exists(), "{file} missing");
        // Exact names and order, and quoted the way rocprofv3 writes them.
        let names: Vec<String> = csv::Reader::from_path(&path)
            .unwrap()
            .headers()
            .unwrap()
            .iter()
            .map(String::from)
            .collect();
        assert_eq!(names.join(","), *header, "{file}");
        let quoted: Vec<String> = header.split(',').map(|h| format!("\"{h}\"")).collect();
        assert_eq!(common::first_line(&path), quoted.join(","), "{file}");
    }
}

#[test]
fn kernel_trace_rows_name_kernels_and_agents() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = common::sample(2, 50);
    common::write_run(
        &run,
        &names,
        &mut [Box::new(CsvSink::new(dir.path(), None))],
    );
    let mut r = csv::Reader::from_path(dir.path().join("kernel_trace.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 50);
    for row in &rows {
        assert_eq!(&row[0], "KERNEL_DISPATCH");
        // Agent_Id is the logical node index (GPUs are nodes 1 and 2 in the sample).
        assert!(matches!(&row[1], "1" | "2"), "agent {}", &row[1]);
        let id: u64 = row[6].parse().unwrap();
        assert_eq!(
            &row[7],
            run.symbols.kernel(id).unwrap().demangled_name,
            "Kernel_Name is the demangled name"
        );
        let (s, e): (u64, u64) = (row[9].parse().unwrap(), row[10].parse().unwrap());
        assert!(e > s);
    }
}

#[test]
fn stats_file_matches_the_accumulator() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = common::sample(3, 300);
    common::write_run(
        &run,
        &names,
        &mut [Box::new(StatsSink::new(dir.path(), None))],
    );
    let mut acc = StatsAccumulator::new();
    for b in &run.batches {
        acc.add_batch(b);
    }
    let report = acc.report(&run.symbols, &names);
    let mut r = csv::Reader::from_path(dir.path().join("kernel_stats.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let expected = report.table(StatsDomain::Kernel);
    assert_eq!(rows.len(), expected.len());
    for (row, want) in rows.iter().zip(expected) {
        assert_eq!(&row[0], want.name);
        assert_eq!(row[1].parse::<u64>().unwrap(), want.calls);
        assert_eq!(row[2].parse::<u64>().unwrap(), want.total_ns);
    }
    // Same kernel on two GPUs (two ids) is one row.
    assert!(expected.len() <= 6);
    let summary = report.render_summary(5);
    assert!(
        summary.contains("KERNEL_DISPATCH") && summary.contains("TotalDurationNs"),
        "{summary}"
    );
}
