/* rocprofiler-sdk/external_correlation.h -- tool-supplied ("external") correlation ids,
 * either pushed per thread or requested on demand per traced operation. */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

typedef enum ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_external_correlation_id_request_kind_t
{
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_NONE = 0,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HSA_CORE_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HSA_AMD_EXT_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HSA_IMAGE_EXT_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HSA_FINALIZE_EXT_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HIP_RUNTIME_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HIP_COMPILER_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_MARKER_CORE_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_MARKER_CONTROL_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_MARKER_NAME_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_MEMORY_COPY,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_KERNEL_DISPATCH,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_SCRATCH_MEMORY,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_RCCL_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_OMPT,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_MEMORY_ALLOCATION,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_ROCDECODE_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_ROCJPEG_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_MARKER_CORE_RANGE_API,
    ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_LAST,
} rocprofiler_external_correlation_id_request_kind_t;

/* Called when an operation starts and no external id was pushed for the thread;
 * write the id to *external_corr_id_value.  Return 0 on success. */
ROCPROFILER_SDK_EXPERIMENTAL
typedef int (*rocprofiler_external_correlation_id_request_cb_t)(
    rocprofiler_thread_id_t                            thread_id,
    rocprofiler_context_id_t                           context_id,
    rocprofiler_external_correlation_id_request_kind_t kind,
    rocprofiler_tracing_operation_t                    operation,
    uint64_t                                           internal_corr_id_value,
    rocprofiler_user_data_t*                           external_corr_id_value,
    void*                                              data);

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_configure_external_correlation_id_request_service(
    rocprofiler_context_id_t                                  context_id,
    const rocprofiler_external_correlation_id_request_kind_t* kinds,
    size_t                                                    kinds_count,
    rocprofiler_external_correlation_id_request_cb_t          callback,
    void* callback_args) ROCPROFILER_API ROCPROFILER_NONNULL(4);

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_query_external_correlation_id_request_kind_name(
    rocprofiler_external_correlation_id_request_kind_t kind,
    const char**                                       name,
    uint64_t*                                          name_len) ROCPROFILER_API;

/* Per-thread stack of external ids (tid from rocprofiler_get_thread_id). */
rocprofiler_status_t
rocprofiler_push_external_correlation_id(rocprofiler_context_id_t context,
                                         rocprofiler_thread_id_t  tid,
                                         rocprofiler_user_data_t  external_correlation_id)
    ROCPROFILER_API;

rocprofiler_status_t
rocprofiler_pop_external_correlation_id(rocprofiler_context_id_t context,
                                        rocprofiler_thread_id_t  tid,
                                        rocprofiler_user_data_t* external_correlation_id)
    ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
