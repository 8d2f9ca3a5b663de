/* rocprofiler-sdk-roctx/api_trace.h -- the ROCTx dispatch tables libroctx hands to the
 * profiler (function-pointer types and table structs). */
#pragma once

#include "rocprofiler-sdk-roctx/defines.h"
#include "rocprofiler-sdk-roctx/types.h"
#include "rocprofiler-sdk-roctx/version.h"

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#define ROCTX_API_TABLE_VERSION_MAJOR 0
#define ROCTX_API_TABLE_VERSION_STEP  0

#define ROCTX_CORE_API_TABLE_VERSION_MAJOR 0
#define ROCTX_CORE_API_TABLE_VERSION_STEP  0

#define ROCTX_CONTROL_API_TABLE_VERSION_MAJOR 0
#define ROCTX_CONTROL_API_TABLE_VERSION_STEP  0

#define ROCTX_RESOURCE_API_TABLE_VERSION_MAJOR 0
#define ROCTX_RESOURCE_API_TABLE_VERSION_STEP  0

ROCTX_EXTERN_C_INIT

struct hsa_agent_s;
struct ihipStream_t;

typedef void (*roctxMarkA_fn_t)(const char* message);
typedef int (*roctxRangePushA_fn_t)(const char* message);
typedef int (*roctxRangePop_fn_t)(void);
typedef roctx_range_id_t (*roctxRangeStartA_fn_t)(const char* message);
typedef void (*roctxRangeStop_fn_t)(roctx_range_id_t id);
typedef int (*roctxProfilerPause_fn_t)(roctx_thread_id_t tid);
typedef int (*roctxProfilerResume_fn_t)(roctx_thread_id_t tid);
typedef int (*roctxNameOsThread_fn_t)(const char* name);
typedef int (*roctxNameHsaAgent_fn_t)(const char* name, const struct hsa_agent_s* agent);
typedef int (*roctxNameHipDevice_fn_t)(const char* name, int device_id);
typedef int (*roctxNameHipStream_fn_t)(const char* name, const struct ihipStream_t* stream);
typedef int (*roctxGetThreadId_fn_t)(roctx_thread_id_t* tid);

/* Each table starts with its own size in bytes. */
typedef struct roctxCoreApiTable_t
{
    uint64_t              size;
    roctxMarkA_fn_t       roctxMarkA_fn;
    roctxRangePushA_fn_t  roctxRangePushA_fn;
    roctxRangePop_fn_t    roctxRangePop_fn;
    roctxRangeStartA_fn_t roctxRangeStartA_fn;
    roctxRangeStop_fn_t   roctxRangeStop_fn;
    roctxGetThreadId_fn_t roctxGetThreadId_fn;
} roctxCoreApiTable_t;

typedef struct roctxControlApiTable_t
{
    uint64_t                 size;
    roctxProfilerPause_fn_t  roctxProfilerPause_fn;
    roctxProfilerResume_fn_t roctxProfilerResume_fn;
} roctxControlApiTable_t;

typedef struct roctxNameApiTable_t
{
    uint64_t                size;
    roctxNameOsThread_fn_t  roctxNameOsThread_fn;
    roctxNameHsaAgent_fn_t  roctxNameHsaAgent_fn;
    roctxNameHipDevice_fn_t roctxNameHipDevice_fn;
    roctxNameHipStream_fn_t roctxNameHipStream_fn;
} roctxNameApiTable_t;

ROCTX_EXTERN_C_FINI
