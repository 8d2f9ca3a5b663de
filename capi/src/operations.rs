//! Operation numbers: the engine's and rocprofiler-sdk's.
//!
//! The engine numbers each kind's operations as `rocwasm-ids` lists them
//! (API functions sorted by name from the runtime rocwasm intercepts, from
//! 1); rocprofiler-sdk numbers API functions in its own header order from 0
//! (`ROCPROFILER_HIP_RUNTIME_API_ID_hipApiName` = 0, …) and event
//! operations from 1. A tool sees only the SDK's numbers: this module maps
//! both ways by name, with the SDK's table read from our headers
//! ([`crate::abi::enums`]). An engine operation the SDK does not know (a
//! function of an older runtime) is delivered as the kind's `NONE` (-1 for
//! API kinds, 0 otherwise) and counted ([`unmapped`]); an SDK operation the
//! engine never produces simply never occurs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use rocwasm_core::{BufferTracingKind, CallbackTracingKind, OperationKind};

use crate::abi::enums::BY_NAME;

/// One kind's table: engine operation → SDK number, and back.
#[derive(Debug, Default)]
pub struct OperationMap {
    /// Indexed by engine operation (0 = none).
    to_sdk: Vec<i32>,
    from_sdk: HashMap<i32, u32>,
    /// SDK number → name (without the enum's prefix), in SDK order.
    sdk_names: Vec<(i32, String)>,
    /// The kind's "no operation" value.
    none: i32,
}

impl OperationMap {
    /// The SDK number of engine operation `op`; the kind's NONE when unknown.
    pub fn to_sdk(&self, op: u32) -> i32 {
        match self.to_sdk.get(op as usize) {
            Some(&v) if v != self.none || op == 0 => v,
            _ => {
                UNMAPPED.fetch_add(1, Ordering::Relaxed);
                self.none
            }
        }
    }

    /// The engine operation of SDK number `op`, if the engine has it.
    pub fn from_sdk(&self, op: i32) -> Option<u32> {
        self.from_sdk.get(&op).copied()
    }

    /// Whether `op` is one of the kind's SDK operations.
    pub fn is_sdk_operation(&self, op: i32) -> bool {
        self.sdk_names.iter().any(|(v, _)| *v == op)
    }

    /// Every SDK operation of the kind with its name, in SDK order.
    pub fn sdk_operations(&self) -> &[(i32, String)] {
        &self.sdk_names
    }
}

static UNMAPPED: AtomicU64 = AtomicU64::new(0);

/// Records delivered with a NONE operation because the SDK has no number for theirs.
pub fn unmapped() -> u64 {
    UNMAPPED.load(Ordering::Relaxed)
}

/// The C enum holding `kind`'s operations, and the prefix of its enumerators.
fn sdk_enum(kind_name: &str) -> Option<(String, String)> {
    let base = kind_name.strip_suffix("_EXT").unwrap_or(kind_name);
    let lower = base.to_ascii_lowercase();
    if base.ends_with("_API") {
        let e = format!("rocprofiler_{lower}_id");
        return Some((e, format!("ROCPROFILER_{base}_ID_")));
    }
    Some((
        format!("rocprofiler_{lower}_operation"),
        "ROCPROFILER_".into(),
    ))
}

fn build(kind_name: &str, engine_names: &[&str]) -> OperationMap {
    let mut map = OperationMap::default();
    let Some((enum_name, prefix)) = sdk_enum(kind_name) else {
        return map;
    };
    let Some((_, values)) = BY_NAME.iter().find(|(n, _)| *n == enum_name) else {
        // No operation enum (e.g. CORRELATION_ID_RETIREMENT): numbers pass through.
        map.to_sdk = (0..=engine_names.len() as i32).collect();
        map.from_sdk = (1..=engine_names.len() as u32)
            .map(|o| (o as i32, o))
            .collect();
        return map;
    };
    let api = prefix.ends_with("_ID_");
    map.none = if api { -1 } else { 0 };
    let mut by_name: HashMap<&str, i32> = HashMap::new();
    for (n, v) in values.iter() {
        let Some(short) = n.strip_prefix(prefix.as_str()) else {
            continue;
        };
        if short == "NONE"
            || short == "LAST"
            || short.ends_with("_LAST")
            || short.ends_with("_NONE")
        {
            continue;
        }
        by_name.insert(short, *v as i32);
        map.sdk_names.push((*v as i32, short.to_string()));
    }
    map.to_sdk = vec![map.none; engine_names.len() + 1];
    if !api {
        map.to_sdk[0] = 0;
    }
    for (i, name) in engine_names.iter().enumerate() {
        if let Some(&v) = by_name.get(name) {
            map.to_sdk[i + 1] = v;
            // The operation of this very name wins the way back.
            map.from_sdk.insert(v, i as u32 + 1);
        } else if let Some(&v) = by_name.get(format!("{name}R0000").as_str()) {
            // ROCm 6 renamed the first version of a function that gained
            // a second one (`hipGetDeviceProperties` of a 5.x program is
            // the SDK's `hipGetDevicePropertiesR0000`).
            map.to_sdk[i + 1] = v;
            map.from_sdk.entry(v).or_insert(i as u32 + 1);
        }
    }
    map
}

fn cached(kind_name: &'static str, names: &'static [&'static str]) -> &'static OperationMap {
    static MAPS: OnceLock<Mutex<HashMap<&'static str, &'static OperationMap>>> = OnceLock::new();
    let maps = MAPS.get_or_init(Default::default);
    let mut maps = maps.lock().unwrap_or_else(|e| e.into_inner());
    maps.entry(kind_name)
        .or_insert_with(|| Box::leak(Box::new(build(kind_name, names))))
}

/// The map of a buffer-tracing kind.
pub fn buffer(kind: BufferTracingKind) -> &'static OperationMap {
    cached(kind.name(), kind.operation_names())
}

/// The map of a callback-tracing kind.
pub fn callback(kind: CallbackTracingKind) -> &'static OperationMap {
    cached(kind.name(), kind.operation_names())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hip_functions_map_to_the_sdk_numbers_by_name() {
        let m = buffer(BufferTracingKind::HipRuntimeApi);
        let ours =
            rocwasm_core::operation_by_name(BufferTracingKind::HipRuntimeApi, "hipMalloc").unwrap();
        let sdk = crate::abi::enums::rocprofiler_hip_runtime_api_id::ROCPROFILER_HIP_RUNTIME_API_ID_hipMalloc as i32;
        assert_eq!(m.to_sdk(ours), sdk);
        assert_eq!(m.from_sdk(sdk), Some(ours));
        assert_eq!(
            crate::abi::enums::rocprofiler_hip_runtime_api_id::ROCPROFILER_HIP_RUNTIME_API_ID_hipApiName,
            0
        );
    }

    #[test]
    fn a_function_renamed_in_rocm_6_keeps_its_number() {
        let m = buffer(BufferTracingKind::HipRuntimeApi);
        let ours = rocwasm_core::operation_by_name(
            BufferTracingKind::HipRuntimeApi,
            "hipGetDeviceProperties",
        )
        .unwrap();
        let sdk = crate::abi::enums::rocprofiler_hip_runtime_api_id::ROCPROFILER_HIP_RUNTIME_API_ID_hipGetDevicePropertiesR0000 as i32;
        assert_eq!(m.to_sdk(ours), sdk);
        // The versioned entry points are operations of their own; the way
        // back takes the one of the SDK's very name.
        let r0000 = rocwasm_core::operation_by_name(
            BufferTracingKind::HipRuntimeApi,
            "hipGetDevicePropertiesR0000",
        )
        .unwrap();
        assert_ne!(r0000, ours);
        assert_eq!(m.to_sdk(r0000), sdk);
        assert_eq!(m.from_sdk(sdk), Some(r0000));
        let r0600 = crate::abi::enums::rocprofiler_hip_runtime_api_id::ROCPROFILER_HIP_RUNTIME_API_ID_hipGetDevicePropertiesR0600 as i32;
        let ours_r0600 = m.from_sdk(r0600).unwrap();
        assert_eq!(
            rocwasm_core::operation_name(BufferTracingKind::HipRuntimeApi, ours_r0600),
            Some("hipGetDevicePropertiesR0600")
        );
    }

    #[test]
    fn event_operations_keep_their_numbers() {
        let m = buffer(BufferTracingKind::MemoryCopy);
        for (op, name) in rocwasm_core::operations(BufferTracingKind::MemoryCopy) {
            assert_eq!(m.to_sdk(op), op as i32, "{name}");
        }
        let c = callback(CallbackTracingKind::CodeObject);
        assert_eq!(c.to_sdk(rocwasm_ids::ops::code_object::LOAD), 1);
    }

    #[test]
    fn every_engine_marker_and_hsa_core_function_has_an_sdk_number() {
        for kind in [
            BufferTracingKind::MarkerCoreApi,
            BufferTracingKind::MarkerControlApi,
            BufferTracingKind::MarkerNameApi,
            BufferTracingKind::HsaCoreApi,
        ] {
            let m = buffer(kind);
            for (op, name) in rocwasm_core::operations(kind) {
                assert!(m.from_sdk(m.to_sdk(op)) == Some(op), "{kind:?} {name}");
            }
        }
    }
}
