//! The HSA tools protocol end to end: a tool library given through
//! HSA_TOOLS_LIB gets OnLoad with tables whose sizes match the real header,
//! rewrites slots and sees HIP's calls, intercepts every dispatch packet,
//! swaps completion signals, and reads deterministic dispatch times.

use crate::support::*;

fn run_with_tool(name: &str, args: &[&str], scenario: &str) -> (String, String) {
    let dir = scratch(name);
    let tool = build_tool(&dir);
    let scenario_path = dir.join("scenario.toml");
    std::fs::write(&scenario_path, scenario).unwrap();
    let tool_out = dir.join("tool.txt");
    let out = run_sample(
        "multi_kernel",
        args,
        &[
            ("HSA_TOOLS_LIB", tool.to_str().unwrap()),
            ("SIM_TOOL_OUT", tool_out.to_str().unwrap()),
            ("ROCWASM_SIM_SCENARIO", scenario_path.to_str().unwrap()),
        ],
    );
    assert!(
        out.status.success(),
        "multi_kernel under the tool failed:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("RESULT PASS"), "{}", stdout(&out));
    let report =
        std::fs::read_to_string(&tool_out).expect("the tool wrote no report: OnUnload not called?");
    (stdout(&out), report)
}

const SCENARIO: &str = "[kernels]\nfixed_ns = 1000\nps_per_item = 1000\n[[kernels.cost]]\nmatch = \"square\"\nfixed_ns = 5000\n";

#[test]
fn tool_gets_real_table_sizes_and_sees_calls() {
    let (_, report) = run_with_tool("onload", &["--threads", "2"], SCENARIO);
    let onload = fields(&report, "ONLOAD");
    assert_eq!(num(&onload, "version"), 1);
    assert_eq!(num(&onload, "failed"), 0);
    assert_eq!(num(&onload, "root_major"), 1);
    for (ours, header) in [
        ("root_size", "header_root"),
        ("core_size", "header_core"),
        ("amd_ext_size", "header_amd_ext"),
        ("finalizer_size", "header_finalizer"),
        ("image_size", "header_image"),
    ] {
        assert_eq!(num(&onload, ours), num(&onload, header), "{ours}");
    }
    assert_eq!(
        (
            num(&onload, "root_size"),
            num(&onload, "core_size"),
            num(&onload, "amd_ext_size")
        ),
        (48, 1016, 400)
    );
    let counts = fields(&report, "COUNTS");
    // HIP's own hsa_* calls went through the rewritten slots.
    assert_eq!(num(&counts, "queue_creates"), 2, "one queue per stream");
    assert!(num(&counts, "agent_infos") > 0);
    assert_eq!(num(&counts, "freezes"), 1);
    assert!(report.trim_end().ends_with("UNLOADED"));
    // Code objects through the loader extension, kernel symbols at freeze.
    let co = fields(&report, "CODE_OBJECT");
    // Embedded in the executable: named by its file and place in it, as
    // ROCm names such code objects, and the bytes there are the code object.
    let uri = co["uri"].as_str();
    let rest = uri
        .strip_prefix("file://")
        .unwrap_or_else(|| panic!("{co:?}"));
    let (path, place) = rest.split_once("#offset=").expect("an offset");
    let (offset, size) = place.split_once("&size=").expect("a size");
    assert!(path.ends_with("/multi_kernel"), "{uri}");
    let (offset, size): (usize, usize) = (offset.parse().unwrap(), size.parse().unwrap());
    let file = std::fs::read(path).unwrap();
    assert!(
        file[offset..].starts_with(b"\x7fELF") && offset + size <= file.len(),
        "{uri}"
    );
    assert!(num(&co, "size") > 0 && num(&co, "base") > 0);
    assert!(
        report
            .lines()
            .any(|l| l == "SYMBOL _Z10vector_addPKfS0_Pfi"),
        "{report}"
    );
}

/// The report's `DISPATCH` lines (one per completion handler the tool ran),
/// asserted to number `expected`. The tool writes its report at OnUnload, so
/// a shortfall means OnUnload ran before every completion handler had: the
/// message carries the tool's own counters to tell which.
fn dispatch_lines<'a>(run: &str, report: &'a str, expected: usize) -> Vec<&'a str> {
    let lines: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("DISPATCH "))
        .collect();
    assert_eq!(
        lines.len(),
        expected,
        "run {run}: DISPATCH lines in the tool's report (its COUNTS line: {:?})",
        report.lines().find(|l| l.starts_with("COUNTS "))
    );
    lines
}

#[test]
fn interception_sees_every_dispatch_and_times_are_deterministic() {
    let (_, report) = run_with_tool("intercept", &["--threads", "8"], SCENARIO);
    let counts = fields(&report, "COUNTS");
    assert_eq!(num(&counts, "dispatches"), 32, "8 threads × 4 kernels");
    assert_eq!(num(&counts, "completions"), 32);
    let dispatches: Vec<_> = dispatch_lines("intercept", &report, 32)
        .into_iter()
        .map(line_fields)
        .collect();
    for d in &dispatches {
        assert_eq!(
            d["status"], "0",
            "profiling must be enabled on intercepted queues: {d:?}"
        );
        let grid: u64 = d["grid"]
            .split(',')
            .map(|g| g.parse::<u64>().unwrap())
            .product();
        // duration = fixed_ns + ceil(work_items * ps_per_item / 1000), see sim/README.md.
        let fixed = if d["name"].contains("square") {
            5000
        } else {
            1000
        };
        assert_eq!(num(d, "end") - num(d, "start"), fixed + grid, "{d:?}");
        assert_ne!(d["name"], "unknown");
    }

    // One thread on the purely virtual clock: every timestamp repeats
    // exactly across runs.
    let virtual_clock = format!("[clock]\nfollow_host = false\n{SCENARIO}");
    let (_, first) = run_with_tool("det1", &["--threads", "1"], &virtual_clock);
    let (_, second) = run_with_tool("det2", &["--threads", "1"], &virtual_clock);
    assert_eq!(
        dispatch_lines("det1", &first, 4),
        dispatch_lines("det2", &second, 4)
    );
}

/// A slow tool makes the queue fall far behind the application, which
/// meanwhile reclaims completed signals (it has hundreds pending). A copy's
/// completion signal must outlive the barrier packet that waits for it:
/// destroyed earlier, the barrier waited on a signal that no longer existed
/// (once its handle was reused, for ever: a hang). The simulated runtime
/// reports a barrier depending on a destroyed signal on stderr.
#[test]
fn a_slow_tool_never_sees_a_barrier_on_a_destroyed_signal() {
    let dir = scratch("slow-tool");
    let tool = build_tool(&dir);
    let rounds = 600;
    let out = run_sample_within(
        120,
        "multi_kernel",
        &["--copy-launch", &rounds.to_string()],
        &[
            ("HSA_TOOLS_LIB", tool.to_str().unwrap()),
            ("SIM_TOOL_OUT", dir.join("tool.txt").to_str().unwrap()),
            ("SIM_TOOL_HANDLER_DELAY_US", "200"),
        ],
    );
    let (out_text, err_text) = (stdout(&out), stderr(&out));
    assert!(
        out.status.success() && out_text.contains("RESULT PASS"),
        "multi_kernel --copy-launch under a slow tool failed ({}):\n{out_text}\n{err_text}",
        out.status
    );
    assert!(
        !err_text.contains("destroyed before the packet ran"),
        "a barrier ran after its dependency was destroyed:\n{err_text}"
    );
    let counts = fields(&out_text, "COUNTS");
    assert_eq!(num(&counts, "kernels"), rounds);
    assert_eq!(num(&counts, "copies"), rounds);
    let report = std::fs::read_to_string(dir.join("tool.txt")).unwrap();
    assert_eq!(num(&fields(&report, "COUNTS"), "completions"), rounds);
}
