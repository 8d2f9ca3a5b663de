//! `abuser` (test plugin): a plugin that stays inside the WIT contract but
//! abuses what the host grants it, one way per run, chosen by config key
//! `do`:
//!
//! | `do` | what it does | other keys |
//! |---|---|---|
//! | `flood-output` | appends `bytes` (default 1 MiB) to `flood.bin` on every batch, ignoring the host's refusals | `bytes` |
//! | `huge-summary` | `fini` returns a table of `rows` × `cols` cells (default 1 000 000 × 4), each `cell` bytes long (default 8) | `rows`, `cols`, `cell` |
//! | `huge-log` | logs a `bytes`-long message (default 8 MiB) on every batch | `bytes` |
//! | `slow` | spends `ms` milliseconds (default 50) on every batch, polling `clock.now` | `ms` |
//! | `host-loop` | on its first batch calls host function `api` (`clock`, default, or `names`) in an endless loop | `api` |
//! | `garbage-correlation` | asks for external-correlation requests of kind `KERNEL_DISPATCH` (on the chain's context when there is one) and answers each with a garbage value (a different one each time, `u64::MAX` first) | — |
//!
//! `trace` (comma-separated buffer kinds) sets up tracing in `init` when
//! the chain sets up nothing for the stage. It counts what it receives:
//! `fini` (except with `huge-summary`) returns one table of deliveries and
//! records.

use rocwasm_plugin_sdk::bindings::rocwasm::plugin::names;
use rocwasm_plugin_sdk::clock;
use rocwasm_plugin_sdk::prelude::*;

/// The abuse of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Abuse {
    #[default]
    FloodOutput,
    HugeSummary,
    HugeLog,
    Slow,
    HostLoop,
    GarbageCorrelation,
}

impl Abuse {
    fn parse(name: &str) -> Result<Abuse, String> {
        Ok(match name.trim() {
            "flood-output" => Abuse::FloodOutput,
            "huge-summary" => Abuse::HugeSummary,
            "huge-log" => Abuse::HugeLog,
            "slow" => Abuse::Slow,
            "host-loop" => Abuse::HostLoop,
            "garbage-correlation" => Abuse::GarbageCorrelation,
            other => return Err(format!("config key `do`: unknown abuse `{other}`")),
        })
    }
}

#[derive(Default)]
struct Abuser {
    abuse: Abuse,
    bytes: usize,
    ms: u64,
    names_api: bool,
    batches: u64,
    records: u64,
    refused: u64,
    answers: u64,
    chain_context: Option<u64>,
}

/// A garbage value: `u64::MAX` first, then a xorshift sequence.
fn garbage(n: u64) -> u64 {
    if n == 0 {
        return u64::MAX;
    }
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^ (x << 17)
}

impl Abuser {
    /// Asks for external-correlation requests on the chain's context (so
    /// the garbage lands in the records every stage of the chain gets), or
    /// on a context of its own outside a chain.
    fn set_up_requests(&self) -> Result<(), String> {
        let own = match self.chain_context {
            Some(_) => None,
            None => Some(profiler::create_context().map_err(|s| format!("create-context: {s:?}"))?),
        };
        let ctx = own.or(self.chain_context).unwrap_or_default();
        profiler::configure_external_correlation_request(
            ctx,
            &[external_correlation::KERNEL_DISPATCH],
        )
        .map_err(|s| format!("configure-external-correlation-request: {s:?}"))?;
        match own {
            Some(ctx) => profiler::start_context(ctx).map_err(|s| format!("start-context: {s:?}")),
            None => Ok(()),
        }
    }

    fn host_loop(&self) -> ! {
        let mut sink = 0u64;
        loop {
            if self.names_api {
                for kind in names::buffer_kinds() {
                    sink = sink
                        .wrapping_add(names::buffer_kind_name(kind).map_or(0, |n| n.len() as u64));
                }
            } else {
                sink = sink.wrapping_add(clock::now());
            }
            core::hint::black_box(sink);
        }
    }
}

impl AnalysisPlugin for Abuser {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.chain_context = info.chain_context;
        true
    }

    fn init(&mut self) -> Result<(), String> {
        self.abuse = Abuse::parse(&config::get("do").unwrap_or_default())?;
        let default_bytes = match self.abuse {
            Abuse::HugeLog => 8 << 20,
            _ => 1 << 20,
        };
        self.bytes = config::get_or("bytes", default_bytes)?;
        self.ms = config::get_or("ms", 50u64)?;
        self.names_api = match config::get("api").as_deref() {
            None | Some("clock") => false,
            Some("names") => true,
            Some(other) => {
                return Err(format!("config key `api`: `{other}` is not clock or names"))
            }
        };
        if let Some(list) = config::get("trace") {
            let kinds = parse_kind_list(&list, buffer_kind_by_name)
                .map_err(|e| format!("config key `trace`: {e}"))?;
            services::trace_buffers(&kinds)?;
        }
        if self.abuse == Abuse::GarbageCorrelation {
            self.set_up_requests()?;
        }
        Ok(())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
        self.batches += 1;
        self.records += batch.len() as u64;
        match self.abuse {
            Abuse::FloodOutput => {
                if output::append("flood.bin", vec![b'x'; self.bytes]).is_err() {
                    self.refused += 1;
                }
            }
            Abuse::HugeLog => warn!("{}", "L".repeat(self.bytes)),
            Abuse::Slow => {
                let until = clock::now().saturating_add(self.ms * 1_000_000);
                while clock::now() < until {}
            }
            Abuse::HostLoop => self.host_loop(),
            Abuse::HugeSummary | Abuse::GarbageCorrelation => {}
        }
    }

    fn on_external_correlation_request(
        &mut self,
        _request: &ExternalCorrelationRequest,
    ) -> Option<u64> {
        if self.abuse != Abuse::GarbageCorrelation {
            return None;
        }
        let v = garbage(self.answers);
        self.answers += 1;
        Some(v)
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        if self.abuse == Abuse::HugeSummary {
            let rows: usize = config::get_or("rows", 1_000_000).unwrap_or(1_000_000);
            let cols: usize = config::get_or("cols", 4).unwrap_or(4);
            let cell: usize = config::get_or("cell", 8).unwrap_or(8);
            let text = "c".repeat(cell);
            return vec![SummaryTable {
                title: "Huge".into(),
                columns: (0..cols).map(|i| format!("C{i}")).collect(),
                rows: (0..rows).map(|_| vec![text.clone(); cols]).collect(),
            }];
        }
        vec![SummaryTable {
            title: "Abuser".into(),
            columns: vec![
                "Batches".into(),
                "Records".into(),
                "Refused".into(),
                "Answers".into(),
            ],
            rows: vec![vec![
                self.batches.to_string(),
                self.records.to_string(),
                self.refused.to_string(),
                self.answers.to_string(),
            ]],
        }]
    }
}

rocwasm_plugin_sdk::export_analysis!(Abuser);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abuses_parse_and_garbage_varies() {
        assert_eq!(Abuse::parse("slow").unwrap(), Abuse::Slow);
        assert!(Abuse::parse("nice").unwrap_err().contains("nice"));
        assert_eq!(garbage(0), u64::MAX);
        assert_ne!(garbage(1), garbage(2));
    }
}
