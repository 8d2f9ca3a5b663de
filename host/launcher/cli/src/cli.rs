//! Every argument of the `rocwasm` command, in one place (clap derive).
//!
//! Subcommands take their arguments as plain structs defined here; the
//! modules under `commands/` do the work. The rocprofv3-style options of
//! `run` and `replay` are [`TraceArgs`] and [`OutputArgs`], and turn into a
//! [`rocwasm_config::TraceFlags`] in one function.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use rocwasm_config::{OutputFormat, ParquetLayout, TraceFlags};

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
pub struct CliArgs {
    /// More log output on stderr (repeat for more); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

/// The command line `main` parses: [`CliArgs`], whose
/// [`Parser::parse`] adds what rocprofv3's users need: a refused rocprofv3
/// option is refused in one sentence whatever else is wrong with the line,
/// a forgotten `--` before the program is named as the fix, and
/// `--log-level` sets the verbosity.
#[derive(Debug)]
pub struct Cli {
    pub verbose: u8,
    pub command: Command,
}

impl clap::CommandFactory for Cli {
    fn command() -> clap::Command {
        with_format_help(CliArgs::command())
    }

    fn command_for_update() -> clap::Command {
        with_format_help(CliArgs::command_for_update())
    }
}

/// Every `--output-format` lists the formats from the format table
/// (`rocwasm_formats::FORMATS`), so a new format reaches the help by itself.
fn with_format_help(cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut cmd = cmd;
    for name in names {
        cmd = cmd.mut_subcommand(name, with_format_help);
    }
    if cmd.get_arguments().any(|a| a.get_id() == "output_format") {
        let help = format!(
            "Host output formats, comma- or space-separated (default: the chain file's): {}",
            rocwasm_formats::table::help_list()
        );
        cmd = cmd.mut_arg("output_format", |a| a.help(help));
    }
    cmd
}

impl clap::FromArgMatches for Cli {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let CliArgs { verbose, command } = CliArgs::from_arg_matches(m)?;
        Ok(Cli { verbose, command })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Parser for Cli {
    fn parse() -> Cli {
        let args: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        match <Cli as Parser>::try_parse_from(&args) {
            Ok(mut cli) => {
                if let Command::Run(run) = &cli.command {
                    if let Some(level) = run.log_level {
                        cli.verbose = cli.verbose.max(level.verbosity());
                    }
                }
                cli
            }
            Err(e) => {
                if let Some(message) = run_usage_error(&e, &args) {
                    eprint!("{message}");
                    std::process::exit(2);
                }
                e.exit()
            }
        }
    }
}

/// The message of a `rocwasm run` line clap refused, when rocwasm can say
/// better: a refused rocprofv3 option given, or the program without `--`.
fn run_usage_error(e: &clap::Error, args: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let options: &[String] = match args.iter().position(|a| a == "--") {
        Some(end) => &args[1..end],
        None => args.get(1..).unwrap_or_default(),
    };
    let run = options.iter().position(|a| !a.starts_with('-'))?;
    if options[run] != "run" {
        return None;
    }
    let options = &options[run + 1..];
    if let Some(refusal) = options.iter().find_map(|a| refused_option(a)) {
        return Some(format!("error: {refusal}\n"));
    }
    let program_follows = args.iter().any(|a| a == "--");
    if program_follows
        || !matches!(
            e.kind(),
            ErrorKind::UnknownArgument | ErrorKind::MissingRequiredArgument
        )
    {
        return None;
    }
    let invalid = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    match invalid {
        // The program itself, or its first argument, taken for rocwasm's.
        Some(token) if e.kind() == ErrorKind::UnknownArgument => {
            let at = options.iter().position(|a| a == token)?;
            let fixed: Vec<&str> = options[..at]
                .iter()
                .map(String::as_str)
                .chain(["--"])
                .chain(options[at..].iter().map(String::as_str))
                .collect();
            if token.starts_with('-') {
                Some(format!(
                    "{}tip: if `{token}` is an option of the program, the program and its \
                     arguments follow `--`: rocwasm run [OPTIONS] -- <APP> [APP ARGS]...\n",
                    e.render()
                ))
            } else {
                Some(format!(
                    "error: `{token}` is not an option of rocwasm run: the program to profile \
                     and its arguments follow `--`:\n    rocwasm run {}\n",
                    fixed.join(" ")
                ))
            }
        }
        _ => Some(format!(
            "{}tip: the program to profile and its arguments follow `--`: \
             rocwasm run [OPTIONS] -- <APP> [APP ARGS]...\n",
            e.render()
        )),
    }
}

/// The refusal of `arg` when it names a refused rocprofv3 option
/// (`--pmc`, `--pmc=…`, `-i`, `--att`).
fn refused_option(arg: &str) -> Option<String> {
    let r = REFUSED.iter().find(|r| {
        let long = |name: &str| {
            arg.strip_prefix("--").is_some_and(|a| {
                a == name || a.strip_prefix(name).is_some_and(|v| v.starts_with('='))
            })
        };
        long(r.long)
            || r.aliases.iter().any(|a| long(a))
            || r.short.is_some_and(|s| arg == format!("-{s}"))
    })?;
    RefusedArgs {
        given: vec![r.long],
    }
    .refusal()
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an application with the profiler injected.
    #[command(
        after_help = RUN_EXAMPLES,
        override_usage = "rocwasm run [OPTIONS] -- <APP> [APP ARGS]...\n       rocwasm run -L"
    )]
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
    /// The GPUs' hardware counters, as rocprofv3-avail lists them: names,
    /// descriptions, blocks or expressions, dimensions, and whether a set
    /// can be collected in one pass.
    #[command(after_help = AVAIL_EXAMPLES)]
    Avail(AvailArgs),
}

/// `rocwasm avail …`.
#[derive(Debug, Args)]
pub struct AvailArgs {
    /// Only the GPU with this index (0 is the first GPU).
    #[arg(short = 'd', long, value_name = "N")]
    pub device: Option<usize>,
    /// Counter definitions in rocprofiler-sdk's schema (AMD's
    /// counter_defs.yaml); default: $ROCPROFILER_METRICS_PATH/counter_defs.yaml,
    /// an installed ROCm's, else the ones rocwasm ships for its simulated GPUs.
    #[arg(long, value_name = "FILE")]
    pub counter_defs: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub command: AvailCommand,
}

/// What `rocwasm avail` shows.
#[derive(Debug, Subcommand)]
pub enum AvailCommand {
    /// The counters of each GPU (the default), or the agents' properties.
    List {
        /// Counter names (the default).
        #[arg(long)]
        pmc: bool,
        /// The agents' properties.
        #[arg(long)]
        agent: bool,
    },
    /// Each counter's description, block or expression, and dimensions;
    /// every counter, or the ones named.
    Info {
        /// Only these counters.
        #[arg(long, value_name = "NAME", num_args = 0..)]
        pmc: Option<Vec<String>>,
    },
    /// Whether counters can be collected together in one pass
    /// (`NAME:device=N` checks one on one GPU only).
    PmcCheck {
        /// The counters.
        #[arg(required = true, value_name = "NAME")]
        counters: Vec<String>,
    },
}

const AVAIL_EXAMPLES: &str = "Examples:
    # every counter of every (simulated) GPU
    rocwasm avail list
    # what SQ_WAVES and GPU_UTIL count, and over which instances
    rocwasm avail info --pmc SQ_WAVES GPU_UTIL
    # can these be collected in one pass?
    rocwasm avail pmc-check SQ_WAVES GRBM_COUNT GRBM_GUI_ACTIVE
    # AMD's own definitions file
    rocwasm avail --counter-defs /opt/rocm/share/rocprofiler-sdk/counter_defs.yaml list";

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

// `run --help` groups its options under rocprofv3's group names (in
// rocprofv3's order), then rocwasm's own.
const IO: &str = "I/O options";
const AGGREGATE: &str = "Aggregate tracing options";
const BASIC: &str = "Basic tracing options";
const GRANULAR: &str = "Granular tracing options";
const POST: &str = "Post-processing tracing options";
const SUMMARY: &str = "Summary options";
const COUNTER: &str = "Counter collection options";
const NAMING: &str = "Kernel naming options";
const FILTER: &str = "Filtering options";
const DISPLAY: &str = "Display options";
const ADVANCED: &str = "Advanced options";
const ROCWASM: &str = "rocwasm options";

/// rocprofv3-style tracing options (`run` only: replay reads what was recorded).
#[derive(Debug, Args, Clone, Default)]
pub struct TraceArgs {
    /// As rocprofv3: HIP runtime API, markers, kernels, memory copies,
    /// allocations and scratch memory, RCCL, rocDecode and rocJPEG (not the
    /// HIP compiler API, not HSA).
    #[arg(short = 'r', long, help_heading = AGGREGATE)]
    pub runtime_trace: bool,
    /// As rocprofv3: everything --runtime-trace traces, plus the HIP
    /// compiler API and the HSA API.
    #[arg(short = 's', long, help_heading = AGGREGATE)]
    pub sys_trace: bool,
    /// Trace HIP runtime and compiler API calls.
    #[arg(long, help_heading = BASIC)]
    pub hip_trace: bool,
    /// Trace roctx markers and ranges.
    #[arg(long, help_heading = BASIC)]
    pub marker_trace: bool,
    /// Trace kernel dispatches.
    #[arg(long, help_heading = BASIC)]
    pub kernel_trace: bool,
    /// Trace asynchronous memory copies.
    #[arg(long, help_heading = BASIC)]
    pub memory_copy_trace: bool,
    /// Trace memory pool allocations and frees (the agent, address, size).
    #[arg(long, help_heading = BASIC)]
    pub memory_allocation_trace: bool,
    /// Trace scratch memory allocations, frees and reclaims.
    #[arg(long, help_heading = BASIC)]
    pub scratch_memory_trace: bool,
    /// Trace HSA API calls (core, AMD extension, image, finalizer).
    #[arg(long, help_heading = BASIC)]
    pub hsa_trace: bool,
    /// Trace RCCL API calls (RCCL_API). rocwasm's built-in interception
    /// does not record RCCL calls: a live run writes no rows for it.
    #[arg(long, help_heading = BASIC)]
    pub rccl_trace: bool,
    /// Trace rocDecode API calls (ROCDECODE_API); not recorded by the
    /// built-in interception.
    #[arg(long, help_heading = BASIC)]
    pub rocdecode_trace: bool,
    /// Trace rocJPEG API calls (ROCJPEG_API); not recorded by the built-in
    /// interception.
    #[arg(long, help_heading = BASIC)]
    pub rocjpeg_trace: bool,
    /// Trace the HIP runtime API only (HIP_RUNTIME_API: hipMalloc, …).
    #[arg(long, help_heading = GRANULAR)]
    pub hip_runtime_trace: bool,
    /// Trace the HIP compiler API only (HIP_COMPILER_API: __hipRegisterFatBinary, …).
    #[arg(long, help_heading = GRANULAR)]
    pub hip_compiler_trace: bool,
    /// Trace the HSA core API only (HSA_CORE_API: hsa_init, …).
    #[arg(long, help_heading = GRANULAR)]
    pub hsa_core_trace: bool,
    /// Trace the HSA AMD extension API only (HSA_AMD_EXT_API: hsa_amd_…).
    #[arg(long, help_heading = GRANULAR)]
    pub hsa_amd_trace: bool,
    /// Trace the HSA image extension API only (HSA_IMAGE_EXT_API: hsa_ext_image_…).
    #[arg(long, help_heading = GRANULAR)]
    pub hsa_image_trace: bool,
    /// Trace the HSA finalizer extension API only (HSA_FINALIZE_EXT_API: hsa_ext_program_…).
    #[arg(long, help_heading = GRANULAR)]
    pub hsa_finalizer_trace: bool,
}

/// Output options shared by `run` and `replay`.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// Output directory; may use %hostname%, %pid%, %rank%, %job%, %env{NAME}% …
    #[arg(short = 'd', long, value_name = "DIR", help_heading = IO)]
    pub output_directory: Option<String>,
    /// Output file name prefix (same keys as -d; none by default: plain
    /// names, e.g. -o %pid% for 1234_kernel_trace.csv).
    #[arg(short = 'o', long, value_name = "NAME", help_heading = IO)]
    pub output_file: Option<String>,
    /// Host output formats (the list is the format table's, see
    /// `with_format_help`).
    #[arg(short = 'f', long, value_name = "FORMATS", value_delimiter = ',', num_args = 1.., value_parser = parse_format, help_heading = IO)]
    pub output_format: Option<Vec<OutputFormat>>,
    /// Write the output files as records reach the record journal, instead
    /// of after the application ended: the files grow during the run (the
    /// application never waits for them either way). A replay always writes
    /// as it reads. Chain file: `[output] write = "during-run"`.
    #[arg(long, help_heading = IO)]
    pub write_during_run: bool,
    /// Record each traced API call's arguments in rocpd's rocpd_arg (needs
    /// --output-format rocpd). rocprofv3 records them always; here they are
    /// rendered as text in the application, which costs a traced call
    /// several times what tracing it does, so they are asked for. Chain
    /// file: `[output] api_args = true`.
    #[arg(long, help_heading = IO)]
    pub api_args: bool,
    /// Where Parquet files go: flat (each process's output directory) or
    /// hive (one dataset of Hive partitions, <root>/<table>/job=J/
    /// hostname=H/rank=R/<pid>.parquet, the root being -d's part before its
    /// first per-process key: %hostname%, %pid%, %ppid% or %rank%; pyarrow,
    /// DuckDB, Spark and Dask read the keys as columns). Chain file:
    /// `[output] parquet_layout`.
    #[arg(long, value_name = "LAYOUT", value_parser = parquet_layout, help_heading = IO)]
    pub parquet_layout: Option<ParquetLayout>,
    /// Add statistics stages (kernel-stats, api-stats, memcpy-bandwidth) and print their tables.
    #[arg(long, help_heading = POST)]
    pub stats: bool,
    /// As rocprofv3: print a summary per tracing domain at the end (the
    /// statistics stages of --stats, without their files).
    #[arg(short = 'D', long, help_heading = POST)]
    pub summary_per_domain: bool,
    /// As rocprofv3: print one summary of every traced domain at the end
    /// (per kernel, API function and copy direction: calls, total, average,
    /// share, min, max, stddev). Chain file: `[summary] all`.
    #[arg(short = 'S', long, help_heading = POST)]
    pub summary: bool,
    /// As rocprofv3: one summary per regular expression, of the traced
    /// domains it matches whole (KERNEL_DISPATCH, HIP_API, HSA_API,
    /// MARKER_API, MEMORY_COPY), e.g. 'KERNEL_DISPATCH|MEMORY_COPY' or
    /// '.*_API'. Chain file: `[summary] groups`.
    #[arg(long, value_name = "REGULAR_EXPRESSION", num_args = 1.., help_heading = POST)]
    pub summary_groups: Vec<String>,
    /// Where -S and --summary-groups go: stdout, stderr (default) or a file
    /// NAME in the output directory (NAME.txt, after -o's prefix).
    #[arg(long, value_name = "NAME", help_heading = SUMMARY)]
    pub summary_output_file: Option<String>,
    /// Time unit of -S and --summary-groups: sec, msec, usec or nsec
    /// (default).
    #[arg(short = 'u', long, value_name = "UNIT", help_heading = SUMMARY)]
    pub summary_units: Option<String>,
}

/// rocprofv3's collection period, shared by `run` and `replay` (chain
/// file: `[collection]`). Dropped records are counted in the summary.
#[derive(Debug, Args, Clone, Default)]
pub struct CollectionArgs {
    /// Collect only inside these windows, measured from the application's
    /// start (a replay: the recording's): wait START, collect for STOP,
    /// REPEAT times (0: forever); several periods separated by `;` follow
    /// one another. A record is kept when it lies inside a window.
    #[arg(short = 'P', long, value_name = "START:STOP:REPEAT", help_heading = FILTER)]
    pub collection_period: Option<String>,
    /// The unit of --collection-period: hour, min, sec (default), msec,
    /// usec or nsec.
    #[arg(long, value_name = "UNIT", help_heading = FILTER)]
    pub collection_period_unit: Option<String>,
}

/// rocprofv3's kernel options, shared by `run` and `replay` (chain file:
/// `[kernels]`). Dropped dispatches are counted in the summary.
#[derive(Debug, Args, Clone, Default)]
pub struct KernelArgs {
    /// Truncate kernel names before their argument list (`scale(float*,
    /// int)` → `scale`).
    #[arg(short = 'T', long, help_heading = NAMING)]
    pub truncate_kernels: bool,
    /// Keep kernel names mangled, as the code object has them.
    #[arg(short = 'M', long, help_heading = NAMING)]
    pub mangled_kernels: bool,
    /// Name each dispatch after the innermost roctx range (roctxRangePush)
    /// enclosing its launch on the launching thread (live runs only: a
    /// recording holds no range names).
    #[arg(long, help_heading = NAMING)]
    pub kernel_rename: bool,
    /// Keep only dispatches of kernels whose name matches this regular
    /// expression (searched anywhere in the name, as rocprofv3).
    #[arg(long, value_name = "REGEX", help_heading = FILTER)]
    pub kernel_include_regex: Option<String>,
    /// Drop dispatches of kernels whose name matches this regular expression.
    #[arg(long, value_name = "REGEX", help_heading = FILTER)]
    pub kernel_exclude_regex: Option<String>,
    /// Keep only these iterations of each kernel (counted per kernel name
    /// from 1, among the dispatches the name filters keep), e.g. `[1-3]`,
    /// `[2,5-7]`.
    #[arg(long, value_name = "RANGE", help_heading = FILTER)]
    pub kernel_iteration_range: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// As rocprofv3's log level: info is -v, trace is -vvv; fatal, error
    /// and warning are the default (warnings and errors); env leaves it to
    /// RUST_LOG (which always wins); config is info.
    #[arg(long, value_name = "LEVEL", value_enum, ignore_case = true, help_heading = IO)]
    pub log_level: Option<LogLevel>,
    #[command(flatten)]
    pub trace: TraceArgs,
    /// As rocprofv3: hardware counters to collect for each kernel dispatch,
    /// in one pass (`NAME:device=N` on one GPU only), written to
    /// counter_collection.csv. Checked against each GPU's counters first
    /// (`rocwasm avail`): an unknown name, or a set over a block's
    /// registers, is refused with the reason. The simulated GPU's counters
    /// only (docs/COUNTERS.md).
    #[arg(long, value_name = "NAME", num_args = 1.., help_heading = COUNTER)]
    pub pmc: Vec<String>,
    /// As rocprofv3: an input file of counter passes: a text file with one
    /// `pmc: NAME …` line per pass, or YAML/JSON with `jobs:` (each with
    /// `pmc:`). The program runs once per pass; each pass's outputs go to
    /// `pmc_N/` (text) or `pass_N/` (YAML, JSON) of the output directory.
    #[arg(short = 'i', long, value_name = "FILE", help_heading = COUNTER)]
    pub input: Option<std::path::PathBuf>,
    /// Counter definitions for --pmc, in rocprofiler-sdk's schema (as
    /// `rocwasm avail --counter-defs`).
    #[arg(long, value_name = "FILE", help_heading = COUNTER)]
    pub counter_defs: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub kernels: KernelArgs,
    #[command(flatten)]
    pub collection: CollectionArgs,
    /// As rocprofv3: record only between roctxProfilerResume(0) and
    /// roctxProfilerPause(0), starting paused (the pause and resume calls
    /// themselves are always recorded). Events outside are counted in the
    /// summary. Not with -P/--collection-period (chain file:
    /// `[collection] selected_regions`).
    #[arg(long, help_heading = FILTER)]
    pub selected_regions: bool,
    /// List what can be collected: each GPU's hardware counters (as
    /// `rocwasm avail list`), then the tracing kinds (as `rocwasm kinds`);
    /// PC sampling is not implemented yet. No program needed.
    #[arg(short = 'L', long, help_heading = DISPLAY)]
    pub list_avail: bool,
    /// Libraries to put first in the application's LD_PRELOAD (before
    /// rocwasm's tool library), e.g. a sanitizer's runtime; colon- or
    /// space-separated.
    #[arg(long, value_name = "LIB", num_args = 1.., value_delimiter = ':', help_heading = ADVANCED)]
    pub preload: Vec<String>,
    /// The chain file; flags amend it. Without it, the flags alone describe the run.
    #[arg(short = 'c', long = "config", value_name = "CHAIN", help_heading = ROCWASM)]
    pub chain: Option<PathBuf>,
    /// Run on the simulated AMD runtime (no GPU needed).
    #[arg(long, help_heading = ROCWASM)]
    pub sim: bool,
    /// Who measures the run: `builtin` (rocwasm's interception),
    /// `rocprofiler-sdk` (a rocprofiler-sdk library, AMD's where installed,
    /// else rocwasm's, with rocwasm's chain and outputs as its tool) or
    /// `auto` (the SDK when AMD's is installed and the application's HIP
    /// registers with it). Overrides `[settings] backend`.
    #[arg(long, value_name = "BACKEND", value_parser = parse_backend, help_heading = ROCWASM)]
    pub backend: Option<rocwasm_plan::Backend>,
    /// Under an MPI launcher, profile only these ranks (e.g. `0,2`); the
    /// others run the application untouched. The rank is read as `%rank%`
    /// is: Open MPI, MPICH/PMI, PMIx, Slurm or MVAPICH variables.
    #[arg(long, value_name = "RANKS", value_delimiter = ',', help_heading = ROCWASM)]
    pub profile_mpi_ranks: Option<Vec<u32>>,
    /// Refuse (status 2, before the application starts) an output
    /// directory that already holds an earlier run's output files (CSV,
    /// rocpd, results.json, Perfetto, Parquet, report.html, rocwasm's
    /// summary), instead of warning that they stay beside this run's and
    /// that a replay of the directory would read both. A directory with
    /// %pid% in its template is new for every process and not checked.
    #[arg(long, help_heading = ROCWASM)]
    pub strict: bool,
    /// rocprofv3's options rocwasm refuses (hidden; see [`REFUSED`]).
    #[command(flatten)]
    pub refused: RefusedArgs,
    /// The program to profile and its arguments, after `--`
    /// (`rocwasm run [OPTIONS] -- ./app ARGS…`).
    #[arg(
        last = true,
        required_unless_present = "list_avail",
        value_name = "APP"
    )]
    pub app: Vec<String>,
}

/// rocprofv3's `--log-level` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogLevel {
    Fatal,
    Error,
    Warning,
    Info,
    Trace,
    Env,
    Config,
}

impl LogLevel {
    /// The `-v` count it stands for.
    pub fn verbosity(self) -> u8 {
        match self {
            LogLevel::Fatal | LogLevel::Error | LogLevel::Warning | LogLevel::Env => 0,
            LogLevel::Info | LogLevel::Config => 1,
            LogLevel::Trace => 3,
        }
    }
}

/// A rocprofv3 option rocwasm does not support: its names and why (the end of "rocwasm does not support
/// --NAME: …"). docs/ROCPROFV3_OPTIONS.md lists the same options.
pub struct Refused {
    pub long: &'static str,
    pub short: Option<char>,
    pub aliases: &'static [&'static str],
    pub reason: &'static str,
}

const COUNTERS: &str = "rocwasm reads a whole definitions file instead: --counter-defs FILE (rocwasm run, rocwasm avail)";
const PC_SAMPLING: &str = "PC sampling is not implemented yet";
const PERFETTO: &str = "rocwasm writes its Perfetto trace itself after the application ended (--output-format pftrace), with no Perfetto buffer, shared memory or daemon to size or choose";
const THREAD_TRACE: &str = "advanced thread trace (ATT) is not implemented yet";
const SDK_LOCATION: &str = "rocwasm finds rocprofiler-sdk itself (--backend rocprofiler-sdk: AMD's where installed, else rocwasm's own)";

/// Every rocprofv3 option `rocwasm run` refuses, in rocprofv3's order.
pub const REFUSED: &[Refused] = &[
    Refused { long: "output-config", short: None, aliases: &[], reason: "rocwasm writes no configuration file (`rocwasm check CHAIN` shows what a chain runs)" },
    Refused { long: "extra-counters", short: Some('E'), aliases: &[], reason: COUNTERS },
    Refused { long: "kokkos-trace", short: None, aliases: &[], reason: "rocwasm ships no Kokkos Tools library (--marker-trace --kernel-rename with a Kokkos Tools connector that emits roctx ranges gives the same records)" },
    Refused { long: "pc-sampling-beta-enabled", short: None, aliases: &[], reason: PC_SAMPLING },
    Refused { long: "pc-sampling-unit", short: None, aliases: &[], reason: PC_SAMPLING },
    Refused { long: "pc-sampling-method", short: None, aliases: &[], reason: PC_SAMPLING },
    Refused { long: "pc-sampling-interval", short: None, aliases: &[], reason: PC_SAMPLING },
    Refused { long: "perfetto-backend", short: None, aliases: &[], reason: PERFETTO },
    Refused { long: "perfetto-buffer-size", short: None, aliases: &[], reason: PERFETTO },
    Refused { long: "perfetto-buffer-fill-policy", short: None, aliases: &[], reason: PERFETTO },
    Refused { long: "perfetto-shmem-size-hint", short: None, aliases: &[], reason: PERFETTO },
    Refused { long: "group-by-queue", short: None, aliases: &[], reason: "its outputs cannot be regrouped by HIP stream yet" },
    Refused { long: "rocm-root", short: None, aliases: &[], reason: SDK_LOCATION },
    Refused { long: "sdk-soversion", short: None, aliases: &[], reason: SDK_LOCATION },
    Refused { long: "sdk-version", short: None, aliases: &[], reason: SDK_LOCATION },
    Refused { long: "readlink", short: None, aliases: &[], reason: "it is an internal option of rocprofv3's launcher script" },
    Refused { long: "realpath", short: None, aliases: &[], reason: "it is an internal option of rocprofv3's launcher script" },
    Refused { long: "benchmark-mode", short: None, aliases: &[], reason: "rocprofiler-sdk's overhead benchmarks are not rocwasm's (`cargo xtask bench` measures rocwasm)" },
    Refused { long: "agent-index", short: Some('A'), aliases: &[], reason: "agents are numbered one way only (the outputs' agent ids)" },
    Refused { long: "suppress-marker-preload", short: None, aliases: &[], reason: "rocwasm preloads no roctx library" },
    Refused { long: "echo", short: None, aliases: &[], reason: "it is an internal option of rocprofv3's launcher script" },
    Refused { long: "disable-signal-handlers", short: None, aliases: &[], reason: "the tool library's crash handling (which keeps the records of a crashed application) cannot be turned off" },
    Refused { long: "minimum-output-data", short: None, aliases: &[], reason: "every output file of the traced domains is written, whatever its size" },
    Refused { long: "pid", short: Some('p'), aliases: &[], reason: "attaching to a running process is not implemented (rocwasm starts the program itself)" },
    Refused { long: "advanced-thread-trace", short: None, aliases: &["att"], reason: THREAD_TRACE },
    Refused { long: "att-library-path", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-target-cu", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-simd-select", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-buffer-size", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-shader-engine-mask", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-gpu-index", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-perfcounters", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-perfcounter-ctrl", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-activity", short: None, aliases: &[], reason: THREAD_TRACE },
    Refused { long: "att-serialize-all", short: None, aliases: &[], reason: THREAD_TRACE },
];

/// The refused rocprofv3 options a command line gave. They are parsed
/// (any values), hidden from the help, and refused by `run` with the
/// sentence of [`RefusedArgs::refusal`], never by clap (which would call
/// them unexpected, or suggest another flag).
#[derive(Debug, Clone, Default)]
pub struct RefusedArgs {
    /// Long names, in [`REFUSED`]'s order.
    pub given: Vec<&'static str>,
}

impl RefusedArgs {
    /// "rocwasm does not support --NAME: REASON" for the first refused
    /// option given.
    pub fn refusal(&self) -> Option<String> {
        let long = self.given.first()?;
        let r = REFUSED.iter().find(|r| r.long == *long)?;
        let name = match r.short {
            Some(s) => format!("-{s}/--{}", r.long),
            None => format!("--{}", r.long),
        };
        Some(format!(
            "rocwasm does not support {name}: {} (see docs/ROCPROFV3_OPTIONS.md)",
            r.reason
        ))
    }
}

impl clap::FromArgMatches for RefusedArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let given = REFUSED
            .iter()
            .filter(|r| m.value_source(r.long) == Some(clap::parser::ValueSource::CommandLine))
            .map(|r| r.long)
            .collect();
        Ok(RefusedArgs { given })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for RefusedArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        REFUSED.iter().fold(cmd, |cmd, r| {
            let mut arg = clap::Arg::new(r.long)
                .long(r.long)
                .aliases(r.aliases.iter().copied())
                .num_args(0..)
                .action(clap::ArgAction::Append)
                .hide(true);
            if let Some(s) = r.short {
                arg = arg.short(s);
            }
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
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
    /// skipped; and refuse, before anything is written, an output directory
    /// that already holds an earlier run's output files (CSV, rocpd,
    /// results.json, Perfetto, Parquet, report.html, rocwasm's summary),
    /// instead of warning that they stay beside this replay's.
    #[arg(long)]
    pub strict: bool,
    /// With --stats: the statistics per process too (its rank when the
    /// recording names one, else its path), one table per domain with a
    /// Rank column, and `<domain>_stats_by_rank.csv` files.
    #[arg(long)]
    pub summary_by_rank: bool,
    /// Run the chain on a Dask cluster (the scheduler's address,
    /// `tcp://host:8786`, or `local` for a LocalCluster on this machine):
    /// one task per recording, the stages' partial results merged in a
    /// tree, the files written into -d. Needs the Python package (`cargo
    /// xtask wheel`, then pip install) and a chain file (-c) whose stages
    /// merge.
    #[arg(long, value_name = "SCHEDULER", requires = "chain")]
    pub dask: Option<String>,
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
    /// Host output formats (the list is the format table's, see
    /// `with_format_help`).
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
    /// Write the WIT package (rocwasm:plugin@0.3.2) plugins are built
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
        /// The seed of the merge check's random splits and merge trees (a
        /// plugin that exports `merge`); the check prints the one it used.
        #[arg(long, value_name = "N")]
        merge_seed: Option<u64>,
        /// The component (.wasm).
        #[arg(value_name = "PLUGIN")]
        file: PathBuf,
    },
}

impl RunArgs {
    pub fn flags(&self) -> TraceFlags {
        TraceFlags {
            selected_regions: self.selected_regions,
            // As rocprofv3 splits them: spaces or commas.
            pmc: self
                .pmc
                .iter()
                .flat_map(|v| v.split(|c: char| c.is_whitespace() || c == ','))
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect(),
            counter_defs: self.counter_defs.as_ref().map(|p| {
                std::path::absolute(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string()
            }),
            ..to_flags(
                Some(&self.trace),
                &self.output,
                &self.kernels,
                &self.collection,
            )
        }
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
        hip_runtime_trace: t.hip_runtime_trace,
        hip_compiler_trace: t.hip_compiler_trace,
        hsa_core_trace: t.hsa_core_trace,
        hsa_amd_trace: t.hsa_amd_trace,
        hsa_image_trace: t.hsa_image_trace,
        hsa_finalizer_trace: t.hsa_finalizer_trace,
        rccl_trace: t.rccl_trace,
        rocdecode_trace: t.rocdecode_trace,
        rocjpeg_trace: t.rocjpeg_trace,
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
        api_args: output.api_args,
        parquet_layout: output.parquet_layout,
        kernel_include_regex: kernels.kernel_include_regex.clone(),
        kernel_exclude_regex: kernels.kernel_exclude_regex.clone(),
        kernel_iteration_range: kernels.kernel_iteration_range.clone(),
        truncate_kernels: kernels.truncate_kernels,
        mangled_kernels: kernels.mangled_kernels,
        kernel_rename: kernels.kernel_rename,
        collection_period: collection.collection_period.clone(),
        collection_period_unit: collection.collection_period_unit.clone(),
        selected_regions: false,
        pmc: Vec::new(),
        counter_defs: None,
        summary: output.summary,
        summary_groups: output.summary_groups.clone(),
        summary_output_file: output.summary_output_file.clone(),
        summary_units: output.summary_units.clone(),
    }
}

/// `--parquet-layout`'s value.
fn parquet_layout(name: &str) -> Result<ParquetLayout, String> {
    ParquetLayout::from_name(name)
        .ok_or_else(|| format!("unknown layout `{name}` (expected flat or hive)"))
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
    rocwasm run --hip-trace --memory-copy-trace --output-format rocpd,pftrace \\
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

    # hardware counters of every dispatch, on the simulated GPU
    # (counter_collection.csv; `rocwasm avail` lists the counters)
    rocwasm run --sim --pmc SQ_WAVES GRBM_GUI_ACTIVE GPU_UTIL -- ./app

The program and its arguments follow `--`, as with rocprofv3. Without -c, at
least one --*-trace flag (or -r, -s), --pmc, --stats or -D is needed.
rocprofv3's options rocwasm does not support (-i, PC sampling, thread trace,
…) are refused with the reason; docs/ROCPROFV3_OPTIONS.md lists every option.";

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

Without -d the outputs go to ./rocwasm-replay/NAME/ (NAME: the recording's
directory name, or its file name without the extension: `rocwasm replay
node01/4242/` writes into ./rocwasm-replay/4242/), the same directory at every
replay of it; a chain file's [output] directory names a live run's processes
and is not used. The replay ends with the list of the files it wrote.

Kinds and operations are matched by name, so traces from other ROCm versions work.";

const DEMO_EXAMPLES: &str = "\
EXAMPLES:
    rocwasm demo
    rocwasm demo -d /tmp/demo --output-format csv,pftrace

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
