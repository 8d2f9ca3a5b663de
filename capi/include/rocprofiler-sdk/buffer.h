/* rocprofiler-sdk/buffer.h -- buffers that collect asynchronous records and hand them
 * to the tool in batches. */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/* Receives `num_headers` records; `drop_count` counts records lost to a full
 * DISCARD-policy buffer since the previous call. */
typedef void (*rocprofiler_buffer_tracing_cb_t)(rocprofiler_context_id_t      context,
                                                rocprofiler_buffer_id_t       buffer_id,
                                                rocprofiler_record_header_t** headers,
                                                size_t                        num_headers,
                                                void*                         data,
                                                uint64_t                      drop_count);

/* `size` bytes of storage; `callback` runs once `watermark` bytes are filled. */
rocprofiler_status_t
rocprofiler_create_buffer(rocprofiler_context_id_t        context,
                          size_t                          size,
                          size_t                          watermark,
                          rocprofiler_buffer_policy_t     policy,
                          rocprofiler_buffer_tracing_cb_t callback,
                          void*                           callback_data,
                          rocprofiler_buffer_id_t*        buffer_id) ROCPROFILER_API
    ROCPROFILER_NONNULL(5, 7);

rocprofiler_status_t
rocprofiler_destroy_buffer(rocprofiler_buffer_id_t buffer_id) ROCPROFILER_API;

/* Delivers whatever the buffer holds now, regardless of the watermark. */
rocprofiler_status_t
rocprofiler_flush_buffer(rocprofiler_buffer_id_t buffer_id) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
