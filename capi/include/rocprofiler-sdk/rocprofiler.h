/* rocprofiler-sdk/rocprofiler.h -- umbrella header of the rocprofiler-sdk 1.0 C API.
 *
 * rocwasm re-implements AMD's ROCprofiler-SDK tool interface; these headers were
 * written from AMD's published API (names, enumerator values, struct layouts and
 * function signatures match rocprofiler-sdk 1.0 / ROCm 7.0) and compile without any
 * ROCm headers.  See capi/include/README.md for the differences.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "rocprofiler-sdk/defines.h"
#include "rocprofiler-sdk/fwd.h"
#include "rocprofiler-sdk/version.h"

ROCPROFILER_EXTERN_C_INIT

/* Version of the library actually loaded (callable before initialization).  Any
 * pointer may be NULL. */
rocprofiler_status_t
rocprofiler_get_version(uint32_t* major, uint32_t* minor, uint32_t* patch) ROCPROFILER_API;

/* Same, as one struct. */
rocprofiler_status_t
rocprofiler_get_version_triplet(rocprofiler_version_triplet_t* info) ROCPROFILER_API
    ROCPROFILER_NONNULL(1);

ROCPROFILER_EXTERN_C_FINI

#include "rocprofiler-sdk/agent.h"
#include "rocprofiler-sdk/buffer.h"
#include "rocprofiler-sdk/buffer_tracing.h"
#include "rocprofiler-sdk/callback_tracing.h"
#include "rocprofiler-sdk/context.h"
#include "rocprofiler-sdk/counter_config.h"
#include "rocprofiler-sdk/counters.h"
#include "rocprofiler-sdk/device_counting_service.h"
#include "rocprofiler-sdk/dispatch_counting_service.h"
#include "rocprofiler-sdk/external_correlation.h"
#include "rocprofiler-sdk/hip.h"
#include "rocprofiler-sdk/hsa.h"
#include "rocprofiler-sdk/intercept_table.h"
#include "rocprofiler-sdk/internal_threading.h"
#include "rocprofiler-sdk/marker.h"
#include "rocprofiler-sdk/ompt.h"
#include "rocprofiler-sdk/pc_sampling.h"
#include "rocprofiler-sdk/rccl.h"
#include "rocprofiler-sdk/rocdecode.h"
#include "rocprofiler-sdk/rocjpeg.h"

#include "rocprofiler-sdk/deprecated/profile_config.h"

ROCPROFILER_EXTERN_C_INIT

/* Current time on the clock all rocprofiler timestamps use (nanoseconds). */
rocprofiler_status_t
rocprofiler_get_timestamp(rocprofiler_timestamp_t* ts) ROCPROFILER_API ROCPROFILER_NONNULL(1);

/* The id rocprofiler uses for the calling thread (as in the records). */
rocprofiler_status_t
rocprofiler_get_thread_id(rocprofiler_thread_id_t* tid) ROCPROFILER_API ROCPROFILER_NONNULL(1);

/* Enumerator name / human-readable message of a status code; NULL when unknown. */
const char*
rocprofiler_get_status_name(rocprofiler_status_t status) ROCPROFILER_API;

const char*
rocprofiler_get_status_string(rocprofiler_status_t status) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
