//! `rocwasm-stats`: duration statistics as rocprofv3's `--stats` computes and
//! writes them, in one place.
//!
//! Two parts of rocwasm produce the `*_stats.csv` files: the host's
//! statistics sink (`rocwasm-formats`, native) and the stock `kernel-stats`
//! and `api-stats` plugins (through the plugin SDK, on wasm32). Both use this
//! crate, so a kernel's row is the same number, written the same way,
//! whoever writes it. It has no dependencies, which is what lets it build
//! for both targets.
//!
//! # The pieces, bottom up
//!
//! - [`Series`]: one series of durations. It keeps exact integer sums
//!   (count, Σx, Σx², min, max) and derives the mean and the standard
//!   deviation from them only when asked. Integer sums do not depend on the
//!   order the records arrive in, so a trace replayed in any order, split
//!   into any batches, or merged from per-thread parts gives bit-identical
//!   numbers — the replay round-trip tests rely on that.
//! - [`IdSums`] and [`KeyedSums`]: many series at once, keyed by a `u64` id
//!   (kernel ids) or any small key (`(kind, operation)`), built for the
//!   per-record loop of an analysis: no hashing for small ids, no division,
//!   no 128-bit multiplication in the common case.
//! - [`StatsTable`]: series by *name*. Ids that share a name (one kernel
//!   loaded on two GPUs has two ids) merge into one row, as in rocprofv3.
//! - [`StatRow`]: one computed line — `Calls`, `TotalDurationNs`,
//!   `AverageNs`, `Percentage` (of the table's total), `MinNs`, `MaxNs`,
//!   `StdDev` (sample standard deviation, divisor n − 1, 0 for one call) —
//!   and [`StatsTable::rows`] sorts them busiest first (ties by name, so the
//!   order is deterministic). [`StatRow::cells`] are its cells as text and
//!   [`to_csv`] a whole file.
//! - [`render`]: the one number format, and CSV quoting.
//!
//! # The number format, and where it comes from
//!
//! rocprofv3 writes its statistics files in ROCprofiler-SDK's tool library
//! (`source/lib/output/generateCSV.cpp`, `write_stats`), which streams each
//! row through a `stats_formatter` (`source/lib/output/statistics.cpp`) and
//! the CSV encoder of `source/lib/output/csv.hpp`. Read there, the rules are:
//!
//! - every text cell, the header's included, is in double quotes; numbers
//!   are bare;
//! - integers (`Calls`, `TotalDurationNs`, `MinNs`, `MaxNs`) are plain;
//! - `AverageNs` and `StdDev` have six decimals when above 0.01, and
//!   otherwise are in scientific notation with eight decimals
//!   (`0.00000000e+00` for a single call's deviation);
//! - `Percentage` has two decimals from 1 up, four decimals above 0.01, and
//!   below that scientific notation with three decimals (`5.000e-03`).
//!
//! So a row reads
//! `"JacobiIterationKernel",1000,517647434,517647.434000,42.56,510404,527365,2907.325924`,
//! which is what AMD's training material shows for real runs. [`render`]
//! writes exactly that (with a `"` inside a name doubled, which rocprofv3
//! does not do but every CSV reader expects), so files from rocwasm and from
//! rocprofv3 can be compared as text.
//!
//! The *numbers* are rocprofv3's definitions, not its arithmetic: rocprofv3
//! sums squares in 64 bits (which wraps for long kernels) and subtracts in
//! floating point; [`Series`] keeps the sums exact and computes the variance
//! from them with one rounding.
//!
//! ```
//! use rocwasm_stats::StatsTable;
//! let mut t = StatsTable::new();
//! t.add("copy", 10);
//! t.add("copy", 30);
//! t.add("scale", 60);
//! let rows = t.rows();
//! assert_eq!(rows[0].name, "scale");
//! assert_eq!(rows[1].average_ns, 20.0);
//! assert_eq!(
//!     t.to_csv(),
//!     "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"\n\
//!      \"scale\",1,60,60.000000,60.00,60,60,0.00000000e+00\n\
//!      \"copy\",2,40,20.000000,40.00,10,30,14.142136\n"
//! );
//! ```

#![forbid(unsafe_code)]

mod hash;
mod keyed;
pub mod render;
mod row;
mod series;
mod table;

pub use hash::{FastHash, FastHasher};
pub use keyed::{IdSums, KeyedSums};
pub use render::{format_ns, format_percentage, COLUMNS};
pub use row::{to_csv, StatRow};
pub use series::Series;
pub use table::StatsTable;
