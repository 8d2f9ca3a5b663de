//! Every mirror against AMD's measured layout: size, and each field's
//! offset under its C name.

use rocprofiler_sdk_sys::records::*;
use rocprofiler_sdk_sys::*;
use std::mem::{offset_of, size_of};

macro_rules! same_layout {
    ($ty:ty, $c:expr, [$($field:ident $(as $cname:literal)?),* $(,)?]) => {{
        assert_eq!(c_sizeof($c), Some(size_of::<$ty>()), "sizeof {}", $c);
        $(
            let cname = same_layout!(@name $field $($cname)?);
            assert_eq!(
                c_offsetof(&format!("{}.{}", $c, cname)),
                Some(offset_of!($ty, $field)),
                "offsetof {}.{}", $c, cname
            );
        )*
    }};
    (@name $field:ident) => { stringify!($field) };
    (@name $field:ident $cname:literal) => { $cname };
}

#[test]
fn callback_payload_mirrors_have_amds_layouts() {
    same_layout!(
        HostKernelSymbolRegisterData,
        "rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t",
        [
            size,
            host_function_id,
            kernel_id,
            code_object_id,
            host_function,
            modules,
            device_function,
            thread_limit,
            thread_ids,
            block_ids,
            block_dims,
            grid_dims,
            workgroup_size
        ]
    );
    same_layout!(
        RuntimeInitializationData,
        "rocprofiler_callback_tracing_runtime_initialization_data_t",
        [size, version, instance]
    );
}

#[test]
fn mirrors_have_amds_layouts() {
    same_layout!(
        CallbackTracingRecord,
        "rocprofiler_callback_tracing_record_t",
        [
            context_id,
            thread_id,
            correlation_id,
            kind,
            operation,
            phase,
            payload
        ]
    );
    same_layout!(RecordHeader, "rocprofiler_record_header_t", [hash, payload]);
    same_layout!(
        CorrelationId,
        "rocprofiler_correlation_id_t",
        [internal, external, ancestor]
    );
    same_layout!(
        AsyncCorrelationId,
        "rocprofiler_async_correlation_id_t",
        [internal, external]
    );
    same_layout!(
        KernelDispatchInfo,
        "rocprofiler_kernel_dispatch_info_t",
        [
            size,
            agent_id,
            queue_id,
            kernel_id,
            dispatch_id,
            private_segment_size,
            group_segment_size,
            workgroup_size,
            grid_size
        ]
    );
    same_layout!(ClientId, "rocprofiler_client_id_t", [size, name, handle]);
    same_layout!(
        ToolConfigureResult,
        "rocprofiler_tool_configure_result_t",
        [size, initialize, finalize, tool_data]
    );
    // The HIP, HSA and marker API records share one layout.
    for c in [
        "rocprofiler_buffer_tracing_hip_api_record_t",
        "rocprofiler_buffer_tracing_hsa_api_record_t",
        "rocprofiler_buffer_tracing_marker_api_record_t",
    ] {
        same_layout!(
            ApiRecord,
            c,
            [
                size,
                kind,
                operation,
                correlation_id,
                start_timestamp,
                end_timestamp,
                thread_id
            ]
        );
    }
    same_layout!(
        KernelDispatchRecord,
        "rocprofiler_buffer_tracing_kernel_dispatch_record_t",
        [
            size,
            kind,
            operation,
            correlation_id,
            thread_id,
            start_timestamp,
            end_timestamp,
            dispatch_info
        ]
    );
    same_layout!(
        MemoryCopyRecord,
        "rocprofiler_buffer_tracing_memory_copy_record_t",
        [
            size,
            kind,
            operation,
            correlation_id,
            thread_id,
            start_timestamp,
            end_timestamp,
            dst_agent_id,
            src_agent_id,
            bytes,
            dst_address,
            src_address
        ]
    );
    same_layout!(
        MemoryAllocationRecord,
        "rocprofiler_buffer_tracing_memory_allocation_record_t",
        [
            size,
            kind,
            operation,
            correlation_id,
            thread_id,
            start_timestamp,
            end_timestamp,
            agent_id,
            address,
            allocation_size
        ]
    );
    same_layout!(
        ScratchMemoryRecord,
        "rocprofiler_buffer_tracing_scratch_memory_record_t",
        [
            size,
            kind,
            operation,
            correlation_id,
            agent_id,
            queue_id,
            thread_id,
            start_timestamp,
            end_timestamp,
            flags
        ]
    );
    same_layout!(
        RetirementRecord,
        "rocprofiler_buffer_tracing_correlation_id_retirement_record_t",
        [size, kind, timestamp, internal_correlation_id]
    );
    same_layout!(
        RuntimeInitializationRecord,
        "rocprofiler_buffer_tracing_runtime_initialization_record_t",
        [
            size,
            kind,
            operation,
            correlation_id,
            thread_id,
            timestamp,
            version,
            instance
        ]
    );
    same_layout!(CodeObjectLoadData, "rocprofiler_callback_tracing_code_object_load_data_t",
        [size, code_object_id, agent_id, hsa_agent, uri, load_base, load_size, load_delta,
         storage_type, storage_a as "storage_file", storage_b as "memory_size"]);
    same_layout!(
        KernelSymbolRegisterData,
        "rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t",
        [
            size,
            kernel_id,
            code_object_id,
            kernel_name,
            kernel_object,
            kernarg_segment_size,
            kernarg_segment_alignment,
            group_segment_size,
            private_segment_size,
            sgpr_count,
            arch_vgpr_count,
            accum_vgpr_count,
            kernel_code_entry_byte_offset,
            kernel_address
        ]
    );
    same_layout!(
        KernelDispatchData,
        "rocprofiler_callback_tracing_kernel_dispatch_data_t",
        [size, start_timestamp, end_timestamp, dispatch_info]
    );
    same_layout!(
        MemoryCopyData,
        "rocprofiler_callback_tracing_memory_copy_data_t",
        [
            size,
            start_timestamp,
            end_timestamp,
            dst_agent_id,
            src_agent_id,
            bytes,
            dst_address,
            src_address
        ]
    );
    same_layout!(
        VersionTriplet,
        "rocprofiler_version_triplet_t",
        [major, minor, patch]
    );
}

#[test]
fn counter_mirrors_have_amds_layouts() {
    same_layout!(
        CounterRecord,
        "rocprofiler_counter_record_t",
        [id, counter_value, dispatch_id, user_data, agent_id]
    );
    same_layout!(
        DispatchCountingData,
        "rocprofiler_dispatch_counting_service_data_t",
        [
            size,
            correlation_id,
            start_timestamp,
            end_timestamp,
            dispatch_info
        ]
    );
    same_layout!(
        DispatchCountingRecord,
        "rocprofiler_dispatch_counting_service_record_t",
        [
            size,
            num_records,
            correlation_id,
            start_timestamp,
            end_timestamp,
            dispatch_info
        ]
    );
    same_layout!(
        CounterDimensionInfo,
        "rocprofiler_counter_record_dimension_info_t",
        [name, instance_size, id]
    );
    same_layout!(
        CounterDimensionPosition,
        "rocprofiler_counter_dimension_info_t",
        [size, dimension_name, index]
    );
    same_layout!(
        CounterInstanceInfo,
        "rocprofiler_counter_record_dimension_instance_info_t",
        [size, instance_id, counter_id, dimensions_count, dimensions]
    );
    same_layout!(
        CounterInfoV0,
        "rocprofiler_counter_info_v0_t",
        [id, name, description, block, expression]
    );
    same_layout!(
        CounterInfoV1,
        "rocprofiler_counter_info_v1_t",
        [
            size,
            id,
            name,
            description,
            block,
            expression,
            dimensions_count,
            dimensions,
            dimensions_instances_count,
            dimensions_instances
        ]
    );
}
