//! Synthetic rocprofv3 recordings for the benches that replay (the kit
//! samples' `plugin test`, the many-rank replay).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A rocprofv3 `kernel_trace.csv` of `n` dispatches (two kernels,
/// durations 1–4 µs) in `dir/trace/`.
pub(super) fn kernel_trace(dir: &Path, n: u64) -> Result<PathBuf> {
    let trace = dir.join("trace");
    std::fs::create_dir_all(&trace)
        .with_context(|| format!("cannot create {}", trace.display()))?;
    let mut csv = String::from(
        "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\
         \"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\
         \"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\
         \"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\
         \"Grid_Size_Y\",\"Grid_Size_Z\"\n",
    );
    let mut t = 1_000_000u64;
    for i in 1..=n {
        let (kernel, name) = if i % 2 == 0 {
            (1, "scale(float*, int)")
        } else {
            (2, "reduce(float const*, float*, unsigned int)")
        };
        let end = t + 1000 * (1 + i % 4);
        let _ = writeln!(
            csv,
            "\"KERNEL_DISPATCH\",1,1,1,100,{i},{kernel},\"{name}\",{i},{t},{end},0,0,16,0,16,256,1,1,65536,1,1"
        );
        t = end + 100;
    }
    let file = trace.join("kernel_trace.csv");
    std::fs::write(&file, csv).with_context(|| format!("cannot write {}", file.display()))?;
    Ok(trace)
}
