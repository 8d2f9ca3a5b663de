//! The knobs of a bench run, below every row group (each reads them, the
//! orchestration in `mod.rs` picks them): how much each bench does
//! ([`Sizes`], `--quick` or the full run) and which build it measures
//! ([`Build`]).

/// How much each bench does.
pub(super) struct Sizes {
    /// Untraced/traced pairs of the sustained HIP run.
    pub(super) sustained_runs: usize,
    /// Calls of one sustained run.
    pub(super) sustained_calls: u64,
    /// Calls of the short run timed from start to exit.
    pub(super) exit_calls: u64,
    /// Burst pairs of the paired HIP measurement.
    pub(super) paired_bursts: u32,
    /// Records of the replay ingest file.
    pub(super) ingest_records: u64,
    /// Cold and warm plugin loads.
    pub(super) load_runs: (u32, u32),
    /// Records through each writer, and runs (best of).
    pub(super) writer_records: u64,
    pub(super) writer_runs: u32,
    /// Dispatches of the kit samples' trace (`plugin test`).
    pub(super) kit_records: u64,
    /// Processes and dispatches per process of the many-rank replay, and
    /// its timed runs.
    pub(super) ranks: (u64, u64, usize),
    /// Ranks and dispatches per rank of the Dask job, and its timed runs.
    pub(super) dask: (u64, u64, usize),
    /// Dispatches of the end-to-end run, and runs of each kind.
    pub(super) e2e: (u64, usize),
}

pub(super) const QUICK: Sizes = Sizes {
    sustained_runs: 3,
    sustained_calls: 200_000,
    exit_calls: 100_000,
    paired_bursts: 51,
    ingest_records: 100_000,
    load_runs: (1, 5),
    writer_records: 200_000,
    writer_runs: 1,
    kit_records: 5_000,
    ranks: (8, 5_000, 1),
    dask: (16, 20_000, 1),
    e2e: (20_000, 1),
};

pub(super) const FULL: Sizes = Sizes {
    sustained_runs: 7,
    sustained_calls: 200_000,
    exit_calls: 100_000,
    paired_bursts: 301,
    ingest_records: 1_000_000,
    load_runs: (3, 20),
    writer_records: 2_000_000,
    writer_runs: 3,
    kit_records: 200_000,
    ranks: (64, 50_000, 3),
    dask: (64, 200_000, 3),
    e2e: (1_000_000, 3),
};

/// Which build the benches measure.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// `cargo build --release` of the benched packages: the figures.
    Release,
    /// The test build's profile and selection (`target/debug`): a check
    /// that every row runs, not figures.
    Debug,
}
