//! The functions of the headers rocwasm does not implement. Each returns
//! `ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED` (the two name lookups return
//! NULL, "unknown"; `rocprofiler_ompt_start_tool` returns NULL, "no OMPT
//! tool"), never a silent success. `docs/NATIVE_TOOLS.md` lists them; a
//! test fails when the headers declare a function that is neither
//! implemented nor listed here.
//!
//! They are PC sampling and OpenMP (OMPT), which
//! no runtime rocwasm intercepts provides. The
//! stubs declare no parameters: on the x86-64 System V ABI the caller
//! passes arguments in registers and cleans up after itself, so a function
//! that ignores its arguments may be defined without them.

use std::ffi::{c_char, c_void};

use crate::status::{code, Code};

/// Defines each name as a function returning NOT_IMPLEMENTED.
macro_rules! not_implemented {
    ($($name:ident),+ $(,)?) => {
        /// The names of the functions this module stubs.
        pub const NAMES: &[&str] = &[$(stringify!($name)),+];
        $(
            #[doc = concat!("`", stringify!($name), "`: not implemented by rocwasm.")]
            #[no_mangle]
            pub extern "C" fn $name() -> Code {
                code(rocwasm_core::Status::NotImplemented)
            }
        )+
    };
}

not_implemented! {
    rocprofiler_configure_pc_sampling_service,
    rocprofiler_ompt_is_finalized,
    rocprofiler_ompt_is_initialized,
    rocprofiler_query_pc_sampling_agent_configurations,
}

/// Functions that return something other than a status.
pub const NAMES_RETURNING_NULL: &[&str] = &[
    "rocprofiler_get_pc_sampling_instruction_type_name",
    "rocprofiler_get_pc_sampling_instruction_not_issued_reason_name",
    "rocprofiler_ompt_start_tool",
];

/// `rocprofiler_get_pc_sampling_instruction_type_name`: NULL (no PC sampling).
#[no_mangle]
pub extern "C" fn rocprofiler_get_pc_sampling_instruction_type_name(_t: i32) -> *const c_char {
    std::ptr::null()
}

/// `rocprofiler_get_pc_sampling_instruction_not_issued_reason_name`: NULL.
#[no_mangle]
pub extern "C" fn rocprofiler_get_pc_sampling_instruction_not_issued_reason_name(
    _r: i32,
) -> *const c_char {
    std::ptr::null()
}

/// `rocprofiler_ompt_start_tool`: NULL, no OMPT tool.
#[no_mangle]
pub extern "C" fn rocprofiler_ompt_start_tool(
    _version: u32,
    _runtime: *const c_char,
) -> *mut c_void {
    std::ptr::null_mut()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// Every function the headers declare is implemented or listed above.
    #[test]
    fn every_declared_function_is_implemented_or_listed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut text = String::new();
        let mut dirs = vec![root.join("include/rocprofiler-sdk")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "h") {
                    text.push_str(&std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        let declared = declared_functions(&text);
        let mut src = String::new();
        for e in std::fs::read_dir(root.join("src")).unwrap().flatten() {
            src.push_str(&std::fs::read_to_string(e.path()).unwrap());
        }
        let missing: Vec<_> = declared
            .iter()
            .filter(|f| {
                !src.contains(&format!("extern \"C\" fn {f}("))
                    && !super::NAMES.contains(&f.as_str())
            })
            .collect();
        assert!(
            missing.is_empty(),
            "declared but neither implemented nor listed: {missing:?}"
        );
        assert!(
            declared.len() > 50,
            "found only {} declarations",
            declared.len()
        );
    }

    /// Names followed by `(` that are not function-pointer typedefs, the
    /// tool's own `rocprofiler_configure`, inline helpers or type names.
    fn declared_functions(text: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while let Some(pos) = text[i..].find("rocprofiler_") {
            let start = i + pos;
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            let name = &text[start..end];
            let before = text[..start].trim_end();
            let after = text[end..].trim_start();
            if after.starts_with('(')
                && !before.ends_with('*')
                && !name.ends_with("_t")
                && !before.ends_with("inline")
                && start > 0
                && !bytes[start - 1].is_ascii_alphanumeric()
                && ![
                    "rocprofiler_configure",
                    "rocprofiler_record_header_compute_hash",
                ]
                .contains(&name)
            {
                out.insert(name.to_string());
            }
            i = end;
        }
        out
    }
}
