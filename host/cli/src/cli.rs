//! Every argument of the `rocwasm` command, in one place (clap derive).
//!
//! Subcommands take their arguments as plain structs defined here; the
//! modules under `commands/` do the work. The rocprofv3-style options of
//! `run` and `replay` are [`TraceArgs`] and [`OutputArgs`], and turn into a
//! [`rocwasm_config::TraceFlags`] in one function.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use rocwasm_config::{OutputFormat, TraceFlags};

/// Profile AMD ROCm applications with sandboxed WebAssembly analyses.
#[derive(Debug, Parser)]
#[command(name = "rocwasm", version, propagate_version = true)]
#[command(after_help = "\
EXAMPLES:
    rocwasm demo                                   # a first run, on the simulated GPU runtime
    rocwasm run --kernel-trace --stats -- ./app    # rocprofv3-style
    rocwasm run -c chain.toml -- ./app --size 4096 # a chain of plugins
    rocwasm check chain.toml                       # validate a chain file
    rocwasm replay results/ -c chain.toml          # analyse a recorded rocprofv3 trace
    rocwasm merge a/results.db b/results.db -o all.db  # one rocpd database of several processes

Exit status: 0 success, 1 failure at run time, 2 bad usage or configuration.
Logging: -v (info), -vv (debug), -vvv (trace), or RUST_LOG=<filter>.")]
pub struct Cli {
    /// More log output on stderr (repeat for more); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an application with the profiler injected.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Analyse a recorded rocprofv3 trace (CSV, JSON or rocpd) with a chain.
    #[command(after_help = REPLAY_EXAMPLES)]
    Replay(ReplayArgs),
    /// Build what is needed and profile a sample application on the simulated GPU.
    #[command(after_help = DEMO_EXAMPLES)]
    Demo(DemoArgs),
    /// Validate a chain file and its plugin components, and show what it would run.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// List tracing kinds and their operations.
    #[command(after_help = KINDS_EXAMPLES)]
    Kinds(KindsArgs),
    /// Write the output files from a record journal directory that a run
    /// left behind (`rocwasm run` keeps `.rocwasm-journal-<pid>` when it
    /// could not write every process's outputs, and says where).
    WriteJournal {
        /// The journal directory (it holds the run's `plan.json`).
        dir: std::path::PathBuf,
    },
    /// Combine the rocpd databases of several processes or ranks into one.
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
    /// Work with plugin components.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// rocprofiler-sdk for native tools: headers, library, CMake and pkg-config files.
    #[command(subcommand)]
    Sdk(SdkCommand),
}

/// `rocwasm sdk …`: building native rocprofiler-sdk tools against rocwasm.
#[derive(Debug, Subcommand)]
pub enum SdkCommand {
    /// Print the prefix of rocwasm's rocprofiler-sdk (include/, lib/, CMake
    /// and pkg-config files), writing it first if needed. Use it as
    /// `CMAKE_PREFIX_PATH` or `PKG_CONFIG_PATH=$(rocwasm sdk prefix)/lib/pkgconfig`.
    Prefix {
        /// Write the prefix here instead of the user's cache directory.
        #[arg(long, value_name = "DIR")]
        into: Option<std::path::PathBuf>,
    },
}

/// rocprofv3-style tracing options (`run` only: replay reads what was recorded).
#[derive(Debug, Args, Clone, Default)]
pub struct TraceArgs {
    /// Trace HIP runtime and compiler API calls.
    #[arg(long)]
    pub hip_trace: bool,
    /// Trace HSA API calls (core, AMD extension, image, finalizer).
    #[arg(long)]
    pub hsa_trace: bool,
    /// Trace kernel dispatches.
    #[arg(long)]
    pub kernel_trace: bool,
    /// Trace asynchronous memory copies.
    #[arg(long)]
    pub memory_copy_trace: bool,
    /// Trace memory pool allocations and frees (the agent, address, size).
    #[arg(long)]
    pub memory_allocation_trace: bool,
    /// Trace roctx markers and ranges.
    #[arg(long)]
    pub marker_trace: bool,
    /// Trace scratch memory allocations, frees and reclaims.
    #[arg(long)]
    pub scratch_memory_trace: bool,
    /// As rocprofv3: HIP runtime API, markers, kernels, memory copies,
    /// allocations and scratch memory, RCCL, rocDecode and rocJPEG (not the
    /// HIP compiler API, not HSA).
    #[arg(short = 'r', long)]
    pub runtime_trace: bool,
    /// As rocprofv3: everything --runtime-trace traces, plus the HIP
    /// compiler API and the HSA API.
    #[arg(short = 's', long)]
    pub sys_trace: bool,
    /// As rocprofv3: record only between roctxProfilerResume(0) and
    /// roctxProfilerPause(0), starting paused (the pause and resume calls
    /// themselves are always recorded). Events outside are counted in the
    /// summary. Not with -P/--collection-period (chain file:
    /// `[collection] selected_regions`).
    #[arg(long)]
    pub selected_regions: bool,
}

/// Output options shared by `run` and `replay`.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Add statistics stages (kernel-stats, api-stats, memcpy-bandwidth) and print their tables.
    #[arg(long)]
    pub stats: bool,
    /// As rocprofv3: print a summary per tracing domain at the end (the
    /// statistics stages of --stats, without their files).
    #[arg(short = 'D', long)]
    pub summary_per_domain: bool,
    /// As rocprofv3: print one summary of every traced domain at the end
    /// (per kernel, API function and copy direction: calls, total, average,
    /// share, min, max, stddev). Chain file: `[summary] all`.
    #[arg(short = 'S', long)]
    pub summary: bool,
    /// As rocprofv3: one summary per regular expression, of the traced
    /// domains it matches whole (KERNEL_DISPATCH, HIP_API, HSA_API,
    /// MARKER_API, MEMORY_COPY), e.g. 'KERNEL_DISPATCH|MEMORY_COPY' or
    /// '.*_API'. Chain file: `[summary] groups`.
    #[arg(long, value_name = "REGULAR_EXPRESSION", num_args = 1..)]
    pub summary_groups: Vec<String>,
    /// Where -S and --summary-groups go: stdout, stderr (default) or a file
    /// NAME in the output directory (NAME.txt, after -o's prefix).
    #[arg(long, value_name = "NAME")]
    pub summary_output_file: Option<String>,
    /// Time unit of -S and --summary-groups: sec, msec, usec or nsec
    /// (default).
    #[arg(short = 'u', long, value_name = "UNIT")]
    pub summary_units: Option<String>,
    /// Output directory; may use %hostname%, %pid%, %rank%, %job%, %env{NAME}% …
    #[arg(short = 'd', long, value_name = "DIR")]
    pub output_directory: Option<String>,
    /// Output file name prefix (same keys as -d).
    #[arg(short = 'o', long, value_name = "NAME")]
    pub output_file: Option<String>,
    /// Host output formats, comma-separated: csv, json, rocpd, pftrace, parquet.
    #[arg(long, value_name = "FORMATS", value_delimiter = ',', value_parser = parse_format)]
    pub output_format: Option<Vec<OutputFormat>>,
    /// Write the output files as records reach the record journal, instead
    /// of after the application ended: the files grow during the run (the
    /// application never waits for them either way). A replay always writes
    /// as it reads. Chain file: `[output] write = "during-run"`.
    #[arg(long)]
    pub write_during_run: bool,
}

/// rocprofv3's collection period, shared by `run` and `replay` (chain
/// file: `[collection]`). Dropped records are counted in the summary.
#[derive(Debug, Args, Clone, Default)]
pub struct CollectionArgs {
    /// Collect only inside these windows, measured from the application's
    /// start (a replay: the recording's): wait START, collect for STOP,
    /// REPEAT times (0: forever); several periods separated by `;` follow
    /// one another. A record is kept when it lies inside a window.
    #[arg(short = 'P', long, value_name = "START:STOP:REPEAT")]
    pub collection_period: Option<String>,
    /// The unit of --collection-period: hour, min, sec (default), msec,
    /// usec or nsec.
    #[arg(long, value_name = "UNIT")]
    pub collection_period_unit: Option<String>,
}

/// rocprofv3's kernel options, shared by `run` and `replay` (chain file:
/// `[kernels]`). Dropped dispatches are counted in the summary.
#[derive(Debug, Args, Clone, Default)]
pub struct KernelArgs {
    /// Keep only dispatches of kernels whose name matches this regular
    /// expression (searched anywhere in the name, as rocprofv3).
    #[arg(long, value_name = "REGEX")]
    pub kernel_include_regex: Option<String>,
    /// Drop dispatches of kernels whose name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub kernel_exclude_regex: Option<String>,
    /// Keep only these iterations of each kernel (counted per kernel name
    /// from 1, among the dispatches the name filters keep), e.g. `[1-3]`,
    /// `[2,5-7]`.
    #[arg(long, value_name = "RANGE")]
    pub kernel_iteration_range: Option<String>,
    /// Truncate kernel names before their argument list (`scale(float*,
    /// int)` → `scale`).
    #[arg(short = 'T', long)]
    pub truncate_kernels: bool,
    /// Keep kernel names mangled, as the code object has them.
    #[arg(short = 'M', long)]
    pub mangled_kernels: bool,
    /// Name each dispatch after the innermost roctx range (roctxRangePush)
    /// enclosing its launch on the launching thread (live runs only: a
    /// recording holds no range names).
    #[arg(long)]
    pub kernel_rename: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The chain file; flags amend it. Without it, the flags alone describe the run.
    #[arg(short = 'c', long = "config", value_name = "CHAIN")]
    pub chain: Option<PathBuf>,
    #[command(flatten)]
    pub trace: TraceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub kernels: KernelArgs,
    #[command(flatten)]
    pub collection: CollectionArgs,
    /// Run on the simulated AMD runtime (no GPU needed).
    #[arg(long)]
    pub sim: bool,
    /// Who measures the run: `builtin` (rocwasm's interception),
    /// `rocprofiler-sdk` (a rocprofiler-sdk library, AMD's where installed,
    /// else rocwasm's, with rocwasm's chain and outputs as its tool) or
    /// `auto` (the SDK when AMD's is installed and the application's HIP
    /// registers with it). Overrides `[settings] backend`.
    #[arg(long, value_name = "BACKEND", value_parser = parse_backend)]
    pub backend: Option<rocwasm_plan::Backend>,
    /// Under an MPI launcher, profile only these ranks (e.g. `0,2`); the
    /// others run the application untouched. The rank is read as `%rank%`
    /// is: Open MPI, MPICH/PMI, PMIx, Slurm or MVAPICH variables.
    #[arg(long, value_name = "RANKS", value_delimiter = ',')]
    pub profile_mpi_ranks: Option<Vec<u32>>,
    /// The application and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "APP")]
    pub app: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Recorded runs: a rocprofv3 output (a CSV file, a directory of them, a
    /// JSON file or a rocpd database), several of them, or directory trees
    /// of them (an MPI job's per-rank outputs). Several processes are read
    /// in parallel and go through one chain together.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// The chain file to drive; flags amend it.
    #[arg(short = 'c', long = "config", value_name = "CHAIN")]
    pub chain: Option<PathBuf>,
    /// Refuse the recording (status 2) at the first record that cannot be
    /// mapped (unknown domain, unreadable field, unknown column) or at a
    /// file cut short, instead of replaying the rest and reporting what was
    /// skipped.
    #[arg(long)]
    pub strict: bool,
    /// With --stats: the statistics per process too (its rank when the
    /// recording names one, else its path), one table per domain with a
    /// Rank column, and `<domain>_stats_by_rank.csv` files.
    #[arg(long)]
    pub summary_by_rank: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub kernels: KernelArgs,
    #[command(flatten)]
    pub collection: CollectionArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Output directory of the demo run.
    #[arg(short = 'd', long, value_name = "DIR")]
    pub output_directory: Option<String>,
    /// Host output formats, comma-separated: csv, json, rocpd, pftrace, parquet (default: csv,rocpd,perfetto).
    #[arg(long, value_name = "FORMATS", value_delimiter = ',', value_parser = parse_format)]
    pub output_format: Option<Vec<OutputFormat>>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The chain file to validate.
    #[arg(value_name = "CHAIN")]
    pub chain: PathBuf,
    /// Do not look for plugin files, resolve stock names, verify digests or
    /// check that each plugin is a component of its stage's world.
    #[arg(long)]
    pub no_plugins: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The rocpd databases (`results.db` of each process or rank).
    #[arg(value_name = "DB", required = true)]
    pub inputs: Vec<PathBuf>,
    /// The merged database to write (must not exist).
    #[arg(short = 'o', long = "output", value_name = "MERGED.db")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct KindsArgs {
    /// Only buffer-tracing kinds.
    #[arg(long, conflicts_with = "callback")]
    pub buffer: bool,
    /// Only callback-tracing kinds.
    #[arg(long)]
    pub callback: bool,
    /// A kind (or alias such as `hip`): list its operations.
    #[arg(value_name = "KIND")]
    pub kind: Option<String>,
}

const VET_EXAMPLES: &str = "Examples:
  rocwasm plugin vet --pub site.key.pub --trace examples/traces/sample my-plugin.wasm
  ROCWASM_TEST_POLICY=policy.toml rocwasm plugin vet target/plugins/kernel-stats.wasm

Exit status: 0 when the plugin loads, verifies (with --pub) and the site
policy admits it; 1 when it does not load, verify or finish the trace; 2
when the site policy refuses it.";

const PUSH_EXAMPLES: &str = "Examples:
  rocwasm plugin push target/plugins/kernel-stats.wasm oci://registry.site:5000/rocwasm/kernel-stats:1.0
  rocwasm plugin push my-plugin.wasm dir:///shared/rocwasm/plugins/my-plugin:2

A chain then names it:  plugin = \"oci://registry.site:5000/rocwasm/kernel-stats:1.0\"
(add `sha256 = \"<component digest>\"` to pin what you vetted). Loopback
registries are spoken to over HTTP, others over HTTPS (--plain-http to
override); credentials come from ROCWASM_REGISTRY_USERNAME/_PASSWORD and are sent
only to the registry ROCWASM_REGISTRY_HOST names (host[:port]).";

const PULL_EXAMPLES: &str = "Examples:
  rocwasm plugin pull oci://registry.site:5000/rocwasm/kernel-stats:1.0
  rocwasm plugin pull --sha256 9f2c... --out kernel-stats.wasm dir:///shared/rocwasm/plugins/kernel-stats:1.0

The component goes into this node's cache (~/.cache/rocwasm/pulled, by
digest), where runs of chains naming the same reference find it.";

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Ship a component to a registry (oci://) or directory store (dir://)
    /// as an OCI artifact; prints its component and manifest digests.
    #[command(after_help = PUSH_EXAMPLES)]
    Push {
        /// Speak plain HTTP to a registry that is not on loopback.
        #[arg(long)]
        plain_http: bool,
        /// The component (.wasm), signed or not.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Where: oci://HOST[:PORT]/REPO:TAG or dir:///PATH:TAG.
        #[arg(value_name = "REFERENCE")]
        reference: String,
    },
    /// Fetch a shipped component into this node's cache (checked by
    /// digest); prints its path and digests.
    #[command(after_help = PULL_EXAMPLES)]
    Pull {
        /// Speak plain HTTP to a registry that is not on loopback.
        #[arg(long)]
        plain_http: bool,
        /// Refuse anything but this component digest (hex, as a chain's `sha256`).
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
        /// Also copy it to this file.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// oci://HOST[:PORT]/REPO[:TAG|@sha256:…] or dir:///PATH[:TAG].
        #[arg(value_name = "REFERENCE")]
        reference: String,
    },
    /// Show a component's world, imports, exports, size and digest.
    #[command(after_help = INSPECT_EXAMPLES)]
    Inspect {
        /// The component (.wasm).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Make a signing key pair: KEY (secret, mode 0600) and KEY.pub.
    Keygen {
        /// Where to write the secret key; the public key goes to KEY.pub.
        #[arg(long = "out", value_name = "KEY")]
        out: PathBuf,
    },
    /// Sign a component in place: the signature is embedded in it (a
    /// `rocwasm-signature` custom section over everything else).
    Sign {
        /// The secret key (from `rocwasm plugin keygen`).
        #[arg(long = "key", value_name = "KEY")]
        key: PathBuf,
        /// The component (.wasm); rewritten with the signature.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Everything an admin needs to admit a plugin: digest, signers, world,
    /// imports, size, the site policy's verdict, and (with --trace) its
    /// Wasm instructions per record and peak memory on a recorded trace.
    #[command(after_help = VET_EXAMPLES)]
    Vet {
        /// Public keys to check its signature against (repeatable).
        #[arg(long = "pub", value_name = "KEY.pub")]
        public: Vec<PathBuf>,
        /// A recorded trace (rocprofv3 CSV directory, JSON or rocpd) to run it on.
        #[arg(long, value_name = "TRACE")]
        trace: Option<PathBuf>,
        /// Plugin configuration for the run, `key=value` (repeatable).
        #[arg(long = "config", value_name = "KEY=VALUE")]
        config: Vec<String>,
        /// The component (.wasm).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Check a component's signature against a public key (status 1 when
    /// it does not verify).
    Verify {
        /// The trusted public key (KEY.pub); repeat for several.
        #[arg(long = "pub", value_name = "KEY.pub", required = true)]
        public: Vec<PathBuf>,
        /// The component (.wasm).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Write the WIT package (rocwasm:plugin@0.2.0) plugins are built
    /// against, for wit-bindgen, componentize-py or jco.
    #[command(after_help = KIT_EXAMPLES)]
    Wit {
        /// The directory to write the .wit files into.
        #[arg(long = "out", value_name = "DIR")]
        out: PathBuf,
    },
    /// Start a plugin project in ./NAME: the WIT package, a sample
    /// analysis, a README (build, test, ship).
    #[command(after_help = KIT_EXAMPLES)]
    New {
        /// The plugin's name and directory (lower-case, digits, `-`).
        #[arg(value_name = "NAME")]
        name: PathBuf,
        /// rust, c, python or js.
        #[arg(long, value_name = "LANG")]
        lang: String,
        /// analysis (reads batches) or transform (rewrites them; Rust only).
        #[arg(long, value_name = "WORLD", default_value = "analysis")]
        world: String,
    },
    /// Build a plugin project (language from its files) into
    /// DIR/target/<name>.wasm; a missing tool is named with its install
    /// command (status 2).
    #[command(after_help = KIT_EXAMPLES)]
    Build {
        /// The project (default: the current directory).
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Run a plugin alone on a recorded trace: its summary tables, the
    /// files it wrote, wall ns and Wasm instructions per record, peak memory.
    #[command(after_help = KIT_EXAMPLES)]
    Test {
        /// A recorded trace (rocprofv3 CSV directory, JSON or rocpd).
        #[arg(long, value_name = "TRACE")]
        trace: PathBuf,
        /// Plugin configuration for the run, `key=value` (repeatable).
        #[arg(long = "config", value_name = "KEY=VALUE")]
        config: Vec<String>,
        /// Check the summary tables against this file (TOML, `[[table]]`
        /// with `title`, `columns`, `rows`, as `plugin new` writes in
        /// `test/expected.toml`); a difference is status 1.
        #[arg(long, value_name = "FILE")]
        expect: Option<PathBuf>,
        /// The component (.wasm).
        #[arg(value_name = "PLUGIN")]
        file: PathBuf,
    },
}

impl RunArgs {
    pub fn flags(&self) -> TraceFlags {
        to_flags(
            Some(&self.trace),
            &self.output,
            &self.kernels,
            &self.collection,
        )
    }
}

impl ReplayArgs {
    pub fn flags(&self) -> TraceFlags {
        to_flags(None, &self.output, &self.kernels, &self.collection)
    }
}

fn to_flags(
    trace: Option<&TraceArgs>,
    output: &OutputArgs,
    kernels: &KernelArgs,
    collection: &CollectionArgs,
) -> TraceFlags {
    let t = trace.cloned().unwrap_or_default();
    TraceFlags {
        hip_trace: t.hip_trace,
        hsa_trace: t.hsa_trace,
        kernel_trace: t.kernel_trace,
        memory_copy_trace: t.memory_copy_trace,
        memory_allocation_trace: t.memory_allocation_trace,
        marker_trace: t.marker_trace,
        scratch_memory_trace: t.scratch_memory_trace,
        runtime_trace: t.runtime_trace,
        sys_trace: t.sys_trace,
        stats: output.stats,
        summary_per_domain: output.summary_per_domain,
        output_directory: output.output_directory.clone(),
        output_file: output.output_file.clone(),
        output_formats: output.output_format.clone(),
        write_during_run: output.write_during_run,
        kernel_include_regex: kernels.kernel_include_regex.clone(),
        kernel_exclude_regex: kernels.kernel_exclude_regex.clone(),
        kernel_iteration_range: kernels.kernel_iteration_range.clone(),
        truncate_kernels: kernels.truncate_kernels,
        mangled_kernels: kernels.mangled_kernels,
        kernel_rename: kernels.kernel_rename,
        collection_period: collection.collection_period.clone(),
        collection_period_unit: collection.collection_period_unit.clone(),
        selected_regions: t.selected_regions,
        summary: output.summary,
        summary_groups: output.summary_groups.clone(),
        summary_output_file: output.summary_output_file.clone(),
        summary_units: output.summary_units.clone(),
    }
}

fn parse_format(s: &str) -> Result<OutputFormat, String> {
    OutputFormat::from_name(s.trim()).ok_or_else(|| {
        let names: Vec<_> = OutputFormat::ALL.iter().map(|f| f.name()).collect();
        format!(
            "unknown output format `{s}` (expected one of: {})",
            names.join(", ")
        )
    })
}

const RUN_EXAMPLES: &str = "\
EXAMPLES:
    # rocprofv3-style: kernel trace as CSV plus kernel statistics
    rocwasm run --kernel-trace --stats -- ./app

    # HIP and copies, as a rocpd database and a Perfetto trace, one directory per rank
    rocwasm run --hip-trace --memory-copy-trace --output-format rocpd,perfetto \\
        -d 'results/%job%/%rank%' -- ./app --iterations 10

    # a chain of plugins, on the simulated GPU runtime
    rocwasm run --sim -c examples/chains/default.toml -- ./target/sim/bin/vector_add

    # flags amend a chain: add kernel_trace.csv to whatever the chain does
    rocwasm run -c chain.toml --kernel-trace -- ./app

    # rocprofv3's summaries: one table of every traced domain, and one of
    # kernels and copies together, in microseconds, on stdout
    rocwasm run -s -S --summary-groups 'KERNEL_DISPATCH|MEMORY_COPY' \\
        -u usec --summary-output-file stdout -- ./app

    # rocprofv3's selected regions: only what runs between
    # roctxProfilerResume(0) and roctxProfilerPause(0)
    rocwasm run --kernel-trace --selected-regions -- ./app

    # rocprofv3's collection period: from 1 s after the start, 2 s of
    # every 3 s, forever
    rocwasm run --kernel-trace -P 1:2:0 -- ./app

    # rocprofv3's kernel options: the 2nd to 4th dispatch of each kernel
    # whose name starts with gemm, names without their argument list
    rocwasm run --kernel-trace --kernel-include-regex '^gemm' \\
        --kernel-iteration-range '[2-4]' -T -- ./app

Without -c, at least one --*-trace flag (or -r, -s), --stats or -D is needed.";

const REPLAY_EXAMPLES: &str = "\
EXAMPLES:
    # kernel statistics of a recorded run
    rocwasm replay node01/4242/ --stats

    # a chain over a rocpd database, results as CSV in ./replayed
    rocwasm replay results.db -c examples/chains/filtered.toml -d replayed

    # one rocprofv3 CSV file
    rocwasm replay node01/4242/4242_kernel_trace.csv --stats --output-format json

    # every rank of an MPI job (out/0, out/1, …) through one chain, totals and per rank
    rocwasm replay out/ --stats --summary-by-rank -d all

Kinds and operations are matched by name, so traces from other ROCm versions work.";

const DEMO_EXAMPLES: &str = "\
EXAMPLES:
    rocwasm demo
    rocwasm demo -d /tmp/demo --output-format csv,perfetto

Runs the sample application on the simulated AMD runtime with
examples/chains/default.toml (kernel-stats, api-stats, memcpy-bandwidth, report:
report.html, a page to open in a browser),
prints the summary and where the outputs are.";

const CHECK_EXAMPLES: &str = "\
EXAMPLES:
    rocwasm check examples/chains/default.toml
    rocwasm check --no-plugins chain.toml      # before the plugins are built

Errors are one line, `error: FILE:LINE:COLUMN: message`, and exit with status 2.
Each stage's plugin is compiled and checked as a component of the stage's world,
as a run does before starting it: a core Wasm module, a component of another
world or a file that is not Wasm is one line naming the stage and the file, status 2.
Stock plugin names are looked up in [settings] plugin_path, ROCWASM_PLUGIN_PATH,
then <dir of rocwasm>/../plugins and <dir of rocwasm>/../lib/rocwasm/plugins.";

const KINDS_EXAMPLES: &str = "\
EXAMPLES:
    rocwasm kinds                        # every buffer and callback kind
    rocwasm kinds --buffer               # the names chain files use in `domains`
    rocwasm kinds hip_runtime_api        # the operations of one kind
    rocwasm kinds --callback code_object
    rocwasm kinds memory_copy";

const MERGE_EXAMPLES: &str = "\
EXAMPLES:
    rocwasm merge out/0/results.db out/1/results.db -o merged.db
    mpirun -np 4 rocwasm run --sim --kernel-trace --output-format rocpd -d 'out/%rank%' -- ./app
    rocwasm merge out/*/results.db -o all.db && rocwasm replay all.db --stats

Each process's tables keep their run suffix and rows, and the plain views
(rocpd_kernel_dispatch, …) union every run, as rocpd's merge does.";

const INSPECT_EXAMPLES: &str = "\
EXAMPLES:
    rocwasm plugin inspect target/plugins/kernel-stats.wasm";

const KIT_EXAMPLES: &str = "\
EXAMPLES:
    rocwasm plugin new slow-kernels --lang rust     # or c, python, js
    rocwasm plugin build slow-kernels               # -> slow-kernels/target/slow-kernels.wasm
    rocwasm plugin test slow-kernels/target/slow-kernels.wasm --trace examples/traces/sample
    rocwasm plugin wit --out wit                    # the WIT package, for your own tooling

Python and JS tools are installed pinned into ~/.cache/rocwasm/tools
(or $ROCWASM_TOOLS_DIR) on first use. See plugins/README.md, \"The plugin kit\".";

fn parse_backend(s: &str) -> Result<rocwasm_plan::Backend, String> {
    rocwasm_plan::Backend::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = rocwasm_plan::Backend::ALL
            .iter()
            .map(|b| b.name())
            .collect();
        format!("unknown back end `{s}` (one of: {})", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_flags_map_to_trace_flags() {
        let cli = Cli::try_parse_from([
            "rocwasm",
            "run",
            "--kernel-trace",
            "--stats",
            "-d",
            "out",
            "--output-format",
            "csv,rocpd",
            "--",
            "./app",
            "-x",
        ])
        .unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        let f = run.flags();
        assert!(f.kernel_trace && f.stats && !f.hip_trace);
        assert_eq!(f.output_directory.as_deref(), Some("out"));
        assert_eq!(
            f.output_formats,
            Some(vec![OutputFormat::Csv, OutputFormat::Rocpd])
        );
        assert_eq!(run.app, ["./app", "-x"]);
    }

    #[test]
    fn rocprofv3_aggregate_trace_flags() {
        let cli = Cli::try_parse_from([
            "rocwasm",
            "run",
            "-r",
            "-s",
            "--scratch-memory-trace",
            "--",
            "./app",
        ])
        .unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        let f = run.flags();
        assert!(f.runtime_trace && f.sys_trace && f.scratch_memory_trace);
        let cli =
            Cli::try_parse_from(["rocwasm", "run", "--runtime-trace", "--", "./app"]).unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert!(run.flags().runtime_trace && !run.flags().sys_trace);
        let cli = Cli::try_parse_from(["rocwasm", "replay", "x", "-D"]).unwrap();
        let Command::Replay(replay) = cli.command else {
            panic!("not replay")
        };
        assert!(replay.flags().summary_per_domain && !replay.flags().stats);
    }

    #[test]
    fn bad_format_is_a_usage_error() {
        let e = Cli::try_parse_from(["rocwasm", "replay", "x", "--output-format", "csv,xml"])
            .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("unknown output format `xml`"));
    }
}
