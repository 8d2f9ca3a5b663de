/* rocprofiler-sdk/dispatch_counting_service.h -- collecting counters around individual
 * kernel dispatches. */
#pragma once

#include <rocprofiler-sdk/agent.h>
#include <rocprofiler-sdk/counter_config.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/hsa.h>

ROCPROFILER_EXTERN_C_INIT

/* The dispatch about to be (or just) profiled. */
typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_dispatch_counting_service_data_t
{
    uint64_t                           size;
    rocprofiler_async_correlation_id_t correlation_id;
    rocprofiler_timestamp_t            start_timestamp;
    rocprofiler_timestamp_t            end_timestamp;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
} rocprofiler_dispatch_counting_service_data_t;

/* Buffer record (kind ROCPROFILER_COUNTER_RECORD_PROFILE_COUNTING_DISPATCH_HEADER)
 * that precedes the `num_records` counter value records of one dispatch. */
typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_dispatch_counting_service_record_t
{
    uint64_t                           size;
    uint64_t                           num_records;
    rocprofiler_async_correlation_id_t correlation_id;
    rocprofiler_timestamp_t            start_timestamp;
    rocprofiler_timestamp_t            end_timestamp;
    rocprofiler_kernel_dispatch_info_t dispatch_info;
} rocprofiler_dispatch_counting_service_record_t;

/* Called before each dispatch; set *config to profile it (leave it zero to skip). */
ROCPROFILER_SDK_EXPERIMENTAL
typedef void (*rocprofiler_dispatch_counting_service_cb_t)(
    rocprofiler_dispatch_counting_service_data_t dispatch_data,
    rocprofiler_counter_config_id_t*             config,
    rocprofiler_user_data_t*                     user_data,
    void*                                        callback_data_args);

/* Receives the values once the dispatch completed (callback flavour). */
ROCPROFILER_SDK_EXPERIMENTAL
typedef void (*rocprofiler_dispatch_counting_record_cb_t)(
    rocprofiler_dispatch_counting_service_data_t dispatch_data,
    rocprofiler_counter_record_t*                record_data,
    size_t                                       record_count,
    rocprofiler_user_data_t                      user_data,
    void*                                        callback_data_args);

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_configure_buffer_dispatch_counting_service(
    rocprofiler_context_id_t                   context_id,
    rocprofiler_buffer_id_t                    buffer_id,
    rocprofiler_dispatch_counting_service_cb_t callback,
    void*                                      callback_data_args) ROCPROFILER_API;

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_configure_callback_dispatch_counting_service(
    rocprofiler_context_id_t                   context_id,
    rocprofiler_dispatch_counting_service_cb_t dispatch_callback,
    void*                                      dispatch_callback_args,
    rocprofiler_dispatch_counting_record_cb_t  record_callback,
    void*                                      record_callback_args) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
