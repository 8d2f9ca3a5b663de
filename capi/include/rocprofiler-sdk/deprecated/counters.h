/* rocprofiler-sdk/deprecated/counters.h -- counter queries superseded by
 * rocprofiler_counter_info_v1_t; still exported. */
#pragma once

#include <rocprofiler-sdk/agent.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

ROCPROFILER_SDK_DEPRECATED("only used by the deprecated rocprofiler_iterate_counter_dimensions")
typedef rocprofiler_status_t (*rocprofiler_available_dimensions_cb_t)(
    rocprofiler_counter_id_t                           id,
    const rocprofiler_counter_record_dimension_info_t* dim_info,
    size_t                                             num_dims,
    void*                                              user_data);

ROCPROFILER_SDK_DEPRECATED("use the dimensions of rocprofiler_counter_info_v1_t instead")
rocprofiler_status_t
rocprofiler_iterate_counter_dimensions(rocprofiler_counter_id_t              id,
                                       rocprofiler_available_dimensions_cb_t info_cb,
                                       void* user_data) ROCPROFILER_API;

ROCPROFILER_SDK_DEPRECATED("use instance_ids_count of rocprofiler_counter_info_v1_t instead")
rocprofiler_status_t
rocprofiler_query_counter_instance_count(rocprofiler_agent_id_t   agent_id,
                                         rocprofiler_counter_id_t counter_id,
                                         size_t*                  instance_count) ROCPROFILER_API
    ROCPROFILER_NONNULL(3);

ROCPROFILER_EXTERN_C_FINI
