//! `rocwasm run --backend rocprofiler-sdk`: rocwasm's chain and outputs as
//! a rocprofiler-sdk tool (`capi/tool`), measured by rocwasm's own
//! librocprofiler-sdk on the simulated runtime (no AMD library here).
//!
//! - the same program gives the same calls per kernel and per HIP function,
//!   the same copies, under both back ends, and the summary says which ran;
//! - the tool library of this back end calls only the SDK's API (`nm`);
//! - the run finishes once on every exit path that runs a finalizer
//!   (`return`, `exit`, SIGTERM), and a crash is reported, not hidden.
//!
//! (Containment and external correlation under this back end:
//! `live_chain::a_trapping_plugin_is_contained_under_the_sdk_back_end`,
//! `live_chain::the_sdk_back_end_carries_the_taggers_answers_in_its_records`.)
//!
//! Needs `cargo xtask build-sim`; fails (never skips) with the command.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use rocwasm_tests::*;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run_on(backend: &str, dir: &Path, extra: &[&str], app: &[&str]) -> Output {
    let sim = sim_dir();
    let program = sim.join("bin").join(app[0]);
    let mut args = vec!["run", "--sim", "--backend", backend];
    args.extend_from_slice(extra);
    args.extend(["-d", dir.to_str().unwrap(), "--"]);
    args.push(program.to_str().unwrap());
    args.extend_from_slice(&app[1..]);
    rocwasm(&args, dir.parent().unwrap())
}

fn calls(path: &Path) -> BTreeMap<String, u64> {
    read_stats(path)
        .into_iter()
        .map(|(name, s)| (name, s.calls))
        .collect()
}

fn rows(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .count()
        .saturating_sub(1)
}

#[test]
fn both_back_ends_count_the_same_calls_per_kernel_and_per_hip_function() {
    let tmp = tempfile::tempdir().unwrap();
    let flags = [
        "--kernel-trace",
        "--hip-trace",
        "--memory-copy-trace",
        "--stats",
        "--output-format",
        "csv",
    ];
    let app = ["multi_kernel", "--threads", "2"];
    let mut seen = Vec::new();
    for backend in ["builtin", "rocprofiler-sdk"] {
        let dir = tmp.path().join(backend);
        let out = run_on(backend, &dir, &flags, &app);
        assert_success(&out, &format!("rocwasm run --backend {backend}"));
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            said.contains(&format!("(--backend {backend})")),
            "the summary names the back end: {said}"
        );
        seen.push((
            calls(&dir.join("kernel_stats.csv")),
            calls(&dir.join("hip_api_stats.csv")),
            rows(&dir.join("memory_copy_trace.csv")),
            rows(&dir.join("kernel_trace.csv")),
        ));
    }
    let (builtin, sdk) = (&seen[0], &seen[1]);
    assert!(
        !builtin.0.is_empty() && !builtin.1.is_empty(),
        "{builtin:?}"
    );
    assert_eq!(sdk.0, builtin.0, "Calls per kernel");
    assert_eq!(sdk.1, builtin.1, "Calls per HIP function");
    assert_eq!(sdk.2, builtin.2, "memory copies");
    assert!(builtin.2 > 0);
    assert_eq!(sdk.3, builtin.3, "dispatches");
}

#[test]
fn the_sdk_tool_library_calls_only_the_sdk_api() {
    let bin = rocwasm_bin();
    let lib = bin.parent().unwrap().join("librocwasm_sdk_tool.so");
    let out = std::process::Command::new("nm")
        .args(["-D", "--undefined-only"])
        .arg(&lib)
        .output()
        .expect("cannot run nm (binutils)");
    assert!(out.status.success(), "nm {}: {out:?}", lib.display());
    let listing = text(&out.stdout);
    let mut api = 0;
    for line in listing.lines() {
        let mut f = line.split_whitespace();
        let (Some(kind), Some(name)) = (f.next(), f.next()) else {
            continue;
        };
        if name.starts_with("rocprofiler_") {
            api += 1;
            continue;
        }
        // Everything else comes from a versioned system library (libc,
        // libgcc_s, libm) or is weak (optional glibc and toolchain hooks).
        assert!(
            name.contains('@') || kind == "w",
            "{} needs `{name}`, which is neither the SDK's API nor a system library's:\n{listing}",
            lib.display()
        );
        for ours in ["hip", "hsa_", "roctx", "OnLoad", "rocwasm"] {
            assert!(!name.starts_with(ours), "interception symbol `{name}`");
        }
    }
    assert!(api >= 10, "the SDK's API functions:\n{listing}");
    // And it defines the tool's entry point, and nothing of the API.
    let defined = std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .unwrap();
    let defined = text(&defined.stdout);
    assert!(defined.contains(" rocprofiler_configure"), "{defined}");
    assert!(
        !defined.contains(" rocprofiler_create_context"),
        "{defined}"
    );
}

/// (mode, exit code, whether the tool's finalize runs: the records of the
/// 300 dispatches reach the outputs, and the run's end is written once).
const ENDS: &[(&str, i32, bool)] = &[
    ("exit", 0, true),
    ("term", 128 + 15, true),
    ("segv", 128 + 11, false),
    ("kill", 128 + 9, false),
];

#[test]
fn the_sdk_back_end_finishes_once_on_every_exit_path_and_reports_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    for &(mode, code, finalizes) in ENDS {
        let dir = tmp.path().join(mode);
        let out = run_on(
            "rocprofiler-sdk",
            &dir,
            &["--kernel-trace", "--output-format", "csv"],
            &["crash_after_kernels", "300", mode],
        );
        assert_eq!(out.status.code(), Some(code), "{mode}: {out:?}");
        let summary = std::fs::read_to_string(dir.join("rocwasm-summary.txt"))
            .unwrap_or_else(|e| panic!("{mode}: no summary: {e}\n{out:?}"));
        let ends = summary
            .matches("records from rocprofiler-sdk (--backend rocprofiler-sdk)")
            .count();
        if finalizes {
            assert_eq!(ends, 1, "{mode}: the run ended once:\n{summary}");
            assert_eq!(rows(&dir.join("kernel_trace.csv")), 300, "{mode}");
        } else {
            assert_eq!(ends, 0, "{mode}: no end of run:\n{summary}");
            assert!(
                summary.contains("did not reach its end of run"),
                "{mode}: the loss is reported:\n{summary}"
            );
            // What the SDK back end lost, said as far as it is known (the
            // SDK does not count what its buffer held), and the way out.
            assert!(
                summary.contains("records lost in the crash (--backend rocprofiler-sdk)")
                    && summary.contains("that number is unknown")
                    && summary.contains("--backend builtin keeps every completed record"),
                "{mode}: the SDK's loss is said:\n{summary}"
            );
            assert!(
                summary.contains("the SDK delivered its buffer")
                    || summary.contains("the SDK never delivered its buffer"),
                "{mode}: what the SDK delivered:\n{summary}"
            );
        }
    }
}

/// A crash after the SDK delivered its buffer: the summary says how many
/// records the SDK delivered and how many reached the journal (exactly the
/// rows of kernel_trace.csv), how many of those imported are known lost,
/// and that the SDK's own buffer's are lost in a number it does not say.
#[test]
fn the_sdk_back_end_says_what_a_crash_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("segv");
    let out = run_on(
        "rocprofiler-sdk",
        &dir,
        &["--kernel-trace", "--output-format", "csv"],
        &["crash_after_kernels", "30000", "segv"],
    );
    assert_eq!(out.status.code(), Some(128 + 11), "{out:?}");
    let summary = std::fs::read_to_string(dir.join("rocwasm-summary.txt")).unwrap();
    let line = summary
        .lines()
        .find(|l| l.contains("records lost in the crash (--backend rocprofiler-sdk)"))
        .unwrap_or_else(|| panic!("no loss line:\n{summary}"));
    let number_before = |text: &str| -> usize {
        let at = line
            .find(text)
            .unwrap_or_else(|| panic!("no `{text}` in {line}"));
        line[..at]
            .split_whitespace()
            .last()
            .and_then(|w| w.trim_start_matches(';').parse().ok())
            .unwrap_or_else(|| panic!("no number before `{text}` in {line}"))
    };
    assert!(line.contains("the SDK delivered its buffer"), "{line}");
    let kept = number_before(" reached the record journal and are kept");
    assert_eq!(kept, rows(&dir.join("kernel_trace.csv")), "{line}");
    let imported = number_before(" imported into rocwasm's buffers");
    assert!(imported >= kept, "{line}");
    if imported > kept {
        assert!(
            line.contains(&format!("at least {} imported records", imported - kept)),
            "{line}"
        );
    }
    assert!(
        line.contains("that number is unknown") && line.contains("--backend builtin keeps"),
        "{line}"
    );
}

#[test]
fn a_chain_file_chooses_the_back_end_and_the_flag_overrides_it() {
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("sdk.toml");
    std::fs::write(
        &chain,
        "version = 1\n\n[settings]\nbackend = \"rocprofiler-sdk\"\n\n[output]\nformats = [\"csv\"]\ntrace = [\"kernel_dispatch\"]\n",
    )
    .unwrap();
    let program = sim_dir().join("bin/multi_kernel");
    for (flag, want) in [(None, "rocprofiler-sdk"), (Some("builtin"), "builtin")] {
        let dir = tmp.path().join(want);
        let mut args = vec!["run", "--sim", "-c", chain.to_str().unwrap()];
        if let Some(f) = flag {
            args.extend(["--backend", f]);
        }
        args.extend(["-d", dir.to_str().unwrap(), "--", program.to_str().unwrap()]);
        let out = rocwasm(&args, tmp.path());
        assert_success(
            &out,
            &format!("rocwasm run with the chain, --backend {flag:?}"),
        );
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(said.contains(&format!("(--backend {want})")), "{said}");
        assert!(rows(&dir.join("kernel_trace.csv")) > 0, "{want}");
    }
}

#[test]
fn what_the_sdk_back_end_cannot_do_is_refused_before_the_start() {
    let tmp = tempfile::tempdir().unwrap();
    let program = sim_dir().join("bin/multi_kernel");
    let out = rocwasm(
        &[
            "run",
            "--sim",
            "--backend",
            "rocprofiler-sdk",
            "--selected-regions",
            "--kernel-trace",
            "--",
            program.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains("--selected-regions needs --backend builtin"),
        "{err}"
    );
    assert!(
        !err.contains("COUNTS"),
        "the application did not start: {err}"
    );
}

/// `exit_paths fork 10 20 30` (the intercept crate's test program, built
/// here against the simulated runtime): 10 HIP calls, a fork whose child
/// makes 20 and exits, then 30 more in the parent. The parent's trace holds
/// its 40 calls on both back ends; built-in, the child's 20 are in
/// `child-<pid>/` (they once overwrote the parent's file, when the launcher
/// wrote the child's journal into the parent's directory); the SDK back end
/// does not profile the child and leaves the parent's run alone.
#[test]
fn a_forked_child_leaves_the_parents_outputs_whole_on_both_back_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let sim = sim_dir();
    let exe = tmp.path().join("exit_paths");
    let cc = std::process::Command::new("gcc")
        .args(["-D__HIP_PLATFORM_AMD__", "-O1"])
        .arg(workspace().join("host/process/intercept/tests/programs/exit_paths.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", sim.join("lib").display()))
        .arg("-lamdhip64")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("gcc");
    assert!(cc.status.success(), "building exit_paths: {cc:?}");
    let calls_in = |path: &Path| {
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .matches("hipGetDeviceCount")
            .count()
    };
    for backend in ["builtin", "rocprofiler-sdk"] {
        let dir = tmp.path().join(backend);
        let out = rocwasm(
            &[
                "run",
                "--sim",
                "--backend",
                backend,
                "--hip-trace",
                "--output-format",
                "csv",
                "-d",
                dir.to_str().unwrap(),
                "--",
                exe.to_str().unwrap(),
                "fork",
                "10",
                "20",
                "30",
            ],
            tmp.path(),
        );
        assert_success(&out, &format!("exit_paths fork under --backend {backend}"));
        let child: u32 = text(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("child "))
            .expect("the child reports its pid")
            .trim()
            .parse()
            .unwrap();
        assert_eq!(
            calls_in(&dir.join("hip_api_trace.csv")),
            40,
            "{backend}: the parent's calls"
        );
        let child_trace = dir.join(format!("child-{child}/hip_api_trace.csv"));
        if backend == "builtin" {
            assert_eq!(
                calls_in(&child_trace),
                20,
                "the child's calls, in its own directory"
            );
        } else {
            assert!(
                !child_trace.exists(),
                "the SDK back end does not profile the child"
            );
        }
    }
}

/// `auto` takes the SDK only when AMD's library is installed and the
/// application's HIP registers with it: here there is no AMD library, so
/// the run is built-in, and says so.
#[test]
fn auto_without_amds_library_is_built_in() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("auto");
    let out = run_on(
        "auto",
        &dir,
        &["--kernel-trace", "--output-format", "csv"],
        &["multi_kernel"],
    );
    assert_success(&out, "rocwasm run --backend auto");
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains("back end: builtin"), "{said}");
    assert!(said.contains("(--backend builtin)"), "{said}");
    assert!(rows(&dir.join("kernel_trace.csv")) > 0);
}
