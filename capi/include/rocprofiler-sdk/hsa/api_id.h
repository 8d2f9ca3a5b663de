/* rocprofiler-sdk/hsa/api_id.h -- all HSA operation ids (one enum per API table). */
#pragma once

#include <rocprofiler-sdk/hsa/amd_ext_api_id.h>
#include <rocprofiler-sdk/hsa/core_api_id.h>
#include <rocprofiler-sdk/hsa/finalize_ext_api_id.h>
#include <rocprofiler-sdk/hsa/image_ext_api_id.h>
