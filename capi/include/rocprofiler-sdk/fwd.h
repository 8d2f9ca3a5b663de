/* rocprofiler-sdk/fwd.h -- core enums, handle types and shared record types of the
 * rocprofiler-sdk 1.0 C API (rocwasm re-implementation; names, values and layouts
 * match AMD's published API).
 */
#pragma once

#include <rocprofiler-sdk/defines.h>

#include <stddef.h>
#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

/* Return code of every API function. */
typedef enum rocprofiler_status_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_STATUS_SUCCESS = 0,
    ROCPROFILER_STATUS_ERROR,
    ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_THREAD_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_COUNTER_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_CONTEXT_ERROR,
    ROCPROFILER_STATUS_ERROR_CONTEXT_INVALID,
    ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_STARTED,
    ROCPROFILER_STATUS_ERROR_CONTEXT_CONFLICT,
    ROCPROFILER_STATUS_ERROR_CONTEXT_ID_NOT_ZERO,
    ROCPROFILER_STATUS_ERROR_BUFFER_BUSY,
    ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED,
    ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED,
    ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED,
    ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI,
    ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT,
    ROCPROFILER_STATUS_ERROR_METRIC_NOT_VALID_FOR_AGENT,
    ROCPROFILER_STATUS_ERROR_FINALIZED,
    ROCPROFILER_STATUS_ERROR_HSA_NOT_LOADED,
    ROCPROFILER_STATUS_ERROR_DIM_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_PROFILE_COUNTER_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_AST_GENERATION_FAILED,
    ROCPROFILER_STATUS_ERROR_AST_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_AQL_NO_EVENT_COORD,
    ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_KERNEL,
    ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES,
    ROCPROFILER_STATUS_ERROR_PROFILE_NOT_FOUND,
    ROCPROFILER_STATUS_ERROR_AGENT_DISPATCH_CONFLICT,
    ROCPROFILER_STATUS_INTERNAL_NO_AGENT_CONTEXT,
    ROCPROFILER_STATUS_ERROR_SAMPLE_RATE_EXCEEDED,
    ROCPROFILER_STATUS_ERROR_NO_PROFILE_QUEUE,
    ROCPROFILER_STATUS_ERROR_NO_HARDWARE_COUNTERS,
    ROCPROFILER_STATUS_ERROR_AGENT_MISMATCH,
    ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE,
    ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT,
    ROCPROFILER_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED,
    ROCPROFILER_STATUS_ERROR_PERMISSION_DENIED,
    ROCPROFILER_STATUS_LAST,
} rocprofiler_status_t;

/* What a buffer record header's `category` field says. */
typedef enum rocprofiler_buffer_category_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_BUFFER_CATEGORY_NONE = 0,
    ROCPROFILER_BUFFER_CATEGORY_TRACING,
    ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING,
    ROCPROFILER_BUFFER_CATEGORY_COUNTERS,
    ROCPROFILER_BUFFER_CATEGORY_LAST,
} rocprofiler_buffer_category_t;

typedef enum rocprofiler_agent_type_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_AGENT_TYPE_NONE = 0,
    ROCPROFILER_AGENT_TYPE_CPU,
    ROCPROFILER_AGENT_TYPE_GPU,
    ROCPROFILER_AGENT_TYPE_LAST,
} rocprofiler_agent_type_t;

/* ENTER/EXIT around an API call; LOAD/UNLOAD are the same values for code objects. */
typedef enum rocprofiler_callback_phase_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_CALLBACK_PHASE_NONE   = 0,
    ROCPROFILER_CALLBACK_PHASE_ENTER  = 1,
    ROCPROFILER_CALLBACK_PHASE_LOAD   = ROCPROFILER_CALLBACK_PHASE_ENTER,
    ROCPROFILER_CALLBACK_PHASE_EXIT   = 2,
    ROCPROFILER_CALLBACK_PHASE_UNLOAD = ROCPROFILER_CALLBACK_PHASE_EXIT,
    ROCPROFILER_CALLBACK_PHASE_LAST   = 3,
} rocprofiler_callback_phase_t;

/* Services delivered synchronously through a callback. */
typedef enum rocprofiler_callback_tracing_kind_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_CALLBACK_TRACING_NONE = 0,
    ROCPROFILER_CALLBACK_TRACING_HSA_CORE_API,
    ROCPROFILER_CALLBACK_TRACING_HSA_AMD_EXT_API,
    ROCPROFILER_CALLBACK_TRACING_HSA_IMAGE_EXT_API,
    ROCPROFILER_CALLBACK_TRACING_HSA_FINALIZE_EXT_API,
    ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API,
    ROCPROFILER_CALLBACK_TRACING_HIP_COMPILER_API,
    ROCPROFILER_CALLBACK_TRACING_MARKER_CORE_API,
    ROCPROFILER_CALLBACK_TRACING_MARKER_CONTROL_API,
    ROCPROFILER_CALLBACK_TRACING_MARKER_NAME_API,
    ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT,
    ROCPROFILER_CALLBACK_TRACING_SCRATCH_MEMORY,
    ROCPROFILER_CALLBACK_TRACING_KERNEL_DISPATCH,
    ROCPROFILER_CALLBACK_TRACING_MEMORY_COPY,
    ROCPROFILER_CALLBACK_TRACING_RCCL_API,
    ROCPROFILER_CALLBACK_TRACING_OMPT,
    ROCPROFILER_CALLBACK_TRACING_MEMORY_ALLOCATION,
    ROCPROFILER_CALLBACK_TRACING_RUNTIME_INITIALIZATION,
    ROCPROFILER_CALLBACK_TRACING_ROCDECODE_API,
    ROCPROFILER_CALLBACK_TRACING_ROCJPEG_API,
    ROCPROFILER_CALLBACK_TRACING_HIP_STREAM,
    ROCPROFILER_CALLBACK_TRACING_MARKER_CORE_RANGE_API,
    ROCPROFILER_CALLBACK_TRACING_LAST,
} rocprofiler_callback_tracing_kind_t;

/* Services delivered asynchronously as records in a buffer. */
typedef enum rocprofiler_buffer_tracing_kind_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_BUFFER_TRACING_NONE = 0,
    ROCPROFILER_BUFFER_TRACING_HSA_CORE_API,
    ROCPROFILER_BUFFER_TRACING_HSA_AMD_EXT_API,
    ROCPROFILER_BUFFER_TRACING_HSA_IMAGE_EXT_API,
    ROCPROFILER_BUFFER_TRACING_HSA_FINALIZE_EXT_API,
    ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API,
    ROCPROFILER_BUFFER_TRACING_HIP_COMPILER_API,
    ROCPROFILER_BUFFER_TRACING_MARKER_CORE_API,
    ROCPROFILER_BUFFER_TRACING_MARKER_CONTROL_API,
    ROCPROFILER_BUFFER_TRACING_MARKER_NAME_API,
    ROCPROFILER_BUFFER_TRACING_MEMORY_COPY,
    ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
    ROCPROFILER_BUFFER_TRACING_SCRATCH_MEMORY,
    ROCPROFILER_BUFFER_TRACING_CORRELATION_ID_RETIREMENT,
    ROCPROFILER_BUFFER_TRACING_RCCL_API,
    ROCPROFILER_BUFFER_TRACING_OMPT,
    ROCPROFILER_BUFFER_TRACING_MEMORY_ALLOCATION,
    ROCPROFILER_BUFFER_TRACING_RUNTIME_INITIALIZATION,
    ROCPROFILER_BUFFER_TRACING_ROCDECODE_API,
    ROCPROFILER_BUFFER_TRACING_ROCJPEG_API,
    ROCPROFILER_BUFFER_TRACING_HIP_STREAM,
    ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API_EXT,
    ROCPROFILER_BUFFER_TRACING_HIP_COMPILER_API_EXT,
    ROCPROFILER_BUFFER_TRACING_ROCDECODE_API_EXT,
    ROCPROFILER_BUFFER_TRACING_KFD_EVENT_PAGE_MIGRATE,
    ROCPROFILER_BUFFER_TRACING_KFD_EVENT_PAGE_FAULT,
    ROCPROFILER_BUFFER_TRACING_KFD_EVENT_QUEUE,
    ROCPROFILER_BUFFER_TRACING_KFD_EVENT_UNMAP_FROM_GPU,
    ROCPROFILER_BUFFER_TRACING_KFD_EVENT_DROPPED_EVENTS,
    ROCPROFILER_BUFFER_TRACING_KFD_PAGE_MIGRATE,
    ROCPROFILER_BUFFER_TRACING_KFD_PAGE_FAULT,
    ROCPROFILER_BUFFER_TRACING_KFD_QUEUE,
    ROCPROFILER_BUFFER_TRACING_MARKER_CORE_RANGE_API,
    ROCPROFILER_BUFFER_TRACING_LAST,
} rocprofiler_buffer_tracing_kind_t;

typedef enum rocprofiler_code_object_operation_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_CODE_OBJECT_NONE = 0,
    ROCPROFILER_CODE_OBJECT_LOAD,
    ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER,
    ROCPROFILER_CODE_OBJECT_HOST_KERNEL_SYMBOL_REGISTER,
    ROCPROFILER_CODE_OBJECT_LAST,
} rocprofiler_code_object_operation_t;

typedef enum rocprofiler_hip_stream_operation_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_HIP_STREAM_NONE = 0,
    ROCPROFILER_HIP_STREAM_CREATE,
    ROCPROFILER_HIP_STREAM_DESTROY,
    ROCPROFILER_HIP_STREAM_SET,
    ROCPROFILER_HIP_STREAM_LAST,
} rocprofiler_hip_stream_operation_t;

/* Direction of an asynchronous memory copy. */
typedef enum rocprofiler_memory_copy_operation_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_MEMORY_COPY_NONE = 0,
    ROCPROFILER_MEMORY_COPY_HOST_TO_HOST,
    ROCPROFILER_MEMORY_COPY_HOST_TO_DEVICE,
    ROCPROFILER_MEMORY_COPY_DEVICE_TO_HOST,
    ROCPROFILER_MEMORY_COPY_DEVICE_TO_DEVICE,
    ROCPROFILER_MEMORY_COPY_LAST,
} rocprofiler_memory_copy_operation_t;

typedef enum rocprofiler_memory_allocation_operation_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_MEMORY_ALLOCATION_NONE = 0,
    ROCPROFILER_MEMORY_ALLOCATION_ALLOCATE,
    ROCPROFILER_MEMORY_ALLOCATION_VMEM_ALLOCATE,
    ROCPROFILER_MEMORY_ALLOCATION_FREE,
    ROCPROFILER_MEMORY_ALLOCATION_VMEM_FREE,
    ROCPROFILER_MEMORY_ALLOCATION_LAST,
} rocprofiler_memory_allocation_operation_t;

typedef enum rocprofiler_kernel_dispatch_operation_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_KERNEL_DISPATCH_NONE    = 0,
    ROCPROFILER_KERNEL_DISPATCH_ENQUEUE = 1,
    ROCPROFILER_KERNEL_DISPATCH_COMPLETE,
    ROCPROFILER_KERNEL_DISPATCH_LAST,
} rocprofiler_kernel_dispatch_operation_t;

typedef enum rocprofiler_pc_sampling_method_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_PC_SAMPLING_METHOD_NONE = 0,
    ROCPROFILER_PC_SAMPLING_METHOD_STOCHASTIC,
    ROCPROFILER_PC_SAMPLING_METHOD_HOST_TRAP,
    ROCPROFILER_PC_SAMPLING_METHOD_LAST,
} rocprofiler_pc_sampling_method_t;

typedef enum rocprofiler_pc_sampling_unit_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_PC_SAMPLING_UNIT_NONE = 0,
    ROCPROFILER_PC_SAMPLING_UNIT_INSTRUCTIONS,
    ROCPROFILER_PC_SAMPLING_UNIT_CYCLES,
    ROCPROFILER_PC_SAMPLING_UNIT_TIME,
    ROCPROFILER_PC_SAMPLING_UNIT_LAST,
} rocprofiler_pc_sampling_unit_t;

/* What a full buffer does: drop new records, or make the producer wait. */
typedef enum rocprofiler_buffer_policy_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_BUFFER_POLICY_NONE = 0,
    ROCPROFILER_BUFFER_POLICY_DISCARD,
    ROCPROFILER_BUFFER_POLICY_LOSSLESS,
    ROCPROFILER_BUFFER_POLICY_LAST,
} rocprofiler_buffer_policy_t;

typedef enum rocprofiler_scratch_memory_operation_t
{
    ROCPROFILER_SCRATCH_MEMORY_NONE = 0,
    ROCPROFILER_SCRATCH_MEMORY_ALLOC,
    ROCPROFILER_SCRATCH_MEMORY_FREE,
    ROCPROFILER_SCRATCH_MEMORY_ASYNC_RECLAIM,
    ROCPROFILER_SCRATCH_MEMORY_LAST,
} rocprofiler_scratch_memory_operation_t;

/* Bit flags naming runtime libraries (for the internal-thread hooks). */
typedef enum rocprofiler_runtime_library_t
{
    ROCPROFILER_LIBRARY           = (1 << 0),
    ROCPROFILER_HSA_LIBRARY       = (1 << 1),
    ROCPROFILER_HIP_LIBRARY       = (1 << 2),
    ROCPROFILER_MARKER_LIBRARY    = (1 << 3),
    ROCPROFILER_RCCL_LIBRARY      = (1 << 4),
    ROCPROFILER_ROCDECODE_LIBRARY = (1 << 5),
    ROCPROFILER_ROCJPEG_LIBRARY   = (1 << 6),
    ROCPROFILER_LIBRARY_LAST      = ROCPROFILER_ROCJPEG_LIBRARY,
} rocprofiler_runtime_library_t;

/* Bit flags naming the dispatch tables a tool can intercept. */
typedef enum rocprofiler_intercept_table_t
{
    ROCPROFILER_HSA_TABLE            = (1 << 0),
    ROCPROFILER_HIP_RUNTIME_TABLE    = (1 << 1),
    ROCPROFILER_HIP_COMPILER_TABLE   = (1 << 2),
    ROCPROFILER_MARKER_CORE_TABLE    = (1 << 3),
    ROCPROFILER_MARKER_CONTROL_TABLE = (1 << 4),
    ROCPROFILER_MARKER_NAME_TABLE    = (1 << 5),
    ROCPROFILER_RCCL_TABLE           = (1 << 6),
    ROCPROFILER_ROCDECODE_TABLE      = (1 << 7),
    ROCPROFILER_ROCJPEG_TABLE        = (1 << 8),
    ROCPROFILER_TABLE_LAST           = ROCPROFILER_ROCJPEG_TABLE,
} rocprofiler_intercept_table_t;

/* Which runtime just finished loading. */
typedef enum rocprofiler_runtime_initialization_operation_t  // NOLINT(performance-enum-size)
{
    ROCPROFILER_RUNTIME_INITIALIZATION_NONE = 0,
    ROCPROFILER_RUNTIME_INITIALIZATION_HSA,
    ROCPROFILER_RUNTIME_INITIALIZATION_HIP,
    ROCPROFILER_RUNTIME_INITIALIZATION_MARKER,
    ROCPROFILER_RUNTIME_INITIALIZATION_RCCL,
    ROCPROFILER_RUNTIME_INITIALIZATION_ROCDECODE,
    ROCPROFILER_RUNTIME_INITIALIZATION_ROCJPEG,
    ROCPROFILER_RUNTIME_INITIALIZATION_LAST,
} rocprofiler_runtime_initialization_operation_t;

/* Which rocprofiler_counter_info_vN_t struct rocprofiler_query_counter_info fills. */
typedef enum rocprofiler_counter_info_version_id_t
{
    ROCPROFILER_COUNTER_INFO_VERSION_NONE,
    ROCPROFILER_COUNTER_INFO_VERSION_0,
    ROCPROFILER_COUNTER_INFO_VERSION_1,
    ROCPROFILER_COUNTER_INFO_VERSION_LAST,
} rocprofiler_counter_info_version_id_t;

/* `kind` of a ROCPROFILER_BUFFER_CATEGORY_COUNTERS record. */
typedef enum rocprofiler_counter_record_kind_t
{
    ROCPROFILER_COUNTER_RECORD_NONE = 0,
    ROCPROFILER_COUNTER_RECORD_PROFILE_COUNTING_DISPATCH_HEADER,
    ROCPROFILER_COUNTER_RECORD_VALUE,
    ROCPROFILER_COUNTER_RECORD_LAST,
} rocprofiler_counter_record_kind_t;

typedef enum rocprofiler_counter_flag_t
{
    ROCPROFILER_COUNTER_FLAG_NONE = 0,
    ROCPROFILER_COUNTER_FLAG_ASYNC,
    ROCPROFILER_COUNTER_FLAG_APPEND_DEFINITION,
    ROCPROFILER_COUNTER_FLAG_LAST,
} rocprofiler_counter_flag_t;

/* `kind` of a ROCPROFILER_BUFFER_CATEGORY_PC_SAMPLING record. */
typedef enum rocprofiler_pc_sampling_record_kind_t
{
    ROCPROFILER_PC_SAMPLING_RECORD_NONE = 0,
    ROCPROFILER_PC_SAMPLING_RECORD_INVALID_SAMPLE,
    ROCPROFILER_PC_SAMPLING_RECORD_HOST_TRAP_V0_SAMPLE,
    ROCPROFILER_PC_SAMPLING_RECORD_STOCHASTIC_V0_SAMPLE,
    ROCPROFILER_PC_SAMPLING_RECORD_LAST,
} rocprofiler_pc_sampling_record_kind_t;

/* ---- scalar aliases ------------------------------------------------------------------ */

typedef uint64_t rocprofiler_timestamp_t;           /* nanoseconds, see rocprofiler_get_timestamp */
typedef uint64_t rocprofiler_thread_id_t;           /* OS thread id */
typedef int32_t  rocprofiler_tracing_operation_t;   /* one of the per-kind operation enums */
typedef uint64_t rocprofiler_kernel_id_t;
typedef uint64_t rocprofiler_dispatch_id_t;
typedef uint64_t rocprofiler_counter_instance_id_t;
typedef uint64_t rocprofiler_counter_dimension_id_t;

/* ---- unions and handle structs ------------------------------------------------------- */

/* A tool-owned 64-bit slot: either a number or a pointer. */
typedef union rocprofiler_user_data_t
{
    uint64_t value;
    void*    ptr;
} rocprofiler_user_data_t;

typedef union rocprofiler_address_t
{
    uint64_t    handle;
    uint64_t    value;
    const void* ptr;
} rocprofiler_address_t;

/* A device's UUID as 16 raw bytes (SDK 1.0 after ROCm 7.0; earlier headers made it an
 * 8-byte union of a uint64_t value and a pointer). KFD's 64-bit unique id fills the first
 * eight bytes, in host byte order; the rest are zero. */
typedef struct rocprofiler_uuid_t
{
    uint8_t bytes[16];
} rocprofiler_uuid_t;

typedef struct rocprofiler_version_triplet_t
{
    uint32_t major;
    uint32_t minor;
    uint32_t patch;
} rocprofiler_version_triplet_t;

typedef struct rocprofiler_context_id_t
{
    uint64_t handle;
} rocprofiler_context_id_t;

typedef struct rocprofiler_queue_id_t
{
    uint64_t handle;
} rocprofiler_queue_id_t;

typedef struct rocprofiler_stream_id_t
{
    uint64_t handle;
} rocprofiler_stream_id_t;

/* internal: unique id minted by the library; external: tool-supplied value;
 * ancestor: internal id of the enclosing API call (0 when none). */
typedef struct rocprofiler_correlation_id_t
{
    uint64_t                internal;
    rocprofiler_user_data_t external;
    uint64_t                ancestor;
} rocprofiler_correlation_id_t;

/* Correlation id carried by asynchronous activity (no ancestor). */
typedef struct rocprofiler_async_correlation_id_t
{
    uint64_t                internal;
    rocprofiler_user_data_t external;
} rocprofiler_async_correlation_id_t;

#define ROCPROFILER_CORRELATION_ID_INTERNAL_NONE ROCPROFILER_UINT64_C(0)
#define ROCPROFILER_CORRELATION_ID_ANCESTOR_NONE ROCPROFILER_UINT64_C(0)

typedef struct rocprofiler_buffer_id_t
{
    uint64_t handle;
} rocprofiler_buffer_id_t;

typedef struct rocprofiler_agent_id_t
{
    uint64_t handle;
} rocprofiler_agent_id_t;

typedef struct rocprofiler_counter_id_t
{
    uint64_t handle;
} rocprofiler_counter_id_t;

typedef struct rocprofiler_counter_config_id_t
{
    uint64_t handle;
} rocprofiler_counter_config_id_t;

typedef struct rocprofiler_dim3_t
{
    uint32_t x;
    uint32_t y;
    uint32_t z;
} rocprofiler_dim3_t;

/* ---- records shared by several services ---------------------------------------------- */

/* Passed by value to every callback-tracing callback; `payload` points at the
 * kind-specific rocprofiler_callback_tracing_*_data_t. */
typedef struct rocprofiler_callback_tracing_record_t
{
    rocprofiler_context_id_t            context_id;
    rocprofiler_thread_id_t             thread_id;
    rocprofiler_correlation_id_t        correlation_id;
    rocprofiler_callback_tracing_kind_t kind;
    rocprofiler_tracing_operation_t     operation;
    rocprofiler_callback_phase_t        phase;
    void*                               payload;
} rocprofiler_callback_tracing_record_t;

/* Header of each record handed to a buffer callback.  `hash` is category in the low
 * 32 bits and kind in the high 32 bits (see rocprofiler_record_header_compute_hash). */
typedef struct rocprofiler_record_header_t
{
    union
    {
        struct
        {
            uint32_t category;  /* rocprofiler_buffer_category_t */
            uint32_t kind;      /* per-category kind enum */
        };
        uint64_t hash;
    };
    void* payload;
} rocprofiler_record_header_t;

static inline uint64_t
rocprofiler_record_header_compute_hash(uint32_t category, uint32_t kind)
{
    return ((uint64_t) category) | (((uint64_t) kind) << 32);
}

/* Kernel launch description shared by dispatch tracing and counter collection.
 * Fixed at 128 bytes; the tail is reserved for additions. */
typedef struct rocprofiler_kernel_dispatch_info_t
{
    uint64_t                  size;
    rocprofiler_agent_id_t    agent_id;
    rocprofiler_queue_id_t    queue_id;
    rocprofiler_kernel_id_t   kernel_id;
    rocprofiler_dispatch_id_t dispatch_id;
    uint32_t                  private_segment_size;
    uint32_t                  group_segment_size;
    rocprofiler_dim3_t        workgroup_size;
    rocprofiler_dim3_t        grid_size;
    uint8_t                   reserved_padding[56];
} rocprofiler_kernel_dispatch_info_t;

typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_counter_record_dimension_info_t
{
    const char*                        name;
    size_t                             instance_size;
    rocprofiler_counter_dimension_id_t id;
} rocprofiler_counter_record_dimension_info_t;

ROCPROFILER_SDK_DEPRECATED("old name of rocprofiler_counter_record_dimension_info_t")
typedef rocprofiler_counter_record_dimension_info_t rocprofiler_record_dimension_info_t;

/* One collected counter value. */
typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_counter_record_t
{
    rocprofiler_counter_instance_id_t id;
    double                            counter_value;
    rocprofiler_dispatch_id_t         dispatch_id;
    rocprofiler_user_data_t           user_data;
    rocprofiler_agent_id_t            agent_id;
} rocprofiler_counter_record_t;

ROCPROFILER_SDK_DEPRECATED("old name of rocprofiler_counter_record_t")
typedef rocprofiler_counter_record_t rocprofiler_record_counter_t;

#if defined(ROCPROFILER_SDK_BETA_COMPAT) && ROCPROFILER_SDK_BETA_COMPAT > 0
ROCPROFILER_SDK_DEPRECATED("old name of rocprofiler_counter_config_id_t")
typedef rocprofiler_counter_config_id_t rocprofiler_profile_config_id_t;
#endif

ROCPROFILER_EXTERN_C_FINI

ROCPROFILER_CXX_CODE(static_assert(sizeof(rocprofiler_kernel_dispatch_info_t) == 128,
                                   "rocprofiler_kernel_dispatch_info_t must stay 128 bytes");)
