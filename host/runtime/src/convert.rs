//! Conversions between `rocwasm_core` types and the generated WIT types.
//!
//! Batches move column by column: every column is a `Vec` on both sides with
//! the same element type, so a conversion is a few pointer moves per table
//! and never touches a record. That is what keeps delivery near 1 ns per record.

use rocwasm_core as core;

use crate::bindings::types as wit;

/// Generates the batch conversions from one table list, so the two
/// directions, the length and the consistency check cannot disagree.
macro_rules! batch_conversions {
    ($($table:ident : $core:ident / $wit:ident { $first:ident $(, $field:ident)* }),+ $(,)?) => {
        /// Moves a core batch into a WIT batch.
        pub fn batch_to_wit(b: core::Batch) -> wit::Batch {
            wit::Batch {
                $($table: {
                    let t = b.$table;
                    wit::$wit { $first: t.$first, $($field: t.$field,)* }
                },)+
            }
        }

        /// Moves a WIT batch back into a core batch.
        pub fn batch_from_wit(b: wit::Batch) -> core::Batch {
            core::Batch {
                $($table: {
                    let t = b.$table;
                    core::$core { $first: t.$first, $($field: t.$field,)* }
                },)+
            }
        }

        /// Records in a WIT batch (the first column of each table counts).
        pub fn wit_len(b: &wit::Batch) -> usize {
            0 $(+ b.$table.$first.len())+
        }

        /// True when every column of every table has its table's length: a
        /// transform's reply must be, or it is a malformed reply.
        pub fn wit_consistent(b: &wit::Batch) -> bool {
            true $(&& { let n = b.$table.$first.len(); true $(&& b.$table.$field.len() == n)* })+
        }
    };
}

batch_conversions! {
    api_calls: ApiCallColumns / ApiCallColumns {
        kind, operation, correlation_id, external_correlation_id, ancestor, thread_id, start, end
    },
    kernel_dispatches: KernelDispatchColumns / KernelDispatchColumns {
        correlation_id, external_correlation_id, thread_id, start, end, agent_id, queue_id,
        stream_id, kernel_id, dispatch_id, private_segment_size, group_segment_size,
        workgroup_x, workgroup_y, workgroup_z, grid_x, grid_y, grid_z
    },
    memory_copies: MemoryCopyColumns / MemoryCopyColumns {
        operation, correlation_id, external_correlation_id, thread_id, start, end,
        dst_agent_id, src_agent_id, stream_id, bytes, dst_address, src_address
    },
    memory_allocations: MemoryAllocationColumns / MemoryAllocationColumns {
        operation, correlation_id, external_correlation_id, thread_id, start, end,
        agent_id, address, allocation_size
    },
    scratch_memory: ScratchMemoryColumns / ScratchMemoryColumns {
        operation, flags, correlation_id, external_correlation_id, thread_id, start, end,
        agent_id, queue_id, allocation_size
    },
    retirements: RetirementColumns / RetirementColumns { timestamp, correlation_id },
    runtime_initializations: RuntimeInitializationColumns / RuntimeInitializationColumns {
        operation, thread_id, timestamp, version, instance
    },
}

/// An empty WIT batch.
pub fn empty_batch() -> wit::Batch {
    batch_to_wit(core::Batch::default())
}

pub fn status_to_wit(s: core::Status) -> wit::Status {
    use core::Status as S;
    use wit::Status as W;
    match s {
        S::Error => W::Error,
        S::ContextNotFound => W::ContextNotFound,
        S::BufferNotFound => W::BufferNotFound,
        S::KindNotFound => W::KindNotFound,
        S::OperationNotFound => W::OperationNotFound,
        S::ThreadNotFound => W::ThreadNotFound,
        S::ContextInvalid => W::ContextInvalid,
        S::BufferBusy => W::BufferBusy,
        S::ServiceAlreadyConfigured => W::ServiceAlreadyConfigured,
        S::ConfigurationLocked => W::ConfigurationLocked,
        S::NotImplemented => W::NotImplemented,
        S::Finalized => W::Finalized,
        S::InvalidArgument => W::InvalidArgument,
    }
}

pub fn agent_to_wit(a: core::AgentInfo) -> wit::Agent {
    wit::Agent {
        id: a.id,
        node_id: a.node_id,
        agent_type: match a.agent_type {
            core::AgentType::Cpu => wit::AgentType::Cpu,
            core::AgentType::Gpu => wit::AgentType::Gpu,
        },
        name: a.name,
        product_name: a.product_name,
    }
}

pub fn code_object_to_wit(c: core::CodeObject) -> wit::CodeObject {
    wit::CodeObject {
        id: c.id,
        agent_id: c.agent_id,
        uri: c.uri,
        load_base: c.load_base,
        load_size: c.load_size,
        load_delta: c.load_delta,
    }
}

pub fn kernel_symbol_to_wit(k: core::KernelSymbol) -> wit::KernelSymbol {
    wit::KernelSymbol {
        id: k.id,
        code_object_id: k.code_object_id,
        name: k.name,
        demangled_name: k.demangled_name,
        kernel_object: k.kernel_object,
        kernarg_segment_size: k.kernarg_segment_size,
        kernarg_segment_alignment: k.kernarg_segment_alignment,
        group_segment_size: k.group_segment_size,
        private_segment_size: k.private_segment_size,
        sgpr_count: k.sgpr_count,
        arch_vgpr_count: k.arch_vgpr_count,
        accum_vgpr_count: k.accum_vgpr_count,
    }
}

pub fn delivery_info_to_wit(i: core::DeliveryInfo) -> wit::DeliveryInfo {
    wit::DeliveryInfo {
        context: i.context.0,
        buffer: i.buffer.0,
        drop_count: i.drop_count,
    }
}

pub fn external_request_to_wit(
    r: &core::ExternalCorrelationRequest,
) -> wit::ExternalCorrelationRequest {
    wit::ExternalCorrelationRequest {
        thread_id: r.thread_id,
        context: r.context.0,
        kind: r.kind.raw(),
        operation: r.operation,
        internal_correlation_id: r.internal_correlation_id,
    }
}

pub fn callback_record_to_wit(r: &core::CallbackRecord) -> wit::CallbackRecord {
    wit::CallbackRecord {
        context: r.context.0,
        kind: r.kind.raw(),
        operation: r.operation,
        phase: match r.phase {
            None => wit::Phase::None,
            Some(core::CallbackPhase::Enter) => wit::Phase::Enter,
            Some(core::CallbackPhase::Exit) => wit::Phase::Exit,
        },
        correlation: wit::Correlation {
            internal: r.correlation.internal,
            external: r.correlation.external,
            ancestor: r.correlation.ancestor,
        },
        thread_id: r.thread_id,
        timestamp: r.timestamp,
        payload: match &r.payload {
            core::CallbackPayload::Api { args, retval } => {
                wit::CallbackPayload::Api(wit::ApiCallPayload {
                    args: args
                        .iter()
                        .map(|a| wit::Argument {
                            name: a.name.clone(),
                            type_name: a.type_name.clone(),
                            value: a.value.clone(),
                        })
                        .collect(),
                    retval: retval.clone(),
                })
            }
            core::CallbackPayload::CodeObjectLoad(c) => {
                wit::CallbackPayload::CodeObjectLoad(code_object_to_wit(c.clone()))
            }
            core::CallbackPayload::KernelSymbolRegister(k) => {
                wit::CallbackPayload::KernelSymbolRegister(kernel_symbol_to_wit(k.clone()))
            }
            core::CallbackPayload::None => wit::CallbackPayload::None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_round_trips_through_wit_without_loss() {
        let mut b = core::Batch::default();
        for i in 0..5u64 {
            b.kernel_dispatches.push(core::KernelDispatch {
                correlation_id: i,
                start: 10 * i,
                end: 10 * i + 7,
                grid_z: i as u32,
                ..Default::default()
            });
            b.api_calls.push(core::ApiCall {
                kind: 5,
                operation: i as u32,
                ..Default::default()
            });
        }
        b.retirements.push(core::Retirement {
            timestamp: 1,
            correlation_id: 2,
        });
        let w = batch_to_wit(b.clone());
        assert_eq!(wit_len(&w), 11);
        assert!(wit_consistent(&w));
        assert_eq!(batch_from_wit(w), b);
    }

    #[test]
    fn inconsistent_reply_is_detected() {
        let mut w = empty_batch();
        w.memory_copies.bytes.push(1);
        assert!(!wit_consistent(&w));
    }
}
