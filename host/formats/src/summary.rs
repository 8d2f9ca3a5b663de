//! rocprofv3's end-of-run summaries (`-S/--summary`, `--summary-groups`)
//! over a run's statistics ([`StatsReport`]), as text.
//!
//! Each summary is one table over a set of domains (`KERNEL_DISPATCH`,
//! `HIP_API`, `HSA_API`, `MARKER_API`, `MEMORY_COPY`, [`StatsDomain::title`]):
//! one row per name of each domain, with the domain, calls, total, average,
//! the row's share of the table's total, min, max and standard deviation,
//! busiest first, under `ROCPROFV3 <label>:` as rocprofv3 prints it.
//! `--summary-groups` tables come first, one per expression, labelled with
//! the domains they cover (`KERNEL_DISPATCH + MEMORY_COPY SUMMARY`); then
//! `-S`'s `SUMMARY` of every domain. The rows are the statistics files'
//! rows ([`StatsReport::tables`]): the calls and totals of a summary are
//! those of the trace files, to the nanosecond. What the options mean is
//! `rocwasm_plan::summary`'s.

use rocwasm_plan::{KernelOptionError, SummaryPlan};

use crate::stats::{StatRow, StatsDomain, StatsReport};

impl StatsReport {
    /// The summaries `plan` asks for, as text (empty when it asks for
    /// none). Fails on a bad option, naming it.
    pub fn rocprofv3_summaries(&self, plan: &SummaryPlan) -> Result<String, KernelOptionError> {
        let (unit, per_unit) = plan.unit()?;
        let mut out = String::new();
        for (expr, matcher) in plan.groups.iter().zip(plan.group_matchers()?) {
            let domains: Vec<StatsDomain> = StatsDomain::ALL
                .into_iter()
                .filter(|d| matcher.is_match(d.title()) && !self.table(*d).is_empty())
                .collect();
            if domains.is_empty() {
                out.push_str(&format!(
                    "\nROCPROFV3 SUMMARY: the group `{expr}` matches no traced domain (domains: {})\n",
                    self.traced_titles()
                ));
                continue;
            }
            let names: Vec<&str> = domains.iter().map(|d| d.title()).collect();
            let label = format!("{} SUMMARY", names.join(" + "));
            out.push_str(&self.render(&label, &domains, unit, per_unit));
        }
        if plan.all {
            out.push_str(&self.render("SUMMARY", &StatsDomain::ALL, unit, per_unit));
        }
        Ok(out)
    }

    /// The titles of the domains with rows, for a message.
    fn traced_titles(&self) -> String {
        let titles: Vec<&str> = StatsDomain::ALL
            .into_iter()
            .filter(|d| !self.table(*d).is_empty())
            .map(StatsDomain::title)
            .collect();
        if titles.is_empty() {
            "none".into()
        } else {
            titles.join(", ")
        }
    }

    /// One table over `domains`.
    fn render(&self, label: &str, domains: &[StatsDomain], unit: &str, per_unit: u64) -> String {
        let mut rows: Vec<(&StatRow, StatsDomain)> = domains
            .iter()
            .flat_map(|d| self.table(*d).iter().map(move |r| (r, *d)))
            .collect();
        if rows.is_empty() {
            return format!("\nROCPROFV3 {label}: no traced records\n");
        }
        rows.sort_by(|a, b| {
            b.0.total_ns
                .cmp(&a.0.total_ns)
                .then_with(|| a.1.cmp(&b.1))
                .then_with(|| a.0.name.cmp(&b.0.name))
        });
        let total: u128 = rows.iter().map(|(r, _)| u128::from(r.total_ns)).sum();
        let time = |ns: u64| {
            if per_unit == 1 {
                ns.to_string()
            } else {
                (ns as f64 / per_unit as f64).to_string()
            }
        };
        let float = |ns: f64| format!("{:.3e}", ns / per_unit as f64);
        let header = [
            "NAME".to_string(),
            "DOMAIN".into(),
            "CALLS".into(),
            format!("DURATION ({unit})"),
            format!("AVERAGE ({unit})"),
            "PERCENT (INC)".into(),
            format!("MIN ({unit})"),
            format!("MAX ({unit})"),
            "STDDEV".into(),
        ];
        let body: Vec<[String; 9]> = rows
            .iter()
            .map(|(r, d)| {
                let percent = if total == 0 {
                    0.0
                } else {
                    100.0 * r.total_ns as f64 / total as f64
                };
                [
                    r.name.clone(),
                    d.title().to_string(),
                    r.calls.to_string(),
                    time(r.total_ns),
                    float(r.average_ns),
                    format!("{percent:.6}"),
                    time(r.min_ns),
                    time(r.max_ns),
                    float(r.stddev),
                ]
            })
            .collect();
        let mut widths = header.clone().map(|h| h.chars().count());
        for row in &body {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String; 9], numbers: bool| {
            let mut s = String::from("|");
            for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                if numbers && i >= 2 {
                    s.push_str(&format!(" {cell:>w$} |"));
                } else {
                    s.push_str(&format!(" {cell:<w$} |"));
                }
            }
            s.push('\n');
            s
        };
        let mut out = format!("\nROCPROFV3 {label}:\n\n");
        out.push_str(&line(&header, false));
        out.push('|');
        for w in widths {
            out.push_str(&"-".repeat(w + 2));
            out.push('|');
        }
        out.push('\n');
        for row in &body {
            out.push_str(&line(row, true));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::OperationNames;
    use crate::stats::StatsAccumulator;
    use rocwasm_core::{
        ApiCall, Batch, BufferTracingKind, KernelDispatch, MemoryCopy, SymbolTable,
    };

    fn report() -> StatsReport {
        let mut b = Batch::default();
        for (id, d) in [(1u64, 10u64), (1, 30), (2, 5)] {
            b.kernel_dispatches.push(KernelDispatch {
                kernel_id: id,
                start: 100,
                end: 100 + d,
                ..Default::default()
            });
        }
        b.memory_copies.push(MemoryCopy {
            operation: 1,
            start: 0,
            end: 100,
            ..Default::default()
        });
        b.api_calls.push(ApiCall {
            kind: BufferTracingKind::HipRuntimeApi.raw(),
            operation: 1,
            start: 0,
            end: 55,
            ..Default::default()
        });
        let mut acc = StatsAccumulator::new();
        acc.add_batch(&b);
        acc.report(&SymbolTable::new(), &OperationNames::new())
    }

    fn rows(text: &str) -> Vec<Vec<String>> {
        text.lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| NAME"))
            .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
            .collect()
    }

    #[test]
    fn one_summary_of_every_domain_busiest_first_with_exact_totals() {
        let plan = SummaryPlan {
            all: true,
            ..Default::default()
        };
        let text = report().rocprofv3_summaries(&plan).unwrap();
        assert!(text.starts_with("\nROCPROFV3 SUMMARY:\n\n| NAME"), "{text}");
        let r = rows(&text);
        assert_eq!(r.len(), 4, "{text}");
        // The copy (100 ns) first, then the HIP call (55), kernel_1 (40), kernel_2 (5).
        assert_eq!(r[0][2], "MEMORY_COPY");
        assert_eq!((r[1][2].as_str(), r[1][4].as_str()), ("HIP_API", "55"));
        assert_eq!((r[2][1].as_str(), r[2][3].as_str()), ("kernel_1", "2"));
        assert_eq!(
            (r[2][4].as_str(), r[2][7].as_str(), r[2][8].as_str()),
            ("40", "10", "30")
        );
        let percent: f64 = r.iter().map(|row| row[6].parse::<f64>().unwrap()).sum();
        assert!((percent - 100.0).abs() < 1e-3, "{percent}");
    }

    #[test]
    fn groups_cover_the_domains_they_match_and_units_scale() {
        let plan = SummaryPlan {
            groups: vec!["KERNEL_DISPATCH|MEMORY_COPY".into(), "HSA_API".into()],
            units: Some("usec".into()),
            ..Default::default()
        };
        let text = report().rocprofv3_summaries(&plan).unwrap();
        assert!(
            text.contains("ROCPROFV3 KERNEL_DISPATCH + MEMORY_COPY SUMMARY:"),
            "{text}"
        );
        assert!(text.contains("DURATION (usec)"), "{text}");
        assert!(
            text.contains("the group `HSA_API` matches no traced domain (domains: KERNEL_DISPATCH, HIP_API, MEMORY_COPY)"),
            "{text}"
        );
        assert!(!text.contains("ROCPROFV3 SUMMARY:\n"), "no -S: {text}");
        let r = rows(&text);
        assert_eq!(r.len(), 3, "{text}");
        assert_eq!(r[0][4], "0.1", "100 ns in usec: {text}");
    }
}
