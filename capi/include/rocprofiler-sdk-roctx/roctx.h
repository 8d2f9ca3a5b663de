/* rocprofiler-sdk-roctx/roctx.h -- ROCTx: application annotations (markers, ranges,
 * naming) that rocprofiler-sdk tools receive as MARKER_* tracing kinds.
 *
 * rocwasm re-implementation of AMD's libroctx 1.0 interface (libroctx.so.1); function
 * names and signatures match AMD's.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "rocprofiler-sdk-roctx/defines.h"
#include "rocprofiler-sdk-roctx/types.h"
#include "rocprofiler-sdk-roctx/version.h"

ROCTX_EXTERN_C_INIT

struct hsa_agent_s;
struct ihipStream_t;

/* An instantaneous event. */
void
roctxMarkA(const char* message) ROCTX_API ROCTX_NONNULL(1);

/* Per-thread nested ranges.  Both return the nesting level involved, or a negative
 * value on error (e.g. pop with no open range). */
int
roctxRangePushA(const char* message) ROCTX_API ROCTX_NONNULL(1);

int
roctxRangePop() ROCTX_API;

/* Ranges that may start and stop on different threads. */
roctx_range_id_t
roctxRangeStartA(const char* message) ROCTX_API ROCTX_NONNULL(1);

void
roctxRangeStop(roctx_range_id_t id) ROCTX_API;

/* Ask the attached tool to stop / resume collection for thread `tid` (0 = all). */
int
roctxProfilerPause(roctx_thread_id_t tid) ROCTX_API;

int
roctxProfilerResume(roctx_thread_id_t tid) ROCTX_API;

/* Give a human-readable name to the calling thread, an HSA agent, a HIP device or a
 * HIP stream. */
int
roctxNameOsThread(const char* name) ROCTX_API ROCTX_NONNULL(1);

int
roctxNameHsaAgent(const char* name, const struct hsa_agent_s* agent) ROCTX_API ROCTX_NONNULL(1, 2);

int
roctxNameHipDevice(const char* name, int device_id) ROCTX_API ROCTX_NONNULL(1);

int
roctxNameHipStream(const char* name, const struct ihipStream_t* stream) ROCTX_API ROCTX_NONNULL(1);

/* The id ROCTx uses for the calling thread. */
int
roctxGetThreadId(roctx_thread_id_t* tid) ROCTX_API ROCTX_NONNULL(1);

ROCTX_EXTERN_C_FINI

/* Spellings without the A (ASCII) suffix. */
#if !defined(roctxRangeStart)
#    define roctxRangeStart(message) roctxRangeStartA(message)
#endif

#if !defined(roctxMark)
#    define roctxMark(message) roctxMarkA(message)
#endif

#if !defined(roctxRangePush)
#    define roctxRangePush(message) roctxRangePushA(message)
#endif
