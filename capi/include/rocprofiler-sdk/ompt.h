/* rocprofiler-sdk/ompt.h -- OpenMP tools (OMPT) tracing. */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/ompt/api_args.h>
#include <rocprofiler-sdk/ompt/api_id.h>

ROCPROFILER_EXTERN_C_INIT

/* The OpenMP runtime's start-tool result (defined by <omp-tools.h>); only used by
 * pointer here. */
typedef struct ompt_start_tool_result_t ompt_start_tool_result_t;

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_ompt_is_initialized(int* status) ROCPROFILER_API ROCPROFILER_NONNULL(1);

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_ompt_is_finalized(int* status) ROCPROFILER_API ROCPROFILER_NONNULL(1);

/* For an OpenMP tool that forwards its own ompt_start_tool to the profiler. */
ROCPROFILER_SDK_EXPERIMENTAL
ompt_start_tool_result_t*
rocprofiler_ompt_start_tool(unsigned int omp_version, const char* runtime_version) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
