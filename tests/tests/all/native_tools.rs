//! Native rocprofiler-sdk tools on the simulated GPU, built the two ways
//! tool projects find the SDK, against the prefix `rocwasm sdk prefix`
//! writes:
//!
//! - the C tool (`examples/native-tools/c-tool/tool.c`) built with
//!   `cc … $(pkg-config --cflags --libs rocprofiler-sdk)`, loaded with
//!   `ROCP_TOOL_LIBRARIES` beside the default chain: it sees every dispatch,
//!   copy and HIP call the chain's outputs hold, loses nothing under
//!   LOSSLESS, finds its external ids on every HIP record, gets ENTER and
//!   EXIT in pairs with its user data kept, iterates arguments and sees the
//!   kernel symbols register; the run's summary names the tool;
//! - the four C++ tools of `examples/native-tools/cxx` (buffered tracing on
//!   a callback thread of its own, callback tracing with argument iteration,
//!   code objects and kernel names, external-correlation requests) built
//!   with CMake's `find_package(rocprofiler-sdk)`, all loaded into one run:
//!   each reports `ok` and counts that agree with the run's
//!   `kernel_trace.csv`, the sample's own counts and each other;
//! - the fifth, `serialize_json`, which writes every record it traces as
//!   JSON through the SDK's `cxx/serialization.hpp` and cereal: the document
//!   parses, and its records carry the C field names with the values of the
//!   run's CSV traces; the CMake package's helpers (`rocprofiler_sdk_get_gfx_architectures`,
//!   `Findlibdw.cmake`) answer for the simulated GPU.
//!
//! Needs `cargo xtask build-sim`, `cargo xtask build-plugins` (the default
//! chain), C and C++ compilers, `pkg-config`, `cmake`, cereal and libdw's
//! headers (`cargo xtask setup` installs the last four); a missing one fails
//! the test with the package to install.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rocwasm_tests::*;

/// `name` on `PATH`; fails naming the Debian package that provides it.
pub(super) fn program(name: &str, package: &str) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "`{name}` is not installed: the native-tool tests need it; run `cargo xtask setup` \
                 (it installs Debian's `{package}`) or `apt-get install {package}`"
            )
        })
}

/// Runs `cmd`, requiring success; its output.
pub(super) fn run_ok(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert_success(&out, what);
    out
}

pub(super) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `rocwasm sdk prefix --into <dir>/sdk`: the prefix, checked to hold what
/// build systems look for.
pub(super) fn sdk_prefix(dir: &Path) -> PathBuf {
    let prefix = dir.join("sdk");
    let out = rocwasm(&["sdk", "prefix", "--into", prefix.to_str().unwrap()], dir);
    assert_success(&out, "rocwasm sdk prefix --into");
    assert_eq!(
        text(&out.stdout).trim(),
        prefix.display().to_string(),
        "`sdk prefix` prints the prefix"
    );
    for rel in [
        "include/rocprofiler-sdk/rocprofiler.h",
        "include/rocprofiler-sdk/cxx/name_info.hpp",
        "lib/librocprofiler-sdk.so.1",
        "lib/librocprofiler-sdk.so",
        "lib/pkgconfig/rocprofiler-sdk.pc",
        "lib/cmake/rocprofiler-sdk/rocprofiler-sdk-config.cmake",
        "lib/cmake/rocprofiler-sdk/Modules/rocprofiler-sdk-utilities.cmake",
        "lib/cmake/rocprofiler-sdk/Modules/Findlibdw.cmake",
        "include/rocprofiler-sdk/cxx/serialization.hpp",
    ] {
        assert!(prefix.join(rel).exists(), "the prefix has no {rel}");
    }
    prefix
}

/// Every file under `dir` (recursively) named `name` or `<prefix>_<name>`.
fn find_files(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.file_name().is_some_and(|f| {
                let f = f.to_string_lossy();
                f == name || f.ends_with(&format!("_{name}"))
            }) {
                found.push(p);
            }
        }
    }
    found
}

/// The one file `name` of the run under `dir`.
fn run_file(dir: &Path, name: &str) -> PathBuf {
    let mut found = find_files(dir, name);
    assert_eq!(
        found.len(),
        1,
        "one {name} under {}: {found:?}",
        dir.display()
    );
    found.remove(0)
}

/// Data rows of a CSV file (optionally only those whose `column` is `value`).
fn csv_rows(path: &Path, filter: Option<(&str, &str)>) -> u64 {
    let mut r = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let col = filter.map(|(c, _)| {
        r.headers()
            .unwrap()
            .iter()
            .position(|h| h == c)
            .unwrap_or_else(|| panic!("{}: no column {c}", path.display()))
    });
    r.records()
        .map(|rec| rec.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .filter(|rec| match (col, filter) {
            (Some(i), Some((_, v))) => &rec[i] == v,
            _ => true,
        })
        .count() as u64
}

/// `COUNTS kernels=N copies=M …` of the sample's stdout.
fn sample_counts(stdout: &str) -> BTreeMap<String, u64> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("COUNTS "))
        .unwrap_or_else(|| panic!("the sample prints COUNTS:\n{stdout}"));
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect()
}

/// One tool's result line: `<tool>: ok k=v …`, `<tool>: FAIL <reason> k=v …`
/// (the C++ tools) or `<tool>: k=v …` (the C tool).
#[derive(Debug)]
struct ToolLine {
    line: String,
    /// The words without `=` after the tool's name (`ok`, `FAIL reason`).
    status: String,
    values: BTreeMap<String, String>,
}

impl ToolLine {
    fn parse(line: &str) -> (String, ToolLine) {
        let (tool, rest) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("not a tool line: {line:?}"));
        let (kv, words): (Vec<&str>, Vec<&str>) =
            rest.split_whitespace().partition(|w| w.contains('='));
        let values = kv
            .iter()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (
            tool.to_string(),
            ToolLine {
                line: line.to_string(),
                status: words.join(" "),
                values,
            },
        )
    }

    /// The count `key`; fails showing the line when it is missing.
    fn n(&self, key: &str) -> u64 {
        self.values
            .get(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no count {key} in {:?}", self.line))
    }

    fn text(&self, key: &str) -> &str {
        self.values
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {:?}", self.line))
    }
}

/// The result lines of `path`, by tool; each tool writes exactly one.
fn tool_lines(path: &Path, run: &Output) -> BTreeMap<String, ToolLine> {
    let content = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "no tool wrote {} ({e}); rocwasm's stderr:\n{}",
            path.display(),
            text(&run.stderr)
        )
    });
    let mut lines = BTreeMap::new();
    for l in content.lines().filter(|l| !l.trim().is_empty()) {
        let (tool, line) = ToolLine::parse(l);
        assert!(
            lines.insert(tool.clone(), line).is_none(),
            "{tool} wrote two lines (finalized twice?):\n{content}"
        );
    }
    lines
}

/// The run's summary (`rocwasm-summary.txt` under `dir`, which `run`
/// prints, or rocwasm's stderr) has a `native tool` line naming `library`.
fn assert_summary_names_tool(dir: &Path, run: &Output, library: &Path) {
    let mut summary = text(&run.stderr);
    summary.push_str(&text(&run.stdout));
    for f in find_files(dir, "rocwasm-summary.txt") {
        summary.push_str(&std::fs::read_to_string(f).unwrap());
    }
    let lib = library.display().to_string();
    assert!(
        summary.lines().any(|l| {
            let l = l.trim_start().trim_start_matches("rocwasm: ");
            l.starts_with("native tool") && l.contains(&lib)
        }),
        "the summary has no `native tool {lib} …` line:\n{summary}"
    );
}

/// Builds `examples/native-tools/c-tool/tool.c` as a build system would:
/// `cc -shared -fPIC tool.c $(pkg-config --cflags --libs rocprofiler-sdk)`
/// against the prefix `rocwasm sdk prefix` writes under `dir`.
fn build_c_tool(dir: &Path) -> PathBuf {
    build_c_library(
        dir,
        &workspace().join("examples/native-tools/c-tool/tool.c"),
        "libctool.so",
    )
}

/// `rocwasm run --sim FLAGS -d out -- multi_kernel` in `dir`, with `env`
/// (a native tool's library and its settings).
pub(super) fn run_multi_kernel(
    dir: &Path,
    flags: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let app = sim_dir().join("bin/multi_kernel");
    let mut args = vec!["run", "--sim"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-d", "out", "--", app.to_str().unwrap()]);
    rocwasm_with_env(&args, dir, env)
}

/// `cc -shared -fPIC SOURCE $(pkg-config --cflags --libs rocprofiler-sdk)
/// -o DIR/LIBRARY` against the prefix `rocwasm sdk prefix` writes in `dir`
/// (`c++` for a `.cpp` source).
pub(super) fn build_c_library(dir: &Path, source: &Path, library: &str) -> PathBuf {
    let cc = if source.extension().is_some_and(|e| e == "cpp") {
        program("c++", "g++")
    } else {
        program("cc", "gcc")
    };
    let pkg_config = program("pkg-config", "pkg-config");
    let prefix = sdk_prefix(dir);
    let flags = run_ok(
        Command::new(&pkg_config)
            .args(["--cflags", "--libs", "rocprofiler-sdk"])
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")),
        "pkg-config --cflags --libs rocprofiler-sdk",
    );
    let flags = text(&flags.stdout);
    assert!(
        flags.contains(&format!("-I{}", prefix.join("include").display()))
            && flags.contains("-lrocprofiler-sdk"),
        "pkg-config names the prefix's headers and library: {flags}"
    );
    let library = dir.join(library);
    run_ok(
        Command::new(&cc)
            .args(["-shared", "-fPIC"])
            .arg(source)
            .args(flags.split_whitespace())
            .arg("-o")
            .arg(&library),
        "cc -shared -fPIC <tool>.c $(pkg-config --cflags --libs rocprofiler-sdk)",
    );
    library
}

#[test]
fn c_tool_sees_what_the_chain_sees() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]);
    let sim = sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let library = build_c_tool(tmp.path());

    let out_dir = tmp.path().join("out");
    let result = tmp.path().join("c.txt");
    let chain = workspace().join("examples/chains/default.toml");
    let app = sim.join("bin/multi_kernel");
    let run = rocwasm_with_env(
        &[
            "run",
            "--sim",
            "-c",
            chain.to_str().unwrap(),
            "-d",
            out_dir.to_str().unwrap(),
            "--",
            app.to_str().unwrap(),
        ],
        tmp.path(),
        &[
            ("ROCP_TOOL_LIBRARIES", library.to_str().unwrap()),
            ("C_TOOL_OUT", result.to_str().unwrap()),
        ],
    );
    assert_success(&run, "rocwasm run --sim -c default.toml with the C tool");
    let counts = sample_counts(&text(&run.stdout));

    let lines = tool_lines(&result, &run);
    let c = lines
        .get("c-tool")
        .unwrap_or_else(|| panic!("no c-tool line: {lines:?}"));
    let line = &c.line;

    // Every dispatch the chain's outputs hold: the trace the host sinks
    // wrote and the calls the kernel-stats stage counted.
    let traced = csv_rows(&run_file(&out_dir, "kernel_trace.csv"), None);
    let staged: u64 = read_stats(&run_file(&out_dir, "kernel_stats.csv"))
        .values()
        .map(|s| s.calls)
        .sum();
    assert!(c.n("dispatches") > 0, "{line}");
    assert_eq!(c.n("dispatches"), traced, "kernel_trace.csv rows: {line}");
    assert_eq!(c.n("dispatches"), staged, "kernel-stats calls: {line}");
    assert_eq!(
        c.n("dispatches"),
        counts["kernels"],
        "the sample's launches: {line}"
    );
    // The same copies and HIP runtime calls.
    assert_eq!(
        c.n("copies"),
        csv_rows(&run_file(&out_dir, "memory_copy_trace.csv"), None),
        "memory_copy_trace.csv rows: {line}"
    );
    assert_eq!(
        c.n("copies"),
        counts["copies"],
        "the sample's copies: {line}"
    );
    assert_eq!(
        c.n("hip"),
        csv_rows(
            &run_file(&out_dir, "hip_api_trace.csv"),
            Some(("Domain", "HIP_RUNTIME_API"))
        ),
        "HIP_RUNTIME_API rows of hip_api_trace.csv: {line}"
    );
    // LOSSLESS loses nothing.
    assert_eq!(c.n("drops"), 0, "{line}");
    // The external id it answered is on every HIP and dispatch record, and
    // it was asked once per dispatch (never about a queue slot of the launch
    // that then held a barrier packet).
    assert!(c.n("hip") > 0, "{line}");
    assert_eq!(c.n("ext_bad"), 0, "{line}");
    assert_eq!(c.n("ext_ok"), c.n("hip") + c.n("dispatches"), "{line}");
    assert_eq!(c.n("dispatch_requests"), c.n("dispatches"), "{line}");
    // ENTER and EXIT in pairs, user data kept between them.
    assert!(c.n("enter") > 0, "{line}");
    assert_eq!(c.n("enter"), c.n("exit"), "{line}");
    assert_eq!(c.n("udata_bad"), 0, "{line}");
    // Arguments of hipLaunchKernel / hipMalloc, kernel symbols.
    assert!(c.n("args") > 0, "{line}");
    assert!(c.n("symbols") > 0, "{line}");
    // The HSA API table it asked for, once (rocwasm's wrappers installed).
    assert_eq!(c.n("hsa_tables"), 1, "{line}");
    // A completion callback per dispatch, its payload the dispatch's data.
    assert_eq!(c.n("cb_dispatches"), c.n("dispatches"), "{line}");
    // The simulated GPU, listed in `initialize` (before the program's first
    // HIP call) with its hardware: the scenario's default 104 compute units.
    assert_eq!(c.n("gpu_agents"), 1, "{line}");
    assert_eq!(c.n("gpu_cus"), 104, "{line}");
    // Argument values: read through arg_value_addr, and through the
    // per-function structs (`args.hipMalloc.size`, `*args.hipMalloc.ptr`,
    // `args.hipLaunchKernel.numBlocks`) on every call of those functions.
    assert!(c.n("arg_values") > 0, "{line}");
    assert_eq!(
        c.n("mallocs_ok"),
        csv_rows(
            &run_file(&out_dir, "hip_api_trace.csv"),
            Some(("Function", "hipMalloc"))
        ),
        "hipMalloc rows of hip_api_trace.csv: {line}"
    );
    assert_eq!(c.n("launches_ok"), c.n("dispatches"), "{line}");
    // Every symbol and code object loaded is unloaded by finalize.
    assert!(c.n("co_loads") > 0, "{line}");
    assert_eq!(c.n("co_unloads"), c.n("co_loads"), "{line}");
    assert_eq!(c.n("symbol_unloads"), c.n("symbols"), "{line}");

    assert_summary_names_tool(&out_dir, &run, &library);
}

/// The C++ tools, the CMake target names of `examples/native-tools/cxx`.
const CXX_TOOLS: [&str; 4] = [
    "api_buffered_tracing",
    "api_callback_tracing",
    "code_object_tracing",
    "external_correlation",
];

#[test]
fn cxx_tools_build_with_cmake_and_run() {
    let sim = sim_dir();
    let cmake = program("cmake", "cmake");
    // The C++ compiler CMake will look for.
    program("c++", "g++");
    let tmp = tempfile::tempdir().unwrap();
    let prefix = sdk_prefix(tmp.path());

    let build = tmp.path().join("build");
    let source = workspace().join("examples/native-tools/cxx");
    run_ok(
        Command::new(&cmake)
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())),
        "cmake configure of examples/native-tools/cxx (find_package(rocprofiler-sdk))",
    );
    run_ok(
        Command::new(&cmake)
            .arg("--build")
            .arg(&build)
            .args(["-j", "2", "--target"])
            .args(CXX_TOOLS),
        "cmake --build of examples/native-tools/cxx",
    );
    let libraries: Vec<PathBuf> = CXX_TOOLS
        .iter()
        .map(|t| {
            let lib = build.join(format!("lib{t}.so"));
            assert!(lib.is_file(), "cmake built no {}", lib.display());
            lib
        })
        .collect();
    let joined = libraries
        .iter()
        .map(|l| l.display().to_string())
        .collect::<Vec<_>>()
        .join(":");

    let out_dir = tmp.path().join("out");
    let result = tmp.path().join("tools.txt");
    let app = sim.join("bin/multi_kernel");
    let run = rocwasm_with_env(
        &[
            "run",
            "--sim",
            "--kernel-trace",
            "-d",
            out_dir.to_str().unwrap(),
            "--",
            app.to_str().unwrap(),
        ],
        tmp.path(),
        &[
            ("ROCP_TOOL_LIBRARIES", joined.as_str()),
            ("ROCWASM_TOOL_OUT", result.to_str().unwrap()),
        ],
    );
    assert_success(
        &run,
        "rocwasm run --sim --kernel-trace with the four C++ tools",
    );
    let counts = sample_counts(&text(&run.stdout));
    let kernels = csv_rows(&run_file(&out_dir, "kernel_trace.csv"), None);
    assert_eq!(
        kernels, counts["kernels"],
        "kernel_trace.csv has every launch"
    );
    assert!(kernels > 0);

    let lines = tool_lines(&result, &run);
    assert_eq!(
        lines.keys().map(String::as_str).collect::<Vec<_>>(),
        CXX_TOOLS,
        "one line per tool in {}",
        result.display()
    );
    for (tool, l) in &lines {
        assert_eq!(l.status, "ok", "{tool} failed: {}", l.line);
    }
    for lib in &libraries {
        assert_summary_names_tool(&out_dir, &run, lib);
    }

    // Buffered tracing on its own callback thread, LOSSLESS.
    let b = &lines["api_buffered_tracing"];
    let bl = &b.line;
    assert_eq!(b.n("dispatches"), kernels, "{bl}");
    assert_eq!(
        b.n("launches"),
        kernels,
        "one hipLaunchKernel per <<<>>>: {bl}"
    );
    assert_eq!(b.n("copies"), counts["copies"], "{bl}");
    assert_eq!(
        b.n("records"),
        b.n("hip") + b.n("dispatches") + b.n("copies"),
        "{bl}"
    );
    assert_eq!(b.n("drops"), 0, "{bl}");
    assert!(
        b.n("deliveries") > 1,
        "a 4 KiB buffer fills more than once: {bl}"
    );
    assert_eq!(b.n("threads"), 1, "{bl}");
    assert!(
        b.n("precreate") >= 1 && b.n("precreate") == b.n("postcreate"),
        "{bl}"
    );
    assert_eq!(b.n("bad") + b.n("unnamed") + b.n("unordered"), 0, "{bl}");
    assert_eq!(
        b.n("none_ops"),
        0,
        "every HIP function multi_kernel calls has an SDK operation id (a 5.x binary's \
         hipGetDeviceProperties is the SDK's hipGetDevicePropertiesR0000): {bl}"
    );

    // Callback tracing with argument iteration.
    let c = &lines["api_callback_tracing"];
    let cl = &c.line;
    assert!(c.n("enter") > 0, "{cl}");
    assert_eq!(c.n("enter"), c.n("exit"), "{cl}");
    assert_eq!(
        c.n("enter"),
        b.n("hip"),
        "every HIP call, buffered or called back: {cl} / {bl}"
    );
    for zero in [
        "udata_bad",
        "unbalanced",
        "tid_bad",
        "payload_bad",
        "args_bad",
        "iterate_errors",
    ] {
        assert_eq!(c.n(zero), 0, "{zero}: {cl}");
    }
    assert!(c.n("args") > 0, "{cl}");
    assert!(c.n("mallocs") > 0, "{cl}");
    assert_eq!(
        c.n("malloc_args_ok"),
        c.n("mallocs"),
        "hipMalloc's ptr and size: {cl}"
    );
    assert_eq!(
        c.n("launches"),
        kernels,
        "hipLaunchKernel's arguments: {cl}"
    );

    // Code objects, kernel symbols and the dispatches they name.
    let o = &lines["code_object_tracing"];
    let ol = &o.line;
    assert!(o.n("loads") > 0, "{ol}");
    assert!(o.n("symbols") >= 4, "{ol}");
    assert_eq!(o.n("bad") + o.n("orphans"), 0, "{ol}");
    assert_eq!(o.n("dispatches"), kernels, "{ol}");
    assert_eq!(
        o.n("unresolved"),
        0,
        "every dispatch's kernel_id was registered: {ol}"
    );
    let names: Vec<&str> = o.text("names").split(',').collect();
    for kernel in ["vector_add", "square", "scale", "block_sum"] {
        assert!(
            names.contains(&kernel),
            "no kernel {kernel} registered: {ol}"
        );
    }

    // External correlation requests answered on every HIP and dispatch record.
    let e = &lines["external_correlation"];
    let el = &e.line;
    assert_eq!(e.n("hip"), b.n("hip"), "{el} / {bl}");
    assert_eq!(e.n("dispatches"), kernels, "{el}");
    assert_eq!(e.n("ext_bad"), 0, "{el}");
    assert_eq!(e.n("ext_ok"), e.n("hip") + e.n("dispatches"), "{el}");
    assert_eq!(e.n("requests_bad"), 0, "{el}");
    assert!(e.n("hip_requests") >= e.n("hip"), "{el}");
    assert!(e.n("dispatch_requests") >= e.n("dispatches"), "{el}");
    assert_eq!(e.n("pushpop"), 1, "{el}");
    assert_eq!(e.n("drops"), 0, "{el}");
}

/// The rows of a CSV file as column name -> value.
fn csv_table(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let headers: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            headers
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// `value[path…]` as an unsigned number; fails showing the value.
fn json_u64(value: &serde_json::Value, path: &[&str]) -> u64 {
    let mut v = value;
    for key in path {
        v = v
            .get(key)
            .unwrap_or_else(|| panic!("no key {key:?} (of {path:?}) in {v}"));
    }
    v.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not an unsigned number: {v}"))
}

/// The array `value[key]`.
fn json_array<'a>(value: &'a serde_json::Value, key: &str) -> &'a Vec<serde_json::Value> {
    value
        .get(key)
        .and_then(|v| v.as_array())
        .unwrap_or_else(|| panic!("no array {key:?} in the document"))
}

/// A C++ tool that includes `rocprofiler-sdk/cxx/serialization.hpp` and
/// writes every record with cereal's JSONOutputArchive builds against the
/// prefix with CMake (whose package also answers
/// `rocprofiler_sdk_get_gfx_architectures` with the simulated GPU and finds
/// libdw through the shipped `Findlibdw.cmake`) and runs: the JSON parses,
/// the struct members are under their C names, and the dispatches, copies
/// and HIP calls are the run's CSV traces, value for value.
#[test]
fn cxx_tool_writes_every_record_as_json() {
    let sim = sim_dir();
    let cmake = program("cmake", "cmake");
    program("c++", "g++");
    let tmp = tempfile::tempdir().unwrap();
    let prefix = sdk_prefix(tmp.path());

    let build = tmp.path().join("build");
    let source = workspace().join("examples/native-tools/cxx");
    let configured = run_ok(
        Command::new(&cmake)
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
            .env_remove("ROCWASM_SIM_SCENARIO")
            .env_remove("ROCWASM_SIM_ARCH")
            .env_remove("ROCWASM_SIM_DEVICES"),
        "cmake configure of examples/native-tools/cxx",
    );
    let log = text(&configured.stdout);
    assert!(
        log.contains("System architectures: gfx90a"),
        "rocprofiler_sdk_get_gfx_architectures names the simulated GPU:\n{log}"
    );
    assert!(
        log.contains("Found libdw"),
        "find_package(libdw) uses the package's Findlibdw.cmake (Debian's libdw-dev; \
         `cargo xtask setup` installs it):\n{log}"
    );
    assert!(
        !log.contains("cereal not found"),
        "cereal's headers are missing: install libcereal-dev (`cargo xtask setup`):\n{log}"
    );
    run_ok(
        Command::new(&cmake).arg("--build").arg(&build).args([
            "-j",
            "2",
            "--target",
            "serialize_json",
        ]),
        "cmake --build --target serialize_json",
    );
    let library = build.join("libserialize_json.so");
    assert!(library.is_file(), "cmake built no {}", library.display());

    let out_dir = tmp.path().join("out");
    let json_path = tmp.path().join("records.json");
    let result = tmp.path().join("tools.txt");
    let app = sim.join("bin/multi_kernel");
    let run = rocwasm_with_env(
        &[
            "run",
            "--sim",
            "--kernel-trace",
            "--memory-copy-trace",
            "--hip-trace",
            "-d",
            out_dir.to_str().unwrap(),
            "--",
            app.to_str().unwrap(),
        ],
        tmp.path(),
        &[
            ("ROCP_TOOL_LIBRARIES", library.to_str().unwrap()),
            ("ROCWASM_JSON_OUT", json_path.to_str().unwrap()),
            ("ROCWASM_TOOL_OUT", result.to_str().unwrap()),
        ],
    );
    assert_success(&run, "rocwasm run --sim with serialize_json");
    let lines = tool_lines(&result, &run);
    let line = &lines["serialize_json"];
    assert_eq!(line.status, "ok", "{}", line.line);
    assert_eq!(line.n("drops"), 0, "{}", line.line);

    let text_json = std::fs::read_to_string(&json_path)
        .unwrap_or_else(|e| panic!("no {}: {e}", json_path.display()));
    let doc: serde_json::Value = serde_json::from_str(&text_json)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", json_path.display()));
    let doc = &doc["rocprofiler-sdk-json-tool"];
    let buffered = &doc["buffer_records"];
    let called = &doc["callback_records"];

    // The agents, with the newest layout's size and the simulated GPU's values.
    let agents = json_array(doc, "agents");
    let gpu = agents
        .iter()
        .find(|a| a["name"] == "gfx90a")
        .unwrap_or_else(|| panic!("no gfx90a agent in {agents:?}"));
    assert_eq!(
        json_u64(gpu, &["size"]),
        312,
        "sizeof(rocprofiler_agent_v0_t)"
    );
    assert_eq!(json_u64(gpu, &["cu_count"]), 104);
    assert!(gpu.get("uuid").is_some() && gpu.get("runtime_visibility").is_some());

    // Kernel symbols (by kernel_id) in a loaded code object.
    let code_objects: Vec<u64> = json_array(called, "code_objects")
        .iter()
        .map(|c| {
            assert!(
                c["payload"]["uri"].as_str().is_some_and(|u| !u.is_empty()),
                "a code object's uri: {c}"
            );
            json_u64(c, &["payload", "code_object_id"])
        })
        .collect();
    assert!(!code_objects.is_empty(), "no code object loads");
    let symbols: BTreeMap<u64, String> = json_array(called, "kernel_symbols")
        .iter()
        .map(|k| {
            assert!(
                code_objects.contains(&json_u64(k, &["payload", "code_object_id"])),
                "{k}"
            );
            assert_eq!(
                json_u64(k, &["kind"]),
                json_u64(&code_objects_kind(called), &[])
            );
            (
                json_u64(k, &["payload", "kernel_id"]),
                k["payload"]["kernel_name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();

    // Every dispatch of kernel_trace.csv, member for member.
    let csv = csv_table(&run_file(&out_dir, "kernel_trace.csv"));
    let dispatches = json_array(buffered, "kernel_dispatch");
    assert_eq!(
        dispatches.len(),
        csv.len(),
        "one JSON record per kernel_trace.csv row"
    );
    assert!(!csv.is_empty());
    let by_id: BTreeMap<u64, &serde_json::Value> = dispatches
        .iter()
        .map(|d| (json_u64(d, &["dispatch_info", "dispatch_id"]), d))
        .collect();
    let num = |row: &BTreeMap<String, String>, col: &str| -> u64 {
        row[col]
            .parse()
            .unwrap_or_else(|_| panic!("{col} of {row:?}"))
    };
    for row in &csv {
        let d = by_id
            .get(&num(row, "Dispatch_Id"))
            .unwrap_or_else(|| panic!("no JSON dispatch for {row:?}"));
        for (col, path) in [
            ("Kernel_Id", &["dispatch_info", "kernel_id"][..]),
            ("Correlation_Id", &["correlation_id", "internal"][..]),
            ("Start_Timestamp", &["start_timestamp"][..]),
            ("End_Timestamp", &["end_timestamp"][..]),
            ("Agent_Id", &["dispatch_info", "agent_id", "handle"][..]),
            ("Queue_Id", &["dispatch_info", "queue_id", "handle"][..]),
            (
                "Workgroup_Size_X",
                &["dispatch_info", "workgroup_size", "x"][..],
            ),
            ("Grid_Size_X", &["dispatch_info", "grid_size", "x"][..]),
        ] {
            assert_eq!(json_u64(d, path), num(row, col), "{col} of {row:?}: {d}");
        }
        let kernel = &symbols[&json_u64(d, &["dispatch_info", "kernel_id"])];
        let function = row["Kernel_Name"].split('(').next().unwrap();
        assert!(
            kernel.contains(function),
            "kernel {kernel} is {function} of kernel_trace.csv"
        );
    }

    // The same copies and HIP runtime calls as the CSV traces.
    let copies: Vec<(u64, u64)> = json_array(buffered, "memory_copies")
        .iter()
        .map(|c| {
            (
                json_u64(c, &["start_timestamp"]),
                json_u64(c, &["end_timestamp"]),
            )
        })
        .collect();
    let mut csv_copies: Vec<(u64, u64)> = csv_table(&run_file(&out_dir, "memory_copy_trace.csv"))
        .iter()
        .map(|r| (num(r, "Start_Timestamp"), num(r, "End_Timestamp")))
        .collect();
    let mut sorted = copies.clone();
    sorted.sort();
    csv_copies.sort();
    assert!(!csv_copies.is_empty());
    assert_eq!(
        sorted, csv_copies,
        "memory copies: JSON vs memory_copy_trace.csv"
    );

    let mut hip: Vec<u64> = json_array(buffered, "hip_api_traces")
        .iter()
        .map(|h| json_u64(h, &["correlation_id", "internal"]))
        .collect();
    let mut csv_hip: Vec<u64> = csv_table(&run_file(&out_dir, "hip_api_trace.csv"))
        .iter()
        .filter(|r| r["Domain"] == "HIP_RUNTIME_API")
        .map(|r| num(r, "Correlation_Id"))
        .collect();
    hip.sort();
    csv_hip.sort();
    assert!(!csv_hip.is_empty());
    assert_eq!(hip, csv_hip, "HIP runtime calls: JSON vs hip_api_trace.csv");

    // The name tables, as the SDK's name_info serializes them.
    let names = json_array(buffered, "names");
    assert!(
        names.iter().any(|n| n["kind"] == "KERNEL_DISPATCH"
            && n["operations"].as_array().is_some_and(|o| !o.is_empty())),
        "the buffer tracing names list KERNEL_DISPATCH and its operations"
    );
}

/// The CODE_OBJECT callback kind's value, from the document's own name table.
fn code_objects_kind(called: &serde_json::Value) -> serde_json::Value {
    let names = json_array(called, "names");
    let index = names
        .iter()
        .position(|n| n["kind"] == "CODE_OBJECT")
        .unwrap_or_else(|| panic!("no CODE_OBJECT in the callback names"));
    serde_json::Value::from(index as u64)
}

/// A site policy with `capabilities.native_tools = false` refuses a run
/// that names native tools (status 2, one sentence naming the rule), and
/// the tool library holds a hand-made plan to the same rule: the tool is
/// never configured and the summary says why.
#[test]
fn a_site_policy_can_forbid_native_tools() {
    let sim = sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let library = build_c_tool(tmp.path());
    let policy = tmp.path().join("policy.toml");
    std::fs::write(
        &policy,
        "version = 1\n[plugins]\nallow_unsigned = true\n[capabilities]\nnative_tools = false\n",
    )
    .unwrap();
    let result = tmp.path().join("c.txt");
    let refused = run_multi_kernel(
        tmp.path(),
        &["--kernel-trace"],
        &[
            ("ROCP_TOOL_LIBRARIES", library.to_str().unwrap()),
            ("ROCWASM_TEST_POLICY", policy.to_str().unwrap()),
            ("C_TOOL_OUT", result.to_str().unwrap()),
        ],
    );
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("does not allow native rocprofiler-sdk tools")
            && stderr.contains("capabilities.native_tools"),
        "{stderr}"
    );
    assert!(!result.exists(), "the refused tool ran");

    // The tool library on its own, with a plan written by hand.
    let out = tmp.path().join("by-hand");
    let ran = run_by_hand(
        &sim.join("bin/multi_kernel"),
        &out,
        &[
            ("ROCWASM_TEST_POLICY", policy.as_os_str()),
            ("ROCP_TOOL_LIBRARIES", library.as_os_str()),
            ("C_TOOL_OUT", result.as_os_str()),
        ],
    );
    assert_success(
        &ran,
        "multi_kernel with the tool library and a hand-made plan",
    );
    assert!(
        !result.exists(),
        "the tool ran although the policy forbids native tools"
    );
    let summary = std::fs::read_to_string(out.join("rocwasm-summary.txt")).unwrap();
    assert!(
        summary.contains(&format!(
            "native tool {} not configured: the site policy does not allow native tools",
            library.display()
        )),
        "{summary}"
    );
}

/// Runs `app` on the simulated runtime with the tool library preloaded and
/// a plan written by hand (HIP calls as CSV into `out`, the plan beside it),
/// `env` added: the tool library without the launcher.
fn run_by_hand(app: &Path, out: &Path, env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let plan = out.with_extension("plan.json");
    std::fs::write(
        &plan,
        format!(
            r#"{{"version":3,"output":{{"directory":"{}","formats":["csv"],"kinds":["HIP_RUNTIME_API"]}},"buffer":{{"size":1048576,"watermark":524288,"policy":"Lossless"}}}}"#,
            out.display()
        ),
    )
    .unwrap();
    let tool_library = rocwasm_bin()
        .parent()
        .unwrap()
        .join("librocwasm_intercept.so");
    Command::new(app)
        .env("LD_PRELOAD", &tool_library)
        .env("LD_LIBRARY_PATH", sim_dir().join("lib"))
        .env("ROCWASM_RUN", &plan)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// A `ROCP_TOOL_LIBRARIES` entry naming no file: `rocwasm run` refuses it
/// before the application starts (status 2, the path and the variable
/// named); the tool library on its own still says so in its summary.
#[test]
fn a_missing_tool_library_is_refused_before_the_start() {
    let sim = sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-tool.so");
    let app = sim.join("bin/multi_kernel");
    let out = tmp.path().join("out");
    let refused = rocwasm_with_env(
        &[
            "run",
            "--sim",
            "--kernel-trace",
            "-d",
            out.to_str().unwrap(),
            "--",
            app.to_str().unwrap(),
        ],
        tmp.path(),
        &[("ROCP_TOOL_LIBRARIES", missing.to_str().unwrap())],
    );
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ROCP_TOOL_LIBRARIES") && stderr.contains(missing.to_str().unwrap()),
        "{stderr}"
    );
    assert!(
        !text(&refused.stdout).contains("kernels"),
        "the application ran: {refused:?}"
    );
    assert!(!out.exists(), "a refused run left {}", out.display());

    // The tool library on its own (no launcher): the run goes on and its
    // summary names the library it could not load.
    let by_hand = tmp.path().join("by-hand");
    let ran = run_by_hand(
        &app,
        &by_hand,
        &[("ROCP_TOOL_LIBRARIES", missing.as_os_str())],
    );
    assert_success(
        &ran,
        "multi_kernel with the tool library and a missing tool",
    );
    let summary = std::fs::read_to_string(by_hand.join("rocwasm-summary.txt")).unwrap();
    assert!(
        summary.contains(&format!(
            "ROCP_TOOL_LIBRARIES: cannot load {}",
            missing.display()
        )),
        "{summary}"
    );
}

/// `docs/NATIVE_TOOLS.md`'s minimal tool compiles as written and runs on
/// the simulated GPU: its ```` ```c ```` block saved as `mini_tool.c`, the
/// build-and-run ```` ```sh ```` block after it run as written (`./app` is
/// `multi_kernel`), the tool's line naming every dispatch.
#[test]
fn the_minimal_tool_of_the_docs_builds_and_runs() {
    let doc = std::fs::read_to_string(workspace().join("docs/NATIVE_TOOLS.md")).unwrap();
    let section = &doc[doc
        .find("## A minimal tool")
        .expect("the minimal tool's section")..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let c = crate::guide::fenced(section, "c");
    let sh = crate::guide::fenced(section, "sh");
    assert_eq!((c.len(), sh.len()), (1, 1), "{section}");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("mini_tool.c"), &c[0]).unwrap();
    std::os::unix::fs::symlink(sim_dir().join("bin/multi_kernel"), tmp.path().join("app")).unwrap();
    let said = crate::guide::run_block(&sh[0], tmp.path(), "the minimal tool's commands");
    let line = said
        .lines()
        .find(|l| l.starts_with("mini-tool: "))
        .unwrap_or_else(|| panic!("no line of the tool:\n{said}"));
    let n: u64 = line
        .trim_start_matches("mini-tool: ")
        .trim_end_matches(" kernel dispatches")
        .parse()
        .unwrap_or_else(|e| panic!("{line}: {e}"));
    let kernels = sample_counts(&said)["kernels"];
    assert!(
        n > 0 && n == kernels,
        "{line}: the sample launched {kernels}\n{said}"
    );
}

/// A tool built against the headers lists each GPU's counters through
/// `rocprofiler_iterate_agent_supported_counters` and
/// `rocprofiler_query_counter_info` (version 0): the counters `rocwasm
/// avail` lists for the simulated gfx90a, each id once, with its block or
/// expression and the two flags.
#[test]
fn a_c_tool_lists_the_counters_rocwasm_avail_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let library = build_c_library(
        tmp.path(),
        &workspace().join("examples/native-tools/counters/counters.c"),
        "libcounters.so",
    );
    let listed = tmp.path().join("counters.txt");
    let run = run_multi_kernel(
        tmp.path(),
        &["--kernel-trace"],
        &[
            ("ROCP_TOOL_LIBRARIES", library.to_str().unwrap()),
            ("COUNTERS_OUT", listed.to_str().unwrap()),
        ],
    );
    assert_success(&run, "rocwasm run --sim with the counters tool");
    let text = std::fs::read_to_string(&listed).unwrap();
    assert!(!text.contains("error"), "{text}");
    let mut ids = std::collections::BTreeSet::new();
    let mut by_name = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(5, ' ').collect();
        assert_eq!(f[0], "counter", "{line}");
        assert!(ids.insert(f[2].to_string()), "id {} twice", f[2]);
        by_name.insert(f[3].to_string(), f[4].to_string());
    }
    assert_eq!(
        by_name["SQ_WAVES"],
        "block=SQ expression= constant=0 derived=0"
    );
    assert_eq!(
        by_name["GPU_UTIL"],
        "block= expression=100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max) constant=0 derived=1"
    );
    // The same names as `rocwasm avail info` (less the agent's properties,
    // which the SDK lists apart).
    let avail = rocwasm(&["avail", "info"], tmp.path());
    assert_success(&avail, "rocwasm avail info");
    let expected: std::collections::BTreeSet<String> = String::from_utf8_lossy(&avail.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("Counter_Name"))
        .filter_map(|l| l.split_once(":\t").map(|(_, n)| n.to_string()))
        .filter(|n| n.chars().any(|c| c.is_ascii_uppercase()))
        .collect();
    let got: std::collections::BTreeSet<String> = by_name.keys().cloned().collect();
    assert_eq!(got, expected);
}
