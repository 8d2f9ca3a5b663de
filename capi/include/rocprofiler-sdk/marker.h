/* rocprofiler-sdk/marker.h -- everything about ROCTx marker tracing. */
#pragma once

#include <rocprofiler-sdk/marker/api_args.h>
#include <rocprofiler-sdk/marker/api_id.h>
#include <rocprofiler-sdk/marker/table_id.h>
