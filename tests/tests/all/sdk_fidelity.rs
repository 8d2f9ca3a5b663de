//! rocwasm's `librocprofiler-sdk` as AMD's own integration tests expect it.
//!
//! AMD's generic test tool configures every service a tool can ask for and
//! its per-feature validators check what the SDK promises. Our tool of the
//! same kind, `examples/native-tools/record-all/record_all.c` (written from
//! the documented API), is built against the prefix `rocwasm sdk prefix`
//! writes, runs on the simulated GPU under the hipcc-built sample (two
//! worker threads: kernels, async and 2D copies, roctx), and its records
//! are held to those properties here:
//!
//! - every tracing kind the headers declare, and dispatch counting, can be
//!   configured; kinds nothing here produces (OMPT, KFD, rocDecode's
//!   argument records) yield no records;
//! - internal correlation ids are unique and dense (`1..=N` over every API
//!   record, as AMD's validator requires), every id is retired after its
//!   call ends, and each API record's external id is its thread's (the
//!   tool's request callback answers that);
//! - three callbacks per dispatch (ENQUEUE enter and exit without
//!   timestamps, then COMPLETE with them), dispatch ids `1..=N`;
//! - ENTER (no timestamps) then EXIT (timed) per memory copy, with the
//!   tool's user data kept between them;
//! - a copy carries its `hsa_amd_memory_async_copy*` call's id, and that
//!   call's ancestor is the `hipMemcpy*` that asked for it, on its thread;
//! - HOST_KERNEL_SYMBOL_REGISTER records for the kernels HIP registered;
//! - RUNTIME_INITIALIZATION callbacks with their payload (HSA and HIP);
//! - `finalize` pops, on its thread, the external ids `initialize` pushed;
//! - a context configured in `initialize` and started later (from the HIP
//!   runtime's initialisation callback) gets timed copies and dispatches;
//! - MARKER_CORE_RANGE_API records name the roctx operation
//!   (`roctxMarkA`, `roctxThreadRangeA`, `roctxProcessRangeA`) and carry
//!   the correlation id of the roctx call that opened them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use rocwasm_tests::*;
use serde_json::Value;

use super::native_tools::{build_c_library, text};

// The SDK's numbers (fwd.h), as the tool writes them.
const CB_CODE_OBJECT: u64 = 10;
const CB_KERNEL_DISPATCH: u64 = 12;
const CB_MEMORY_COPY: u64 = 13;
const CB_OMPT: u64 = 15;
const CB_RUNTIME_INITIALIZATION: u64 = 17;
const BUF_HSA_CORE: u64 = 1;
const BUF_HSA_AMD_EXT: u64 = 2;
const BUF_HIP_RUNTIME: u64 = 5;
const BUF_MEMORY_COPY: u64 = 10;
const BUF_KERNEL_DISPATCH: u64 = 11;
const BUF_RETIREMENT: u64 = 13;
const BUF_OMPT: u64 = 15;
const BUF_MARKER_CORE: u64 = 7;
const BUF_MARKER_CORE_RANGE: u64 = 32;
/// ROCDECODE_API_EXT and the eight KFD kinds.
const BUF_NO_PRODUCER: std::ops::RangeInclusive<u64> = 23..=31;
/// The API kinds, callback and buffer numbering alike (HSA ×4, HIP ×2,
/// marker ×3; RCCL is 14 in both).
const API_KINDS: [u64; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 14];

/// What the tool wrote, one JSON object a line.
struct Recording {
    lines: Vec<Value>,
}

impl Recording {
    fn of<'a>(&'a self, t: &'static str) -> impl Iterator<Item = &'a Value> + 'a {
        self.lines.iter().filter(move |l| l["t"] == t)
    }

    fn one(&self, t: &'static str) -> &Value {
        let found: Vec<_> = self.of(t).collect();
        assert_eq!(found.len(), 1, "one {t:?} line: {found:?}");
        found[0]
    }

    /// Callback records of `kind`.
    fn callbacks(&self, kind: u64) -> Vec<&Value> {
        self.of("cb").filter(|r| n(r, "kind") == kind).collect()
    }

    /// Buffer records of `kind` delivered to context `ctx`.
    fn buffered(&self, ctx: u64, kind: u64) -> Vec<&Value> {
        self.of("buf")
            .filter(|r| n(r, "ctx") == ctx && n(r, "kind") == kind)
            .collect()
    }

    fn context(&self, which: &str) -> u64 {
        n(self.one("contexts"), which)
    }
}

fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no number {key:?} in {v}"))
}

/// Builds the tool and runs the sample under it alone (no tracing flags:
/// the tool is all there is); what it wrote.
fn record_all(dir: &Path, env: &[(&str, &str)]) -> Recording {
    let library = build_c_library(
        dir,
        &workspace().join("examples/native-tools/record-all/record_all.c"),
        "librecord_all.so",
    );
    let out = dir.join("record_all.jsonl");
    let app = sim_dir().join("bin/multi_kernel");
    let mut all_env = vec![
        ("ROCP_TOOL_LIBRARIES", library.to_str().unwrap()),
        ("RECORD_ALL_OUT", out.to_str().unwrap()),
    ];
    all_env.extend_from_slice(env);
    let run = rocwasm_with_env(
        &[
            "run",
            "--sim",
            "--",
            app.to_str().unwrap(),
            "--threads",
            "2",
        ],
        dir,
        &all_env,
    );
    assert_success(&run, "rocwasm run --sim with record_all");
    assert!(
        text(&run.stdout).contains("RESULT PASS"),
        "{}",
        text(&run.stdout)
    );
    let content = std::fs::read_to_string(&out).unwrap_or_else(|e| {
        panic!(
            "record_all wrote no {} ({e}); rocwasm's stderr:\n{}",
            out.display(),
            text(&run.stderr)
        )
    });
    let lines = content
        .lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}:{}: {e}: {l}", out.display(), i + 1))
        })
        .collect();
    Recording { lines }
}

#[test]
fn a_tool_that_configures_everything_sees_what_amds_validators_check() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let rec = record_all(tmp.path(), &[]);
    let buf_ctx = rec.context("buffer");

    // Every service and kind configures (status 0 = SUCCESS).
    let refused: Vec<_> = rec
        .of("configure")
        .filter(|c| n(c, "status") != 0)
        .collect();
    assert!(refused.is_empty(), "refused: {refused:?}");
    let kinds = |service: &str| -> BTreeSet<u64> {
        rec.of("configure")
            .filter(|c| c["service"] == service)
            .map(|c| n(c, "kind"))
            .collect()
    };
    assert_eq!(
        kinds("callback_tracing"),
        (1..=21).collect(),
        "every callback kind"
    );
    assert_eq!(
        kinds("buffer_tracing"),
        (1..=32).collect(),
        "every buffer kind"
    );
    assert_eq!(kinds("buffer_dispatch_counting").len(), 1);
    // … and the kinds nothing here produces yield nothing.
    assert!(rec.callbacks(CB_OMPT).is_empty());
    for kind in BUF_NO_PRODUCER.chain([BUF_OMPT]) {
        assert!(
            rec.buffered(buf_ctx, kind).is_empty(),
            "kind {kind} records"
        );
    }
    assert!(rec.of("other").next().is_none(), "no counter records");

    // Marker records as the SDK numbers them: the roctx operation, named,
    // with the id of the roctx call that opened the range.
    let ranges = rec.buffered(buf_ctx, BUF_MARKER_CORE_RANGE);
    assert!(!ranges.is_empty(), "the sample's roctx ranges");
    let roctx_calls: HashMap<u64, &Value> = rec
        .buffered(buf_ctx, BUF_MARKER_CORE)
        .into_iter()
        .map(|r| (n(r, "int"), r))
        .collect();
    for r in &ranges {
        let (op, name) = (n(r, "op"), r["name"].as_str().unwrap_or(""));
        // The SDK's MARKER_CORE_RANGE_API operations, in its enum's order;
        // a range or mark is one of the first three.
        let want = rocwasm_core::ops::MARKER_CORE_RANGE_API;
        assert!(op < 3 && name == want[op as usize], "{r}");
        let opener = roctx_calls
            .get(&n(r, "int"))
            .unwrap_or_else(|| panic!("no roctx call has the id of {r}"));
        assert!(
            ["roctxMarkA", "roctxRangePushA", "roctxRangeStartA"]
                .contains(&opener["name"].as_str().unwrap_or("")),
            "{r} opened by {opener}"
        );
        assert!(n(r, "start") <= n(r, "end"), "{r}");
    }

    // Internal correlation ids: every API record's, unique per call and
    // dense, 1..=N (AMD's validator: max == number of distinct ids).
    let api_cb: Vec<&Value> = rec
        .of("cb")
        .filter(|r| API_KINDS.contains(&n(r, "kind")))
        .collect();
    let api_buf: Vec<&Value> = rec
        .of("buf")
        .filter(|r| n(r, "ctx") == buf_ctx && API_KINDS.contains(&n(r, "kind")))
        .collect();
    let ids: Vec<u64> = api_cb.iter().chain(&api_buf).map(|r| n(r, "int")).collect();
    let distinct: BTreeSet<u64> = ids.iter().copied().collect();
    assert!(distinct.len() > 100, "{} API ids", distinct.len());
    assert!(
        ids.len() > distinct.len(),
        "callback and buffer records share ids"
    );
    assert_eq!(
        distinct.iter().copied().collect::<Vec<_>>(),
        (1..=distinct.len() as u64).collect::<Vec<_>>(),
        "ids are 1..=N"
    );
    let buffered_ids: Vec<u64> = api_buf.iter().map(|r| n(r, "int")).collect();
    assert_eq!(
        buffered_ids.len(),
        buffered_ids.iter().collect::<BTreeSet<_>>().len(),
        "one buffer record per call"
    );
    // Each is retired once, after its call ended.
    let retired: HashMap<u64, u64> = rec
        .buffered(buf_ctx, BUF_RETIREMENT)
        .iter()
        .map(|r| (n(r, "int"), n(r, "ts")))
        .collect();
    for r in &api_buf {
        let at = retired
            .get(&n(r, "int"))
            .unwrap_or_else(|| panic!("id never retired: {r}"));
        assert!(*at >= n(r, "end"), "retired before its end: {r}");
    }
    // External ids are what the tool's request callback answered: the
    // thread's id; user data survives from ENTER to EXIT.
    for r in api_cb.iter().chain(&api_buf) {
        assert_eq!(n(r, "ext"), n(r, "tid"), "{r}");
    }
    assert!(rec
        .of("cb")
        .filter(|r| n(r, "kind") != CB_CODE_OBJECT)
        .all(|r| r["udata_ok"] == 1));

    // Kernel dispatches: ENQUEUE enter and exit without timestamps, then
    // COMPLETE with them, per dispatch; dispatch ids 1..=N.
    let dispatches = rec.buffered(buf_ctx, BUF_KERNEL_DISPATCH);
    assert!(dispatches.len() >= 8, "{} dispatches", dispatches.len());
    let callbacks = rec.callbacks(CB_KERNEL_DISPATCH);
    assert_eq!(
        callbacks.len(),
        3 * dispatches.len(),
        "3 callbacks a dispatch"
    );
    let mut by_dispatch: BTreeMap<u64, Vec<(u64, u64, bool)>> = BTreeMap::new();
    for c in &callbacks {
        by_dispatch.entry(n(c, "dispatch_id")).or_default().push((
            n(c, "op"),
            n(c, "phase"),
            n(c, "start") == 0 && n(c, "end") == 0,
        ));
    }
    assert_eq!(
        by_dispatch.keys().copied().collect::<Vec<_>>(),
        (1..=dispatches.len() as u64).collect::<Vec<_>>()
    );
    for (id, seen) in &by_dispatch {
        assert_eq!(
            seen,
            &[(1, 1, true), (1, 2, true), (2, 0, false)],
            "dispatch {id}: ENQUEUE enter, ENQUEUE exit, COMPLETE"
        );
    }
    let api_ids: BTreeSet<u64> = distinct.clone();
    for d in &dispatches {
        assert!(n(d, "start") < n(d, "end"), "{d}");
        assert!(
            api_ids.contains(&n(d, "int")),
            "a dispatch's id is a call's: {d}"
        );
        assert_eq!(n(d, "ext"), n(d, "tid"), "{d}");
    }

    // Memory copies: ENTER at submission without timestamps, EXIT timed.
    let copies = rec.buffered(buf_ctx, BUF_MEMORY_COPY);
    assert!(copies.len() >= 8, "{} copies", copies.len());
    let copy_callbacks = rec.callbacks(CB_MEMORY_COPY);
    assert_eq!(
        copy_callbacks.len(),
        2 * copies.len(),
        "ENTER and EXIT a copy"
    );
    for c in &copies {
        let phases: Vec<&&Value> = copy_callbacks
            .iter()
            .filter(|k| n(k, "int") == n(c, "int"))
            .collect();
        let enter = phases.iter().find(|k| n(k, "phase") == 1).expect("ENTER");
        let exit = phases.iter().find(|k| n(k, "phase") == 2).expect("EXIT");
        assert_eq!((n(enter, "start"), n(enter, "end")), (0, 0), "{enter}");
        assert_eq!(
            (n(exit, "start"), n(exit, "end")),
            (n(c, "start"), n(c, "end"))
        );
        assert!(n(c, "start") < n(c, "end"), "{c}");
        assert_eq!(n(enter, "bytes"), n(c, "bytes"));
    }
    // … each carrying its HSA async copy's id, whose ancestor is the HIP
    // copy that asked for it, on the same thread.
    let calls: HashMap<u64, &Value> = api_buf.iter().map(|r| (n(r, "int"), *r)).collect();
    for c in &copies {
        let hsa = calls
            .get(&n(c, "int"))
            .unwrap_or_else(|| panic!("no call has the copy's id: {c}"));
        assert!(
            [BUF_HSA_CORE, BUF_HSA_AMD_EXT].contains(&n(hsa, "kind"))
                && hsa["name"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("hsa_amd_memory_async_copy")),
            "{hsa}"
        );
        let hip = calls
            .get(&n(hsa, "anc"))
            .unwrap_or_else(|| panic!("the HSA copy has no traced ancestor: {hsa}"));
        assert_eq!(n(hip, "kind"), BUF_HIP_RUNTIME, "{hip}");
        assert!(
            hip["name"]
                .as_str()
                .is_some_and(|s| s.starts_with("hipMemcpy")),
            "{hip}"
        );
        assert_eq!(n(hip, "tid"), n(c, "tid"));
    }

    // Host kernel symbols: one per kernel HIP registered, after its device
    // symbol, numbered from 1.
    let code_objects = rec.callbacks(CB_CODE_OBJECT);
    let device: BTreeSet<u64> = code_objects
        .iter()
        .filter(|r| n(r, "op") == 2 && n(r, "phase") == 1)
        .map(|r| n(r, "kernel_id"))
        .collect();
    let host: Vec<&&Value> = code_objects.iter().filter(|r| n(r, "op") == 3).collect();
    assert!(host.len() >= 4, "{} host kernel symbols", host.len());
    assert_eq!(
        host.iter()
            .map(|h| n(h, "host_function_id"))
            .collect::<Vec<_>>(),
        (1..=host.len() as u64).collect::<Vec<_>>()
    );
    for h in &host {
        assert_eq!(n(h, "phase"), 1, "{h}");
        assert!(device.contains(&n(h, "kernel_id")), "{h}");
        assert!(
            n(h, "size") > 0 && n(h, "host_function") != 0 && n(h, "named") == 1,
            "{h}"
        );
    }
    for d in &dispatches {
        assert!(device.contains(&n(d, "kernel_id")), "{d}");
    }

    // Runtime initialisation: HSA and HIP, phase NONE, with a payload.
    let inits = rec.callbacks(CB_RUNTIME_INITIALIZATION);
    let ops: BTreeSet<u64> = inits.iter().map(|r| n(r, "op")).collect();
    assert_eq!(ops, BTreeSet::from([1, 2]), "{inits:?}");
    for r in &inits {
        assert_eq!(n(r, "phase"), 0, "{r}");
        assert_eq!((n(r, "int"), n(r, "ext")), (0, 0), "{r}");
        assert_eq!(n(r, "size"), 24, "a payload: {r}");
    }

    // Finalize pops, on the initializing thread's id, what initialize pushed.
    let (init, fini) = (rec.one("init"), rec.one("fini"));
    assert_eq!(n(fini, "tid"), n(init, "tid"));
    let pushed = n(fini, "pushed");
    assert_eq!(
        fini["popped"],
        serde_json::json!([pushed, pushed]),
        "{fini}"
    );
    assert_eq!(n(rec.one("late_start"), "status"), 0);
}

#[test]
fn a_context_configured_in_initialize_and_started_later_gets_timed_copies() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    // The late context alone traces copies and dispatches: the runtime came
    // up while no started context did.
    let rec = record_all(tmp.path(), &[("RECORD_ALL_LATE_ONLY", "1")]);
    assert_eq!(n(rec.one("late_start"), "status"), 0);
    let late = rec.context("late");
    let copies = rec.buffered(late, BUF_MEMORY_COPY);
    let dispatches = rec.buffered(late, BUF_KERNEL_DISPATCH);
    assert!(
        copies.len() >= 8 && dispatches.len() >= 8,
        "{copies:?} {dispatches:?}"
    );
    for r in copies.iter().chain(&dispatches) {
        assert!(n(r, "start") < n(r, "end"), "untimed: {r}");
    }
}

/// Linker arguments for the simulated `libamdhip64.so.5` (and its HSA
/// beside it): the program is built against the runtime it runs on, not
/// Debian's, whose HSA dependency the simulated one cannot stand in for at
/// link time.
fn simulated_hip() -> Vec<String> {
    let lib = sim_dir().join("lib");
    vec![
        lib.join("libamdhip64.so.5").display().to_string(),
        format!("-Wl,-rpath-link,{}", lib.display()),
    ]
}

#[test]
fn a_program_that_links_its_tool_is_profiled_without_options() {
    // AMD's samples link their tool into the program and are run with no
    // option at all: the SDK finds `rocprofiler_configure` in the process.
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let library = build_c_library(
        dir,
        &workspace().join("examples/native-tools/record-all/record_all.c"),
        "librecord_all.so",
    );
    let source = dir.join("app.c");
    std::fs::write(
        &source,
        r#"#include <hip/hip_runtime_api.h>
#include <stdio.h>
int main(void) {
    static char host[1 << 16];
    void* device = NULL;
    if (hipMalloc(&device, sizeof host) != hipSuccess) return 1;
    if (hipMemcpy(device, host, sizeof host, hipMemcpyHostToDevice) != hipSuccess) return 1;
    hipFree(device);
    puts("RESULT PASS");
    return 0;
}
"#,
    )
    .unwrap();
    let app = dir.join("app");
    super::native_tools::run_ok(
        std::process::Command::new(super::native_tools::program("cc", "gcc"))
            .arg("-D__HIP_PLATFORM_AMD__")
            .arg(&source)
            .arg("-o")
            .arg(&app)
            .arg(format!("-Wl,--no-as-needed,-rpath,{}", dir.display()))
            .arg(format!("-Wl,-rpath-link,{}", dir.join("sdk/lib").display()))
            .arg(&library)
            .args(simulated_hip())
            // The linker also searches LD_LIBRARY_PATH for the libraries'
            // own dependencies: only the simulated runtime's, as above.
            .env_remove("LD_LIBRARY_PATH"),
        "cc app.c librecord_all.so <the simulated libamdhip64>",
    );
    let out = dir.join("record_all.jsonl");
    let run = rocwasm_with_env(
        &["run", "--sim", "--", app.to_str().unwrap()],
        dir,
        &[("RECORD_ALL_OUT", out.to_str().unwrap())],
    );
    assert_success(&run, "rocwasm run --sim -- <a program linking its tool>");
    assert!(text(&run.stdout).contains("RESULT PASS"));
    let content = std::fs::read_to_string(&out).unwrap_or_else(|e| {
        panic!(
            "the linked tool wrote no {} ({e}); stderr:\n{}",
            out.display(),
            text(&run.stderr)
        )
    });
    let rec = Recording {
        lines: content
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    };
    let buf_ctx = rec.context("buffer");
    assert_eq!(rec.buffered(buf_ctx, BUF_MEMORY_COPY).len(), 1);
    assert!(rec
        .buffered(buf_ctx, BUF_HIP_RUNTIME)
        .iter()
        .any(|r| r["name"] == "hipMemcpy"));

    // Without the tool, the same options are still nothing to profile.
    let plain = dir.join("plain");
    super::native_tools::run_ok(
        std::process::Command::new(super::native_tools::program("cc", "gcc"))
            .arg("-D__HIP_PLATFORM_AMD__")
            .arg(&source)
            .arg("-o")
            .arg(&plain)
            .args(simulated_hip())
            .env_remove("LD_LIBRARY_PATH"),
        "cc app.c <the simulated libamdhip64>",
    );
    let refused = rocwasm(&["run", "--sim", "--", plain.to_str().unwrap()], dir);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("nothing to profile"),
        "{}",
        text(&refused.stderr)
    );
}

/// A C++ tool that throws where `THROW_IN` says: from `initialize`, or from
/// its tracing and buffer callbacks.
const THROWING_TOOL: &str = r#"
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace {
rocprofiler_context_id_t ctx;
rocprofiler_buffer_id_t  buffer;
bool throws_in(const char* where) {
    const char* t = std::getenv("THROW_IN");
    return t != nullptr && std::strcmp(t, where) == 0;
}
void on_callback(rocprofiler_callback_tracing_record_t, rocprofiler_user_data_t*, void*) {
    throw std::runtime_error("boom from a tracing callback");
}
void on_buffer(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
               size_t, void*, uint64_t) {
    throw 42;  // not a std::exception
}
int init(rocprofiler_client_finalize_t, void*) {
    if (throws_in("init")) throw std::runtime_error("boom from initialize");
    rocprofiler_create_context(&ctx);
    rocprofiler_configure_callback_tracing_service(ctx, ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API,
                                                   nullptr, 0, on_callback, nullptr);
    rocprofiler_create_buffer(ctx, 1 << 16, 1 << 15, ROCPROFILER_BUFFER_POLICY_LOSSLESS, on_buffer,
                              nullptr, &buffer);
    rocprofiler_configure_buffer_tracing_service(ctx, ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
                                                 nullptr, 0, buffer);
    rocprofiler_start_context(ctx);
    return 0;
}
void fini(void*) { rocprofiler_flush_buffer(buffer); }
}  // namespace

extern "C" rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t* id) {
    id->name = "throwing";
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), init, fini, nullptr};
    return &result;
}
"#;

#[test]
fn a_cxx_exception_from_a_tool_is_caught_and_the_application_runs_on() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let source = dir.join("throwing.cpp");
    std::fs::write(&source, THROWING_TOOL).unwrap();
    let library = build_c_library(dir, &source, "libthrowing.so");
    let app = sim_dir().join("bin/multi_kernel");
    for (place, said) in [
        ("init", "libthrowing.so's initialize threw a C++ exception (boom from initialize)"),
        (
            "callbacks",
            "a native tool's tracing callback threw a C++ exception (boom from a tracing callback)",
        ),
        (
            "callbacks",
            "a native tool's buffer callback threw a C++ exception (an exception not derived from std::exception)",
        ),
    ] {
        let run = rocwasm_with_env(
            &["run", "--sim", "--", app.to_str().unwrap(), "--threads", "1"],
            dir,
            &[
                ("ROCP_TOOL_LIBRARIES", library.to_str().unwrap()),
                ("THROW_IN", place),
            ],
        );
        assert_success(&run, "a run with a throwing tool");
        assert!(text(&run.stdout).contains("RESULT PASS"));
        assert!(
            text(&run.stderr).contains(said),
            "THROW_IN={place}: {said:?} not in\n{}",
            text(&run.stderr)
        );
    }
}
