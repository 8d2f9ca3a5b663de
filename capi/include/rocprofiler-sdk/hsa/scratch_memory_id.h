/* rocprofiler-sdk/hsa/scratch_memory_id.h -- flags of a scratch allocation (values are
 * the HSA runtime's hsa_amd_event_scratch_alloc_flag_t bits). */
#pragma once

#include <rocprofiler-sdk/compat/hsa_types.h>

typedef enum rocprofiler_scratch_alloc_flag_t
{
    ROCPROFILER_SCRATCH_ALLOC_FLAG_NONE     = 0,
    ROCPROFILER_SCRATCH_ALLOC_FLAG_USE_ONCE = (1 << 0),  /* valid for one dispatch only */
    ROCPROFILER_SCRATCH_ALLOC_FLAG_ALT      = (1 << 1),  /* alternate scratch was used */
} rocprofiler_scratch_alloc_flag_t;
