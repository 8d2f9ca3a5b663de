//! Checks `hipDeviceProp_t` and `dim3` against the real ROCm 5.2 header with
//! a compiled C probe (gcc, `-D__HIP_PLATFORM_AMD__`), and the checked-in
//! export list against Debian's real library.

use std::mem::{offset_of, size_of};
use std::process::Command;

use crate::device::hipDeviceProp_t;
use crate::module::Dim3;

#[test]
fn device_prop_matches_hip_runtime_api_h() {
    let header = "/usr/include/hip/hip_runtime_api.h";
    assert!(
        std::path::Path::new(header).exists(),
        "{header} missing: install libamdhip64-dev (cargo xtask setup)"
    );
    macro_rules! fields {
        ($($f:ident),*) => {
            vec![("sizeof".to_string(), size_of::<hipDeviceProp_t>()), $((stringify!($f).to_string(), offset_of!(hipDeviceProp_t, $f))),*]
        };
    }
    let rust = fields!(
        name,
        totalGlobalMem,
        sharedMemPerBlock,
        regsPerBlock,
        warpSize,
        maxThreadsPerBlock,
        maxThreadsDim,
        maxGridSize,
        clockRate,
        memoryClockRate,
        memoryBusWidth,
        totalConstMem,
        major,
        minor,
        multiProcessorCount,
        l2CacheSize,
        maxThreadsPerMultiProcessor,
        computeMode,
        clockInstructionRate,
        arch,
        concurrentKernels,
        pciDomainID,
        pciBusID,
        pciDeviceID,
        maxSharedMemoryPerMultiProcessor,
        isMultiGpuBoard,
        canMapHostMemory,
        gcnArch,
        gcnArchName,
        integrated,
        cooperativeLaunch,
        cooperativeMultiDeviceLaunch,
        maxTexture1DLinear,
        maxTexture1D,
        maxTexture2D,
        maxTexture3D,
        hdpMemFlushCntl,
        hdpRegFlushCntl,
        memPitch,
        textureAlignment,
        texturePitchAlignment,
        kernelExecTimeoutEnabled,
        ECCEnabled,
        tccDriver,
        cooperativeMultiDeviceUnmatchedFunc,
        cooperativeMultiDeviceUnmatchedGridDim,
        cooperativeMultiDeviceUnmatchedBlockDim,
        cooperativeMultiDeviceUnmatchedSharedMem,
        isLargeBar,
        asicRevision,
        managedMemory,
        directManagedMemAccessFromHost,
        concurrentManagedAccess,
        pageableMemoryAccess,
        pageableMemoryAccessUsesHostPageTables
    );
    let mut body = String::new();
    for (name, _) in &rust {
        if name == "sizeof" {
            body += "printf(\"sizeof %zu\\n\", sizeof(hipDeviceProp_t));\n";
        } else {
            body += &format!("printf(\"{name} %zu\\n\", offsetof(hipDeviceProp_t, {name}));\n");
        }
    }
    body += "printf(\"dim3 %zu\\n\", sizeof(dim3));\nprintf(\"arch %zu\\n\", sizeof(hipDeviceArch_t));\n";
    let dir = std::env::temp_dir().join(format!("sim-hip-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("probe.c");
    std::fs::write(
        &src,
        format!("#include <stdio.h>\n#include <stddef.h>\n#include <hip/hip_runtime_api.h>\nint main(void) {{\n{body}return 0;\n}}\n"),
    )
    .unwrap();
    let exe = dir.join("probe");
    let out = Command::new("gcc")
        .args(["-D__HIP_PLATFORM_AMD__"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("gcc must be installed");
    assert!(
        out.status.success(),
        "probe failed to compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    let c: Vec<(String, usize)> = run
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect();
    let mut expected = rust.clone();
    expected.push(("dim3".into(), size_of::<Dim3>()));
    expected.push(("arch".into(), 4));
    let diffs: Vec<String> = expected
        .iter()
        .zip(&c)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("{}: rust {} vs C {}", a.0, a.1, b.1))
        .collect();
    assert_eq!(expected.len(), c.len());
    assert!(
        diffs.is_empty(),
        "hipDeviceProp_t mismatches:\n{}",
        diffs.join("\n")
    );
}

#[test]
fn checked_in_exports_match_the_real_library() {
    let real = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
    assert!(
        std::path::Path::new(real).exists(),
        "{real} missing: install libamdhip64-5 (cargo xtask setup)"
    );
    let out = Command::new("readelf")
        .args(["--dyn-syms", "-W", real])
        .output()
        .expect("readelf (binutils) must be installed");
    let mut live: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 8
                && f[3] == "FUNC"
                && f[6] != "UND"
                && (f[4] == "GLOBAL" || f[4] == "WEAK"))
                .then(|| f[7].replace("@@", " "))
        })
        .collect();
    live.sort();
    let mut checked: Vec<String> = include_str!("../exports.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    checked.sort();
    assert_eq!(
        live, checked,
        "sim/hip/exports.txt is stale; regenerate it from {real}"
    );
}
