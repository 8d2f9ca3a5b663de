//! Signed plugins and the site policy, through the `rocwasm` binary: keys
//! and signatures (`rocwasm plugin keygen|sign|verify`), a policy that
//! refuses a run before anything starts, and the audit line every run
//! leaves.
//!
//! The policy comes from `ROCWASM_TEST_POLICY`, which only works on a
//! machine without `/etc/rocwasm/policy.toml` (the policy crate's own tests
//! show an override is refused when one exists).
//!
//! Needs `cargo xtask build-plugins`.

use std::path::{Path, PathBuf};
use std::process::Output;

use rocwasm_tests::*;

/// The stock plugins the replay's default (`--stats`) chain runs.
const STATS_PLUGINS: &[&str] = &["kernel-stats", "api-stats", "memcpy-bandwidth"];

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `rocwasm plugin keygen --out DIR/NAME`; returns (KEY, KEY.pub, key id).
fn keygen(dir: &Path, name: &str) -> (PathBuf, PathBuf, String) {
    let key = dir.join(name);
    let out = rocwasm(&["plugin", "keygen", "--out", key.to_str().unwrap()], dir);
    assert_success(&out, "rocwasm plugin keygen");
    let (stdout, _) = text(&out);
    let id = stdout
        .lines()
        .find_map(|l| l.strip_prefix("key id:"))
        .expect("keygen prints the key id")
        .trim()
        .to_string();
    let public = dir.join(format!("{name}.pub"));
    assert!(public.is_file());
    (key, public, id)
}

/// Copies of the stock plugins into `dir/plugins`, signed by `key` if any.
fn plugin_copies(dir: &Path, key: Option<&Path>) -> PathBuf {
    let stock = plugins_dir(STATS_PLUGINS);
    let to = dir.join("plugins");
    std::fs::create_dir_all(&to).unwrap();
    for name in STATS_PLUGINS {
        let file = to.join(format!("{name}.wasm"));
        std::fs::copy(stock.join(format!("{name}.wasm")), &file).unwrap();
        if let Some(key) = key {
            let out = rocwasm(
                &[
                    "plugin",
                    "sign",
                    "--key",
                    key.to_str().unwrap(),
                    file.to_str().unwrap(),
                ],
                dir,
            );
            assert_success(&out, "rocwasm plugin sign");
        }
    }
    to
}

/// `rocwasm run --sim -c <dir>/<name>.toml -d <name> -- vector_add 1` in
/// `dir` under the policy file `policy`, the chain file holding `chain`.
fn run_chain_under(dir: &Path, policy: &Path, chain: &str, name: &str) -> Output {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, chain).unwrap();
    run_sim_app(
        &["-c", file.to_str().unwrap()],
        name,
        "vector_add",
        &["1"],
        dir,
        &[("ROCWASM_TEST_POLICY", policy.to_str().unwrap())],
    )
}

fn no_system_policy() {
    assert!(
        !Path::new("/etc/rocwasm/policy.toml").exists(),
        "this machine has a system policy; these tests need a node without one"
    );
}

/// `rocwasm replay` of the sample trace with its default chain, plugins
/// from `plugins`, under the policy file `policy`.
fn replay_under(dir: &Path, plugins: &Path, policy: &Path, out_dir: &str) -> Output {
    let trace = workspace().join("examples/traces/sample");
    rocwasm_with_env(
        &["replay", trace.to_str().unwrap(), "-d", out_dir],
        dir,
        &[
            ("ROCWASM_PLUGIN_PATH", plugins.to_str().unwrap()),
            ("ROCWASM_TEST_POLICY", policy.to_str().unwrap()),
        ],
    )
}

#[test]
fn sign_then_verify_and_a_changed_byte_or_another_key_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (key, public, id) = keygen(dir, "dev");
    let (_, other_pub, _) = keygen(dir, "other");
    assert_eq!(id.len(), 16, "{id}");
    let plugins = plugin_copies(dir, Some(&key));
    let file = plugins.join("kernel-stats.wasm");
    let file = file.to_str().unwrap();

    let ok = rocwasm(
        &["plugin", "verify", "--pub", public.to_str().unwrap(), file],
        dir,
    );
    assert_success(&ok, "rocwasm plugin verify");
    assert!(
        text(&ok).0.contains(&format!("trusted key {id}")),
        "{:?}",
        text(&ok)
    );

    let other = rocwasm(
        &[
            "plugin",
            "verify",
            "--pub",
            other_pub.to_str().unwrap(),
            file,
        ],
        dir,
    );
    assert_eq!(other.status.code(), Some(1), "{:?}", text(&other));
    assert!(
        text(&other).1.contains("none of the trusted keys"),
        "{:?}",
        text(&other)
    );

    // One byte changed in the middle of the code: the signature no longer holds.
    let mut bytes = std::fs::read(file).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x20;
    std::fs::write(file, &bytes).unwrap();
    let bad = rocwasm(
        &["plugin", "verify", "--pub", public.to_str().unwrap(), file],
        dir,
    );
    assert_eq!(bad.status.code(), Some(1), "{:?}", text(&bad));
    assert!(text(&bad).1.contains("does not match"), "{:?}", text(&bad));
}

#[test]
fn a_signed_only_policy_refuses_unsigned_plugins_before_anything_runs() {
    no_system_policy();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (key, _, id) = keygen(dir, "site");
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        "version = 1\n[plugins]\ntrusted_keys = [\"site.pub\"]\n",
    )
    .unwrap();

    // Unsigned copies: refused, status 2, one sentence naming plugin, rule, file.
    let unsigned = plugin_copies(&dir.join("u"), None);
    let out = replay_under(dir, &unsigned, &policy, "refused");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("plugin `kernel-stats` is refused by the site policy"),
        "{stderr}"
    );
    assert!(stderr.contains("rule `plugins.allow_unsigned`"), "{stderr}");
    assert!(stderr.contains(&policy.display().to_string()), "{stderr}");
    assert!(!dir.join("refused").exists(), "nothing may be written");

    // Signed by the trusted key: the replay runs and its audit line says
    // who signed what, under which policy.
    let signed = plugin_copies(&dir.join("s"), Some(&key));
    let out = replay_under(dir, &signed, &policy, "admitted");
    assert_success(&out, "replay of signed plugins");
    let audit = std::fs::read_to_string(dir.join("admitted/rocwasm-audit.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(audit.trim()).unwrap();
    assert_eq!(line["replay"], true);
    assert_eq!(line["policy"]["file"], policy.display().to_string());
    let plugins = line["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), STATS_PLUGINS.len(), "{line}");
    for p in plugins {
        assert_eq!(p["signers"][0], id, "{p}");
        assert_eq!(p["admitted_by"]["trusted_key"], id, "{p}");
        assert!(p["digest"].as_str().unwrap().starts_with("sha256:"), "{p}");
    }
}

#[test]
fn caps_and_domains_refuse_a_live_run_before_the_application_starts() {
    no_system_policy();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        "version = 1\n[plugins]\nallow_unsigned = true\n[domains]\ndeny = [\"KERNEL_DISPATCH\"]\n\
         [audit]\nlog = \"site-audit.jsonl\"\n",
    )
    .unwrap();
    let out = run_sim_app(
        &["--kernel-trace"],
        "live",
        "vector_add",
        &["1"],
        dir,
        &[("ROCWASM_TEST_POLICY", policy.to_str().unwrap())],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("rule `domains.deny`") && stderr.contains("KERNEL_DISPATCH"),
        "{stderr}"
    );
    assert!(
        !stdout.contains("RESULT"),
        "the application must not have run: {stdout}"
    );

    // Allowed kinds run, and the audit line goes to the site log as well.
    let out = run_sim_app(
        &["--hip-trace"],
        "live",
        "vector_add",
        &["1"],
        dir,
        &[("ROCWASM_TEST_POLICY", policy.to_str().unwrap())],
    );
    assert_success(&out, "rocwasm run under the policy");
    let own = std::fs::read_to_string(dir.join("live/rocwasm-audit.jsonl")).unwrap();
    // A relative site log is relative to the policy file.
    let site = std::fs::read_to_string(dir.join("site-audit.jsonl")).unwrap();
    assert_eq!(own, site);
    let line: serde_json::Value = serde_json::from_str(own.trim()).unwrap();
    assert_eq!(line["replay"], false);
}

#[test]
fn a_malformed_policy_is_one_line_with_file_line_column_and_key() {
    no_system_policy();
    let tmp = tempfile::tempdir().unwrap();
    let policy = tmp.path().join("policy.toml");
    std::fs::write(&policy, "version = 1\n[limits]\nmemory = \"plenty\"\n").unwrap();
    let chain = workspace().join("examples/chains/default.toml");
    let out = rocwasm_with_env(
        &["check", chain.to_str().unwrap()],
        tmp.path(),
        &[("ROCWASM_TEST_POLICY", policy.to_str().unwrap())],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:3:10:", policy.display())) && stderr.contains("limits.memory"),
        "{stderr}"
    );
}

#[test]
fn vet_prints_what_an_admin_needs_for_every_stock_plugin() {
    let tmp = tempfile::tempdir().unwrap();
    let stock = plugins_dir(STATS_PLUGINS);
    let trace = workspace().join("examples/traces/sample");
    for name in STATS_PLUGINS {
        let file = stock.join(format!("{name}.wasm"));
        let out = rocwasm(
            &[
                "plugin",
                "vet",
                "--trace",
                trace.to_str().unwrap(),
                file.to_str().unwrap(),
            ],
            tmp.path(),
        );
        assert_success(&out, "rocwasm plugin vet");
        let (stdout, _) = text(&out);
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(
            stdout.contains(&format!("size:        {size} bytes")),
            "{stdout}"
        );
        for field in [
            "digest:      sha256:",
            "signers:     none",
            "world:       analysis-plugin",
            "imports:",
            "rocwasm:plugin/",
        ] {
            assert!(stdout.contains(field), "{name}: no `{field}` in\n{stdout}");
        }
        let per_record: f64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("instructions per record: "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no instructions per record in\n{stdout}"));
        assert!(per_record > 0.0, "{stdout}");
        let peak: u64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("peak memory: "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no peak memory in\n{stdout}"));
        assert!(peak >= 64 << 10, "{stdout}");
    }
}

/// The correlation tagger configures callback tracing and external-
/// correlation requests: plugin code on the application's threads.
const TAGGER_CHAIN: &str = r#"version = 1
[output]
formats = ["json"]
trace = ["kernel_dispatch"]

[[stage]]
name = "tagger"
plugin = "correlation-tagger"
config = { default = "7" }
"#;

#[test]
fn services_a_policy_withholds_are_refused_when_asked_and_withheld_when_not() {
    no_system_policy();
    plugins_dir(&["correlation-tagger"]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        "version = 1\n[plugins]\nallow_unsigned = true\n\
         [capabilities]\ncallbacks = false\nexternal_correlation = false\n",
    )
    .unwrap();
    let run = |chain: &str, out_dir: &str| run_chain_under(dir, &policy, chain, out_dir);

    // Asked for explicitly: refused before the application starts.
    let asks = TAGGER_CHAIN.replace("config =", "callbacks = true\nconfig =");
    let out = run(&asks, "asks");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("rule `capabilities.callbacks`"), "{stderr}");
    assert!(
        !stdout.contains("RESULT"),
        "the application must not have run: {stdout}"
    );

    // Not asked for: the run goes on, the verbs answer `error`, the
    // refusal is reported once, no dispatch carries a tag, and the audit
    // line says what was withheld.
    let out = run(TAGGER_CHAIN, "silent");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(
        stderr.matches("is not granted callback tracing").count(),
        1,
        "reported once: {stderr}"
    );
    let results = std::fs::read_dir(dir.join("silent"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("results.json"))
        .expect("results.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results).unwrap()).unwrap();
    let text_json = json.to_string();
    assert!(
        text_json.contains("\"external\":0"),
        "untagged dispatches expected"
    );
    assert!(
        !text_json.contains("\"external\":7"),
        "no dispatch may carry the tag"
    );
    let audit = std::fs::read_to_string(dir.join("silent/rocwasm-audit.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(audit.trim()).unwrap();
    assert_eq!(line["plugins"][0]["callbacks"], false, "{line}");
    assert_eq!(line["plugins"][0]["external_correlation"], false, "{line}");
}

#[test]
fn vet_refuses_a_component_importing_wasi_interfaces_beyond_the_grant() {
    no_system_policy();
    // componentize-py components import wasi:filesystem and wasi:sockets.
    let python = plugins_dir(&["range-kernel-time"]).join("range-kernel-time.wasm");
    let tmp = tempfile::tempdir().unwrap();
    let policy = tmp.path().join("policy.toml");
    let vet = |allow: &str| {
        std::fs::write(
            &policy,
            format!("version = 1\n[plugins]\nallow_unsigned = true\n[capabilities]\nwasi_allow = {allow}\n"),
        )
        .unwrap();
        rocwasm_with_env(
            &["plugin", "vet", python.to_str().unwrap()],
            tmp.path(),
            &[("ROCWASM_TEST_POLICY", policy.to_str().unwrap())],
        )
    };
    let out = vet(r#"["wasi:cli", "wasi:io", "wasi:clocks", "wasi:random"]"#);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("rule `capabilities.wasi_allow`"),
        "{stderr}"
    );
    assert!(stderr.contains("imports wasi:filesystem/"), "{stderr}");
}

/// A policy capping memory, deadlines and output, withholding
/// external-correlation requests; and a chain stage within every cap.
const CAPS_POLICY: &str = "version = 1\n[plugins]\nallow_unsigned = true\n\
    [limits]\nmemory = \"64MiB\"\ndeadline = \"1s\"\ncallback_deadline = \"50ms\"\n\
    output_bytes = \"1GiB\"\n[capabilities]\nexternal_correlation = false\n";

/// A chain of the kernel-stats plugin with `limits` and `extra` keys.
fn capped_chain(limits: &str, extra: &str) -> String {
    let plugin = plugins_dir(&["kernel-stats"]).join("kernel-stats.wasm");
    format!(
        "version = 1\n[output]\nformats = [\"csv\"]\ntrace = [\"kernel_dispatch\"]\n\
         [[stage]]\nname = \"capped\"\nplugin = \"{}\"\ndomains = [\"kernel_dispatch\"]\n\
         output = true\nlimits = {{ {limits} }}\n{extra}",
        plugin.display()
    )
}

/// Every cap of the policy refuses, from a chain file through `rocwasm
/// run`, a stage that asks for more, before the application starts; the
/// same stage within the caps runs.
#[test]
fn memory_deadline_output_and_capability_caps_refuse_a_chain_end_to_end() {
    no_system_policy();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, CAPS_POLICY).unwrap();
    let run = |chain: &str, name: &str| run_chain_under(dir, &policy, chain, name);
    let within = "memory = \"32MiB\"";
    let cases = [
        (
            "memory = \"128MiB\"",
            "",
            "limits.memory",
            "asks for memory 134217728 bytes, more than the cap of 67108864 bytes",
        ),
        (
            "memory = \"32MiB\", deadline = \"2s\"",
            "",
            "limits.deadline",
            "a deadline of 2s, more than the cap of 1s",
        ),
        (
            "memory = \"32MiB\", callback_deadline = \"100ms\"",
            "",
            "limits.callback_deadline",
            "a callback deadline of 100ms, more than the cap of 50ms",
        ),
        (
            "memory = \"32MiB\", output = \"2GiB\"",
            "",
            "limits.output_bytes",
            "an output quota of 2147483648 bytes, more than the cap of 1073741824 bytes",
        ),
        (
            within,
            "external_correlation = true\n",
            "capabilities.external_correlation",
            "asks for external-correlation requests",
        ),
    ];
    for (i, (limits, extra, rule, what)) in cases.into_iter().enumerate() {
        let out = run(&capped_chain(limits, extra), &format!("refused{i}"));
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{rule}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("rule `{rule}`"))
                && stderr.contains("capped")
                && stderr.contains(what),
            "{rule}: {stderr}"
        );
        assert!(
            !stdout.contains("RESULT"),
            "{rule}: the application must not have run: {stdout}"
        );
    }
    let out = run(&capped_chain(within, ""), "within");
    assert_success(&out, "a stage within every cap");
    assert!(dir.join("within/kernel_stats.csv").is_file());
}

/// The tool library holds a run plan against the policy again: a plan
/// made where no policy was in force (here by `rocwasm run` on this
/// machine without one, then handed to the application by hand) has its
/// refused chain dropped; the application runs, is profiled, and the
/// refusal is said on stderr and in the audit line.
#[test]
fn the_tool_library_refuses_a_hand_made_plan_the_policy_forbids() {
    no_system_policy();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The plan: what `rocwasm run` hands the application, copied out.
    let chain = dir.join("chain.toml");
    std::fs::write(&chain, capped_chain("memory = \"128MiB\"", "")).unwrap();
    let out = rocwasm(
        &[
            "run",
            "-c",
            chain.to_str().unwrap(),
            "-d",
            "made",
            "--",
            "/bin/sh",
            "-c",
            "cp \"$ROCWASM_RUN\" plan.json",
        ],
        dir,
    );
    assert_success(&out, "making the plan");
    let plan = dir.join("plan.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(json["stages"][0]["limits"]["memory_bytes"], 128 << 20);
    let journal = json["journal"]
        .as_str()
        .expect("the plan names its journal");

    // (That run had no policy: its plugin ran and wrote its table.)
    std::fs::remove_file(dir.join("made/kernel_stats.csv")).unwrap();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, CAPS_POLICY).unwrap();
    let tool = rocwasm_bin().with_file_name("librocwasm_intercept.so");
    let sim = sim_dir();
    let plain = std::process::Command::new(sim.join("bin/vector_add"))
        .arg("1")
        .env("LD_LIBRARY_PATH", sim.join("lib"))
        .output()
        .unwrap();
    let out = std::process::Command::new(sim.join("bin/vector_add"))
        .arg("1")
        .current_dir(dir)
        .env("LD_LIBRARY_PATH", sim.join("lib"))
        .env("LD_PRELOAD", &tool)
        .env("HSA_TOOLS_LIB", &tool)
        .env("ROCWASM_RUN", &plan)
        .env("ROCWASM_TEST_POLICY", &policy)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), plain.status.code(), "{stderr}");
    assert_eq!(stdout, String::from_utf8_lossy(&plain.stdout), "{stderr}");
    assert_eq!(
        stderr
            .matches("rocwasm: plugin `capped` is refused by the site policy: asks for memory 134217728 bytes, more than the cap of 67108864 bytes (rule `limits.memory`")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("profiling goes on without plugins"),
        "{stderr}"
    );
    // Profiled all the same: the record journal holds the dispatches.
    let journals: Vec<PathBuf> = std::fs::read_dir(journal)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "journal"))
        .collect();
    assert_eq!(journals.len(), 1, "{journals:?}");
    assert!(std::fs::metadata(&journals[0]).unwrap().len() > 0);
    // And the audit line names no plugin and the refusal as a failure.
    let audit = std::fs::read_to_string(dir.join("made/rocwasm-audit.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(line["plugins"], serde_json::json!([]), "{line}");
    assert!(
        line["failures"][0]
            .as_str()
            .is_some_and(|f| f.contains("rule `limits.memory`")),
        "{line}"
    );
    // The plugin never ran: no statistics of its.
    assert!(!dir.join("made/kernel_stats.csv").exists());
}

/// `docs/POLICY.md` cannot rot: every ```` ```sh ```` block of it runs, in
/// order, in one empty directory (`crate::guide::run_block`: `rocwasm` on
/// `PATH`, `ROCWASM_REPO`, each `# expect:` checked) — a strict policy
/// refusing the stock plugins, then admitting them signed and by digest.
#[test]
fn every_command_of_the_policy_guide_works() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]);
    sim_dir();
    let doc = std::fs::read_to_string(workspace().join("docs/POLICY.md")).unwrap();
    let blocks = crate::guide::fenced(&doc, "sh");
    assert!(blocks.len() >= 3, "only {} sh blocks", blocks.len());
    let tmp = tempfile::tempdir().unwrap();
    for (n, block) in blocks.iter().enumerate() {
        // Each block is a shell of its own: the policy it exports is not
        // inherited by the next, which sets its own.
        crate::guide::run_block(block, tmp.path(), &format!("POLICY.md block {}", n + 1));
    }
    // The signed copies verify; the build tree's plugins were not touched.
    assert!(tmp.path().join("site-plugins/kernel-stats.wasm").is_file());
    let vet = rocwasm(
        &[
            "plugin",
            "vet",
            workspace()
                .join("target/plugins/kernel-stats.wasm")
                .to_str()
                .unwrap(),
        ],
        tmp.path(),
    );
    assert!(text(&vet).0.contains("signers:     none"), "{vet:?}");
}
