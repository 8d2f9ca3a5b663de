/* rocprofiler-sdk/intercept_table.h -- direct access to the runtimes' dispatch tables
 * (function-pointer tables) when each runtime registers with the profiler. */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/* `tables` holds `num_tables` pointers to the runtime's tables; the tool may replace
 * entries to wrap functions. */
ROCPROFILER_SDK_EXPERIMENTAL
typedef void (*rocprofiler_intercept_library_cb_t)(rocprofiler_intercept_table_t type,
                                                   uint64_t                      lib_version,
                                                   uint64_t                      lib_instance,
                                                   void**                        tables,
                                                   uint64_t                      num_tables,
                                                   void*                         user_data);

ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_query_intercept_table_name(rocprofiler_intercept_table_t kind,
                                       const char**                  name,
                                       uint64_t*                     name_len) ROCPROFILER_API;

/* `libs` is a bitwise-or of rocprofiler_intercept_table_t values. */
ROCPROFILER_SDK_EXPERIMENTAL
rocprofiler_status_t
rocprofiler_at_intercept_table_registration(rocprofiler_intercept_library_cb_t callback,
                                            int                                libs,
                                            void* data) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
