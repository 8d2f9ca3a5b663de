//! The keep/drop rule and glob matching; no host calls.

/// A kernel-name pattern: a glob when it has `*` or `?`, else a substring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: Vec<char>,
    glob: bool,
    case_sensitive: bool,
}

impl Pattern {
    pub fn new(pattern: &str, case_sensitive: bool) -> Pattern {
        let text = if case_sensitive {
            pattern.to_string()
        } else {
            pattern.to_lowercase()
        };
        Pattern {
            glob: text.contains(['*', '?']),
            text: text.chars().collect(),
            case_sensitive,
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = if self.case_sensitive {
            name.chars().collect()
        } else {
            name.to_lowercase().chars().collect()
        };
        if self.glob {
            glob_match(&self.text, &name)
        } else {
            self.text.is_empty()
                || name
                    .windows(self.text.len())
                    .any(|w| w == self.text.as_slice())
        }
    }
}

/// Whole-string glob match with `*` and `?`, linear backtracking (remember
/// the last `*` and retry one character further on a mismatch).
fn glob_match(pattern: &[char], text: &[char]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every configured condition must hold.
    #[default]
    All,
    /// One configured condition is enough.
    Any,
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub pattern: Option<Pattern>,
    pub min_duration_ns: Option<u64>,
    pub mode: Mode,
    pub invert: bool,
}

impl Filter {
    /// True when no condition is configured.
    pub fn is_pass_through(&self) -> bool {
        self.pattern.is_none() && self.min_duration_ns.is_none()
    }

    /// Whether to keep a dispatch. `name_matches` is asked only when a
    /// pattern is configured (it may need a name lookup).
    pub fn keep(&self, name_matches: impl FnOnce() -> bool, duration_ns: u64) -> bool {
        if self.is_pass_through() {
            return true;
        }
        let long_enough = self.min_duration_ns.map(|min| duration_ns >= min);
        let keep = match (self.pattern.is_some(), long_enough) {
            (true, None) => name_matches(),
            (false, Some(long)) => long,
            (true, Some(long)) => match self.mode {
                Mode::All => long && name_matches(),
                Mode::Any => long || name_matches(),
            },
            (false, None) => true,
        };
        keep != self.invert
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_and_glob_patterns() {
        let sub = Pattern::new("gemm", true);
        assert!(sub.matches("Cijk_gemm_NN"));
        assert!(!sub.matches("Cijk_GEMM_NN"));
        assert!(Pattern::new("gemm", false).matches("Cijk_GEMM_NN"));
        let glob = Pattern::new("void scale<?>*", true);
        assert!(glob.matches("void scale<f>(float*, int)"));
        assert!(!glob.matches("void scale<ff>(float*)"));
        assert!(Pattern::new("*gemm*", true).matches("gemm"));
        assert!(
            !Pattern::new("gemm*", true).matches("xgemm"),
            "globs anchor at both ends"
        );
        assert!(Pattern::new("a*b*c", true).matches("a__b__b__c"));
        assert!(!Pattern::new("a*b*c", true).matches("a__b__b__"));
        assert!(Pattern::new("", true).matches("anything"));
    }

    #[test]
    fn conditions_combine_by_mode_and_invert() {
        let both = |mode, invert| Filter {
            pattern: Some(Pattern::new("k", true)),
            min_duration_ns: Some(100),
            mode,
            invert,
        };
        assert!(both(Mode::All, false).keep(|| true, 100));
        assert!(!both(Mode::All, false).keep(|| true, 99));
        assert!(!both(Mode::All, false).keep(|| false, 1000));
        assert!(both(Mode::Any, false).keep(|| false, 1000));
        assert!(both(Mode::Any, false).keep(|| true, 0));
        assert!(!both(Mode::Any, false).keep(|| false, 0));
        assert!(both(Mode::All, true).keep(|| false, 1000));

        let duration_only = Filter {
            min_duration_ns: Some(10),
            ..Default::default()
        };
        assert!(duration_only.keep(|| panic!("no pattern: the name is never needed"), 10));
        assert!(!duration_only.keep(|| unreachable!(), 9));
        assert!(Filter::default().keep(|| unreachable!(), 0));
    }
}
