/* rocprofiler-sdk/rocdecode.h -- everything about rocDecode API tracing. */
#pragma once

#include <rocprofiler-sdk/rocdecode/api_args.h>
#include <rocprofiler-sdk/rocdecode/api_id.h>
#include <rocprofiler-sdk/rocdecode/table_id.h>
