/* rocprofiler-sdk/hsa.h -- everything about HSA API tracing.
 *
 * AMD's version includes <hsa/hsa.h>; ours includes it only when it is reachable
 * (compat/hsa_types.h) and otherwise provides the few HSA types the API needs.
 */
#pragma once

#include <rocprofiler-sdk/compat/hsa_types.h>

#include <rocprofiler-sdk/hsa/api_trace_version.h>

#include <rocprofiler-sdk/hsa/api_args.h>
#include <rocprofiler-sdk/hsa/api_id.h>
#include <rocprofiler-sdk/hsa/scratch_memory_args.h>
#include <rocprofiler-sdk/hsa/scratch_memory_id.h>
#include <rocprofiler-sdk/hsa/table_id.h>
