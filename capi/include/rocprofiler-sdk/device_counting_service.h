/* rocprofiler-sdk/device_counting_service.h -- sampling counters of a whole agent
 * (not tied to individual kernel dispatches). */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/* Handed to the tool's setup callback; call it to choose the counter config. */
ROCPROFILER_SDK_EXPERIMENTAL
typedef rocprofiler_status_t (*rocprofiler_device_counting_agent_cb_t)(
    rocprofiler_context_id_t        context_id,
    rocprofiler_counter_config_id_t config_id);

ROCPROFILER_SDK_EXPERIMENTAL
typedef void (*rocprofiler_device_counting_service_cb_t)(
    rocprofiler_context_id_t               context_id,
    rocprofiler_agent_id_t                 agent_id,
    rocprofiler_device_counting_agent_cb_t set_config,
    void*                                  user_data);

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_configure_device_counting_service(rocprofiler_context_id_t                 context_id,
                                              rocprofiler_buffer_id_t                  buffer_id,
                                              rocprofiler_agent_id_t                   agent_id,
                                              rocprofiler_device_counting_service_cb_t cb,
                                              void*                                    user_data)
    ROCPROFILER_NONNULL(4) ROCPROFILER_API;

/* Reads the counters now.  With output_records == NULL the values go to the buffer;
 * otherwise up to *rec_count records are written there and *rec_count is updated. */
ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_sample_device_counting_service(rocprofiler_context_id_t      context_id,
                                           rocprofiler_user_data_t       user_data,
                                           rocprofiler_counter_flag_t    flags,
                                           rocprofiler_counter_record_t* output_records,
                                           size_t*                       rec_count) ROCPROFILER_API;

#if defined(ROCPROFILER_SDK_BETA_COMPAT) && ROCPROFILER_SDK_BETA_COMPAT > 0
ROCPROFILER_SDK_DEPRECATED("old name of rocprofiler_device_counting_agent_cb_t")
typedef rocprofiler_device_counting_agent_cb_t rocprofiler_agent_set_profile_callback_t;
#endif

ROCPROFILER_EXTERN_C_FINI
