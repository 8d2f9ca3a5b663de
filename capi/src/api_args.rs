//! The per-function argument unions of API callbacks
//! (`rocprofiler_hip_api_args_t` and its HSA and marker siblings).
//!
//! Interception keeps each argument's bytes as the C call passed them
//! (`Argument::bytes`). A union member is a struct of the function's
//! parameters in declaration order; where each field lies is an ABI fact of
//! AMD's header, recorded in the ABI table for every member our headers
//! declare (`capi/abi/`, `gen_hip_args.py`). This module reads those facts
//! — the direct fields of `<union>.<function>`, in table order, which is
//! declaration order — and writes the k-th argument at the k-th field's
//! offset. A function without facts (a member our header leaves out) or
//! whose argument count differs from its field count gets nothing written:
//! its member stays zero, and argument iteration still names its arguments.

use std::collections::HashMap;
use std::sync::OnceLock;

use rocwasm_core::{Argument, CallbackTracingKind, OperationKind};

use crate::abi::enums::LAYOUT;

/// One field of a member: its name in AMD's header and its offset in the
/// union.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// AMD's field name (which may differ from the interposer's parameter
    /// name, e.g. `func` for ROCm 5.2's `f`).
    pub name: &'static str,
    /// Offset from the start of the union.
    pub offset: usize,
}

/// The C types of an API kind's callback data: the `…_api_data_t` struct a
/// callback's payload is, and the argument union inside it.
pub fn api_types(kind: CallbackTracingKind) -> Option<(&'static str, &'static str)> {
    crate::abi::api_data_types(i64::from(kind.raw()))
}

/// The union type of an API kind's arguments.
pub fn union_of(kind: CallbackTracingKind) -> Option<&'static str> {
    api_types(kind).map(|(_, union)| union)
}

/// `(union, function)` → its fields, from the ABI table.
fn members() -> &'static HashMap<(&'static str, &'static str), Vec<Field>> {
    static MEMBERS: OnceLock<HashMap<(&'static str, &'static str), Vec<Field>>> = OnceLock::new();
    MEMBERS.get_or_init(|| {
        let mut out: HashMap<(&str, &str), Vec<Field>> = HashMap::new();
        for (what, path, value) in LAYOUT {
            if *what != "offsetof" {
                continue;
            }
            let mut parts = path.splitn(3, '.');
            let (Some(union), Some(function), Some(field)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if !union.ends_with("_api_args_t") || field.contains('.') {
                continue;
            }
            out.entry((union, function)).or_default().push(Field {
                name: field,
                offset: *value as usize,
            });
        }
        out
    })
}

/// The fields of engine operation `op` of `kind`, when the header declares
/// its member with as many fields as the call has arguments.
pub fn fields(kind: CallbackTracingKind, op: u32, args: &[Argument]) -> Option<&'static [Field]> {
    let union = union_of(kind)?;
    let function = kind.operation_names().get((op as usize).checked_sub(1)?)?;
    let fields = members().get(&(union, *function))?;
    (fields.len() == args.len()).then_some(fields.as_slice())
}

/// Writes each argument's bytes at its field's offset in `union_bytes`
/// (the union inside a payload); returns the fields written to, or `None`
/// when the function has no member (nothing written).
pub fn fill(
    kind: CallbackTracingKind,
    op: u32,
    args: &[Argument],
    union_bytes: &mut [u8],
) -> Option<&'static [Field]> {
    let fields = fields(kind, op, args)?;
    for (a, f) in args.iter().zip(fields) {
        if let Some(dst) = union_bytes.get_mut(f.offset..f.offset + a.bytes.len()) {
            dst.copy_from_slice(&a.bytes);
        }
    }
    Some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(name: &str, bytes: &[u8]) -> Argument {
        Argument::new(name, "t", "v").with_bytes(bytes.to_vec())
    }

    fn op(name: &str) -> u32 {
        rocwasm_core::operation_by_name(rocwasm_core::BufferTracingKind::HipRuntimeApi, name)
            .unwrap()
    }

    #[test]
    fn hip_malloc_arguments_land_at_amds_offsets() {
        let kind = CallbackTracingKind::HipRuntimeApi;
        let args = [
            arg("ptr", &0x1111u64.to_ne_bytes()),
            arg("size", &4096u64.to_ne_bytes()),
        ];
        let mut union = [0u8; 88];
        let fields = fill(kind, op("hipMalloc"), &args, &mut union).unwrap();
        assert_eq!(
            fields.iter().map(|f| f.name).collect::<Vec<_>>(),
            ["ptr", "size"]
        );
        assert_eq!(u64::from_ne_bytes(union[0..8].try_into().unwrap()), 0x1111);
        assert_eq!(u64::from_ne_bytes(union[8..16].try_into().unwrap()), 4096);
    }

    #[test]
    fn renamed_parameters_take_amds_names_and_dim3_keeps_its_place() {
        let kind = CallbackTracingKind::HipRuntimeApi;
        let args: Vec<Argument> = (0..11).map(|i| arg(&format!("a{i}"), &[i as u8])).collect();
        let launch = fields(kind, op("hipModuleLaunchKernel"), &args).unwrap();
        assert_eq!(launch[0].name, "func");
        assert_eq!(launch[8].name, "stream");
        // hipLaunchKernel: function_address, then two dim3 (12 bytes each).
        let args: Vec<Argument> = (0..6).map(|i| arg(&format!("a{i}"), &[i as u8])).collect();
        let f = fields(kind, op("hipLaunchKernel"), &args).unwrap();
        let offsets: Vec<usize> = f.iter().map(|f| f.offset).collect();
        assert_eq!(offsets, [0, 8, 20, 32, 40, 48]);
    }

    #[test]
    fn hsa_and_marker_members_come_from_the_table_too() {
        let three: Vec<Argument> = (0..3).map(|i| arg(&format!("a{i}"), &[i as u8])).collect();
        let op = rocwasm_core::operation_by_name(
            rocwasm_core::BufferTracingKind::HsaCoreApi,
            "hsa_agent_get_info",
        )
        .unwrap();
        let f = fields(CallbackTracingKind::HsaCoreApi, op, &three).unwrap();
        let layout: Vec<(&str, usize)> = f.iter().map(|f| (f.name, f.offset)).collect();
        assert_eq!(layout, [("agent", 0), ("attribute", 8), ("value", 16)]);
        let op = rocwasm_core::operation_by_name(
            rocwasm_core::BufferTracingKind::MarkerCoreApi,
            "roctxRangePushA",
        )
        .unwrap();
        let f = fields(CallbackTracingKind::MarkerCoreApi, op, &three[..1]).unwrap();
        assert_eq!(f[0].name, "message");
    }

    #[test]
    fn a_call_whose_arguments_do_not_match_the_member_is_left_alone() {
        let kind = CallbackTracingKind::HipRuntimeApi;
        let mut union = [0u8; 88];
        assert!(fill(kind, op("hipMalloc"), &[arg("ptr", &[1; 8])], &mut union).is_none());
        assert!(union.iter().all(|&b| b == 0));
    }
}
