/* rocprofiler-sdk/rocjpeg.h -- everything about rocJPEG API tracing. */
#pragma once

#include <rocprofiler-sdk/rocjpeg/api_args.h>
#include <rocprofiler-sdk/rocjpeg/api_id.h>
#include <rocprofiler-sdk/rocjpeg/table_id.h>
