/* rocprofiler-sdk/counter_config.h -- a set of hardware counters prepared for one agent. */
#pragma once

#include <rocprofiler-sdk/agent.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/* Passing an existing *config_id extends that configuration with more counters. */
ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_create_counter_config(rocprofiler_agent_id_t           agent_id,
                                  rocprofiler_counter_id_t*        counters_list,
                                  size_t                           counters_count,
                                  rocprofiler_counter_config_id_t* config_id) ROCPROFILER_API
    ROCPROFILER_NONNULL(4);

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_destroy_counter_config(rocprofiler_counter_config_id_t config_id) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
