/* rocprofiler-sdk/callback_tracing.h -- synchronous tracing: the library calls the tool
 * on the thread doing the work (e.g. on entry to and exit from an API function).
 *
 * The record's `payload` points at one of the *_data_t structs below, chosen by kind.
 */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/hip.h>
#include <rocprofiler-sdk/hsa.h>
#include <rocprofiler-sdk/marker.h>
#include <rocprofiler-sdk/ompt.h>
#include <rocprofiler-sdk/rccl.h>
#include <rocprofiler-sdk/rocdecode.h>
#include <rocprofiler-sdk/rocjpeg.h>

/* hsa_agent_t, hsa_amd_tool_event_kind_t (real HSA headers or stand-ins) */
#include <rocprofiler-sdk/compat/hsa_types.h>

#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

/* Where a loaded code object came from.  The values equal HSA's
 * hsa_ven_amd_loader_code_object_storage_type_t (NONE=0, FILE=1, MEMORY=2). */
typedef enum rocprofiler_code_object_storage_type_t
{
    ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_NONE   = 0,
    ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_FILE   = 1,
    ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_MEMORY = 2,
    ROCPROFILER_CODE_OBJECT_STORAGE_TYPE_LAST,
} rocprofiler_code_object_storage_type_t;

/* ---- API tracing payloads (retval is valid in the EXIT phase only) -------------------- */

typedef struct rocprofiler_callback_tracing_hsa_api_data_t
{
    uint64_t                     size;
    rocprofiler_hsa_api_args_t   args;
    rocprofiler_hsa_api_retval_t retval;
} rocprofiler_callback_tracing_hsa_api_data_t;

typedef struct rocprofiler_callback_tracing_hip_api_data_t
{
    uint64_t                     size;
    rocprofiler_hip_api_args_t   args;
    rocprofiler_hip_api_retval_t retval;
} rocprofiler_callback_tracing_hip_api_data_t;

typedef struct rocprofiler_callback_tracing_ompt_data_t
{
    uint64_t                size;
    rocprofiler_ompt_args_t args;
} rocprofiler_callback_tracing_ompt_data_t;

typedef struct rocprofiler_callback_tracing_marker_api_data_t
{
    uint64_t                        size;
    rocprofiler_marker_api_args_t   args;
    rocprofiler_marker_api_retval_t retval;
} rocprofiler_callback_tracing_marker_api_data_t;

typedef struct rocprofiler_callback_tracing_rccl_api_data_t
{
    uint64_t                      size;
    rocprofiler_rccl_api_args_t   args;
    rocprofiler_rccl_api_retval_t retval;
} rocprofiler_callback_tracing_rccl_api_data_t;

typedef struct rocprofiler_callback_tracing_rocdecode_api_data_t
{
    uint64_t                           size;
    rocprofiler_rocdecode_api_args_t   args;
    rocprofiler_rocdecode_api_retval_t retval;
} rocprofiler_callback_tracing_rocdecode_api_data_t;

typedef struct rocprofiler_callback_tracing_rocjpeg_api_data_t
{
    uint64_t                         size;
    rocprofiler_rocjpeg_api_args_t   args;
    rocprofiler_rocjpeg_api_retval_t retval;
} rocprofiler_callback_tracing_rocjpeg_api_data_t;

/* ---- code objects --------------------------------------------------------------------- */

/* ROCPROFILER_CODE_OBJECT_LOAD: a code object was loaded onto (LOAD phase) or is about
 * to be unloaded from (UNLOAD phase) an agent. */
typedef struct rocprofiler_callback_tracing_code_object_load_data_t
{
    uint64_t size;
    uint64_t code_object_id;
    union
    {
        rocprofiler_agent_id_t rocp_agent;  /* older name */
        rocprofiler_agent_id_t agent_id;
    };
    hsa_agent_t                            hsa_agent;
    const char*                            uri;
    uint64_t                               load_base;
    uint64_t                               load_size;
    int64_t                                load_delta;
    rocprofiler_code_object_storage_type_t storage_type;
    union
    {
        struct
        {
            int storage_file;       /* STORAGE_TYPE_FILE: file descriptor */
        };
        struct
        {
            uint64_t memory_base;   /* STORAGE_TYPE_MEMORY: host copy of the ELF */
            uint64_t memory_size;
        };
    };
} rocprofiler_callback_tracing_code_object_load_data_t;

#define ROCPROFILER_CODE_OBJECT_ID_NONE ROCPROFILER_UINT64_C(0)

/* ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER: one kernel of a loaded code
 * object.  `kernel_id` is the id later found in rocprofiler_kernel_dispatch_info_t. */
typedef struct rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t
{
    uint64_t              size;
    uint64_t              kernel_id;
    uint64_t              code_object_id;
    const char*           kernel_name;
    uint64_t              kernel_object;
    uint32_t              kernarg_segment_size;
    uint32_t              kernarg_segment_alignment;
    uint32_t              group_segment_size;
    uint32_t              private_segment_size;
    uint32_t              sgpr_count;
    uint32_t              arch_vgpr_count;
    uint32_t              accum_vgpr_count;
    int64_t               kernel_code_entry_byte_offset;
    rocprofiler_address_t kernel_address;
} rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t;

/* ROCPROFILER_CODE_OBJECT_HOST_KERNEL_SYMBOL_REGISTER: a HIP host stub registered with
 * __hipRegisterFunction. */
typedef struct rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t
{
    uint64_t              size;
    uint64_t              host_function_id;
    uint64_t              kernel_id;
    uint64_t              code_object_id;
    rocprofiler_address_t host_function;
    rocprofiler_address_t modules;
    const char*           device_function;
    uint32_t              thread_limit;
    rocprofiler_dim3_t    thread_ids;
    rocprofiler_dim3_t    block_ids;
    rocprofiler_dim3_t    block_dims;
    rocprofiler_dim3_t    grid_dims;
    uint64_t              workgroup_size;
} rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t;

/* ---- asynchronous activity seen through callbacks ------------------------------------- */

typedef struct rocprofiler_callback_tracing_kernel_dispatch_data_t
{
    uint64_t                           size;
    rocprofiler_timestamp_t            start_timestamp;  /* 0 until COMPLETE */
    rocprofiler_timestamp_t            end_timestamp;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
} rocprofiler_callback_tracing_kernel_dispatch_data_t;

typedef struct rocprofiler_callback_tracing_memory_copy_data_t
{
    uint64_t                size;
    rocprofiler_timestamp_t start_timestamp;
    rocprofiler_timestamp_t end_timestamp;
    rocprofiler_agent_id_t  dst_agent_id;
    rocprofiler_agent_id_t  src_agent_id;
    uint64_t                bytes;
    rocprofiler_address_t   dst_address;
    rocprofiler_address_t   src_address;
} rocprofiler_callback_tracing_memory_copy_data_t;

typedef struct rocprofiler_callback_tracing_memory_allocation_data_t
{
    uint64_t                size;
    rocprofiler_timestamp_t start_timestamp;
    rocprofiler_timestamp_t end_timestamp;
    rocprofiler_agent_id_t  agent_id;
    rocprofiler_address_t   address;
    uint64_t                allocation_size;
} rocprofiler_callback_tracing_memory_allocation_data_t;

/* `args_kind` says which member of `args` is meaningful. */
typedef struct rocprofiler_callback_tracing_scratch_memory_data_t
{
    uint64_t                          size;
    rocprofiler_agent_id_t            agent_id;
    rocprofiler_queue_id_t            queue_id;
    rocprofiler_scratch_alloc_flag_t  flags;
    hsa_amd_tool_event_kind_t         args_kind;
    rocprofiler_scratch_memory_args_t args;
} rocprofiler_callback_tracing_scratch_memory_data_t;

/* `version` is the runtime's encoded version, `instance` counts loads of it. */
typedef struct rocprofiler_callback_tracing_runtime_initialization_data_t
{
    uint64_t size;
    uint64_t version;
    uint64_t instance;
} rocprofiler_callback_tracing_runtime_initialization_data_t;

/* HIP stream lifetime: `stream_value` is the hipStream_t. */
typedef struct rocprofiler_callback_tracing_hip_stream_data_t
{
    uint64_t                size;
    rocprofiler_stream_id_t stream_id;
    rocprofiler_address_t   stream_value;
} rocprofiler_callback_tracing_hip_stream_data_t;

/* ---- callbacks and functions ---------------------------------------------------------- */

/* `user_data` is per-operation storage: what the tool writes in ENTER is seen in EXIT. */
typedef void (*rocprofiler_callback_tracing_cb_t)(rocprofiler_callback_tracing_record_t record,
                                                  rocprofiler_user_data_t*              user_data,
                                                  void* callback_data) ROCPROFILER_NONNULL(2);

typedef int (*rocprofiler_callback_tracing_kind_cb_t)(rocprofiler_callback_tracing_kind_t kind,
                                                      void*                               data);

typedef int (*rocprofiler_callback_tracing_kind_operation_cb_t)(
    rocprofiler_callback_tracing_kind_t kind,
    rocprofiler_tracing_operation_t     operation,
    void*                               data);

/* Called once per argument of a traced call; return non-zero to stop early. */
typedef int (*rocprofiler_callback_tracing_operation_args_cb_t)(
    rocprofiler_callback_tracing_kind_t kind,
    rocprofiler_tracing_operation_t     operation,
    uint32_t                            arg_number,
    const void* const                   arg_value_addr,
    int32_t                             arg_indirection_count,
    const char*                         arg_type,
    const char*                         arg_name,
    const char*                         arg_value_str,
    int32_t                             arg_dereference_count,
    void*                               data);

/* `operations` == NULL (count 0) selects every operation of `kind`. */
rocprofiler_status_t
rocprofiler_configure_callback_tracing_service(rocprofiler_context_id_t               context_id,
                                               rocprofiler_callback_tracing_kind_t    kind,
                                               const rocprofiler_tracing_operation_t* operations,
                                               size_t                            operations_count,
                                               rocprofiler_callback_tracing_cb_t callback,
                                               void* callback_args) ROCPROFILER_API;

rocprofiler_status_t
rocprofiler_query_callback_tracing_kind_name(rocprofiler_callback_tracing_kind_t kind,
                                             const char**                        name,
                                             uint64_t* name_len) ROCPROFILER_API;

rocprofiler_status_t
rocprofiler_query_callback_tracing_kind_operation_name(rocprofiler_callback_tracing_kind_t kind,
                                                       rocprofiler_tracing_operation_t operation,
                                                       const char**                    name,
                                                       uint64_t* name_len) ROCPROFILER_API;

rocprofiler_status_t
rocprofiler_iterate_callback_tracing_kinds(rocprofiler_callback_tracing_kind_cb_t callback,
                                           void* data) ROCPROFILER_API ROCPROFILER_NONNULL(1);

rocprofiler_status_t
rocprofiler_iterate_callback_tracing_kind_operations(
    rocprofiler_callback_tracing_kind_t              kind,
    rocprofiler_callback_tracing_kind_operation_cb_t callback,
    void*                                            data) ROCPROFILER_API ROCPROFILER_NONNULL(2);

rocprofiler_status_t
rocprofiler_iterate_callback_tracing_kind_operation_args(
    rocprofiler_callback_tracing_record_t            record,
    rocprofiler_callback_tracing_operation_args_cb_t callback,
    int32_t                                          max_dereference_count,
    void* user_data) ROCPROFILER_API ROCPROFILER_NONNULL(2);

ROCPROFILER_EXTERN_C_FINI
