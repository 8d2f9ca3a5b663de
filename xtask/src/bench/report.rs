//! The text around the bench table: the commit measured and the machine
//! above it, how each group of rows is measured below it.

use std::process::Command;

use crate::util::root;

/// How each group of rows is measured, printed under the table.
pub(super) const LEGEND: &str = "\
HIP call: host/process/intercept/bench/overhead.c on the simulated runtime (hipGetDevice; the runtime built
  optimised, target/sim/lib-release, as the end-to-end rows use it too). Max rate: one burst
  without pauses, median of runs, untraced and traced alternating. Bursts: 4000 calls, 1 ms pauses,
  traced call and the runtime's own alternating in one process. Default outputs: CSV, rocpd, Perfetto;
  1 MiB LOSSLESS buffer; the process journals its records and `rocwasm write-journal` writes the
  formats at its end (no rocwasm run), or rocwasm run --write-during-run writes them as the journal
  grows (the row says so). Run and exit: the whole process, 100 k calls, untraced vs traced with the
  journal handed to a launcher (the plan names the journal directory) or written at exit. Library:
  the file's size; start: /bin/true with it preloaded (no plan) vs not, median of 20. Default chain: rocwasm run --sim -c examples/chains/default.toml (its four
  plugins, its outputs, its 4 MiB buffer). Native tool: host/process/intercept/bench/native_tool.c loaded with
  ROCP_TOOL_LIBRARIES, buffering HIP_RUNTIME_API into a 1 MiB LOSSLESS buffer, no output of ours.
  CPU: the calling thread's CPU time per call.
producer: cargo bench -p rocwasm-core --bench producer (push, LOSSLESS, 64-byte records; CPU ns).
  Engine alone: Profiler::trace_api with one context buffering the domain (two clock reads, the id,
  the record's stores), no interposer; clock: clock::now, the time-stamp counter mapped onto
  CLOCK_BOOTTIME, of which a traced call reads two. Floor: what tracing adds to a paired HIP call
  against two clock reads plus one record pushed (1 thread, no delivery), from this run's rows.
delivery: cargo bench -p rocwasm-plugin-host --bench deliver (kernel-stats, 3 columns selected; median
  round) against cargo bench -p rocwasm-formats --bench native_stats (the plugin's loop,
  IdSums::add_durations, compiled natively and called directly: no delivery path). Floors: cargo bench
  -p rocwasm-plugin-host --bench call_floor (an empty component, bump realloc, the plugin engine's
  configuration; 256 records in 3 of 64 u64 columns, passed as today's record of 64 lists, a record
  of 64 option lists, or the 3 lists alone).
plugin load: cargo bench -p rocwasm-plugin-host --bench load (PluginEngine::compile, fresh engine;
  warm: once the artifact has settled, as a later run finds it).
writers: cargo bench -p rocwasm-formats --bench writers (a synthetic run through Outputs, one format;
  together: the three default formats in one Outputs, a thread per sink and batch; record journal:
  what a profiled process writes under rocwasm run, each batch appended to its journal file; size
  on disk: the bytes of the files each format wrote for that run, per million records; raw SQLite:
  the rocpd writer's own rows read back, inserted into a fresh database of the same schema with its
  pragmas, 64 rows a prepared statement, one transaction).
replay ingest: cargo bench -p rocwasm-formats --bench ingest.
end-to-end: multi_kernel --dispatches N (N 4 µs kernels on one stream) untraced, and under rocwasm run
  --sim -c examples/chains/default.toml (outputs written after the run, or with --write-during-run as
  the journal grows), and under rocwasm run --sim --kernel-trace (no chain, one CSV file); wall time,
  median of runs. Peak memory: the program's own VmHWM,
  traced minus untraced.
replay over many ranks: rocwasm replay --stats of an out/%rank% tree (one kernel_trace.csv per rank)
  against one kernel_trace.csv of all their records; wall time, CLI start-up included, median of runs.
kit sample: the same analysis (dispatches, total time) from `rocwasm plugin new --lang L`, built by
  `rocwasm plugin build`; load bench as above; per record: `rocwasm plugin test` on a synthetic
  kernel trace (wall: delivery and fini; instructions: wasmtime fuel).
";

/// CPU model, cores, load and kernel.
pub(super) fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_string();
    let cores = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    format!(
        "machine: {model}, {cores} cores, Linux {kernel}; load average (1 min) at the end: {load}"
    )
}

/// The commit measured, and whether the tree had changes.
pub(super) fn revision() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(rev) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!(
                "commit {rev}{}",
                if dirty {
                    " with uncommitted changes"
                } else {
                    ""
                }
            )
        }
        None => "commit unknown".into(),
    }
}
