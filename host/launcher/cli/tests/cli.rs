//! The `rocwasm` binary end to end: exit statuses, the one-line errors of
//! every malformed chain in `host/setup/config/tests/bad/`, and each subcommand's
//! help; and `rocwasm avail` / `run --pmc` (`counters`).

#[path = "cli/counters.rs"]
mod counters;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rocwasm(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocwasm"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .env_remove("ROCWASM_PLUGIN_PATH")
        .output()
        .expect("rocwasm runs")
}

fn config_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../setup/config")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn every_bad_chain_exits_2_with_its_one_line() {
    let dir = config_dir();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir.join("tests/bad"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        // The config crate's loader without a fetcher; `rocwasm check`
        // pulls (see `check_names_a_store_it_cannot_reach`).
        .filter(|p| !p.ends_with("shipped_without_fetcher.toml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 15, "only {} cases", cases.len());
    for case in cases {
        let rel = format!("tests/bad/{}", case.file_name().unwrap().to_str().unwrap());
        let expected = std::fs::read_to_string(case.with_extension("expected")).unwrap();
        let out = rocwasm(&["check", &rel], &dir);
        assert_eq!(out.status.code(), Some(2), "{rel}: {}", stderr(&out));
        assert_eq!(stderr(&out), expected, "{rel}");
        assert!(
            stdout(&out).is_empty(),
            "{rel}: printed on stdout: {}",
            stdout(&out)
        );
    }
}

/// `rocwasm check` pulls a shipped plugin like a run; a store nobody
/// listens on is one line naming the chain, the stage and the reference.
#[test]
fn check_names_a_store_it_cannot_reach() {
    let dir = tempfile::tempdir().unwrap();
    // A loopback port that was free a moment ago: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let reference = format!("oci://127.0.0.1:{port}/rocwasm/kernel-stats:1.0");
    std::fs::write(
        dir.path().join("chain.toml"),
        format!("version = 1\n\n[[stage]]\nname = \"stats\"\nplugin = \"{reference}\"\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rocwasm"))
        .args(["check", "chain.toml"])
        .current_dir(dir.path())
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env_remove("ROCWASM_PLUGIN_PATH")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "error: chain.toml:5:10: plugin in [[stage]] #1: {reference}: the store cannot be reached"
        )),
        "{err}"
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn check_prints_the_stages_of_a_good_chain() {
    let dir = config_dir();
    let out = rocwasm(
        &[
            "check",
            "--no-plugins",
            "../../../examples/chains/default.toml",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("../../../examples/chains/default.toml: ok, 4 stage(s)"),
        "{text}"
    );
    for name in [
        "kernel-stats",
        "api-stats",
        "memcpy-bandwidth",
        "restart (≤3, 100ms)",
        "run dir/bandwidth",
    ] {
        assert!(text.contains(name), "missing {name} in\n{text}");
    }
}

/// `<workspace>/target/plugins/<name>.wasm`; fails (never skips) when
/// `cargo xtask build-plugins` has not built it.
fn built_plugin(name: &str) -> PathBuf {
    let wasm = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../target/plugins")
        .join(format!("{name}.wasm"));
    assert!(
        wasm.is_file(),
        "{} is missing: run `cargo xtask build-plugins` (`cargo xtask test` does)",
        wasm.display()
    );
    wasm
}

/// A directory with `chain.toml`: one analysis stage `mine`, plugin
/// `mine.wasm` holding `wasm`.
fn chain_with_plugin(wasm: &[u8]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("mine.wasm"), wasm).unwrap();
    std::fs::write(
        tmp.path().join("chain.toml"),
        "version = 1\n[[stage]]\nname = 'mine'\nplugin = 'mine.wasm'\ndomains = ['kernel']\n",
    )
    .unwrap();
    tmp
}

/// `rocwasm check chain.toml` in `dir`, with a compiled-component cache of its own.
fn check_in(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocwasm"))
        .args(["check", "chain.toml"])
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .env_remove("ROCWASM_PLUGIN_PATH")
        .env("ROCWASM_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("rocwasm runs")
}

#[test]
fn check_resolves_plugins_next_to_the_chain() {
    let wasm = built_plugin("kernel-stats");
    let tmp = chain_with_plugin(&std::fs::read(wasm).unwrap());
    let out = check_in(tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("mine.wasm"));
}

/// The plugin host's own checks, as a run makes them: one line naming the
/// stage, the file and what is wrong; status 2 like any invalid chain.
#[test]
fn check_rejects_a_plugin_that_is_not_a_component_of_its_world() {
    let mut cases: Vec<(Vec<u8>, &str)> = vec![
        // The 8-byte header of an empty core module.
        (
            b"\0asm\x01\0\0\0".to_vec(),
            "error: stage `mine`: ./mine.wasm is a core WebAssembly module, not a component: \
             build it for the `rocwasm:plugin` worlds (wasm-component-ld, or `wasm-tools component new`)\n",
        ),
        (
            b"\0asm".to_vec(),
            "error: stage `mine`: ./mine.wasm is not a WebAssembly file\n",
        ),
        // An empty component: of no plugin world.
        (
            b"\0asm\x0d\0\x01\0".to_vec(),
            "error: stage `mine`: ./mine.wasm is not a rocwasm plugin: the component implements \
             neither plugin world: for `analysis-plugin` it lacks the export(s) \
             [\"rocwasm:plugin/lifecycle@0.3.2\", \"rocwasm:plugin/analysis@0.3.2\"], for \
             `transform-plugin` [\"rocwasm:plugin/lifecycle@0.3.2\", \"rocwasm:plugin/transform@0.3.2\"] \
             (it exports [])\n",
        ),
    ];
    // A component of the other world.
    cases.push((
        std::fs::read(built_plugin("kernel-filter")).unwrap(),
        "error: stage `mine`: ./mine.wasm: the component implements `transform-plugin`, \
         but the stage's `kind` is `analysis`\n",
    ));
    for (wasm, expected) in cases {
        let tmp = chain_with_plugin(&wasm);
        let out = check_in(tmp.path());
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(stderr(&out), expected);
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    }
}

#[test]
fn missing_chain_file_is_exit_2() {
    let out = rocwasm(&["check", "nope.toml"], &config_dir());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: nope.toml: cannot read chain file:"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1);
}

#[test]
fn kinds_lists_names_and_operations() {
    let dir = config_dir();
    let out = rocwasm(&["kinds", "--buffer"], &dir);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("kernel_dispatch") && text.contains("hip_runtime_api"),
        "{text}"
    );
    assert!(!text.contains("callback-tracing"), "{text}");
    assert!(text.contains("memory_copy"));

    let out = rocwasm(&["kinds", "memory_copy"], &dir);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("MEMORY_COPY_HOST_TO_DEVICE"),
        "{}",
        stdout(&out)
    );

    let out = rocwasm(&["kinds", "hip"], &dir);
    let text = stdout(&out);
    assert!(
        text.contains("hipMemcpy") && text.contains("__hipRegisterFatBinary"),
        "{text}"
    );

    let out = rocwasm(&["kinds", "--callback", "code_object"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).is_empty());

    let out = rocwasm(&["kinds", "kernal"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: unknown kind `kernal` (`rocwasm kinds` lists the kinds and aliases)\n"
    );
}

#[test]
fn run_replay_demo_validate_the_chain_first() {
    let dir = config_dir();
    let out = rocwasm(
        &["run", "--kernel-trace", "--stats", "--", "./no-such-app"],
        &dir,
    );
    // kernel-stats may or may not be built; either way no panic and a one-line error.
    assert!(
        matches!(out.status.code(), Some(1) | Some(2)),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));

    // A valid chain reaches the launcher; a missing application is a one-line failure.
    let out = rocwasm(&["run", "--kernel-trace", "--", "./no-such-app"], &dir);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));

    let out = rocwasm(&["run", "--", "./app"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: nothing to profile"),
        "{}",
        stderr(&out)
    );

    let out = rocwasm(
        &["run", "-c", "tests/bad/unknown_key.toml", "--", "./app"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        std::fs::read_to_string(dir.join("tests/bad/unknown_key.expected")).unwrap()
    );

    let out = rocwasm(
        &[
            "replay",
            "tests/bad",
            "-c",
            "../../../examples/chains/filtered.toml",
            "-d",
            "%oops%",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_2() {
    let dir = config_dir();
    assert_eq!(
        rocwasm(&["run", "--kernel-trace"], &dir).status.code(),
        Some(2),
        "no app"
    );
    assert_eq!(rocwasm(&["frobnicate"], &dir).status.code(), Some(2));
    assert_eq!(
        rocwasm(&["kinds", "--buffer", "--callback"], &dir)
            .status
            .code(),
        Some(2)
    );
    let out = rocwasm(&["plugin", "inspect", "missing.wasm"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1);
}

#[test]
fn every_subcommand_has_help_with_examples() {
    let dir = config_dir();
    for sub in [
        &["run"][..],
        &["replay"],
        &["demo"],
        &["check"],
        &["kinds"],
        &["plugin", "inspect"],
        &[],
    ] {
        let mut args: Vec<&str> = sub.to_vec();
        args.push("--help");
        let out = rocwasm(&args, &dir);
        assert_eq!(out.status.code(), Some(0), "{sub:?}");
        assert!(
            stdout(&out).contains("EXAMPLES:"),
            "{sub:?} help has no examples:\n{}",
            stdout(&out)
        );
    }
    let run_help = stdout(&rocwasm(&["run", "--help"], &dir));
    for flag in [
        "--hip-trace",
        "--hsa-trace",
        "--kernel-trace",
        "--memory-copy-trace",
        "--marker-trace",
        "--stats",
        "--output-directory",
        "--output-file",
        "--config",
        "--sim",
        "--output-format",
    ] {
        assert!(run_help.contains(flag), "run --help lacks {flag}");
    }
}

#[test]
fn plugin_inspect_rejects_a_non_component_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("junk.wasm"), b"this is not wasm").unwrap();
    let out = rocwasm(&["plugin", "inspect", "junk.wasm"], tmp.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: junk.wasm is not a loadable component"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn plugin_inspect_of_an_empty_component_has_no_world() {
    // `fake.wasm` is the 8-byte header of an empty component.
    let out = rocwasm(
        &["plugin", "inspect", "tests/bad/plugins/fake.wasm"],
        &config_dir(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("24eaf3439a60c96764c4f2c92a0a81b52bd4fe5d5b91f090184a0f6486b1bf29"),
        "{text}"
    );
    assert!(text.contains("size:     8 bytes"), "{text}");
    assert!(text.contains("world:    none"), "{text}");
}

/// Runs when the stock plugins are built (`cargo xtask build-plugins`).
#[test]
fn plugin_inspect_shows_world_and_digest_of_a_stock_plugin() {
    let wasm = built_plugin("kernel-stats");
    let out = rocwasm(
        &["plugin", "inspect", wasm.to_str().unwrap()],
        &config_dir(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let digest = {
        let o = Command::new("sha256sum").arg(&wasm).output().unwrap();
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    assert!(text.contains(&format!("sha256:   {digest}")), "{text}");
    assert!(
        text.contains("world:    analysis-plugin (rocwasm:plugin@0.3.2)"),
        "{text}"
    );
    assert!(text.contains("rocwasm:plugin/lifecycle"), "{text}");

    // A plugin built against the earlier package names its version.
    let old = wasm.with_file_name("wit-0-1-0.wasm");
    let out = rocwasm(&["plugin", "inspect", old.to_str().unwrap()], &config_dir());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("world:    analysis-plugin (rocwasm:plugin@0.1.0)"),
        "{text}"
    );
    // So does one built against 0.2.0 (the committed fixture).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../plugins/testing/fixtures/kernel-stats-wit-0-2-0.wasm");
    let out = rocwasm(
        &["plugin", "inspect", fixture.to_str().unwrap()],
        &config_dir(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("world:    analysis-plugin (rocwasm:plugin@0.2.0)"),
        "{}",
        stdout(&out)
    );
}

/// The chain a `rocwasm run` line describes: the indented lines of the
/// `chain:` log record `-v` prints before the launch (the program does not
/// exist, so nothing runs).
fn run_plan(flags: &[&str]) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let mut args = vec!["-v", "run"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", "./no-such-app"]);
    let out = rocwasm(&args, tmp.path());
    let err = stderr(&out);
    let plan: Vec<String> = err
        .lines()
        .skip_while(|l| !l.ends_with("INFO chain:"))
        .skip(1)
        .take_while(|l| !l.contains(" INFO "))
        .filter(|l| l.starts_with("  "))
        .map(str::to_string)
        .collect();
    assert!(!plan.is_empty(), "{flags:?}: no chain in\n{err}");
    plan
}

fn traced(plan: &[String]) -> String {
    plan.iter()
        .find_map(|l| l.trim().strip_prefix("traced to files: "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn rocprofv3_granular_spellings_plan_as_their_equivalents() {
    assert_eq!(
        run_plan(&["--hip-runtime-trace", "--hip-compiler-trace"]),
        run_plan(&["--hip-trace"])
    );
    assert_eq!(
        run_plan(&[
            "--hsa-core-trace",
            "--hsa-amd-trace",
            "--hsa-image-trace",
            "--hsa-finalizer-trace"
        ]),
        run_plan(&["--hsa-trace"])
    );
    for (flag, kind) in [
        ("--hip-runtime-trace", "hip_runtime_api"),
        ("--hip-compiler-trace", "hip_compiler_api"),
        ("--hsa-core-trace", "hsa_core_api"),
        ("--hsa-amd-trace", "hsa_amd_ext_api"),
        ("--hsa-image-trace", "hsa_image_ext_api"),
        ("--hsa-finalizer-trace", "hsa_finalize_ext_api"),
        ("--rccl-trace", "rccl_api"),
        ("--rocdecode-trace", "rocdecode_api"),
        ("--rocjpeg-trace", "rocjpeg_api"),
    ] {
        assert_eq!(traced(&run_plan(&[flag])), kind, "{flag}");
    }
    // rocprofv3's -f and its space-separated formats.
    assert_eq!(
        run_plan(&["--kernel-trace", "-f", "csv", "json"]),
        run_plan(&["--kernel-trace", "--output-format", "csv,json"])
    );
    // --log-level info is -v: the chain is logged without -v.
    let tmp = tempfile::tempdir().unwrap();
    let out = rocwasm(
        &[
            "run",
            "--log-level",
            "INFO",
            "--kernel-trace",
            "--",
            "./no-such-app",
        ],
        tmp.path(),
    );
    assert!(stderr(&out).contains("INFO chain:"), "{}", stderr(&out));
}

/// A refused rocprofv3 option: status 2, one line saying why, before
/// anything runs, with or without the program, whatever else the line has.
fn assert_refused(args: &[&str], option: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = rocwasm(args, tmp.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.starts_with(&format!("error: rocwasm does not support {option}: ")),
        "{args:?}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    for clap_words in ["unexpected argument", "similar", "tip:"] {
        assert!(!err.contains(clap_words), "{args:?}: {err}");
    }
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "{args:?} wrote something"
    );
}

#[test]
fn refused_rocprofv3_options_exit_2_with_the_reason() {
    assert_refused(
        &["run", "-E", "extra.yaml", "--", "./app"],
        "-E/--extra-counters",
    );
    assert_refused(
        &["run", "--minimum-output-data", "4", "--", "./app"],
        "--minimum-output-data",
    );
    assert_refused(&["run", "--att", "--", "./app"], "--advanced-thread-trace");
    assert_refused(
        &["-v", "run", "--kokkos-trace", "--", "./app"],
        "--kokkos-trace",
    );
}

#[test]
fn a_program_without_double_dash_is_named_with_the_fix() {
    let dir = config_dir();
    let out = rocwasm(&["run", "--kernel-trace", "./app", "-n", "1"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: `./app` is not an option of rocwasm run: the program to profile and its \
         arguments follow `--`:\n    rocwasm run --kernel-trace -- ./app -n 1\n"
    );
    // No program at all: clap's message, and where the program goes.
    let out = rocwasm(&["run", "--kernel-trace"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the program to profile and its arguments follow `--`"),
        "{}",
        stderr(&out)
    );
    // A rocprofv3 spelling is never answered with another flag.
    for flag in ["--hip-runtime-trace", "--hsa-core-trace", "--rccl-trace"] {
        let out = rocwasm(&["run", flag, "./app"], &dir);
        assert!(!stderr(&out).contains("similar"), "{}", stderr(&out));
        assert!(stderr(&out).contains(&format!("run {flag} -- ./app")));
    }
}

#[test]
fn list_avail_lists_the_counters_and_the_kinds() {
    let out = rocwasm(&["run", "-L"], &config_dir());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("PC sampling is not implemented yet"),
        "{text}"
    );
    assert!(text.contains("SQ_WAVES"), "{text}");
    assert!(text.contains("kernel_dispatch"), "{text}");
}

/// `run --help` in rocprofv3's groups, in rocprofv3's order, then rocwasm's.
#[test]
fn run_help_has_rocprofv3_groups() {
    let help = stdout(&rocwasm(&["run", "--help"], &config_dir()));
    let headings = [
        "I/O options:",
        "Aggregate tracing options:",
        "Basic tracing options:",
        "Granular tracing options:",
        "Counter collection options:",
        "Post-processing tracing options:",
        "Summary options:",
        "Kernel naming options:",
        "Filtering options:",
        "Display options:",
        "Advanced options:",
        "rocwasm options:",
    ];
    let at: Vec<usize> = headings
        .iter()
        .map(|h| {
            help.lines()
                .position(|l| l == *h)
                .unwrap_or_else(|| panic!("no {h} in\n{help}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{help}");
    assert!(help.contains("rocwasm run [OPTIONS] -- <APP>"), "{help}");
}

/// Whether a `--help` text defines the option `name` (one of the names
/// an option line of the help starts with).
fn defines_option(help: &str, name: &str) -> bool {
    help.lines().any(|l| {
        l.trim_start()
            .split([' ', ','])
            .filter(|w| !w.is_empty())
            .take_while(|w| w.starts_with('-'))
            .any(|w| w.trim_end_matches('.') == name)
    })
}

/// docs/ROCPROFV3_OPTIONS.md's table is the binary's truth: every option
/// it calls accepted is in `run --help`, every refused one is refused.
#[test]
fn rocprofv3_options_table_matches_the_binary() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../docs/ROCPROFV3_OPTIONS.md"),
    )
    .unwrap();
    let dir = config_dir();
    let help = stdout(&rocwasm(&["run", "--help"], &dir));
    let top_help = stdout(&rocwasm(&["--help"], &dir));
    let mut rows = 0;
    for line in doc.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (option, status) = (cells[2], cells[3]);
        if option == "option" {
            continue;
        }
        let names: Vec<&str> = option.split('`').filter(|s| s.starts_with('-')).collect();
        assert!(!names.is_empty(), "no option in {line}");
        rows += 1;
        match status {
            "accepted" | "accepted, with a note" => {
                for name in names {
                    assert!(
                        defines_option(&help, name) || defines_option(&top_help, name),
                        "{name} is accepted in the table but not in run --help"
                    );
                }
            }
            "refused" => {
                for name in names {
                    let out = rocwasm(&["run", name, "--", "./no-such-app"], &dir);
                    assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
                    assert!(
                        stderr(&out).starts_with("error: rocwasm does not support "),
                        "{name}: {}",
                        stderr(&out)
                    );
                    assert!(
                        !defines_option(&help, name),
                        "{name} is refused but in the help"
                    );
                }
            }
            other => panic!("unknown status `{other}` in {line}"),
        }
    }
    // rocprofv3's options, hidden ones included.
    assert!(rows >= 75, "only {rows} options in the table");
}
