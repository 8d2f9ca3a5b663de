//! `counters.h`: decoding a counter record's instance id.
//!
//! A `rocprofiler_counter_instance_id_t` packs the counter's id (bits 63 to
//! 48) and the record's position in each dimension: dimension `d`
//! (`rocprofiler_counter_dimension_id_t`, 1 `XCC` to 7 `INSTANCE`) in the
//! six bits from bit `(d - 1) × 6`; dimension 0 (`NONE`) reads the 48 bits
//! of positions at once. The layout is the SDK's, so a tool decodes the ids
//! of any SDK's records the same way.

use rocwasm_core::Status;

use crate::abi::Handle;
use crate::guard::guard;
use crate::status::Code;

/// Bits of the counter id.
const COUNTER_SHIFT: u32 = 48;
/// Bits per dimension's position.
const DIM_BITS: u64 = 6;
/// The last dimension id (`INSTANCE`).
const LAST_DIMENSION: u64 = 7;

/// The instance id of counter `counter` at `positions` (one per dimension):
/// what a record of that instance carries.
pub fn instance_id(counter: u64, positions: &[(rocwasm_counters::Dimension, u32)]) -> u64 {
    positions
        .iter()
        .fold(counter << COUNTER_SHIFT, |id, &(dim, pos)| {
            let d = dim as u64;
            id | ((u64::from(pos) & ((1 << DIM_BITS) - 1)) << ((d - 1) * DIM_BITS))
        })
}

/// The counter id of an instance id.
pub fn counter_of(id: u64) -> u64 {
    id >> COUNTER_SHIFT
}

/// The position of an instance id in dimension `dim`; `None` for a
/// dimension id the SDK does not have.
pub fn position(id: u64, dim: u64) -> Option<u64> {
    match dim {
        0 => Some(id & ((1 << COUNTER_SHIFT) - 1)),
        1..=LAST_DIMENSION => Some((id >> ((dim - 1) * DIM_BITS)) & ((1 << DIM_BITS) - 1)),
        _ => None,
    }
}

/// `rocprofiler_query_record_counter_id`: the counter of a record's
/// instance id.
///
/// # Safety
/// `counter_id` must be NULL or point to a writable `rocprofiler_counter_id_t`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_record_counter_id(
    id: u64,
    counter_id: *mut Handle,
) -> Code {
    guard("rocprofiler_query_record_counter_id", || {
        if counter_id.is_null() {
            return Err(Status::InvalidArgument);
        }
        // SAFETY: checked non-null; the caller passes a writable handle.
        unsafe {
            *counter_id = Handle {
                handle: counter_of(id),
            }
        };
        Ok(())
    })
}

/// `rocprofiler_query_record_dimension_position`: a record's position in
/// one dimension (INVALID_ARGUMENT for a dimension id the SDK does not
/// have).
///
/// # Safety
/// `pos` must be NULL or point to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_record_dimension_position(
    id: u64,
    dim: u64,
    pos: *mut usize,
) -> Code {
    guard("rocprofiler_query_record_dimension_position", || {
        if pos.is_null() {
            return Err(Status::InvalidArgument);
        }
        let p = position(id, dim).ok_or(Status::InvalidArgument)?;
        // SAFETY: checked non-null; the caller passes a writable size_t.
        unsafe { *pos = p as usize };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_ids_decode_as_the_sdk_lays_them_out() {
        // Counter 5, XCC 3, shader engine 7, instance 12.
        use rocwasm_counters::Dimension;
        let id = instance_id(
            5,
            &[
                (Dimension::Xcc, 3),
                (Dimension::ShaderEngine, 7),
                (Dimension::Instance, 12),
            ],
        );
        assert_eq!(id, 5 << 48 | 3 | 7 << 12 | 12 << 36);
        assert_eq!(counter_of(id), 5);
        assert_eq!(position(id, 1), Some(3));
        assert_eq!(position(id, 2), Some(0));
        assert_eq!(position(id, 3), Some(7));
        assert_eq!(position(id, 7), Some(12));
        assert_eq!(position(id, 0), Some(3 | 7 << 12 | 12 << 36));
        assert_eq!(position(id, 8), None);

        let mut c = Handle { handle: 0 };
        // SAFETY: a local out-parameter.
        let ok = unsafe { rocprofiler_query_record_counter_id(id, &mut c) };
        assert_eq!(ok, crate::status::SUCCESS);
        assert_eq!(c.handle, 5);
        let mut p = 0usize;
        // SAFETY: a local out-parameter.
        let ok = unsafe { rocprofiler_query_record_dimension_position(id, 3, &mut p) };
        assert_eq!((ok, p), (crate::status::SUCCESS, 7));
        // SAFETY: a local out-parameter; an unknown dimension.
        let bad = unsafe { rocprofiler_query_record_dimension_position(id, 9, &mut p) };
        assert_ne!(bad, crate::status::SUCCESS);
    }
}
