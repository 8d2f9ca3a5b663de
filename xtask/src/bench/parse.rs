//! Reading back what the project's bench programs print.
//!
//! The older benches (`producer`, `deliver`, `call_floor`, `ingest`,
//! `overhead.c`) print
//! tables and lines for people; these parsers read exactly those lines and
//! fail (with the line they expected) when a bench changes its output, so
//! the table never shows a number from the wrong column. The newer benches
//! (`load`, `writers`, `native_stats`) print one JSON object with `--json`.

use anyhow::{bail, Context, Result};

/// The numbers of `text` split on whitespace, all of them or an error.
fn numbers(text: &str, what: &str) -> Result<Vec<f64>> {
    text.split_whitespace()
        .map(|t| {
            t.parse::<f64>()
                .with_context(|| format!("{what}: `{t}` is not a number in `{text}`"))
        })
        .collect()
}

/// `overhead BURST BURSTS PAUSE_US` prints `cpu wall` (median ns per call).
pub fn overhead_burst(stdout: &str) -> Result<(f64, f64)> {
    match numbers(stdout.trim(), "overhead")?[..] {
        [cpu, wall] => Ok((cpu, wall)),
        _ => bail!("overhead: expected `cpu wall`, got `{}`", stdout.trim()),
    }
}

/// As [`overhead_burst`], for `overhead` run under `rocwasm run`, whose
/// summary tables share its stdout: the first line of exactly two numbers.
pub fn overhead_burst_among(stdout: &str) -> Result<(f64, f64)> {
    stdout
        .lines()
        .find_map(|l| match numbers(l.trim(), "overhead").ok()?[..] {
            [cpu, wall] => Some((cpu, wall)),
            _ => None,
        })
        .with_context(|| {
            format!(
                "overhead: no `cpu wall` line in the output of rocwasm run ({} lines)",
                stdout.lines().count()
            )
        })
}

/// `overhead … paired` prints `direct traced added` (CPU ns per call).
pub fn overhead_paired(stdout: &str) -> Result<(f64, f64, f64)> {
    match numbers(stdout.trim(), "overhead paired")?[..] {
        [direct, traced, added] => Ok((direct, traced, added)),
        _ => bail!(
            "overhead paired: expected `direct traced added`, got `{}`",
            stdout.trim()
        ),
    }
}

/// One row of the producer bench: its case name, then `cpu ns`, `wall ns`
/// (the other columns may be `-`). Returns (cpu, wall) ns per record.
pub fn producer_case(stdout: &str, case: &str) -> Result<(f64, f64)> {
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix(case) else {
            continue;
        };
        // "push LOSSLESS, 1 thread" must not match "…, 1 thread, no delivery".
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let mut cols = rest.split_whitespace();
        let mut next = |name: &str| -> Result<f64> {
            let t = cols
                .next()
                .with_context(|| format!("producer `{case}`: no {name} column"))?;
            t.parse()
                .with_context(|| format!("producer `{case}`: {name} `{t}` is not a number"))
        };
        return Ok((next("cpu ns")?, next("wall ns")?));
    }
    bail!("producer bench printed no `{case}` row")
}

/// The body rows of a bench's Markdown table of `columns` columns whose
/// first column is a record count: (that count, the row's cells, the line).
/// The heading and the rule are skipped (their first cell is no number), so
/// are lines of other shapes.
fn table_rows(stdout: &str, columns: usize) -> impl Iterator<Item = (u64, Vec<&str>, &str)> {
    stdout.lines().filter_map(move |line| {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // A leading and a trailing empty cell around the columns.
        if cells.len() != columns + 2 {
            return None;
        }
        let records = cells[1].parse::<u64>().ok()?;
        Some((records, cells[1..=columns].to_vec(), line))
    })
}

/// The call_floor bench's table rows, `| records | arguments | ns/call med
/// | ns/call best |`: (records, arguments, median ns per call).
pub fn call_floor_rows(stdout: &str) -> Result<Vec<(u64, String, f64)>> {
    let rows = table_rows(stdout, 4)
        .map(|(records, cells, line)| {
            let ns: f64 = cells[2]
                .parse()
                .with_context(|| format!("call_floor: `{}` is not a time in `{line}`", cells[2]))?;
            Ok((records, cells[1].to_string(), ns))
        })
        .collect::<Result<Vec<_>>>()?;
    if rows.is_empty() {
        bail!("the call_floor bench printed no table rows");
    }
    Ok(rows)
}

/// A row of the deliver bench's table.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliverRow {
    /// Records per batch.
    pub records: u64,
    /// Which columns were sent (`kernel_id,start,end`, `all 18`).
    pub columns: String,
    /// Median round, records per second.
    pub per_sec: f64,
    /// Best round, records per second.
    pub best_per_sec: f64,
}

/// The deliver bench's table rows:
/// `| records | columns sent | calls | ns/call med | ns/call best | ns/record | M rec/s | best |`.
pub fn deliver_rows(stdout: &str) -> Result<Vec<DeliverRow>> {
    let rows = table_rows(stdout, 8)
        .map(|(records, cells, line)| {
            let rate = |i: usize| -> Result<f64> {
                let m: f64 = cells[i].parse().with_context(|| {
                    format!("deliver: `{}` is not a rate in `{line}`", cells[i])
                })?;
                Ok(m * 1e6)
            };
            Ok(DeliverRow {
                records,
                columns: cells[1].to_string(),
                per_sec: rate(6)?,
                best_per_sec: rate(7)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if rows.is_empty() {
        bail!("the deliver bench printed no table rows");
    }
    Ok(rows)
}

/// What the ingest bench measured, records (rows) per second.
#[derive(Debug, Clone, PartialEq)]
pub struct Ingest {
    /// `rocwasm replay`'s reader into the native kernel statistics.
    pub replay: f64,
    /// rusqlite stepping every row of the same queries.
    pub rusqlite: f64,
    /// The `sqlite3` command-line tool, when installed.
    pub sqlite3_cli: Option<f64>,
}

/// The ingest bench's `replay -> kernel-stats:`, `rusqlite raw row rate:`
/// and `sqlite3 CLI (> null):` lines.
pub fn ingest(stdout: &str) -> Result<Ingest> {
    let rate = |prefix: &str| -> Option<Result<f64>> {
        let line = stdout.lines().find(|l| l.starts_with(prefix))?;
        let t = line[prefix.len()..].split_whitespace().next().unwrap_or("");
        Some(
            t.parse()
                .with_context(|| format!("ingest: `{t}` is not a rate in `{line}`")),
        )
    };
    let need = |prefix: &str| -> Result<f64> {
        rate(prefix).with_context(|| format!("the ingest bench printed no `{prefix}` line"))?
    };
    Ok(Ingest {
        replay: need("replay -> kernel-stats:")?,
        rusqlite: need("rusqlite raw row rate:")?,
        sqlite3_cli: rate("sqlite3 CLI (> null):").transpose()?,
    })
}

/// The one JSON object a `--json` bench prints (its last non-empty line).
pub fn json(stdout: &str, bench: &str) -> Result<serde_json::Value> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .with_context(|| format!("{bench} printed nothing"))?;
    serde_json::from_str(line).with_context(|| format!("{bench} printed `{line}`, not JSON"))
}

/// A number at `pointer` (`/cold_ms`) of a bench's JSON.
pub fn number(v: &serde_json::Value, pointer: &str, bench: &str) -> Result<f64> {
    v.pointer(pointer)
        .and_then(serde_json::Value::as_f64)
        .with_context(|| format!("{bench}: no number at {pointer} in {v}"))
}

/// `KEY=value` of the first line starting with `tag ` in a program's
/// output (`COUNTS kernels=3 copies=4` → `field(out, "COUNTS", "kernels")`
/// is 3); the application's lines may be mixed with the profiler's.
pub fn field(stdout: &str, tag: &str, key: &str) -> Result<f64> {
    let prefix = format!("{tag} ");
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .with_context(|| format!("no `{tag} …` line in the program's output"))?;
    let value = line
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .with_context(|| format!("no `{key}=` in `{tag} {line}`"))?;
    value
        .parse()
        .with_context(|| format!("`{key}={value}` in `{tag} {line}` is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_lines() {
        assert_eq!(overhead_burst("36.6 132.4\n").unwrap(), (36.6, 132.4));
        assert_eq!(
            overhead_paired("36.4 68.6 32.2\n").unwrap(),
            (36.4, 68.6, 32.2)
        );
        assert!(overhead_burst("36.6\n").is_err());
        let run =
            "[api-stats] HIP API statistics (1 row(s))\n│ 200000 ┆ 5 │\n113.4 1037.4\n7 8 9\n";
        assert_eq!(overhead_burst_among(run).unwrap(), (113.4, 1037.4));
        assert!(overhead_burst_among("[kernel-stats] (0 row(s))\n1 2 3\n").is_err());
        let out = "DEVICES n=1\nCOUNTS kernels=30 copies=0\nrocwasm: wrote x\nPEAK rss_kb=11016\n";
        assert_eq!(field(out, "COUNTS", "kernels").unwrap(), 30.0);
        assert_eq!(field(out, "PEAK", "rss_kb").unwrap(), 11016.0);
        assert!(field(out, "COUNTS", "markers").is_err());
        assert!(field(out, "RESULT", "x").is_err());
        assert!(overhead_paired("a b c").is_err());
    }

    const PRODUCER: &str = "\
producer cost per 64-byte record (2000000 records per run, best of 7 runs)
case                                         cpu ns  wall ns    instr  consumer ns  dropped
push LOSSLESS, 1 thread, no delivery            5.4      5.5        -            -       0%
push LOSSLESS, 1 thread                         6.3      9.1        -         21.0       0%
push LOSSLESS, 8 threads                        7.9     30.2        -         19.5       0%
";

    #[test]
    fn producer_rows_by_exact_case() {
        assert_eq!(
            producer_case(PRODUCER, "push LOSSLESS, 1 thread").unwrap(),
            (6.3, 9.1)
        );
        assert_eq!(
            producer_case(PRODUCER, "push LOSSLESS, 1 thread, no delivery").unwrap(),
            (5.4, 5.5)
        );
        assert_eq!(
            producer_case(PRODUCER, "push LOSSLESS, 8 threads").unwrap(),
            (7.9, 30.2)
        );
        assert!(producer_case(PRODUCER, "push DISCARD, 8 threads").is_err());
    }

    const DELIVER: &str = "\
cargo bench -p rocwasm-plugin-host --bench deliver
kernel-stats, one stage, 8 kernels interleaved; median and best of 7 rounds of ≥ 0.15 s per row

|  records | columns sent        |    calls |  ns/call med | ns/call best |  ns/record |   M rec/s |      best |
|----------|---------------------|----------|--------------|--------------|------------|-----------|-----------|
|      256 | kernel_id,start,end |   170000 |         6100 |         5900 |      23.83 |      42.0 |      43.4 |
|     4096 | kernel_id,start,end |    50000 |        20500 |        19600 |       5.00 |     199.8 |     209.0 |
";

    #[test]
    fn deliver_table_rows() {
        let rows = deliver_rows(DELIVER).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[1],
            DeliverRow {
                records: 4096,
                columns: "kernel_id,start,end".into(),
                per_sec: 199.8e6,
                best_per_sec: 209.0e6,
            }
        );
        assert!(deliver_rows("no table\n").is_err());
    }

    #[test]
    fn call_floor_table_rows() {
        let out = "\
cargo bench -p rocwasm-plugin-host --bench call_floor
an empty component function called with each shape; 3 of 64 columns hold the records

|  records | arguments        |  ns/call med | ns/call best |
|----------|------------------|--------------|--------------|
|      256 | nothing          |          155 |          155 |
|      256 | 64 option lists  |         1160 |         1158 |
";
        let rows = call_floor_rows(out).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1], (256, "64 option lists".to_string(), 1160.0));
        assert!(call_floor_rows(DELIVER).is_err());
    }

    #[test]
    fn ingest_lines() {
        let out = "\
rocpd file: 100000 records, 14.5 MB, written in 0.20 s (500000 records/s via RocpdSink)
replay -> kernel-stats:       1360000 records/s  (0.735 s)
rusqlite raw row rate:        1330000 rows/s     (0.752 s)
sqlite3 CLI (> null):          750000 rows/s     (1.333 s)
ratio replay / sqlite3 CLI: 1.81
";
        assert_eq!(
            ingest(out).unwrap(),
            Ingest {
                replay: 1.36e6,
                rusqlite: 1.33e6,
                sqlite3_cli: Some(0.75e6)
            }
        );
        let without_cli = out.replace(
            "sqlite3 CLI (> null):",
            "sqlite3 CLI not installed: skipped",
        );
        assert_eq!(ingest(&without_cli).unwrap().sqlite3_cli, None);
        assert!(ingest("replay -> kernel-stats: 5 records/s\n").is_err());
    }

    #[test]
    fn json_benches() {
        let v = json(
            "cargo bench …\n{\"cold_ms\": 812.5, \"sizes\": [{\"records\": 256}]}\n\n",
            "load",
        )
        .unwrap();
        assert_eq!(number(&v, "/cold_ms", "load").unwrap(), 812.5);
        assert_eq!(number(&v, "/sizes/0/records", "load").unwrap(), 256.0);
        assert!(number(&v, "/warm_ms", "load").is_err());
        assert!(json("not json\n", "load").is_err());
    }
}
