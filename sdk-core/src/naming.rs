//! How kernels are named: rocprofv3's `-T/--truncate-kernels` and
//! `-M/--mangled-kernels`.
//!
//! A [`KernelNaming`] set on the [`crate::SymbolTable`] rewrites each
//! kernel symbol's `demangled_name` ([`KernelNaming::display_name`]) (the name every output writes) as it is
//! inserted, live or replayed, so the CSV, JSON, rocpd and Perfetto
//! writers, the statistics and the plugins' `symbols` imports all read the
//! same name. The mangled `name` is never changed.

/// rocprofv3's kernel-name options. The default names kernels as recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelNaming {
    /// `-M`: the display name is the mangled name.
    pub mangled: bool,
    /// `-T`: the display name stops before its argument list.
    pub truncate: bool,
}

impl KernelNaming {
    /// The name outputs write for a kernel whose code object calls it
    /// `mangled` and whose demangled name is `demangled`.
    pub fn display_name(&self, mangled: &str, demangled: &str) -> String {
        let name = if self.mangled && !mangled.is_empty() {
            mangled
        } else {
            demangled
        };
        if self.truncate {
            truncate_kernel_name(name).to_string()
        } else {
            name.to_string()
        }
    }
}

/// `name` without its argument list: up to the `(` that opens the
/// parenthesised group the name ends with (`scale(float*, int)` → `scale`,
/// `void f<int>(int) const` → `void f<int>`, `operator()(int)` →
/// `operator()`). A name that does not end in such a group (a C name, a
/// mangled name) is returned whole.
pub fn truncate_kernel_name(name: &str) -> &str {
    // Qualifiers may follow the list (`const`, `volatile`, `&`).
    let body = name.trim_end();
    let Some(close) = body.rfind(')') else {
        return name;
    };
    if !body[close + 1..]
        .split_whitespace()
        .all(|w| matches!(w, "const" | "volatile" | "&" | "&&"))
    {
        return name;
    }
    let mut depth = 0usize;
    for (i, c) in body[..=close].char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return if i == 0 { name } else { name[..i].trim_end() };
                }
            }
            _ => {}
        }
    }
    name
}

/// The readable form of a (possibly) mangled C++ name; the name itself when
/// it is not mangled or cannot be demangled.
pub fn demangle(name: &str) -> String {
    if !name.starts_with("_Z") {
        return name.to_string();
    }
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_stops_before_the_argument_list() {
        for (full, cut) in [
            ("scale(float*, float, int)", "scale"),
            ("void f<int>(int) const", "void f<int>"),
            ("operator()(int)", "operator()"),
            ("ns::k(void (*)(int), int)", "ns::k"),
            ("plain_kernel", "plain_kernel"),
            ("_Z5scalePffi", "_Z5scalePffi"),
            ("(broken", "(broken"),
            ("", ""),
        ] {
            assert_eq!(truncate_kernel_name(full), cut, "{full}");
        }
    }

    #[test]
    fn naming_chooses_the_display_name() {
        let (mangled, demangled) = ("_Z5scalePffi", "scale(float*, float, int)");
        let name = |n: KernelNaming| n.display_name(mangled, demangled);
        assert_eq!(name(KernelNaming::default()), demangled);
        let t = KernelNaming {
            truncate: true,
            ..Default::default()
        };
        assert_eq!(name(t), "scale");
        let m = KernelNaming {
            mangled: true,
            ..Default::default()
        };
        assert_eq!(name(m), mangled);
        assert_eq!(m.display_name("", "c_name"), "c_name");
    }
}
