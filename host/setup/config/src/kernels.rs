//! `[kernels]` and its flags: rocprofv3's kernel options in a chain file.
//!
//! ```toml
//! [kernels]
//! include_regex = "^(gemm|scale)"   # --kernel-include-regex
//! exclude_regex = "_small$"         # --kernel-exclude-regex
//! iteration_range = "[2,5-7]"       # --kernel-iteration-range
//! truncate = true                   # -T/--truncate-kernels
//! mangled = false                   # -M/--mangled-kernels
//! rename = false                    # --kernel-rename
//! ```
//!
//! A flag replaces the chain file's value of the same option (a boolean
//! flag can only turn its option on). What the options mean, their syntax
//! and their checks are `rocwasm_plan::kernels`'; here they are only read,
//! and a bad value becomes a [`ConfigError`] at the value (chain file) or
//! naming the flag.

use toml::Spanned;

use crate::error::ConfigError;
use crate::flags::TraceFlags;
use crate::model::{Chain, IterationRange, KernelPlan};
use crate::raw::RawKernels;
use crate::validate::Validator;

impl Validator<'_> {
    /// `[kernels]`, checked; absent: every dispatch kept, names as recorded.
    pub(crate) fn kernels(
        &self,
        raw: Option<&Spanned<RawKernels>>,
    ) -> Result<KernelPlan, ConfigError> {
        let Some(raw) = raw.map(Spanned::get_ref) else {
            return Ok(KernelPlan::default());
        };
        let mut plan = KernelPlan {
            include_regex: raw.include_regex.as_ref().map(|v| v.get_ref().clone()),
            exclude_regex: raw.exclude_regex.as_ref().map(|v| v.get_ref().clone()),
            iteration_range: None,
            truncate: raw.truncate.as_ref().is_some_and(|v| *v.get_ref()),
            mangled: raw.mangled.as_ref().is_some_and(|v| *v.get_ref()),
            rename: raw.rename.as_ref().is_some_and(|v| *v.get_ref()),
        };
        if let Some(r) = &raw.iteration_range {
            let range = IterationRange::parse(r.get_ref())
                .map_err(|e| self.src.error(r.span(), in_file("iteration_range", &e)))?;
            plan.iteration_range = Some(range);
        }
        if let Err(e) = plan.compile() {
            let (key, at) = if e.option == KernelPlan::INCLUDE {
                ("include_regex", &raw.include_regex)
            } else {
                ("exclude_regex", &raw.exclude_regex)
            };
            let span = at.as_ref().map(Spanned::span).unwrap_or_default();
            return Err(self.src.error(span, in_file(key, &e)));
        }
        Ok(plan)
    }
}

/// A bad value in the file, naming its key and the flag it stands for.
fn in_file(key: &str, e: &rocwasm_plan::KernelOptionError) -> String {
    format!(
        "bad `{key}` in [kernels] (rocprofv3's {}) `{}`: {}",
        e.option, e.value, e.reason
    )
}

impl Chain {
    /// Amends `[kernels]` with the kernel flags, then checks the result.
    pub(crate) fn apply_kernel_flags(&mut self, flags: &TraceFlags) -> Result<(), ConfigError> {
        let k = &mut self.kernels;
        if let Some(re) = &flags.kernel_include_regex {
            k.include_regex = Some(re.clone());
        }
        if let Some(re) = &flags.kernel_exclude_regex {
            k.exclude_regex = Some(re.clone());
        }
        if let Some(r) = &flags.kernel_iteration_range {
            k.iteration_range = Some(IterationRange::parse(r).map_err(invalid)?);
        }
        k.truncate |= flags.truncate_kernels;
        k.mangled |= flags.mangled_kernels;
        k.rename |= flags.kernel_rename;
        k.compile().map(drop).map_err(invalid)
    }
}

fn invalid(e: rocwasm_plan::KernelOptionError) -> ConfigError {
    ConfigError::Invalid {
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags() -> TraceFlags {
        TraceFlags {
            kernel_trace: true,
            ..Default::default()
        }
    }

    #[test]
    fn kernel_flags_reach_the_chain_and_its_plan() {
        let c = Chain::from_flags(&TraceFlags {
            kernel_include_regex: Some("^sq".into()),
            kernel_exclude_regex: Some("x$".into()),
            kernel_iteration_range: Some("[2,5-7]".into()),
            truncate_kernels: true,
            mangled_kernels: true,
            kernel_rename: true,
            ..flags()
        })
        .unwrap();
        let k = &c.kernels;
        assert_eq!(k.include_regex.as_deref(), Some("^sq"));
        assert_eq!(k.exclude_regex.as_deref(), Some("x$"));
        assert_eq!(k.iteration_range.as_ref().unwrap().as_str(), "[2,5-7]");
        assert!(k.truncate && k.mangled && k.rename);
        let plan = c.to_plan(&Default::default());
        assert_eq!(&plan.kernels, k);
    }

    #[test]
    fn bad_kernel_flags_name_the_flag_and_value() {
        for (f, want) in [
            (
                TraceFlags {
                    kernel_include_regex: Some("(".into()),
                    ..flags()
                },
                "bad --kernel-include-regex `(`: not a regular expression",
            ),
            (
                TraceFlags {
                    kernel_exclude_regex: Some("[z-a]".into()),
                    ..flags()
                },
                "bad --kernel-exclude-regex `[z-a]`: not a regular expression",
            ),
            (
                TraceFlags {
                    kernel_iteration_range: Some("[3-1]".into()),
                    ..flags()
                },
                "bad --kernel-iteration-range `[3-1]`: the span `3-1` ends before it starts",
            ),
        ] {
            let e = Chain::from_flags(&f).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
    }
}
