//! `rocwasm merge A.db B.db … -o MERGED.db`: several processes' rocpd
//! databases as one (`rocwasm_formats::rocpd::merge`).

use rocwasm_formats::rocpd::merge::merge as merge_databases;

use crate::cli::MergeArgs;
use crate::failure::{Failure, Result};

pub fn merge(args: MergeArgs) -> Result {
    // Every refusal (not a rocpd file, a run twice, an existing output) is
    // the user's to fix: status 2.
    let report = merge_databases(&args.inputs, &args.output).map_err(Failure::Usage)?;
    let runs: usize = report.inputs.iter().map(|(_, r)| r.len()).sum();
    println!(
        "merged {runs} run(s) from {} database(s) into {}",
        report.inputs.len(),
        args.output.display()
    );
    for (table, rows) in report.rows.iter().filter(|(_, n)| **n > 0) {
        println!("  {table}: {rows} row(s)");
    }
    Ok(())
}
