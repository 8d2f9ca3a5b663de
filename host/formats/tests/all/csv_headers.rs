//! The CSV files carry exactly rocprofv3's headers (FACTS §3), and the stats
//! files agree with the native accumulator.

use crate::common;

use rocwasm_core::{ApiCall, Batch, BufferTracingKind};
use rocwasm_formats::{CsvSink, Sink, SinkContext, StatsAccumulator, StatsDomain, StatsSink};

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
    ("run_counter_collection.csv", "Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Process_Id,Thread_Id,Grid_Size,Kernel_Id,Kernel_Name,Workgroup_Size,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,Counter_Name,Counter_Value,Start_Timestamp,End_Timestamp"),
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
    let run = run.with_counter_samples();
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

/// Every HIP call's row names its own operation and the pid of the batch's
/// run, when batches come with another pid and with operation numbers too
/// large to be table slots (the writer formats a row's first fields once per
/// operation and pid).
#[test]
fn api_rows_name_each_operation_and_pid() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = common::sample(3, 40);
    let hip = BufferTracingKind::HipRuntimeApi.raw();
    let mut odd = Batch::default();
    for (i, op) in [1u32 << 20, 3, 1 << 20, (1 << 20) + 1]
        .into_iter()
        .enumerate()
    {
        odd.api_calls.push(ApiCall {
            kind: hip,
            operation: op,
            correlation_id: 900_000 + i as u64,
            external_correlation_id: 0,
            ancestor: 0,
            thread_id: 77,
            start: 10,
            end: 20,
        });
    }
    let mut other = run.meta.clone();
    other.pid += 1;
    // (batch, pid): the run's first half, the odd operations, the rest
    // under another pid, the odd ones again.
    let half = run.batches.len() / 2;
    let mut plan: Vec<(&Batch, u32)> = Vec::new();
    plan.extend(run.batches[..half].iter().map(|b| (b, run.meta.pid)));
    plan.push((&odd, run.meta.pid));
    plan.extend(run.batches[half..].iter().map(|b| (b, other.pid)));
    plan.push((&odd, other.pid));

    let mut sink = CsvSink::new(dir.path(), None);
    let first = run.context(&names);
    sink.begin(&first).unwrap();
    let mut expected = Vec::new();
    for (batch, pid) in plan {
        let meta = if pid == run.meta.pid {
            &run.meta
        } else {
            &other
        };
        let ctx = SinkContext {
            meta,
            ..run.context(&names)
        };
        sink.write_batch(batch, &ctx).unwrap();
        let a = &batch.api_calls;
        for i in (0..a.len()).filter(|&i| a.kind[i] == hip) {
            expected.push(vec![
                "HIP_RUNTIME_API".to_string(),
                names.name(hip, a.operation[i]).to_string(),
                pid.to_string(),
                a.thread_id[i].to_string(),
                a.correlation_id[i].to_string(),
                a.start[i].to_string(),
                a.end[i].to_string(),
            ]);
        }
    }
    sink.finish(&first).unwrap();
    let rows: Vec<Vec<String>> = csv::Reader::from_path(dir.path().join("hip_api_trace.csv"))
        .unwrap()
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    assert!(expected.len() > 8, "the sample has HIP calls");
    assert_eq!(rows, expected);
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
