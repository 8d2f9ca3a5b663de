//! The fields every family shares: 64-bit handles (agents, queues,
//! contexts), correlation ids with the tool's external id, the `size` each
//! struct starts with, `rocprofiler_dim3_t`.

use rocprofiler_sdk_sys::{AsyncCorrelationId, CorrelationId, Dim3, Handle, UserData};
use rocwasm_core::Correlation;

/// The handle struct (`rocprofiler_agent_id_t`, `…_queue_id_t`,
/// `…_context_id_t`) of an engine id.
pub fn handle(id: u64) -> Handle {
    Handle { handle: id }
}

/// The engine id of a handle struct.
pub fn id(h: Handle) -> u64 {
    h.handle
}

/// The tool's external id, as the union's number.
pub fn external_to_c(value: u64) -> UserData {
    UserData { value }
}

/// The union's number: the tool's external id (the SDK's contract for ids
/// it requested; a pointer a tool stored reads as its address).
pub fn external_from_c(u: &UserData) -> u64 {
    // SAFETY: both members are 64 bits of plain data; every bit pattern is
    // a `u64`.
    unsafe { u.value }
}

/// `rocprofiler_correlation_id_t` of the engine's three ids.
pub fn correlation_to_c(c: Correlation) -> CorrelationId {
    CorrelationId {
        internal: c.internal,
        external: external_to_c(c.external),
        ancestor: c.ancestor,
    }
}

/// The engine's three ids of `rocprofiler_correlation_id_t`.
pub fn correlation_from_c(c: &CorrelationId) -> Correlation {
    Correlation {
        internal: c.internal,
        external: external_from_c(&c.external),
        ancestor: c.ancestor,
    }
}

/// `rocprofiler_async_correlation_id_t` (async records: no ancestor).
pub fn async_correlation_to_c(internal: u64, external: u64) -> AsyncCorrelationId {
    AsyncCorrelationId {
        internal,
        external: external_to_c(external),
    }
}

/// `(internal, external)` of `rocprofiler_async_correlation_id_t`.
pub fn async_correlation_from_c(c: &AsyncCorrelationId) -> (u64, u64) {
    (c.internal, external_from_c(&c.external))
}

/// The `size` field of a struct: its `sizeof`.
pub fn size_of<T>() -> u64 {
    std::mem::size_of::<T>() as u64
}

/// `rocprofiler_dim3_t` of `[x, y, z]`.
pub fn dim3_to_c([x, y, z]: [u32; 3]) -> Dim3 {
    Dim3 { x, y, z }
}

/// `[x, y, z]` of `rocprofiler_dim3_t`.
pub fn dim3_from_c(d: Dim3) -> [u32; 3] {
    [d.x, d.y, d.z]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for v in [0, 1, u64::MAX / 2 + 1, u64::MAX] {
            assert_eq!(id(handle(v)), v);
            assert_eq!(external_from_c(&external_to_c(v)), v);
            let c = Correlation {
                internal: v,
                external: v ^ 0x5555,
                ancestor: v.wrapping_add(1),
            };
            assert_eq!(correlation_from_c(&correlation_to_c(c)), c);
            assert_eq!(
                async_correlation_from_c(&async_correlation_to_c(v, !v)),
                (v, !v)
            );
        }
        for d in [[0, 0, 0], [1, 2, 3], [u32::MAX, 0, u32::MAX]] {
            assert_eq!(dim3_from_c(dim3_to_c(d)), d);
        }
    }
}
