//! [`KernelSelection`]: rocprofv3's kernel options applied to a run.
//!
//! The plan's [`KernelPlan`] becomes two things on the run's engine, set
//! before the first record:
//!
//! - the symbol table's [`KernelNaming`] (`-T`, `-M`): every kernel is
//!   named once, as it enters the table;
//! - a [`DispatchFilter`] (the name filters, the iteration range and
//!   `--kernel-rename`): the engine asks it about every completed dispatch
//!   before any buffer sees it, and a replay passes each recorded batch
//!   through it before the chain ([`rocwasm_core::Profiler::select_batch`]:
//!   the counter samples follow their dispatch's verdict).
//!   So the sinks, the stages and a plugin's own context all see the same
//!   dispatches, live or replayed.
//!
//! The order for one dispatch: rename (the innermost roctx range enclosing
//! its launch), then the name filters on the name the outputs will write,
//! then the iteration count of that name (only dispatches the name filters
//! kept count). What was dropped is counted per reason and reported at the
//! end ([`KernelSelection::report`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rocwasm_core::{DispatchFilter, KernelDispatch, KernelNaming, Profiler, SymbolTable};
use rocwasm_plan::{KernelFilters, KernelOptionError, KernelPlan, Verdict};

/// The dispatch filter of one run. See the module documentation.
pub struct KernelSelection {
    plan: KernelPlan,
    filters: KernelFilters,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Per kernel id (after renaming): its name and the name filters' verdict.
    by_id: HashMap<u64, (Arc<str>, Verdict)>,
    /// Per kernel name: dispatches that passed the name filters so far.
    iterations: HashMap<Arc<str>, u64>,
    seen: u64,
    not_included: u64,
    excluded: u64,
    outside: u64,
    renamed: u64,
}

impl KernelSelection {
    /// Applies `plan` to `profiler`: its naming now, its filter when it
    /// selects (returned, for the report). Fails on a bad expression, naming
    /// the option and value.
    pub fn install(
        plan: &KernelPlan,
        profiler: &Profiler,
    ) -> Result<Option<Arc<KernelSelection>>, KernelOptionError> {
        let filters = plan.compile()?;
        profiler.symbols().set_naming(KernelNaming {
            mangled: plan.mangled,
            truncate: plan.truncate,
        });
        if !plan.selects() {
            return Ok(None);
        }
        let selection = Arc::new(KernelSelection {
            plan: plan.clone(),
            filters,
            state: Mutex::new(State::default()),
        });
        // A fresh engine has no filter yet: this cannot be refused.
        let _ = profiler.set_dispatch_filter(selection.clone());
        Ok(Some(selection))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One line for the run's summary: what was kept, what was dropped and
    /// why, what was renamed.
    pub fn report(&self, live: bool) -> String {
        let s = self.state();
        let kept = s.seen - s.not_included - s.excluded - s.outside;
        let mut parts = Vec::new();
        let mut reason = |n: u64, what: String| {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        };
        if let Some(re) = &self.plan.include_regex {
            reason(
                s.not_included,
                format!("not matching {} `{re}`", KernelPlan::INCLUDE),
            );
        }
        if let Some(re) = &self.plan.exclude_regex {
            reason(
                s.excluded,
                format!("matching {} `{re}`", KernelPlan::EXCLUDE),
            );
        }
        if let Some(r) = &self.plan.iteration_range {
            reason(
                s.outside,
                format!("outside {} `{}`", KernelPlan::ITERATIONS, r.as_str()),
            );
        }
        let mut line = format!(
            "kernel selection kept {kept} of {} kernel dispatch(es)",
            s.seen
        );
        if !parts.is_empty() {
            line.push_str(&format!("; dropped {}", parts.join(", ")));
        }
        if self.plan.rename {
            if live {
                line.push_str(&format!(
                    "; {} renamed after their roctx range (--kernel-rename)",
                    s.renamed
                ));
            } else {
                line.push_str(
                    "; --kernel-rename renamed none: a recording holds no roctx range names",
                );
            }
        }
        line
    }
}

impl DispatchFilter for KernelSelection {
    fn select(
        &self,
        dispatch: &mut KernelDispatch,
        region: Option<&str>,
        symbols: &SymbolTable,
    ) -> bool {
        let mut s = self.state();
        s.seen += 1;
        if let (true, Some(region)) = (self.plan.rename, region) {
            if let Some(renamed) = symbols.renamed_kernel(dispatch.kernel_id, region) {
                dispatch.kernel_id = renamed;
                s.renamed += 1;
            }
        }
        let (name, verdict) = match s.by_id.get(&dispatch.kernel_id) {
            Some((name, verdict)) => (name.clone(), *verdict),
            None => {
                // Judged by the name the outputs write for it.
                let Some(k) = symbols.kernel(dispatch.kernel_id) else {
                    // Not (yet) known: its placeholder name, not cached (a
                    // symbol registered later must still be found).
                    let name: Arc<str> =
                        Arc::from(rocwasm_core::unknown_kernel_name(dispatch.kernel_id));
                    let verdict = self.filters.by_name(&name);
                    return self.finish(&mut s, name, verdict);
                };
                let name: Arc<str> = Arc::from(k.display_name());
                let verdict = self.filters.by_name(&name);
                s.by_id.insert(dispatch.kernel_id, (name.clone(), verdict));
                (name, verdict)
            }
        };
        self.finish(&mut s, name, verdict)
    }

    fn wants_regions(&self) -> bool {
        self.plan.rename
    }
}

impl KernelSelection {
    /// Counts the name filters' verdict, then the iteration's.
    fn finish(&self, s: &mut State, name: Arc<str>, verdict: Verdict) -> bool {
        let verdict = match verdict {
            Verdict::Keep if self.filters.counts_iterations() => {
                let n = s.iterations.entry(name).or_insert(0);
                *n += 1;
                let n = *n;
                self.filters.by_iteration(n)
            }
            v => v,
        };
        match verdict {
            Verdict::Keep => return true,
            Verdict::NotIncluded => s.not_included += 1,
            Verdict::Excluded => s.excluded += 1,
            Verdict::OutsideIterations => s.outside += 1,
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::KernelSymbol;
    use rocwasm_plan::IterationRange;

    fn engine() -> Profiler {
        let p = Profiler::new();
        for (id, name) in [(1, "square(float*)"), (2, "scale(float*, float)")] {
            p.symbols().insert_kernel(KernelSymbol {
                id,
                name: format!("_Z{id}"),
                demangled_name: name.into(),
                ..KernelSymbol::default()
            });
        }
        p
    }

    fn dispatches(ids: &[u64]) -> rocwasm_core::KernelDispatchColumns {
        ids.iter()
            .map(|&kernel_id| KernelDispatch {
                kernel_id,
                ..KernelDispatch::default()
            })
            .collect()
    }

    #[test]
    fn names_then_iterations_per_name_and_a_report() {
        let p = engine();
        let plan = KernelPlan {
            exclude_regex: Some("^scale".into()),
            iteration_range: Some(IterationRange::parse("[2-3]").unwrap()),
            ..KernelPlan::default()
        };
        let sel = KernelSelection::install(&plan, &p).unwrap().unwrap();
        let mut b = rocwasm_core::Batch {
            kernel_dispatches: dispatches(&[1, 2, 1, 2, 1, 1]),
            ..Default::default()
        };
        p.select_batch(&mut b, &mut Default::default());
        assert_eq!(
            b.kernel_dispatches.kernel_id,
            [1, 1],
            "square's 2nd and 3rd"
        );
        assert_eq!(
            sel.report(false),
            "kernel selection kept 2 of 6 kernel dispatch(es); dropped 2 matching \
             --kernel-exclude-regex `^scale`, 2 outside --kernel-iteration-range `[2-3]`"
        );
    }

    #[test]
    fn rename_takes_the_region_and_naming_applies_to_new_kernels() {
        let p = Profiler::new();
        let plan = KernelPlan {
            rename: true,
            truncate: true,
            include_regex: Some("^work$".into()),
            ..KernelPlan::default()
        };
        let sel = KernelSelection::install(&plan, &p).unwrap().unwrap();
        p.symbols().insert_kernel(KernelSymbol {
            id: 7,
            name: "_Z4workv".into(),
            demangled_name: "work()".into(),
            ..KernelSymbol::default()
        });
        assert_eq!(p.symbols().kernel(7).unwrap().demangled_name, "work");
        let mut d = KernelDispatch {
            kernel_id: 7,
            ..KernelDispatch::default()
        };
        assert!(!sel.select(&mut d, Some("outer phase"), p.symbols()));
        let renamed = d.kernel_id;
        assert_ne!(renamed, 7);
        assert_eq!(
            p.symbols().kernel(renamed).unwrap().demangled_name,
            "outer phase"
        );
        let mut d = KernelDispatch {
            kernel_id: 7,
            ..KernelDispatch::default()
        };
        assert!(sel.select(&mut d, None, p.symbols()));
        assert!(sel
            .report(true)
            .contains("1 renamed after their roctx range"));
    }

    #[test]
    fn a_bad_expression_is_refused_before_anything_is_installed() {
        let p = engine();
        let plan = KernelPlan {
            include_regex: Some("(".into()),
            truncate: true,
            ..KernelPlan::default()
        };
        let e = KernelSelection::install(&plan, &p).err().unwrap();
        assert!(e.to_string().starts_with("bad --kernel-include-regex `(`"));
        assert_eq!(
            p.symbols().kernel(1).unwrap().demangled_name,
            "square(float*)"
        );
    }
}
