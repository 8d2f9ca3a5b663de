//! Durations per `(kind, operation)`, reported per API domain.

use std::collections::BTreeMap;

use rocwasm_plugin_sdk::kind::{self, *};
use rocwasm_plugin_sdk::rows::api_calls;
use rocwasm_plugin_sdk::stats::{KeyedSums, StatsTable};

#[derive(Debug, Default)]
pub struct ApiAggregate {
    by_op: KeyedSums<(u32, u32)>,
}

impl ApiAggregate {
    pub fn add(&mut self, calls: api_calls::View<'_>) {
        let cols = calls
            .kind
            .iter()
            .zip(calls.operation)
            .zip(calls.start.iter().zip(calls.end));
        for ((&kind, &op), (&start, &end)) in cols {
            self.by_op.add((kind, op), end.saturating_sub(start));
        }
    }

    /// One table per domain (`hip`, `hsa`, `marker`, … or `other`), keyed by
    /// `name(kind, op)`, in domain-name order.
    pub fn by_domain(
        &self,
        mut name: impl FnMut(u32, u32) -> String,
    ) -> BTreeMap<&'static str, StatsTable> {
        let mut domains: BTreeMap<&'static str, StatsTable> = BTreeMap::new();
        for ((kind, op), series) in self.by_op.iter() {
            let domain = kind::api_domain(kind).unwrap_or("other");
            domains
                .entry(domain)
                .or_default()
                .merge(name(kind, op), series);
        }
        domains
    }
}

/// The buffer kinds to trace for `apis` = `"hip,hsa,marker"` (any subset;
/// `roctx` for the raw roctx calls). `marker` is what rocprofv3's
/// `--marker-trace` records: the application's marks and ranges, named by
/// their message (`MARKER_CORE_RANGE_API`), and the profiler-control calls.
pub fn kinds_for_apis(apis: &str) -> Result<Vec<u32>, String> {
    let mut kinds = Vec::new();
    for api in apis.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match api.to_ascii_lowercase().as_str() {
            "hip" => kinds.extend([buffer::HIP_RUNTIME_API, buffer::HIP_COMPILER_API]),
            "hsa" => kinds.extend([
                buffer::HSA_CORE_API,
                buffer::HSA_AMD_EXT_API,
                buffer::HSA_IMAGE_EXT_API,
                buffer::HSA_FINALIZE_EXT_API,
            ]),
            "marker" => kinds.extend([buffer::MARKER_CORE_RANGE_API, buffer::MARKER_CONTROL_API]),
            "roctx" => kinds.extend([
                buffer::MARKER_CORE_API,
                buffer::MARKER_CONTROL_API,
                buffer::MARKER_NAME_API,
            ]),
            other => {
                return Err(format!(
                    "config key `apis`: unknown API `{other}` (expected hip, hsa, marker, roctx)"
                ))
            }
        }
    }
    Ok(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_plugin_sdk::rows::{ApiCall, ApiCallColumns};

    fn call(kind: u32, operation: u32, start: u64, end: u64) -> ApiCall {
        ApiCall {
            kind,
            operation,
            start,
            end,
            ..Default::default()
        }
    }

    #[test]
    fn splits_domains_and_names_operations() {
        let calls: ApiCallColumns = [
            call(buffer::HIP_RUNTIME_API, 1, 0, 10),
            call(buffer::HIP_RUNTIME_API, 1, 10, 40),
            call(buffer::HIP_RUNTIME_API, 2, 0, 60),
            call(buffer::HSA_CORE_API, 1, 0, 5),
            call(buffer::MARKER_CORE_API, 3, 0, 1),
            call(buffer::KERNEL_DISPATCH, 1, 0, 1),
        ]
        .into_iter()
        .collect();
        let mut agg = ApiAggregate::default();
        agg.add(calls.view());
        let domains = agg.by_domain(|k, op| format!("{k}.{op}"));
        let calls: u64 = domains
            .values()
            .flat_map(|t| t.iter())
            .map(|(_, s)| s.count())
            .sum();
        assert_eq!(calls, 6);
        assert_eq!(
            domains.keys().copied().collect::<Vec<_>>(),
            ["hip", "hsa", "marker", "other"]
        );
        let hip: Vec<_> = domains["hip"].rows().iter().map(|r| r.cells()).collect();
        assert_eq!(
            hip[0],
            [
                "5.2",
                "1",
                "60",
                "60.000000",
                "60.00",
                "60",
                "60",
                "0.00000000e+00"
            ]
        );
        assert_eq!(&hip[1][..5], ["5.1", "2", "40", "20.000000", "40.00"]);
        assert_eq!(domains["hsa"].rows()[0].name, "1.1");
    }

    #[test]
    fn apis_map_to_kinds() {
        assert_eq!(kinds_for_apis("hip").unwrap(), [5, 6]);
        assert_eq!(
            kinds_for_apis(" marker , HSA ").unwrap(),
            [32, 8, 1, 2, 3, 4]
        );
        assert_eq!(kinds_for_apis("roctx").unwrap(), [7, 8, 9]);
        assert!(kinds_for_apis("hip,cuda").unwrap_err().contains("cuda"));
    }
}
