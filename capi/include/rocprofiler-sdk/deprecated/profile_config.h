/* rocprofiler-sdk/deprecated/profile_config.h -- pre-1.0 "profile config" names, as
 * inline forwards to the counter_config functions (no exported symbols). */
#pragma once

#include <rocprofiler-sdk/counter_config.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

#if defined(ROCPROFILER_SDK_BETA_COMPAT) && ROCPROFILER_SDK_BETA_COMPAT > 0

ROCPROFILER_EXTERN_C_INIT

ROCPROFILER_SDK_DEPRECATED("use the rocprofiler_*_counter_config names")
static inline rocprofiler_status_t
rocprofiler_create_profile_config(rocprofiler_agent_id_t           agent_id,
                                  rocprofiler_counter_id_t*        counters_list,
                                  size_t                           counters_count,
                                  rocprofiler_profile_config_id_t* config_id)
{
    return rocprofiler_create_counter_config(agent_id, counters_list, counters_count, config_id);
}

ROCPROFILER_SDK_DEPRECATED("use the rocprofiler_*_counter_config names")
static inline rocprofiler_status_t
rocprofiler_destroy_profile_config(rocprofiler_profile_config_id_t config_id)
{
    return rocprofiler_destroy_counter_config(config_id);
}

ROCPROFILER_EXTERN_C_FINI

#endif
