//! The generated interposers still match the installed runtime: every
//! `hip*`/`__hip*` function Debian's libamdhip64.so.5 exports is defined by
//! the tool library, and the tool library exports nothing else under those
//! prefixes. (Regenerate with `cargo xtask gen-intercept` when this fails.)

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn defined(lib: &Path, prefixes: &[&str]) -> BTreeSet<String> {
    let out = Command::new("readelf")
        .args(["--dyn-syms", "-W"])
        .arg(lib)
        .output()
        .expect("readelf");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            (c.len() >= 8 && c[3] == "FUNC" && c[4] == "GLOBAL" && c[6] != "UND")
                .then(|| c[7].split('@').next().unwrap().to_string())
        })
        .filter(|n| prefixes.iter().any(|p| n.starts_with(p)))
        .collect()
}

#[test]
fn interposers_cover_every_hip_export() {
    if !Path::new(crate::common::REAL_HIP).is_file() {
        panic!("libamdhip64-5 is not installed: run `cargo xtask setup`");
    }
    let real = defined(Path::new(crate::common::REAL_HIP), &["hip", "__hip"]);
    let ours = defined(&crate::common::tool_lib(), &["hip", "__hip"]);
    assert_eq!(real.len(), 399, "Debian ROCm 5.2 exports 399");
    let missing: Vec<_> = real.difference(&ours).collect();
    let extra: Vec<_> = ours.difference(&real).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}"
    );
}

#[test]
fn tool_exports_the_hsa_and_roctx_entry_points() {
    let ours = defined(
        &crate::common::tool_lib(),
        &["OnLoad", "OnUnload", "roctx", "rocprofiler_set_api_table"],
    );
    for name in [
        "OnLoad",
        "OnUnload",
        "roctxMarkA",
        "roctxRangePushA",
        "roctxRangePop",
        "roctxRangeStartA",
        "roctxRangeStop",
        "roctxProfilerPause",
        "roctxProfilerResume",
    ] {
        assert!(ours.contains(name), "{name} exported");
    }
    // Never an HSA function: the HSA API is wrapped through the tables only.
    assert!(defined(&crate::common::tool_lib(), &["hsa_"]).is_empty());
}
