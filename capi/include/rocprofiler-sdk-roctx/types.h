/* rocprofiler-sdk-roctx/types.h -- scalar types of the ROCTx API. */
#pragma once

#include "rocprofiler-sdk-roctx/defines.h"

#include <stdint.h>

ROCTX_EXTERN_C_INIT

typedef uint64_t roctx_range_id_t;   /* returned by roctxRangeStartA */
typedef uint64_t roctx_thread_id_t;  /* OS thread id, 0 = all threads where allowed */

ROCTX_EXTERN_C_FINI
