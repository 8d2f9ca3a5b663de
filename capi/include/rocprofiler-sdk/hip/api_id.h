/* rocprofiler-sdk/hip/api_id.h -- all HIP operation ids (compiler + runtime tables). */
#pragma once

#include <rocprofiler-sdk/hip/compiler_api_id.h>
#include <rocprofiler-sdk/hip/runtime_api_id.h>
