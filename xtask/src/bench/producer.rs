//! Producer cost per record (the `producer` bench of rocwasm-core), and
//! the per-call floor row that sets it against the paired HIP bursts of
//! the same run.

use std::process::Command;

use super::artifacts::Built;
use super::command::{or_unmeasured, output};
use super::hip::HIP_PAIRED;
use super::parse;
use super::table::{Quantity, Row, Target};

const PRODUCER_1: &str = "producer per record, 1 thread: delivery running vs none";
const PRODUCER_8: &str = "producer per record, 8 threads vs 1 thread";
const ENGINE_CALL: &str =
    "traced call in the engine alone (trace_api, buffered, no interposer), CPU";
const CLOCK_READS: &str = "two clock reads (a traced call's) vs that traced call in the engine";

pub(super) fn rows(built: &Built) -> Vec<Row> {
    let measured = (|| {
        let exe = built.bench("producer")?;
        let mut cmd = Command::new(exe);
        cmd.args(["push LOSSLESS", "trace_api buffered LOSSLESS", "clock::now"])
            .arg("--bench")
            .env("ROCWASM_BENCH_CALLGRIND", "0");
        let out = output(&mut cmd)?;
        let alone = parse::producer_case(&out, "push LOSSLESS, 1 thread, no delivery")?;
        let one = parse::producer_case(&out, "push LOSSLESS, 1 thread")?;
        let eight = parse::producer_case(&out, "push LOSSLESS, 8 threads")?;
        // What a traced call costs without the interposer, and how much of
        // it the clock is: the floor under the per-call target.
        let call = parse::producer_case(&out, "trace_api buffered LOSSLESS")?;
        let clock = parse::producer_case(&out, "clock::now (reference; 2 per traced call)")?;
        Ok(vec![
            Row::measured(PRODUCER_1, Quantity::Ns(one.0), Some(Quantity::Ns(alone.0))),
            Row::measured(PRODUCER_8, Quantity::Ns(eight.0), Some(Quantity::Ns(one.0))),
            Row::measured(ENGINE_CALL, Quantity::Ns(call.0), None),
            Row::measured(
                CLOCK_READS,
                Quantity::Ns(2.0 * clock.0),
                Some(Quantity::Ns(call.0)),
            ),
        ])
    })();
    or_unmeasured(
        measured,
        &[
            (PRODUCER_1, &[]),
            (PRODUCER_8, &[]),
            (ENGINE_CALL, &[]),
            (CLOCK_READS, &[]),
        ],
    )
}

const HIP_FLOOR: &str = "HIP call in bursts, CPU, paired: added by tracing vs its floor \
     (two clock reads + one record store)";

/// Issue 32's per-call target, from two groups of the same run: what
/// tracing adds to a HIP call (the paired bursts, traced minus untraced)
/// against the floor under it, two reads of the clock (a call's start and
/// end) plus one record pushed into a buffer (the producer's one thread, no
/// delivery). `None` when neither group ran (`--only`).
pub(super) fn floor_row(rows: &[Row]) -> Option<Row> {
    let get = |figure: &str| {
        rows.iter()
            .find(|r| r.figure == figure)
            .map(|r| r.value.clone())
    };
    let (paired, clock, push) = (get(HIP_PAIRED), get(CLOCK_READS), get(PRODUCER_1));
    if paired.is_none() && clock.is_none() {
        return None;
    }
    let row = match (paired, clock, push) {
        (
            Some(Ok((Quantity::Ns(traced), Some(Quantity::Ns(direct))))),
            Some(Ok((Quantity::Ns(two_reads), _))),
            Some(Ok((_, Some(Quantity::Ns(store))))),
        ) => Row::measured(
            HIP_FLOOR,
            Quantity::Ns(traced - direct),
            Some(Quantity::Ns(two_reads + store)),
        ),
        _ => Row::not_measured(
            HIP_FLOOR,
            "needs the HIP call and producer groups measured in the same run",
        ),
    };
    Some(row.target(Target::MaxRatio(1.3)))
}
