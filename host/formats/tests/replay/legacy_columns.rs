//! Kernel traces with the column sets real rocprofv3 versions wrote, read by
//! header name. The header lists are facts taken from published rocprofv3
//! outputs; the rows are made up.

use rocwasm_formats::replay::{open_with, ReplayOptions};
use rocwasm_formats::{StatsAccumulator, StatsDomain};

/// ROCm 7.0: quoted headers and strings, `Agent_Id` written as "Agent N"
/// (`--agent-index` relative/absolute).
const ROCM7: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"
\"KERNEL_DISPATCH\",\"Agent 2\",1,0,70,1,33,\"fill(int*)\",11,1000,1600,0,0,8,0,16,256,1,1,4096,1,1
\"KERNEL_DISPATCH\",\"Agent 2\",1,0,70,2,34,\"saxpy(float, float*, float*)\",12,2000,2900,0,0,8,0,16,256,1,1,4096,1,1
\"KERNEL_DISPATCH\",\"Agent 3\",2,0,71,3,33,\"fill(int*)\",13,3000,3400,0,0,8,0,16,256,1,1,4096,1,1
";

/// ROCm 6.x: no `Stream_Id`, sizes named `Private_Segment_Size` /
/// `Group_Segment_Size`, no register counts.
const ROCM6: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Private_Segment_Size\",\"Group_Segment_Size\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"
\"KERNEL_DISPATCH\",4,1,74441,1,2,\"fill(int*)\",14,1000,1600,0,0,256,1,1,256,1,1
\"KERNEL_DISPATCH\",4,1,74441,2,18,\"saxpy(float, float*, float*)\",15,2000,2900,0,64,256,1,1,256,1,1
\"KERNEL_DISPATCH\",4,1,74441,3,2,\"fill(int*)\",16,3000,3400,0,0,256,1,1,256,1,1
";

/// The earliest rocprofv3 layout: no thread or dispatch ids either.
const EARLY: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Private_Segment_Size\",\"Group_Segment_Size\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"
\"KERNEL_DISPATCH\",1,139690710949888,15,\"fill(int*)\",0,1000,1600,0,0,4,4,1,1024,1024,1
\"KERNEL_DISPATCH\",1,139690710949888,16,\"saxpy(float, float*, float*)\",0,2000,2900,0,0,4,4,1,1024,1024,1
\"KERNEL_DISPATCH\",1,139690710949888,15,\"fill(int*)\",0,3000,3400,0,0,4,4,1,1024,1024,1
";

#[test]
fn every_known_column_set_gives_the_same_kernel_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    for (name, text) in [("rocm7", ROCM7), ("rocm6", ROCM6), ("early", EARLY)] {
        let path = dir.path().join(format!("{name}_kernel_trace.csv"));
        std::fs::write(&path, text).unwrap();
        let mut src = open_with(
            &path,
            &ReplayOptions {
                chunk_rows: 2,
                progress: false,
                names: None,
            },
        )
        .unwrap();
        let mut acc = StatsAccumulator::new();
        let mut agents = Vec::new();
        while let Some(b) = src.next_batch().unwrap() {
            agents.extend(b.kernel_dispatches.agent_id.iter().copied());
            acc.add_batch(&b);
        }
        assert_eq!(src.records(), 3, "{name}");
        match name {
            "rocm7" => assert_eq!(agents, [2, 2, 3]),
            "rocm6" => assert_eq!(agents, [4, 4, 4]),
            _ => assert_eq!(agents, [1, 1, 1]),
        }
        reports.push(
            acc.report(src.symbols(), src.names())
                .table(StatsDomain::Kernel)
                .to_vec(),
        );
    }
    let fill = &reports[0].iter().find(|r| r.name == "fill(int*)").unwrap();
    assert_eq!(
        (fill.calls, fill.total_ns, fill.min_ns, fill.max_ns),
        (2, 1000, 400, 600)
    );
    assert_eq!(reports[0], reports[1]);
    assert_eq!(reports[1], reports[2]);
}
