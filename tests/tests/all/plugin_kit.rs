//! The plugin kit end to end, as an author outside this repository uses
//! it: in a temporary directory, for each of Rust, C, Python and JS,
//! `rocwasm plugin new demo --lang L`, `rocwasm plugin build demo` and
//! `rocwasm plugin test demo/target/demo.wasm --trace examples/traces/sample`;
//! the sample analysis's summary (dispatches, total kernel time) compared
//! with the same numbers counted here from the trace's `kernel_trace.csv`.
//! Then the project's own test as its README gives it (`plugin test
//! target/demo.wasm --trace test/trace --expect test/expected.toml`),
//! whose expected numbers are checked against its trace here too, and the
//! same test with a wrong expectation: status 1, the difference named.
//! Then a build on a PATH without the tool: status 2 and the install
//! command.
//!
//! The Python and JS tools are shared with `cargo xtask build-plugins`
//! (`ROCWASM_TOOLS_DIR=target`, so `target/py-tools`, `target/js-tools`);
//! the first JS run installs componentize-js there (~30 s). The Rust
//! build compiles std for wasm32 once (~1 min alone, several under load)
//! into `target/plugin-kit-rust` (`ROCWASM_CARGO_TARGET_DIR`), reused by
//! later runs.

use std::path::{Path, PathBuf};

use rocwasm_tests::*;

fn tools_env() -> Vec<(&'static str, String)> {
    let target = workspace().join("target");
    vec![
        ("ROCWASM_TOOLS_DIR", target.display().to_string()),
        // The wasm32 std the Rust build compiles, kept between runs.
        (
            "ROCWASM_CARGO_TARGET_DIR",
            target.join("plugin-kit-rust").display().to_string(),
        ),
    ]
}

fn run(args: &[&str], cwd: &Path) -> std::process::Output {
    let env = tools_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    rocwasm_with_env(args, cwd, &env)
}

/// Dispatches and their total time (`end - start`) in a kernel_trace.csv.
fn oracle(trace: &Path) -> (u64, u64) {
    let mut r = csv::Reader::from_path(trace).expect("a kernel trace");
    let headers = r.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (start, end) = (col("Start_Timestamp"), col("End_Timestamp"));
    let (mut n, mut total) = (0, 0);
    for row in r.records() {
        let row = row.unwrap();
        let s: u64 = row[start].parse().unwrap();
        let e: u64 = row[end].parse().unwrap();
        n += 1;
        total += e.saturating_sub(s);
    }
    (n, total)
}

/// The integers of the summary table's data row, from `plugin test`'s
/// output (the row after the `Dispatches`/`TotalNs` header).
fn summary_numbers(stdout: &str) -> Vec<u64> {
    let mut lines = stdout.lines().skip_while(|l| !l.contains("TotalNs"));
    lines.next();
    let row = lines
        .find(|l| l.chars().any(|c| c.is_ascii_digit()))
        .unwrap_or("");
    row.split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect()
}

fn new_build_test(lang: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let out = run(&["plugin", "new", "demo", "--lang", lang], cwd);
    assert_success(&out, &format!("plugin new --lang {lang}"));
    assert!(cwd.join("demo/wit/worlds.wit").is_file());
    assert!(cwd.join("demo/README.md").is_file());

    let out = run(&["plugin", "build", "demo"], cwd);
    assert_success(&out, &format!("plugin build ({lang})"));
    let wasm: PathBuf = cwd.join("demo/target/demo.wasm");
    assert!(wasm.is_file(), "{lang}: no {}", wasm.display());
    // Built against the current package: the packed batch.
    let out = run(&["plugin", "inspect", "demo/target/demo.wasm"], cwd);
    assert_success(&out, &format!("plugin inspect ({lang})"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("world:    analysis-plugin (rocwasm:plugin@0.3.2)"),
        "{lang}: {text}"
    );

    let trace = workspace().join("examples/traces/sample");
    let out = run(
        &[
            "plugin",
            "test",
            "demo/target/demo.wasm",
            "--trace",
            trace.to_str().unwrap(),
        ],
        cwd,
    );
    assert_success(&out, &format!("plugin test ({lang})"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (n, total) = oracle(&workspace().join("examples/traces/sample/sample_kernel_trace.csv"));
    assert!(n > 0, "the sample trace has kernel dispatches");
    assert_eq!(
        summary_numbers(&stdout),
        [n, total],
        "{lang}: summary differs from kernel_trace.csv\n{stdout}"
    );
    for needle in [
        "Kernel dispatches",
        "wall ns per record:",
        "instructions per record:",
        "peak memory:",
    ] {
        assert!(
            stdout.contains(needle),
            "{lang}: no {needle:?} in\n{stdout}"
        );
    }
    // The Rust and Python templates' results merge, and `plugin test`
    // checks it on random splits and merge trees; C's and JS's do not.
    let merge = if lang == "rust" || lang == "python" {
        "merged in 3 random trees: the 1 table(s) of one pass"
    } else {
        "merge:   not exported"
    };
    assert!(stdout.contains(merge), "{lang}: no {merge:?} in\n{stdout}");

    // The project's own test, run from inside it as its README says.
    let project = cwd.join("demo");
    let (n, total) = oracle(&project.join("test/trace/kernel_trace.csv"));
    let expected = std::fs::read_to_string(project.join("test/expected.toml")).unwrap();
    assert!(
        expected.contains(&format!("rows = [[\"{n}\", \"{total}\"]]")),
        "{lang}: test/expected.toml does not hold the trace's numbers ({n}, {total})\n{expected}"
    );
    let own_test = [
        "plugin",
        "test",
        "target/demo.wasm",
        "--trace",
        "test/trace",
        "--expect",
        "test/expected.toml",
    ];
    let out = run(&own_test, &project);
    assert_success(&out, &format!("the project's test ({lang})"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("expect:  1 table(s)"), "{lang}: {stdout}");
    // A wrong expectation fails, naming the cell.
    std::fs::write(
        project.join("test/expected.toml"),
        expected.replace(&format!("\"{total}\""), "\"1\""),
    )
    .unwrap();
    let out = run(&own_test, &project);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{lang}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "differs: table `Kernel dispatches` row 1: [\"{n}\", \"{total}\"], expected [\"{n}\", \"1\"]"
        )),
        "{lang}: {stdout}"
    );
}

#[test]
fn rust_plugin_new_build_test() {
    new_build_test("rust");
}

#[test]
fn c_plugin_new_build_test() {
    new_build_test("c");
}

#[test]
fn python_plugin_new_build_test() {
    new_build_test("python");
}

#[test]
fn js_plugin_new_build_test() {
    new_build_test("js");
}

#[test]
fn wit_writes_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["plugin", "wit", "--out", "wit"], dir.path());
    assert_success(&out, "plugin wit");
    for (name, _) in [("host.wit", 0), ("types.wit", 0), ("worlds.wit", 0)] {
        let got = std::fs::read_to_string(dir.path().join("wit").join(name)).unwrap();
        let want = std::fs::read_to_string(workspace().join("wit").join(name)).unwrap();
        assert_eq!(got, want, "{name}");
    }
}

/// A build whose tool is not on PATH: status 2, one line naming the tool
/// and the command that installs it.
#[test]
fn a_missing_toolchain_is_named_with_its_install_command() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let empty = cwd.join("empty-bin");
    std::fs::create_dir(&empty).unwrap();
    for (lang, tool, install) in [
        (
            "c",
            "clang-14",
            "apt-get install clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32",
        ),
        ("python", "python3", "apt-get install python3 python3-pip"),
        ("js", "node", "apt-get install nodejs npm"),
    ] {
        let project = format!("demo-{lang}");
        assert_success(
            &run(&["plugin", "new", &project, "--lang", lang], cwd),
            "plugin new",
        );
        let mut env = tools_env();
        env.push(("PATH", empty.display().to_string()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let out = rocwasm_with_env(&["plugin", "build", &project], cwd, &env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{lang}: {stderr}");
        assert!(stderr.contains(&format!("`{tool}")), "{lang}: {stderr}");
        assert!(stderr.contains(install), "{lang}: {stderr}");
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("error:")).count(),
            1,
            "{lang}: {stderr}"
        );
    }
}

/// A directory that is no plugin project, and a transform project in a
/// language without a transform template: status 2, said in a sentence.
#[test]
fn what_is_not_a_project_is_refused_as_usage() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["plugin", "build", "."], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a plugin project"), "{stderr}");
    let out = run(
        &["plugin", "new", "t", "--lang", "c", "--world", "transform"],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Rust only"), "{stderr}");
}
