/* rocprofiler-sdk/buffer_tracing.h -- asynchronous tracing: records are written to a
 * buffer (see buffer.h) and delivered to the tool in batches.
 *
 * Every record starts with `size` and `kind`; a buffer callback sees them behind a
 * rocprofiler_record_header_t whose category is ROCPROFILER_BUFFER_CATEGORY_TRACING and
 * whose kind is the rocprofiler_buffer_tracing_kind_t.
 */
#pragma once

#include <rocprofiler-sdk/agent.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/hip/api_args.h>
#include <rocprofiler-sdk/kfd/kfd_id.h>
#include <rocprofiler-sdk/rocdecode/api_args.h>
#include <rocprofiler-sdk/rocdecode/api_id.h>

/* rocprofiler_scratch_alloc_flag_t */
#include <rocprofiler-sdk/hsa/scratch_memory_id.h>

#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

/* ---- API call records (one per traced call, written at exit) -------------------------- */

typedef struct rocprofiler_buffer_tracing_hsa_api_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_tracing_operation_t   operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
} rocprofiler_buffer_tracing_hsa_api_record_t;

typedef struct rocprofiler_buffer_tracing_hip_api_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_tracing_operation_t   operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
} rocprofiler_buffer_tracing_hip_api_record_t;

/* HIP record that also carries the call's arguments and return value. */
typedef struct rocprofiler_buffer_tracing_hip_api_ext_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_tracing_operation_t   operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
    rocprofiler_hip_api_args_t        args;
    rocprofiler_hip_api_retval_t      retval;
} rocprofiler_buffer_tracing_hip_api_ext_record_t;

/* OMPT target-region event. */
typedef struct rocprofiler_buffer_tracing_ompt_target_t
{
    int32_t     kind;        /* ompt_target_t */
    int32_t     device_num;
    uint64_t    task_id;
    uint64_t    target_id;
    const void* codeptr_ra;
} rocprofiler_buffer_tracing_ompt_target_t;

/* OMPT target data movement. */
typedef struct rocprofiler_buffer_tracing_ompt_target_data_op_t
{
    uint64_t    host_op_id;
    int32_t     optype;      /* ompt_target_data_op_t */
    int32_t     src_device_num;
    int32_t     dst_device_num;
    int32_t     reserved;
    uint64_t    bytes;
    const void* codeptr_ra;
} rocprofiler_buffer_tracing_ompt_target_data_op_t;

/* OMPT target kernel submission. */
typedef struct rocprofiler_buffer_tracing_ompt_target_kernel_t
{
    uint64_t host_op_id;
    int32_t  device_num;
    uint32_t requested_num_teams;
} rocprofiler_buffer_tracing_ompt_target_kernel_t;

typedef struct rocprofiler_buffer_tracing_ompt_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_tracing_operation_t   operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
    union
    {
        rocprofiler_buffer_tracing_ompt_target_t         target;
        rocprofiler_buffer_tracing_ompt_target_data_op_t target_data_op;
        rocprofiler_buffer_tracing_ompt_target_kernel_t  target_kernel;
        uint64_t                                         reserved[5];
    };
} rocprofiler_buffer_tracing_ompt_record_t;

typedef struct rocprofiler_buffer_tracing_marker_api_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_tracing_operation_t   operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
} rocprofiler_buffer_tracing_marker_api_record_t;

typedef struct rocprofiler_buffer_tracing_rccl_api_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_tracing_operation_t   operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
} rocprofiler_buffer_tracing_rccl_api_record_t;

/* Note: `operation` is typed with the rocDecode id enum here (same size as int32). */
typedef struct rocprofiler_buffer_tracing_rocdecode_api_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_rocdecode_api_id_t    operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
} rocprofiler_buffer_tracing_rocdecode_api_record_t;

typedef struct rocprofiler_buffer_tracing_rocdecode_api_ext_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_rocdecode_api_id_t    operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
    rocprofiler_rocdecode_api_args_t   args;
    rocprofiler_rocdecode_api_retval_t retval;
} rocprofiler_buffer_tracing_rocdecode_api_ext_record_t;

typedef struct rocprofiler_buffer_tracing_rocjpeg_api_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_tracing_operation_t   operation;
    rocprofiler_correlation_id_t      correlation_id;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    rocprofiler_thread_id_t           thread_id;
} rocprofiler_buffer_tracing_rocjpeg_api_record_t;

/* ---- asynchronous activity records ---------------------------------------------------- */

typedef struct rocprofiler_buffer_tracing_memory_copy_record_t
{
    uint64_t                            size;
    rocprofiler_buffer_tracing_kind_t   kind;
    rocprofiler_memory_copy_operation_t operation;
    rocprofiler_async_correlation_id_t  correlation_id;
    rocprofiler_thread_id_t             thread_id;
    rocprofiler_timestamp_t             start_timestamp;
    rocprofiler_timestamp_t             end_timestamp;
    rocprofiler_agent_id_t              dst_agent_id;
    rocprofiler_agent_id_t              src_agent_id;
    uint64_t                            bytes;
    rocprofiler_address_t               dst_address;
    rocprofiler_address_t               src_address;
} rocprofiler_buffer_tracing_memory_copy_record_t;

typedef struct rocprofiler_buffer_tracing_memory_allocation_record_t
{
    uint64_t                                  size;
    rocprofiler_buffer_tracing_kind_t         kind;
    rocprofiler_memory_allocation_operation_t operation;
    rocprofiler_correlation_id_t              correlation_id;
    rocprofiler_thread_id_t                   thread_id;
    rocprofiler_timestamp_t                   start_timestamp;
    rocprofiler_timestamp_t                   end_timestamp;
    rocprofiler_agent_id_t                    agent_id;
    rocprofiler_address_t                     address;
    uint64_t                                  allocation_size;
} rocprofiler_buffer_tracing_memory_allocation_record_t;

/* One completed kernel; the timestamps bracket its execution on the GPU. */
typedef struct rocprofiler_buffer_tracing_kernel_dispatch_record_t
{
    uint64_t                                size;
    rocprofiler_buffer_tracing_kind_t       kind;
    rocprofiler_kernel_dispatch_operation_t operation;
    rocprofiler_async_correlation_id_t      correlation_id;
    rocprofiler_thread_id_t                 thread_id;
    rocprofiler_timestamp_t                 start_timestamp;
    rocprofiler_timestamp_t                 end_timestamp;
    rocprofiler_kernel_dispatch_info_t      dispatch_info;
} rocprofiler_buffer_tracing_kernel_dispatch_record_t;

/* ---- KFD (kernel driver) events: *_EVENT_* are single events, the others are
 *      start/end pairs merged into one record ------------------------------------------ */

typedef struct rocprofiler_buffer_tracing_kfd_event_page_migrate_record_t
{
    uint64_t                                       size;
    rocprofiler_buffer_tracing_kind_t              kind;
    rocprofiler_kfd_event_page_migrate_operation_t operation;
    rocprofiler_timestamp_t                        timestamp;
    uint32_t                                       pid;
    rocprofiler_address_t                          start_address;
    rocprofiler_address_t                          end_address;
    rocprofiler_agent_id_t                         src_agent;
    rocprofiler_agent_id_t                         dst_agent;
    rocprofiler_agent_id_t                         prefetch_agent;
    rocprofiler_agent_id_t                         preferred_agent;
    int32_t                                        error_code;
} rocprofiler_buffer_tracing_kfd_event_page_migrate_record_t;

typedef struct rocprofiler_buffer_tracing_kfd_event_page_fault_record_t
{
    uint64_t                                     size;
    rocprofiler_buffer_tracing_kind_t            kind;
    rocprofiler_kfd_event_page_fault_operation_t operation;
    rocprofiler_timestamp_t                      timestamp;
    uint32_t                                     pid;
    rocprofiler_agent_id_t                       agent_id;
    rocprofiler_address_t                        address;
} rocprofiler_buffer_tracing_kfd_event_page_fault_record_t;

typedef struct rocprofiler_buffer_tracing_kfd_event_queue_record_t
{
    uint64_t                                size;
    rocprofiler_buffer_tracing_kind_t       kind;
    rocprofiler_kfd_event_queue_operation_t operation;
    rocprofiler_timestamp_t                 timestamp;
    uint32_t                                pid;
    rocprofiler_agent_id_t                  agent_id;
} rocprofiler_buffer_tracing_kfd_event_queue_record_t;

typedef struct rocprofiler_buffer_tracing_kfd_event_unmap_from_gpu_record_t
{
    uint64_t                                         size;
    rocprofiler_buffer_tracing_kind_t                kind;
    rocprofiler_kfd_event_unmap_from_gpu_operation_t operation;
    rocprofiler_timestamp_t                          timestamp;
    uint32_t                                         pid;
    rocprofiler_agent_id_t                           agent_id;
    rocprofiler_address_t                            start_address;
    rocprofiler_address_t                            end_address;
} rocprofiler_buffer_tracing_kfd_event_unmap_from_gpu_record_t;

typedef struct rocprofiler_buffer_tracing_kfd_event_dropped_events_record_t
{
    uint64_t                                         size;
    rocprofiler_buffer_tracing_kind_t                kind;
    rocprofiler_kfd_event_dropped_events_operation_t operation;
    rocprofiler_timestamp_t                          timestamp;
    uint32_t                                         pid;
    uint32_t                                         count;
} rocprofiler_buffer_tracing_kfd_event_dropped_events_record_t;

typedef struct rocprofiler_buffer_tracing_kfd_page_migrate_record_t
{
    uint64_t                                 size;
    rocprofiler_buffer_tracing_kind_t        kind;
    rocprofiler_kfd_page_migrate_operation_t operation;
    rocprofiler_timestamp_t                  start_timestamp;
    rocprofiler_timestamp_t                  end_timestamp;
    uint32_t                                 pid;
    rocprofiler_address_t                    start_address;
    rocprofiler_address_t                    end_address;
    rocprofiler_agent_id_t                   src_agent;
    rocprofiler_agent_id_t                   dst_agent;
    rocprofiler_agent_id_t                   prefetch_agent;
    rocprofiler_agent_id_t                   preferred_agent;
    int32_t                                  error_code;
} rocprofiler_buffer_tracing_kfd_page_migrate_record_t;

typedef struct rocprofiler_buffer_tracing_kfd_page_fault_record_t
{
    uint64_t                               size;
    rocprofiler_buffer_tracing_kind_t      kind;
    rocprofiler_kfd_page_fault_operation_t operation;
    rocprofiler_timestamp_t                start_timestamp;
    rocprofiler_timestamp_t                end_timestamp;
    uint32_t                               pid;
    rocprofiler_agent_id_t                 agent_id;
    rocprofiler_address_t                  address;
} rocprofiler_buffer_tracing_kfd_page_fault_record_t;

typedef struct rocprofiler_buffer_tracing_kfd_queue_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_kfd_queue_operation_t operation;
    rocprofiler_timestamp_t           start_timestamp;
    rocprofiler_timestamp_t           end_timestamp;
    uint32_t                          pid;
    rocprofiler_agent_id_t            agent_id;
} rocprofiler_buffer_tracing_kfd_queue_record_t;

/* ---- other records -------------------------------------------------------------------- */

typedef struct rocprofiler_buffer_tracing_scratch_memory_record_t
{
    uint64_t                               size;
    rocprofiler_buffer_tracing_kind_t      kind;
    rocprofiler_scratch_memory_operation_t operation;
    rocprofiler_correlation_id_t           correlation_id;
    rocprofiler_agent_id_t                 agent_id;
    rocprofiler_queue_id_t                 queue_id;
    rocprofiler_thread_id_t                thread_id;
    rocprofiler_timestamp_t                start_timestamp;
    rocprofiler_timestamp_t                end_timestamp;
    rocprofiler_scratch_alloc_flag_t       flags;
    uint64_t                               allocation_size; /* bytes of scratch allocated */
} rocprofiler_buffer_tracing_scratch_memory_record_t;

/* Emitted when an internal correlation id will not appear in any further record. */
typedef struct rocprofiler_buffer_tracing_correlation_id_retirement_record_t
{
    uint64_t                          size;
    rocprofiler_buffer_tracing_kind_t kind;
    rocprofiler_timestamp_t           timestamp;
    uint64_t                          internal_correlation_id;
} rocprofiler_buffer_tracing_correlation_id_retirement_record_t;

typedef struct rocprofiler_buffer_tracing_runtime_initialization_record_t
{
    uint64_t                                       size;
    rocprofiler_buffer_tracing_kind_t              kind;
    rocprofiler_runtime_initialization_operation_t operation;
    rocprofiler_correlation_id_t                   correlation_id;
    rocprofiler_thread_id_t                        thread_id;
    rocprofiler_timestamp_t                        timestamp;
    uint64_t                                       version;
    uint64_t                                       instance;
} rocprofiler_buffer_tracing_runtime_initialization_record_t;

/* ---- callbacks and functions ---------------------------------------------------------- */

typedef int (*rocprofiler_buffer_tracing_kind_cb_t)(rocprofiler_buffer_tracing_kind_t kind,
                                                    void*                             data);

typedef int (*rocprofiler_buffer_tracing_kind_operation_cb_t)(
    rocprofiler_buffer_tracing_kind_t kind,
    rocprofiler_tracing_operation_t   operation,
    void*                             data);

/* `operations` == NULL (count 0) selects every operation of `kind`. */
rocprofiler_status_t
rocprofiler_configure_buffer_tracing_service(rocprofiler_context_id_t               context_id,
                                             rocprofiler_buffer_tracing_kind_t      kind,
                                             const rocprofiler_tracing_operation_t* operations,
                                             size_t                  operations_count,
                                             rocprofiler_buffer_id_t buffer_id) ROCPROFILER_API;

rocprofiler_status_t
rocprofiler_query_buffer_tracing_kind_name(rocprofiler_buffer_tracing_kind_t kind,
                                           const char**                      name,
                                           uint64_t* name_len) ROCPROFILER_API;

rocprofiler_status_t
rocprofiler_query_buffer_tracing_kind_operation_name(rocprofiler_buffer_tracing_kind_t kind,
                                                     rocprofiler_tracing_operation_t   operation,
                                                     const char**                      name,
                                                     uint64_t* name_len) ROCPROFILER_API;

rocprofiler_status_t
rocprofiler_iterate_buffer_tracing_kinds(rocprofiler_buffer_tracing_kind_cb_t callback,
                                         void* data) ROCPROFILER_API ROCPROFILER_NONNULL(1);

rocprofiler_status_t
rocprofiler_iterate_buffer_tracing_kind_operations(
    rocprofiler_buffer_tracing_kind_t              kind,
    rocprofiler_buffer_tracing_kind_operation_cb_t callback,
    void*                                          data) ROCPROFILER_API ROCPROFILER_NONNULL(2);

/* Called once per argument recorded in an *_ext_record_t; return non-zero to stop. */
typedef int (*rocprofiler_buffer_tracing_operation_args_cb_t)(
    rocprofiler_buffer_tracing_kind_t kind,
    rocprofiler_tracing_operation_t   operation,
    uint32_t                          arg_number,
    const void* const                 arg_value_addr,
    int32_t                           arg_indirection_count,
    const char*                       arg_type,
    const char*                       arg_name,
    const char*                       arg_value_str,
    void*                             data);

rocprofiler_status_t
rocprofiler_iterate_buffer_tracing_record_args(
    rocprofiler_record_header_t                    record,
    rocprofiler_buffer_tracing_operation_args_cb_t callback,
    void* user_data) ROCPROFILER_API ROCPROFILER_NONNULL(2);

ROCPROFILER_EXTERN_C_FINI
