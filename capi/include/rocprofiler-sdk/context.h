/* rocprofiler-sdk/context.h -- contexts group services that are started and stopped
 * together. */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/* The "no context" value: handle 0, which no created context has (SDK 1.0 after ROCm 7.0;
 * the ROCm 7.0 headers used UINT64_MAX, which no context has either). */
#define ROCPROFILER_CONTEXT_NONE ROCPROFILER_HANDLE_LITERAL(rocprofiler_context_id_t, 0UL)

rocprofiler_status_t
rocprofiler_create_context(rocprofiler_context_id_t* context_id) ROCPROFILER_API
    ROCPROFILER_NONNULL(1);

rocprofiler_status_t
rocprofiler_start_context(rocprofiler_context_id_t context_id) ROCPROFILER_API;

rocprofiler_status_t
rocprofiler_stop_context(rocprofiler_context_id_t context_id) ROCPROFILER_API;

/* *status is set non-zero when the context is started. */
rocprofiler_status_t
rocprofiler_context_is_active(rocprofiler_context_id_t context_id, int* status) ROCPROFILER_API
    ROCPROFILER_NONNULL(2);

/* *status is set non-zero when the context exists and its configuration is usable. */
rocprofiler_status_t
rocprofiler_context_is_valid(rocprofiler_context_id_t context_id, int* status) ROCPROFILER_API
    ROCPROFILER_NONNULL(2);

ROCPROFILER_EXTERN_C_FINI
