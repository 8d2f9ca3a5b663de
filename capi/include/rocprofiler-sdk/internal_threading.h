/* rocprofiler-sdk/internal_threading.h -- hooks around the threads the profiler and the
 * runtimes create for themselves, and dedicated threads for buffer callbacks. */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

ROCPROFILER_SDK_EXPERIMENTAL
typedef void (*rocprofiler_internal_thread_library_cb_t)(rocprofiler_runtime_library_t, void*);

/* `libs` is a bitwise-or of rocprofiler_runtime_library_t values. */
ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_at_internal_thread_create(rocprofiler_internal_thread_library_cb_t precreate,
                                      rocprofiler_internal_thread_library_cb_t postcreate,
                                      int                                      libs,
                                      void* data) ROCPROFILER_API;

typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_callback_thread_t
{
    uint64_t handle;
} rocprofiler_callback_thread_t;

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_create_callback_thread(rocprofiler_callback_thread_t* cb_thread_id) ROCPROFILER_API
    ROCPROFILER_NONNULL(1);

/* Runs the buffer's callbacks on the given thread instead of the default one. */
ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_assign_callback_thread(rocprofiler_buffer_id_t       buffer_id,
                                   rocprofiler_callback_thread_t cb_thread_id) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
