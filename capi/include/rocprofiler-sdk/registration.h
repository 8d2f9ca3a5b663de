/* rocprofiler-sdk/registration.h -- how a tool library announces itself.
 *
 * A tool exports `rocprofiler_configure` (found by symbol lookup in the loaded
 * libraries, or in the libraries named by ROCP_TOOL_LIBRARIES); the profiler calls it
 * once and the returned struct supplies the tool's initialize/finalize hooks.  A
 * program can also register a configure function explicitly with
 * rocprofiler_force_configure before the profiler initializes.
 */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

ROCPROFILER_EXTERN_C_INIT

/* Identity the profiler assigns to a tool; the tool may set `name`. */
typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_client_id_t
{
    size_t         size;
    const char*    name;
    const uint32_t handle;
} rocprofiler_client_id_t;

/* A tool may call this to finalize itself early. */
typedef void (*rocprofiler_client_finalize_t)(rocprofiler_client_id_t);

/* Return non-zero to decline (the tool is then ignored). */
typedef int (*rocprofiler_tool_initialize_t)(rocprofiler_client_finalize_t finalize_func,
                                             void*                         tool_data);

typedef void (*rocprofiler_tool_finalize_t)(void* tool_data);

typedef struct rocprofiler_tool_configure_result_t
{
    size_t                        size;        /* sizeof(rocprofiler_tool_configure_result_t) */
    rocprofiler_tool_initialize_t initialize;
    rocprofiler_tool_finalize_t   finalize;
    void*                         tool_data;   /* passed back to both hooks */
} rocprofiler_tool_configure_result_t;

rocprofiler_status_t
rocprofiler_is_initialized(int* status) ROCPROFILER_API ROCPROFILER_NONNULL(1);

rocprofiler_status_t
rocprofiler_is_finalized(int* status) ROCPROFILER_API ROCPROFILER_NONNULL(1);

/* Implemented by the TOOL, not by the library.  `version` is
 * ROCPROFILER_SDK_COMPUTE_VERSION(major, minor, patch) of the running library.
 * Return NULL to opt out. */
rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t                 version,
                      const char*              runtime_version,
                      uint32_t                 priority,
                      rocprofiler_client_id_t* client_id) ROCPROFILER_PUBLIC_API;

typedef rocprofiler_tool_configure_result_t* (*rocprofiler_configure_func_t)(
    uint32_t                 version,
    const char*              runtime_version,
    uint32_t                 priority,
    rocprofiler_client_id_t* client_id);

/* Registers a configure function and initializes the profiler immediately. */
rocprofiler_status_t
rocprofiler_force_configure(rocprofiler_configure_func_t configure_func) ROCPROFILER_API;

ROCPROFILER_EXTERN_C_FINI
