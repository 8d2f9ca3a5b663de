//! `rocwasm avail` and `rocwasm run --pmc`: the simulated GPUs' counters,
//! listed, described and checked, and every bad input refused with its
//! reason.

use std::path::Path;
use std::process::{Command, Output};

/// `rocwasm ARGS` with the simulated GPU's defaults (no scenario, no
/// installed ROCm's definitions), plus `env`.
fn rocwasm(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocwasm"));
    cmd.args(args)
        .env_remove("RUST_LOG")
        .env_remove("ROCWASM_SIM_SCENARIO")
        .env_remove("ROCWASM_SIM_DEVICES")
        .env_remove("ROCWASM_SIM_ARCH")
        .env_remove("ROCPROFILER_METRICS_PATH")
        .env("ROCM_PATH", "/nonexistent-rocm");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("rocwasm runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The value of `key` in the `info` block of `counter` (`key : value`).
fn info_value(out: &str, counter: &str, key: &str) -> Option<String> {
    let block = out.split("\n\n").find(|b| {
        b.lines()
            .any(|l| l.starts_with("Counter_Name") && l.ends_with(&format!("\t{counter}")))
    })?;
    block
        .lines()
        .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
        .map(|l| l.split_once(":\t").map_or("", |(_, v)| v).to_string())
}

#[test]
fn avail_info_gives_each_counter_its_block_or_expression_and_dimensions() {
    let out = rocwasm(
        &[
            "avail",
            "info",
            "--pmc",
            "SQ_WAVES",
            "TCC_HIT",
            "GPU_UTIL",
            "MemUnitBusy",
            "CU_NUM",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.starts_with("GPU:0\nName:gfx90a\n"), "{stdout}");
    assert_eq!(
        info_value(&stdout, "SQ_WAVES", "Block").as_deref(),
        Some("SQ")
    );
    assert_eq!(
        info_value(&stdout, "SQ_WAVES", "Dimensions").as_deref(),
        Some("DIMENSION_INSTANCE[0:0] DIMENSION_SHADER_ENGINE[0:7]")
    );
    assert_eq!(
        info_value(&stdout, "TCC_HIT", "Dimensions").as_deref(),
        Some("DIMENSION_INSTANCE[0:31]")
    );
    assert_eq!(
        info_value(&stdout, "GPU_UTIL", "Expression").as_deref(),
        Some("100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)")
    );
    assert_eq!(
        info_value(&stdout, "GPU_UTIL", "Dimensions").as_deref(),
        Some("DIMENSION_INSTANCE[0:0]")
    );
    // A counter the simulated GPU does not model says so, never a value.
    let why = info_value(&stdout, "MemUnitBusy", "Unsupported").unwrap();
    assert!(why.contains("TA_TA_BUSY"), "{why}");
    assert!(info_value(&stdout, "MemUnitBusy", "Dimensions").is_none());

    // gfx942: eight XCCs of four shader engines.
    let out = rocwasm(
        &["avail", "info", "--pmc", "SQ_WAVES", "TCC_EA0_RDREQ"],
        &[("ROCWASM_SIM_ARCH", "gfx942")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        info_value(&stdout, "SQ_WAVES", "Dimensions").as_deref(),
        Some("DIMENSION_XCC[0:7] DIMENSION_INSTANCE[0:0] DIMENSION_SHADER_ENGINE[0:3]")
    );
    assert_eq!(
        info_value(&stdout, "TCC_EA0_RDREQ", "Dimensions").as_deref(),
        Some("DIMENSION_XCC[0:7] DIMENSION_INSTANCE[0:15]")
    );
}

#[test]
fn avail_list_marks_what_the_simulated_gpu_does_not_model() {
    let out = rocwasm(
        &["avail", "-d", "1", "list"],
        &[("ROCWASM_SIM_DEVICES", "2")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("GPU                           :\t1\n"),
        "{stdout}"
    );
    assert!(!stdout.contains(":\t0\n"), "{stdout}");
    let words: Vec<&str> = stdout.split_whitespace().collect();
    assert!(
        words.contains(&"SQ_WAVES") && words.contains(&"TA_TA_BUSY*"),
        "{stdout}"
    );
    assert!(
        stdout.contains("* not modelled by the simulated gfx90a"),
        "{stdout}"
    );
    let out = rocwasm(&["avail", "-d", "4", "list"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("there is no GPU 4"),
        "{}",
        text(&out).1
    );
}

#[test]
fn pmc_check_answers_for_a_set_that_fits_and_one_that_does_not() {
    let out = rocwasm(
        &[
            "avail",
            "pmc-check",
            "SQ_WAVES",
            "GRBM_COUNT",
            "GRBM_GUI_ACTIVE",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "Following input counters can be collected together on GPU:0\tSQ_WAVES\tGRBM_COUNT\tGRBM_GUI_ACTIVE\n"
    );
    // GRBM has two counter registers; GPU_UTIL needs both, TA's would be a
    // third block… and a third GRBM counter does not fit.
    let out = rocwasm(
        &[
            "avail",
            "pmc-check",
            "TCC_HIT",
            "TCC_MISS",
            "TCC_REQ",
            "TCC_READ",
            "TCC_WRITE",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stderr.contains("TCC has 4 counter registers")
            && stderr.contains("need 5")
            && stderr.contains("ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT"),
        "{stderr}"
    );
    // One GPU only: the other is not asked.
    let out = rocwasm(
        &["avail", "pmc-check", "SQ_WAVES:device=1"],
        &[("ROCWASM_SIM_DEVICES", "2")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "Following input counters can be collected together on GPU:1\tSQ_WAVES\n"
    );
}

#[test]
fn run_pmc_refuses_each_bad_input_with_its_reason() {
    let run = |pmc: &[&str]| {
        let mut args = vec!["run", "--sim", "--pmc"];
        args.extend_from_slice(pmc);
        args.extend_from_slice(&["--", "./app"]);
        let out = rocwasm(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{pmc:?}: {}", text(&out).1);
        let err = text(&out).1;
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    };
    let err = run(&["SQ_WAVES", "SQ_WAVEZ"]);
    assert!(
        err.starts_with("error: unknown counter SQ_WAVEZ: did you mean SQ_WAVES"),
        "{err}"
    );
    let err = run(&["TCC_HIT", "TCC_MISS", "TCC_REQ", "TCC_READ", "TCC_WRITE"]);
    assert!(
        err.contains(
            "cannot be collected in one pass on GPU 0 (gfx90a): TCC has 4 counter registers"
        ),
        "{err}"
    );
    let err = run(&["MemUnitBusy"]);
    assert!(err.contains("needs TA_TA_BUSY"), "{err}");
    let err = run(&["SQ_WAVES:device=3"]);
    assert!(err.contains("there is no GPU 3"), "{err}");
    let err = run(&["SQ_WAVES:gpu=0"]);
    assert!(err.contains("`:device=N`"), "{err}");
    // Only the simulated GPU counts.
    let out = rocwasm(&["run", "--pmc", "SQ_WAVES", "--", "./app"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("add --sim"), "{}", text(&out).1);
    // A set that fits passes the check: the run goes on (and here fails
    // for want of the program, not for the counters).
    let out = rocwasm(
        &[
            "run",
            "--sim",
            "--pmc",
            "SQ_WAVES,GRBM_GUI_ACTIVE",
            "SQ_INSTS_VALU",
            "--",
            "./no-such-app",
        ],
        &[],
    );
    let err = text(&out).1;
    assert!(!err.contains("counter"), "{err}");
    assert!(err.contains("no-such-app"), "{err}");
}

#[test]
fn a_definitions_file_with_a_bad_expression_names_file_counter_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("counter_defs.yaml");
    std::fs::write(
        &file,
        "rocprofiler-sdk:\n  counters-schema-version: 1\n  counters:\n  - name: Waves\n    description: w\n    definitions:\n    - architectures: [gfx90a]\n      expression: reduce(SQ_WAVES,sum\n",
    )
    .unwrap();
    let shown = file.display().to_string();
    for args in [
        vec!["avail", "--counter-defs", shown.as_str(), "list"],
        vec![
            "run",
            "--sim",
            "--counter-defs",
            shown.as_str(),
            "--pmc",
            "Waves",
            "--",
            "./app",
        ],
    ] {
        let out = rocwasm(&args, &[]);
        let err = text(&out).1;
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "error: counter definitions {shown}: counter Waves (gfx90a): expression \
                 \"reduce(SQ_WAVES,sum\" at position 19: expected ')', found end of expression"
            )
        );
    }
    // ROCPROFILER_METRICS_PATH names the directory of counter_defs.yaml.
    let out = rocwasm(
        &["avail", "list"],
        &[("ROCPROFILER_METRICS_PATH", dir.path().to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("counter Waves (gfx90a)"));
    let out = rocwasm(
        &["avail", "list"],
        &[(
            "ROCPROFILER_METRICS_PATH",
            Path::new("/nonexistent").to_str().unwrap(),
        )],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("has no counter_defs.yaml"),
        "{}",
        text(&out).1
    );
}

#[test]
fn an_input_file_is_checked_whole_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.txt");
    std::fs::write(
        &input,
        "pmc: SQ_WAVES\npmc: TCC_HIT TCC_MISS TCC_REQ TCC_READ TCC_WRITE\n",
    )
    .unwrap();
    let shown = input.display().to_string();
    let out = rocwasm(&["run", "--sim", "-i", &shown, "--", "./no-such-app"], &[]);
    let err = text(&out).1;
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("TCC has 4 counter registers"), "{err}");
    assert!(!err.contains("no-such-app"), "{err}");
    std::fs::write(&input, "pmc: SQ_WAVES\nTCC_HIT\n").unwrap();
    let out = rocwasm(&["run", "--sim", "-i", &shown, "--", "./no-such-app"], &[]);
    let err = text(&out).1;
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{shown}:2: not a `pmc:` line")),
        "{err}"
    );
    let out = rocwasm(
        &[
            "run",
            "--sim",
            "-i",
            &shown,
            "--pmc",
            "SQ_WAVES",
            "--",
            "./no-such-app",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("both name counters"),
        "{}",
        text(&out).1
    );
}
