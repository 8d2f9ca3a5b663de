//! Valid chains: the shipped examples, and the meaning of each key.

use std::path::Path;
use std::time::Duration;

use rocwasm_config::*;
use rocwasm_core::BufferTracingKind::*;

fn no_plugin_checks() -> LoadOptions {
    LoadOptions {
        plugin_path: vec![],
        check_plugins: false,
        fetcher: None,
    }
}

fn parse(text: &str) -> Result<Chain, ConfigError> {
    Chain::parse(
        text,
        Path::new("tests/bad/inline.toml"),
        &LoadOptions::default(),
    )
}

#[test]
fn default_example_is_the_demo_chain() {
    let c = Chain::load(
        Path::new("../../../examples/chains/default.toml"),
        &no_plugin_checks(),
    )
    .unwrap();
    let names: Vec<_> = c.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]
    );
    assert!(c
        .stages
        .iter()
        .all(|s| s.plugin.stock && s.world == World::Analysis));
    assert_eq!(
        c.output.formats,
        [
            OutputFormat::Csv,
            OutputFormat::Rocpd,
            OutputFormat::Pftrace
        ]
    );
    assert_eq!(c.stages[1].domains, [HipRuntimeApi, HipCompilerApi]);
    assert_eq!(
        c.stages[1].limits,
        Limits {
            memory_bytes: 64 << 20,
            deadline: Duration::from_millis(500),
            ..Limits::default()
        }
    );
    assert_eq!(
        c.stages[0].limits,
        Limits {
            memory_bytes: 256 << 20,
            deadline: Duration::from_secs(1),
            ..Limits::default()
        }
    );
    assert_eq!(
        c.stages[2].output,
        OutputGrant::Subdirectory("bandwidth".into())
    );
    assert_eq!(
        c.stages[2].on_failure,
        FailurePolicy::Restart {
            max: 3,
            backoff: Duration::from_millis(100)
        }
    );
    assert_eq!(c.settings.buffer.watermark, 3 << 20);
    assert_eq!(
        c.domains(),
        [HipRuntimeApi, HipCompilerApi, MemoryCopy, KernelDispatch]
    );
}

#[test]
fn filtered_example_puts_the_transform_first() {
    let c = Chain::load(
        Path::new("../../../examples/chains/filtered.toml"),
        &no_plugin_checks(),
    )
    .unwrap();
    assert_eq!(c.stages[0].world, World::Transform);
    assert_eq!(c.stages[0].plugin.spec, "kernel-filter");
    assert_eq!(
        c.stages[0].config.get("pattern").map(String::as_str),
        Some("gemm")
    );
    assert_eq!(
        c.stages[0].config.get("case-sensitive").map(String::as_str),
        Some("false")
    );
    assert_eq!(c.stages[0].on_failure, FailurePolicy::Abort);
    assert_eq!(c.stages[1].name, "kernel-stats");
}

#[test]
fn defaults() {
    let c = parse("version = 1\n[output]\ntrace = ['kernel']\n").unwrap();
    assert!(c.stages.is_empty());
    assert_eq!(c.output.directory.as_str(), "%hostname%/%pid%");
    // rocprofv3's default prefix (`%pid%`) is not applied: none is set.
    assert_eq!(c.output.file_prefix, None);
    assert_eq!(c.output.formats, [OutputFormat::Csv]);
    assert!(c.output.summary);
    assert_eq!(c.output.write, rocwasm_plan::WriteTiming::AtEnd);
    assert_eq!(
        c.settings.buffer,
        BufferSettings {
            size: 4 << 20,
            watermark: 3 << 20,
            policy: BufferPolicy::Lossless
        }
    );
    assert_eq!(c.settings.delivery_threads, 1);
}

#[test]
fn config_is_flattened_for_the_plugin() {
    let c = parse(
        r#"version = 1
[[stage]]
name = "s"
plugin = "plugins/fake.wasm"
domains = ["kernel"]
[stage.config]
threshold = 1.5
top = 10
names = ["a", 2, { x = true }]
nested = { deeper = { key = "v" }, flag = false }
"#,
    )
    .unwrap();
    let cfg = &c.stages[0].config;
    assert_eq!(cfg["threshold"], "1.5");
    assert_eq!(cfg["top"], "10");
    assert_eq!(cfg["names"], r#"["a",2,{"x":true}]"#);
    assert_eq!(cfg["nested.deeper.key"], "v");
    assert_eq!(cfg["nested.flag"], "false");
    assert_eq!(cfg.len(), 5);
}

#[test]
fn domains_are_case_insensitive_deduplicated_and_sorted() {
    let c = parse(
        "version = 1\n[[stage]]\nname = 's'\nplugin = 'plugins/fake.wasm'\ndomains = ['MEMORY_COPY', 'kernel', 'ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH', 'Hip']\n",
    )
    .unwrap();
    assert_eq!(
        c.stages[0].domains,
        [HipRuntimeApi, HipCompilerApi, MemoryCopy, KernelDispatch]
    );
}

#[test]
fn stock_names_resolve_on_the_search_path_and_digests_are_verified() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kernel_stats.wasm"), b"\0asm fake").unwrap();
    let digest = resolve::sha256_of(&dir.path().join("kernel_stats.wasm")).unwrap();
    let text = format!(
        "version = 1\n[[stage]]\nname = 'k'\nplugin = 'kernel-stats'\nsha256 = '{}'\ndomains = ['kernel']\n",
        digest.to_uppercase()
    );
    let options = LoadOptions {
        plugin_path: vec![dir.path().to_path_buf()],
        check_plugins: true,
        fetcher: None,
    };
    let c = Chain::parse(&text, Path::new("x/chain.toml"), &options).unwrap();
    assert_eq!(
        c.stages[0].plugin.path,
        dir.path().join("kernel_stats.wasm")
    );
    assert_eq!(c.stages[0].sha256.as_deref(), Some(digest.as_str()));

    // The same chain from flags resolves through resolve_plugins.
    let mut f = Chain::from_flags(&TraceFlags {
        kernel_trace: true,
        stats: true,
        ..Default::default()
    })
    .unwrap();
    f.resolve_plugins(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(
        f.stages[0].plugin.path,
        dir.path().join("kernel_stats.wasm")
    );
    let mut g = Chain::from_flags(&TraceFlags {
        hip_trace: true,
        stats: true,
        ..Default::default()
    })
    .unwrap();
    let e = g.resolve_plugins(&[dir.path().to_path_buf()]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("stage `api-stats`: stock plugin `api-stats` not found"),
        "{e}"
    );
}

#[test]
fn transform_without_domains_needs_a_consumer() {
    let base =
        "version = 1\n[[stage]]\nname = 't'\nplugin = 'plugins/fake.wasm'\nkind = 'transform'\n";
    let e = parse(base).unwrap_err();
    assert_eq!(e.location(), Some(Location { line: 5, column: 8 }));
    assert!(e.message().contains("has nothing to filter"), "{e}");
    let ok = format!(
        "{base}[[stage]]\nname = 'a'\nplugin = 'plugins/fake.wasm'\ndomains = ['kernel']\n"
    );
    assert!(parse(&ok).is_ok());
}

#[test]
fn restart_policy_and_units() {
    let c = parse(
        "version = 1\n[settings.buffer]\nsize = 65536\nwatermark = '50%'\npolicy = 'DISCARD'\n[[stage]]\nname = 's'\nplugin = 'plugins/fake.wasm'\ndomains = ['hsa']\non_failure = 'restart'\nmax_restarts = 0\nrestart_backoff = '2s'\nlimits = { memory = '1.5MiB' }\n",
    )
    .unwrap();
    assert_eq!(
        c.settings.buffer,
        BufferSettings {
            size: 65536,
            watermark: 32768,
            policy: BufferPolicy::Discard
        }
    );
    let s = &c.stages[0];
    assert_eq!(
        s.on_failure,
        FailurePolicy::Restart {
            max: 0,
            backoff: Duration::from_secs(2)
        }
    );
    assert_eq!(s.limits.memory_bytes, 3 << 19);
    assert_eq!(s.limits.deadline, Duration::from_secs(1));
    assert_eq!(s.domains.len(), 4);
}

#[test]
fn operations_are_kept_per_kind() {
    let c = parse(
        "version = 1\n[[stage]]\nname = 's'\nplugin = 'plugins/fake.wasm'\ndomains = ['hip_runtime_api', 'kernel']\noperations = { hip_runtime_api = ['hipMemcpy', 'HIPMEMCPY', 'hipLaunchKernel'] }\n",
    )
    .unwrap();
    let ops = &c.stages[0].operations[&HipRuntimeApi];
    let names: Vec<_> = ops.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        ["hipMemcpy", "hipLaunchKernel"],
        "canonical spelling, no duplicates"
    );
    assert_eq!(
        rocwasm_core::ops::operation_name(HipRuntimeApi, ops[0].id),
        Some("hipMemcpy")
    );
    assert!(!c.stages[0].operations.contains_key(&KernelDispatch));
}

#[test]
fn templates_expand_per_process() {
    let c = parse("version = 1\n[output]\ndirectory = 'out/%job%/r%rank%'\nfile_prefix = '%hostname%_%pid%'\ntrace = ['kernel']\n").unwrap();
    let p = ProcessInfo {
        hostname: "gpu01".into(),
        pid: 99,
        ppid: 1,
        vars: [("SLURM_JOB_ID", "123"), ("PMIX_RANK", "7")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    assert_eq!(c.output.directory.expand(&p), "out/123/r7");
    assert_eq!(
        c.output.file_prefix.as_ref().unwrap().expand(&p),
        "gpu01_99"
    );
}

#[test]
fn summary_lists_every_stage() {
    let c = Chain::load(
        Path::new("../../../examples/chains/default.toml"),
        &no_plugin_checks(),
    )
    .unwrap();
    let s = c.summary();
    assert_eq!(s.stages.len(), 4);
    assert_eq!(s.stages[2].cells()[1], "memcpy-bandwidth");
    assert_eq!(s.stages[1].domains, "hip_runtime_api, hip_compiler_api");
    assert_eq!(s.stages[1].limits, "64MiB, 500ms");
    assert_eq!(s.stages[2].on_failure, "restart (≤3, 100ms)");
    assert_eq!(s.stages[2].output, "run dir/bandwidth");
    let text = s.to_string();
    assert!(text.contains("formats: csv, rocpd, pftrace"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("1  kernel-stats")),
        "{text}"
    );
}

#[test]
fn rocprofv3_aggregate_sets_are_chain_file_domains() {
    for (alias, flags) in [
        (
            "runtime",
            TraceFlags {
                runtime_trace: true,
                ..Default::default()
            },
        ),
        (
            "sys",
            TraceFlags {
                sys_trace: true,
                ..Default::default()
            },
        ),
        (
            "scratch_memory",
            TraceFlags {
                scratch_memory_trace: true,
                ..Default::default()
            },
        ),
    ] {
        let file = parse(&format!("version = 1\n[output]\ntrace = [\"{alias}\"]\n")).unwrap();
        let from_flags = Chain::from_flags(&flags).unwrap();
        assert_eq!(file.output.trace, from_flags.output.trace, "{alias}");
    }
    let sys = parse("version = 1\n[output]\ntrace = [\"SYS\", \"hsa\"]\n").unwrap();
    assert!(
        sys.output.trace.contains(&HipCompilerApi) && sys.output.trace.contains(&ScratchMemory)
    );
}

#[test]
fn the_output_timing_reaches_the_run_plan_from_the_file_and_from_the_flag() {
    use rocwasm_config::{PlanOptions, TraceFlags};
    use rocwasm_plan::WriteTiming;
    let file = parse("version = 1\n[output]\ntrace = ['kernel']\nwrite = 'during-run'\n").unwrap();
    assert_eq!(file.output.write, WriteTiming::DuringRun);
    let plan = file.to_plan(&PlanOptions::default());
    assert_eq!(plan.output.write, WriteTiming::DuringRun);

    let default = Chain::from_flags(&TraceFlags {
        kernel_trace: true,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        default.to_plan(&PlanOptions::default()).output.write,
        WriteTiming::AtEnd
    );
    let flag = Chain::from_flags(&TraceFlags {
        kernel_trace: true,
        write_during_run: true,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        flag.to_plan(&PlanOptions::default()).output.write,
        WriteTiming::DuringRun
    );
}
