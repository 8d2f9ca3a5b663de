//! rocprofv3-style flags → the equivalent chain, so `rocwasm run` and
//! `rocwasm replay` work with flags alone, and flags can amend a chain file.
//!
//! | flag | effect |
//! |---|---|
//! | `--kernel-trace` | `KERNEL_DISPATCH` added to `[output] trace` |
//! | `--hip-trace` | `HIP_RUNTIME_API`, `HIP_COMPILER_API` added to `trace` |
//! | `--hsa-trace` | the four `HSA_*_API` kinds added to `trace` |
//! | `--marker-trace` | the `marker` alias added to `trace`: `MARKER_CORE_RANGE_API` (marks, push/pop and start/stop ranges, one record each, named by the message) and `MARKER_CONTROL_API`, as rocprofv3 records them |
//! | `--memory-copy-trace` | `MEMORY_COPY` added to `trace` |
//! | `--memory-allocation-trace` | `MEMORY_ALLOCATION` added to `trace` |
//! | `--scratch-memory-trace` | `SCRATCH_MEMORY` added to `trace` |
//! | `--hip-runtime-trace`, `--hip-compiler-trace` | `HIP_RUNTIME_API`, resp. `HIP_COMPILER_API` alone |
//! | `--hsa-core-trace`, `--hsa-amd-trace`, `--hsa-image-trace`, `--hsa-finalizer-trace` | `HSA_CORE_API`, `HSA_AMD_EXT_API`, `HSA_IMAGE_EXT_API`, resp. `HSA_FINALIZE_EXT_API` alone |
//! | `--rccl-trace`, `--rocdecode-trace`, `--rocjpeg-trace` | `RCCL_API`, `ROCDECODE_API`, resp. `ROCJPEG_API` (rocwasm's built-in interception records none of them: see docs/ROCPROFV3_OPTIONS.md) |
//! | `-r/--runtime-trace` | the `runtime` alias added to `trace` (rocprofv3's set: HIP runtime API, markers, kernels, copies, allocations, scratch memory, RCCL, rocDecode, rocJPEG) |
//! | `-s/--sys-trace` | the `sys` alias added to `trace` (`runtime` plus the HIP compiler API and HSA) |
//! | `--stats` | stock stages for the traced domains — `kernel-stats` (kernels), `api-stats` (HIP/HSA/marker), `memcpy-bandwidth` (copies) — each with `output = true`, and `summary = true`. With no trace flag and no `trace` in the chain, the stats cover HIP, markers, kernels and copies. |
//! | `-D/--summary-per-domain` | the same stock stages as `--stats` for the same domains, without the right to write files (`output = false`): each prints its tables per domain (kernels; HIP, HSA, marker API; copies) at the end; `summary = true` |
//! | `-d DIR` | `[output] directory` |
//! | `-o NAME` | `[output] file_prefix` |
//! | `--output-format a,b` | `[output] formats` |
//! | `--write-during-run` | `[output] write = "during-run"` (`rocwasm run` writes the formats as batches reach the record journal, instead of after the application ended) |
//! | `--kernel-include-regex RE`, `--kernel-exclude-regex RE`, `--kernel-iteration-range R`, `-T`, `-M`, `--kernel-rename` | `[kernels]` (see `kernels.rs`) |
//! | `-P/--collection-period P`, `--collection-period-unit U`, `--selected-regions` | `[collection]` (see `collection.rs`) |
//! | `-S/--summary`, `--summary-groups RE…`, `--summary-output-file F`, `-u/--summary-units U` | `[summary]` (see `summaries.rs`) |
//!
//! A stage whose name is already in the chain is not added twice.

use rocwasm_core::BufferTracingKind::{self, *};

use crate::domains;
use crate::model::*;
use crate::ConfigError;

/// The rocprofv3-style options shared by `run` and `replay`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFlags {
    /// `--hip-trace`: trace `HIP_RUNTIME_API` and `HIP_COMPILER_API`.
    pub hip_trace: bool,
    /// `--hsa-trace`: trace the four `HSA_*_API` kinds.
    pub hsa_trace: bool,
    /// `--kernel-trace`: trace `KERNEL_DISPATCH`.
    pub kernel_trace: bool,
    /// `--memory-copy-trace`: trace `MEMORY_COPY`.
    pub memory_copy_trace: bool,
    /// `--memory-allocation-trace`: trace `MEMORY_ALLOCATION`.
    pub memory_allocation_trace: bool,
    /// `--marker-trace`: trace the four `MARKER_*` kinds (roctx).
    pub marker_trace: bool,
    /// `--scratch-memory-trace`: trace `SCRATCH_MEMORY`.
    pub scratch_memory_trace: bool,
    /// `--hip-runtime-trace`: trace `HIP_RUNTIME_API` only.
    pub hip_runtime_trace: bool,
    /// `--hip-compiler-trace`: trace `HIP_COMPILER_API` only.
    pub hip_compiler_trace: bool,
    /// `--hsa-core-trace`: trace `HSA_CORE_API` only.
    pub hsa_core_trace: bool,
    /// `--hsa-amd-trace`: trace `HSA_AMD_EXT_API` only.
    pub hsa_amd_trace: bool,
    /// `--hsa-image-trace`: trace `HSA_IMAGE_EXT_API` only.
    pub hsa_image_trace: bool,
    /// `--hsa-finalizer-trace`: trace `HSA_FINALIZE_EXT_API` only.
    pub hsa_finalizer_trace: bool,
    /// `--rccl-trace`: trace `RCCL_API` (the built-in interception records
    /// no RCCL calls).
    pub rccl_trace: bool,
    /// `--rocdecode-trace`: trace `ROCDECODE_API` (not recorded by the
    /// built-in interception).
    pub rocdecode_trace: bool,
    /// `--rocjpeg-trace`: trace `ROCJPEG_API` (not recorded by the
    /// built-in interception).
    pub rocjpeg_trace: bool,
    /// `-r/--runtime-trace`: trace the kinds of the `runtime` alias.
    pub runtime_trace: bool,
    /// `-s/--sys-trace`: trace the kinds of the `sys` alias.
    pub sys_trace: bool,
    /// `--stats`: add the stock statistics stages for the traced kinds and
    /// turn the end-of-run summary on (see the module table).
    pub stats: bool,
    /// `-D/--summary-per-domain`: the statistics stages `--stats` would add,
    /// without files, for their per-domain summary tables.
    pub summary_per_domain: bool,
    /// `-d/--output-directory`, a template.
    pub output_directory: Option<String>,
    /// `-o/--output-file`, a template.
    pub output_file: Option<String>,
    /// `--output-format`.
    pub output_formats: Option<Vec<OutputFormat>>,
    /// `--write-during-run`: `rocwasm run` writes the formats as batches
    /// reach the record journal, not after the application ended.
    pub write_during_run: bool,
    /// `--api-args`: record each traced API call's arguments (rocpd's
    /// `rocpd_arg`).
    pub api_args: bool,
    /// `--parquet-layout`.
    pub parquet_layout: Option<ParquetLayout>,
    /// `--kernel-include-regex`: keep only dispatches of matching kernels.
    pub kernel_include_regex: Option<String>,
    /// `--kernel-exclude-regex`: drop dispatches of matching kernels.
    pub kernel_exclude_regex: Option<String>,
    /// `--kernel-iteration-range`, as written (e.g. `[2,5-7]`).
    pub kernel_iteration_range: Option<String>,
    /// `-T/--truncate-kernels`: kernel names without their argument list.
    pub truncate_kernels: bool,
    /// `-M/--mangled-kernels`: kernel names as the code object has them.
    pub mangled_kernels: bool,
    /// `--kernel-rename`: a dispatch takes its enclosing roctx range's name.
    pub kernel_rename: bool,
    /// `-P/--collection-period START:STOP:REPEAT[;…]`, as written.
    pub collection_period: Option<String>,
    /// `--collection-period-unit` (hour, min, sec, msec, usec, nsec).
    pub collection_period_unit: Option<String>,
    /// `--selected-regions`: record only between `roctxProfilerResume` and
    /// `roctxProfilerPause`.
    pub selected_regions: bool,
    /// `--pmc`: counters for every dispatch (`NAME` or `NAME:device=N`),
    /// checked by the launcher.
    pub pmc: Vec<String>,
    /// `--counter-defs`: the definitions file, absolute.
    pub counter_defs: Option<String>,
    /// `-S/--summary`: one summary of every traced domain at the end.
    pub summary: bool,
    /// `--summary-groups`: one summary per expression's domains.
    pub summary_groups: Vec<String>,
    /// `--summary-output-file`: stdout, stderr or a file name.
    pub summary_output_file: Option<String>,
    /// `-u/--summary-units`: sec, msec, usec, nsec.
    pub summary_units: Option<String>,
}

/// The stock stage computing statistics for a family of kinds.
struct StatsStage {
    name: &'static str,
    covers: fn(BufferTracingKind) -> bool,
}

const STATS_STAGES: &[StatsStage] = &[
    StatsStage {
        name: "kernel-stats",
        covers: |k| k == KernelDispatch,
    },
    StatsStage {
        name: "api-stats",
        covers: |k| domains::batch_table(k) == Some("api_calls"),
    },
    StatsStage {
        name: "memcpy-bandwidth",
        covers: |k| k == MemoryCopy,
    },
];

/// What `--stats` covers when nothing says which domains to trace (as
/// rocprofv3's runtime trace: HIP, markers, kernels, copies).
const DEFAULT_STATS_DOMAINS: &[&str] = &["hip", "marker", "kernel", "memory_copy"];

impl TraceFlags {
    /// The kinds the `--*-trace` flags name, in SDK order.
    pub fn traced_kinds(&self) -> Vec<BufferTracingKind> {
        let mut kinds = Vec::new();
        let mut add = |on: bool, alias: &str| {
            if on {
                kinds.extend(domains::resolve(alias).expect("alias exists"));
            }
        };
        add(self.hip_trace, "hip");
        add(self.hsa_trace, "hsa");
        add(self.kernel_trace, "kernel");
        add(self.memory_copy_trace, "memory_copy");
        add(self.memory_allocation_trace, "memory_allocation");
        add(self.marker_trace, "marker");
        add(self.scratch_memory_trace, "scratch_memory");
        add(self.runtime_trace, "runtime");
        add(self.sys_trace, "sys");
        for (on, kind) in [
            (self.hip_runtime_trace, HipRuntimeApi),
            (self.hip_compiler_trace, HipCompilerApi),
            (self.hsa_core_trace, HsaCoreApi),
            (self.hsa_amd_trace, HsaAmdExtApi),
            (self.hsa_image_trace, HsaImageExtApi),
            (self.hsa_finalizer_trace, HsaFinalizeExtApi),
            (self.rccl_trace, RcclApi),
            (self.rocdecode_trace, RocdecodeApi),
            (self.rocjpeg_trace, RocjpegApi),
        ] {
            if on {
                kinds.push(kind);
            }
        }
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// True when no flag is set (the chain file alone decides).
    pub fn is_empty(&self) -> bool {
        *self == TraceFlags::default()
    }
}

impl Chain {
    /// The chain the flags alone describe. Fails when they describe nothing
    /// to profile. Stock stages are not yet resolved: call
    /// [`Chain::resolve_plugins`].
    pub fn from_flags(flags: &TraceFlags) -> Result<Chain, ConfigError> {
        let mut chain = Chain::empty();
        chain.apply_flags(flags)?;
        if chain.stages.is_empty()
            && chain.output.trace.is_empty()
            && chain.collection.counters.is_empty()
        {
            return Err(ConfigError::Invalid {
                message: "nothing to profile: give a chain with -c, or at least one of --pmc, --kernel-trace, --hip-trace, --hsa-trace, --memory-copy-trace, --memory-allocation-trace, --marker-trace, --scratch-memory-trace, -r/--runtime-trace, -s/--sys-trace, a granular --hip-runtime-trace, --hsa-core-trace …, --stats, -D/--summary-per-domain (or name native rocprofiler-sdk tools in ROCP_TOOL_LIBRARIES, or link one into the program)".into(),
            });
        }
        Ok(chain)
    }

    /// A chain with default settings and outputs and no stages.
    pub fn empty() -> Chain {
        Chain {
            file: None,
            settings: Settings {
                backend: rocwasm_plan::Backend::Builtin,
                buffer: BufferSettings {
                    size: BufferSettings::DEFAULT_SIZE,
                    watermark: percent_of(
                        BufferSettings::DEFAULT_SIZE,
                        BufferSettings::DEFAULT_WATERMARK_PERCENT,
                    ),
                    policy: BufferPolicy::Lossless,
                },
                delivery_threads: 1,
                plugin_cache: None,
                plugin_path: Vec::new(),
                limits: Limits::default(),
            },
            output: Output::default(),
            kernels: KernelPlan::default(),
            collection: Default::default(),
            summary: Default::default(),
            stages: Vec::new(),
        }
    }

    /// Amends this chain with command-line flags (see the module table).
    pub fn apply_flags(&mut self, flags: &TraceFlags) -> Result<(), ConfigError> {
        let traced = flags.traced_kinds();
        self.output.trace.extend(&traced);
        self.output.trace.sort();
        self.output.trace.dedup();

        if let Some(d) = &flags.output_directory {
            self.output.directory = flag_template("--output-directory", d)?;
        }
        if let Some(o) = &flags.output_file {
            if o.contains('/') {
                return Err(ConfigError::Invalid {
                    message: format!("bad --output-file `{o}`: a file name prefix cannot contain `/` (use --output-directory)"),
                });
            }
            self.output.file_prefix = Some(flag_template("--output-file", o)?);
        }
        if flags.api_args {
            self.output.api_args = true;
        }
        if let Some(layout) = flags.parquet_layout {
            self.output.parquet_layout = layout;
        }
        if flags.write_during_run {
            self.output.write = WriteTiming::DuringRun;
        }
        if let Some(f) = &flags.output_formats {
            self.output.formats = Vec::new();
            for format in f {
                if !self.output.formats.contains(format) {
                    self.output.formats.push(*format);
                }
            }
        }
        self.apply_kernel_flags(flags)?;
        self.apply_collection_flags(flags)?;
        self.apply_summary_flags(flags)?;
        if flags.stats {
            self.add_stats_stages(OutputGrant::RunDirectory);
        }
        if flags.summary_per_domain {
            self.add_stats_stages(OutputGrant::None);
        }
        if self.output.api_args && !self.output.formats.contains(&OutputFormat::Rocpd) {
            return Err(ConfigError::Invalid {
                message:
                    "--api-args (`[output] api_args`) records the arguments for rocpd's rocpd_arg, \
                          and no rocpd output is written: add rocpd to --output-format (or to \
                          `formats` in [output])"
                        .into(),
            });
        }
        if self.output.parquet_layout == ParquetLayout::Hive
            && !self.output.formats.contains(&OutputFormat::Parquet)
        {
            return Err(ConfigError::Invalid {
                message: "--parquet-layout hive (`[output] parquet_layout`) lays out Parquet \
                          files, and no Parquet output is written: add parquet to \
                          --output-format (or to `formats` in [output])"
                    .into(),
            });
        }
        Ok(())
    }
}

impl Chain {
    /// Turns the summary on and adds the stock statistics stages for the
    /// traced kinds (without `trace`, the default set), each with `output`,
    /// unless a stage of that name is already in the chain.
    fn add_stats_stages(&mut self, output: OutputGrant) {
        self.output.summary = true;
        let covered: Vec<BufferTracingKind> = if !self.output.trace.is_empty() {
            self.output.trace.clone()
        } else {
            let mut k: Vec<_> = DEFAULT_STATS_DOMAINS
                .iter()
                .flat_map(|a| domains::resolve(a).expect("alias exists"))
                .collect();
            k.sort();
            k
        };
        for s in STATS_STAGES {
            let kinds: Vec<_> = covered.iter().copied().filter(|k| (s.covers)(*k)).collect();
            if kinds.is_empty() || self.stages.iter().any(|st| st.name == s.name) {
                continue;
            }
            let mut stage = stock_stage(s.name, kinds, &self.settings);
            stage.output = output.clone();
            self.stages.push(stage);
        }
        // With counters (`--pmc`), their statistics per kernel: the
        // counter samples travel with the kernel dispatches.
        if !self.collection.counters.is_empty()
            && !self.stages.iter().any(|st| st.name == COUNTER_STATS)
        {
            let mut stage = stock_stage(COUNTER_STATS, vec![KernelDispatch], &self.settings);
            stage.output = output;
            self.stages.push(stage);
        }
    }
}

/// The stock stage of `--stats` with `--pmc`: per-kernel counter statistics.
const COUNTER_STATS: &str = "counter-stats";

fn flag_template(flag: &str, value: &str) -> Result<PathTemplate, ConfigError> {
    PathTemplate::parse(value).map_err(|e| ConfigError::Invalid {
        message: format!("bad {flag} `{value}`: {}", e.message),
    })
}

fn stock_stage(name: &str, domains: Vec<BufferTracingKind>, settings: &Settings) -> Stage {
    Stage {
        name: name.to_string(),
        plugin: PluginRef {
            spec: name.to_string(),
            stock: true,
            shipped: false,
            path: name.into(),
        },
        sha256: None,
        world: World::Analysis,
        domains,
        operations: Default::default(),
        config: Default::default(),
        limits: settings.limits,
        on_failure: FailurePolicy::default(),
        output: OutputGrant::RunDirectory,
        services: Services::default(),
        placement: Placement::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(c: &Chain) -> Vec<&str> {
        c.stages.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn stats_with_counters_adds_counter_stats() {
        let flags = TraceFlags {
            stats: true,
            pmc: vec!["SQ_WAVES".into()],
            ..Default::default()
        };
        let c = Chain::from_flags(&flags).unwrap();
        assert_eq!(
            names(&c),
            [
                "kernel-stats",
                "api-stats",
                "memcpy-bandwidth",
                "counter-stats"
            ]
        );
        let s = c.stages.last().unwrap();
        assert_eq!(s.domains, [KernelDispatch]);
        assert_eq!(s.output, OutputGrant::RunDirectory);
        // Without --stats, --pmc adds no stage.
        let c = Chain::from_flags(&TraceFlags {
            pmc: vec!["SQ_WAVES".into()],
            ..Default::default()
        })
        .unwrap();
        assert!(c.stages.is_empty());
    }

    #[test]
    fn kernel_trace_with_stats() {
        let flags = TraceFlags {
            kernel_trace: true,
            stats: true,
            ..Default::default()
        };
        let c = Chain::from_flags(&flags).unwrap();
        assert_eq!(c.output.trace, vec![KernelDispatch]);
        assert_eq!(names(&c), ["kernel-stats"]);
        let s = &c.stages[0];
        assert!(s.plugin.stock);
        assert_eq!(s.domains, vec![KernelDispatch]);
        assert_eq!(s.output, OutputGrant::RunDirectory);
        assert!(c.output.summary);
        assert_eq!(c.output.formats, vec![OutputFormat::Csv]);
    }

    #[test]
    fn trace_without_stats_adds_no_stage() {
        let flags = TraceFlags {
            hip_trace: true,
            memory_copy_trace: true,
            memory_allocation_trace: true,
            ..Default::default()
        };
        let c = Chain::from_flags(&flags).unwrap();
        assert!(c.stages.is_empty());
        assert_eq!(
            c.output.trace,
            vec![HipRuntimeApi, HipCompilerApi, MemoryCopy, MemoryAllocation]
        );
    }

    #[test]
    fn api_stats_cover_every_traced_api() {
        let flags = TraceFlags {
            hip_trace: true,
            hsa_trace: true,
            marker_trace: true,
            stats: true,
            ..Default::default()
        };
        let c = Chain::from_flags(&flags).unwrap();
        assert_eq!(names(&c), ["api-stats"]);
        assert_eq!(c.stages[0].domains.len(), 2 + 4 + 2);
        assert!(c.stages[0].domains.contains(&HsaAmdExtApi));
        assert!(c.stages[0].domains.contains(&MarkerCoreRangeApi));
    }

    #[test]
    fn stats_alone_covers_the_runtime_trace_set() {
        let c = Chain::from_flags(&TraceFlags {
            stats: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(names(&c), ["kernel-stats", "api-stats", "memcpy-bandwidth"]);
        assert!(
            c.output.trace.is_empty(),
            "stats alone writes no trace files"
        );
        assert!(
            !c.stages[1].domains.contains(&HsaCoreApi),
            "HSA is not in the default set"
        );
    }

    #[test]
    fn granular_trace_flags_name_one_kind_each() {
        let one = |f: fn(&mut TraceFlags)| {
            let mut flags = TraceFlags::default();
            f(&mut flags);
            Chain::from_flags(&flags).unwrap().output.trace
        };
        assert_eq!(one(|f| f.hip_runtime_trace = true), [HipRuntimeApi]);
        assert_eq!(one(|f| f.hip_compiler_trace = true), [HipCompilerApi]);
        assert_eq!(one(|f| f.hsa_core_trace = true), [HsaCoreApi]);
        assert_eq!(one(|f| f.hsa_amd_trace = true), [HsaAmdExtApi]);
        assert_eq!(one(|f| f.hsa_image_trace = true), [HsaImageExtApi]);
        assert_eq!(one(|f| f.hsa_finalizer_trace = true), [HsaFinalizeExtApi]);
        assert_eq!(one(|f| f.rccl_trace = true), [RcclApi]);
        assert_eq!(one(|f| f.rocdecode_trace = true), [RocdecodeApi]);
        assert_eq!(one(|f| f.rocjpeg_trace = true), [RocjpegApi]);
        // The pair is --hip-trace, the four are --hsa-trace.
        let hip = one(|f| {
            f.hip_runtime_trace = true;
            f.hip_compiler_trace = true
        });
        assert_eq!(hip, one(|f| f.hip_trace = true));
        let hsa = one(|f| {
            f.hsa_core_trace = true;
            f.hsa_amd_trace = true;
            f.hsa_image_trace = true;
            f.hsa_finalizer_trace = true
        });
        assert_eq!(hsa, one(|f| f.hsa_trace = true));
    }

    #[test]
    fn runtime_sys_and_scratch_trace() {
        let runtime = Chain::from_flags(&TraceFlags {
            runtime_trace: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(runtime.output.trace, domains::resolve("runtime").unwrap());
        assert!(runtime.output.trace.contains(&HipRuntimeApi));
        assert!(!runtime.output.trace.contains(&HipCompilerApi));
        assert!(!runtime.output.trace.contains(&HsaCoreApi));
        assert!(runtime.output.trace.contains(&ScratchMemory));
        assert!(runtime.stages.is_empty());

        let sys = Chain::from_flags(&TraceFlags {
            sys_trace: true,
            runtime_trace: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(sys.output.trace, domains::resolve("sys").unwrap());
        assert!(sys.output.trace.contains(&HipCompilerApi));
        assert!(sys.output.trace.contains(&HsaFinalizeExtApi));

        let scratch = Chain::from_flags(&TraceFlags {
            scratch_memory_trace: true,
            kernel_trace: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(scratch.output.trace, vec![KernelDispatch, ScratchMemory]);

        // With --stats, -s gives the stats stages for everything it traces.
        let stats = Chain::from_flags(&TraceFlags {
            sys_trace: true,
            stats: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            names(&stats),
            ["kernel-stats", "api-stats", "memcpy-bandwidth"]
        );
        assert!(stats.stages[1].domains.contains(&HsaCoreApi));
        assert!(stats.stages[1].domains.contains(&RcclApi));
    }

    #[test]
    fn summary_per_domain_adds_the_stats_stages_without_files() {
        let c = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            hip_trace: true,
            summary_per_domain: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(names(&c), ["kernel-stats", "api-stats"]);
        assert!(c.stages.iter().all(|s| s.output == OutputGrant::None));
        assert!(c.output.summary);
        assert_eq!(c.stages[1].domains, vec![HipRuntimeApi, HipCompilerApi]);

        // Alone: the default set, as --stats alone.
        let alone = Chain::from_flags(&TraceFlags {
            summary_per_domain: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            names(&alone),
            ["kernel-stats", "api-stats", "memcpy-bandwidth"]
        );

        // With --stats the stages are --stats' (they write their files).
        let both = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            stats: true,
            summary_per_domain: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(names(&both), ["kernel-stats"]);
        assert_eq!(both.stages[0].output, OutputGrant::RunDirectory);

        // A chain whose `summary = false` prints with -D.
        let mut quiet = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            ..Default::default()
        })
        .unwrap();
        quiet.output.summary = false;
        quiet
            .apply_flags(&TraceFlags {
                summary_per_domain: true,
                ..Default::default()
            })
            .unwrap();
        assert!(quiet.output.summary);
        assert_eq!(names(&quiet), ["kernel-stats"]);
    }

    #[test]
    fn output_flags() {
        let flags = TraceFlags {
            kernel_trace: true,
            output_directory: Some("out/%rank%".into()),
            output_file: Some("run".into()),
            output_formats: Some(vec![
                OutputFormat::Rocpd,
                OutputFormat::Pftrace,
                OutputFormat::Rocpd,
            ]),
            ..Default::default()
        };
        let c = Chain::from_flags(&flags).unwrap();
        assert_eq!(c.output.directory.as_str(), "out/%rank%");
        assert_eq!(
            c.output.file_prefix.as_ref().map(|p| p.as_str()),
            Some("run")
        );
        assert_eq!(
            c.output.formats,
            vec![OutputFormat::Rocpd, OutputFormat::Pftrace]
        );
        assert!(!c.output.api_args, "arguments are asked for");
    }

    #[test]
    fn api_args_need_a_rocpd_output() {
        let flags = |formats: Vec<OutputFormat>| TraceFlags {
            hip_trace: true,
            api_args: true,
            output_formats: Some(formats),
            ..Default::default()
        };
        let c = Chain::from_flags(&flags(vec![OutputFormat::Rocpd])).unwrap();
        assert!(c.output.api_args);
        let err = Chain::from_flags(&flags(vec![OutputFormat::Csv]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--api-args") && err.contains("rocpd"), "{err}");
    }

    #[test]
    fn bad_flags_are_errors() {
        let e = Chain::from_flags(&TraceFlags::default()).unwrap_err();
        assert!(e.to_string().starts_with("nothing to profile"), "{e}");
        let flags = TraceFlags {
            kernel_trace: true,
            output_directory: Some("%nope%".into()),
            ..Default::default()
        };
        let e = Chain::from_flags(&flags).unwrap_err();
        assert!(e.to_string().contains("unknown key `%nope%`"), "{e}");
        let flags = TraceFlags {
            kernel_trace: true,
            output_file: Some("a/b".into()),
            ..Default::default()
        };
        assert!(Chain::from_flags(&flags).is_err());
    }

    #[test]
    fn flags_amend_a_chain_without_duplicating_stages() {
        let mut c = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            stats: true,
            ..Default::default()
        })
        .unwrap();
        c.apply_flags(&TraceFlags {
            kernel_trace: true,
            memory_copy_trace: true,
            stats: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(names(&c), ["kernel-stats", "memcpy-bandwidth"]);
        assert_eq!(c.output.trace, vec![MemoryCopy, KernelDispatch]);
    }
}
