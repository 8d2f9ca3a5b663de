/* rocprofiler-sdk/rccl.h -- everything about RCCL API tracing. */
#pragma once

#include <rocprofiler-sdk/rccl/api_args.h>
#include <rocprofiler-sdk/rccl/api_id.h>
#include <rocprofiler-sdk/rccl/table_id.h>
