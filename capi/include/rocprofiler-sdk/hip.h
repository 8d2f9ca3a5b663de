/* rocprofiler-sdk/hip.h -- everything about HIP API tracing. */
#pragma once

#include <rocprofiler-sdk/hip/api_args.h>
#include <rocprofiler-sdk/hip/api_id.h>
#include <rocprofiler-sdk/hip/table_id.h>
