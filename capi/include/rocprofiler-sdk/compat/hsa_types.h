/* rocprofiler-sdk/compat/hsa_types.h -- (rocwasm addition, not part of AMD's tree)
 *
 * AMD's rocprofiler-sdk headers include the ROCm HSA runtime headers for a handful of
 * types that appear inside public records.  rocwasm's headers must compile without
 * ROCm, so this file supplies layout-identical definitions of exactly those types,
 * under their HSA names:
 *
 *   hsa_agent_t, hsa_signal_t, hsa_region_t, hsa_executable_t, hsa_amd_memory_pool_t
 *                                          8-byte handle structs { uint64_t handle; }
 *                                          (the last four only for cxx/hash.hpp and
 *                                          cxx/operators.hpp)
 *   hsa_queue_type32_t, hsa_queue_t        an HSA queue as the runtime lays it out (40
 *                                          bytes on 64-bit hosts; `id` is the queue id)
 *   hsa_amd_tool_event_kind_t              enum (int-sized)
 *   hsa_amd_event_scratch_alloc_flag_t     enum (int-sized)
 *   hsa_amd_tool_event_none_t, hsa_amd_event_scratch_{alloc,free,async_reclaim}_{start,end}_t,
 *   hsa_amd_tool_event_t                   the runtime's scratch-memory event structs (each
 *                                          starts with its kind and the queue) and their
 *                                          union of pointers (cxx/serialization/save.hpp)
 *
 * If the real HSA headers are reachable (detected with __has_include, or forced with
 * -DROCPROFILER_SDK_USE_SYSTEM_HSA=1) they are included instead, so a tool that also
 * includes <hsa/hsa.h> sees one consistent set of types.  -DROCPROFILER_SDK_USE_SYSTEM_HSA=0
 * forces the stand-alone definitions.  Each stand-alone block is skipped when the
 * matching HSA header has already been included (its include guard is defined).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#if !defined(__cplusplus)
#    include <stdbool.h> /* <hsa/hsa.h> provides bool to C code; keep that */
#endif

#if !defined(ROCPROFILER_SDK_USE_SYSTEM_HSA)
#    if defined(__has_include)
#        if __has_include(<hsa/hsa.h>)
#            define ROCPROFILER_SDK_USE_SYSTEM_HSA 1
#        endif
#    endif
#endif
#if !defined(ROCPROFILER_SDK_USE_SYSTEM_HSA)
#    define ROCPROFILER_SDK_USE_SYSTEM_HSA 0
#endif

#if ROCPROFILER_SDK_USE_SYSTEM_HSA > 0
#    include <hsa/hsa.h>
#    if defined(__has_include)
#        if __has_include(<hsa/hsa_ext_amd.h>)
#            include <hsa/hsa_ext_amd.h>
#        endif
#        if __has_include(<hsa/hsa_amd_tool.h>)
#            include <hsa/hsa_amd_tool.h>
#        endif
#    endif
#endif

/* guard of <hsa/hsa.h> */
#if !defined(HSA_RUNTIME_INC_HSA_H_) && !defined(ROCPROFILER_SDK_COMPAT_HSA_AGENT_DEFINED)
#    define ROCPROFILER_SDK_COMPAT_HSA_AGENT_DEFINED 1
typedef struct hsa_agent_s
{
    uint64_t handle;
} hsa_agent_t;

typedef struct hsa_signal_s
{
    uint64_t handle;
} hsa_signal_t;

typedef struct hsa_region_s
{
    uint64_t handle;
} hsa_region_t;

typedef struct hsa_executable_s
{
    uint64_t handle;
} hsa_executable_t;

typedef uint32_t hsa_queue_type32_t;

/* 64-bit hosts only (HSA's large model): the ring buffer pointer is one 8-byte field. */
typedef struct hsa_queue_s
{
    hsa_queue_type32_t type;
    uint32_t           features;
    void*              base_address;
    hsa_signal_t       doorbell_signal;
    uint32_t           size; /* packets in the ring */
    uint32_t           reserved1;
    uint64_t           id;
} hsa_queue_t;
#endif

/* guard of <hsa/hsa_ext_amd.h> */
#if !defined(HSA_RUNTIME_EXT_AMD_H_) && !defined(ROCPROFILER_SDK_COMPAT_HSA_EXT_AMD_DEFINED)
#    define ROCPROFILER_SDK_COMPAT_HSA_EXT_AMD_DEFINED 1
typedef struct hsa_amd_memory_pool_s
{
    uint64_t handle;
} hsa_amd_memory_pool_t;
#endif

/* guard of <hsa/hsa_amd_tool.h> (ROCm >= 6.2) */
#if !defined(HSA_RUNTIME_AMD_TOOL_EVENTS_H_) && !defined(ROCPROFILER_SDK_COMPAT_HSA_TOOL_DEFINED)
#    define ROCPROFILER_SDK_COMPAT_HSA_TOOL_DEFINED 1
/* Scratch-memory event kinds reported by the HSA runtime's tool interface. */
typedef enum
{
    HSA_AMD_TOOL_EVENT_MIN = 0,
    HSA_AMD_TOOL_EVENT_SCRATCH_ALLOC_START,
    HSA_AMD_TOOL_EVENT_SCRATCH_ALLOC_END,
    HSA_AMD_TOOL_EVENT_SCRATCH_FREE_START,
    HSA_AMD_TOOL_EVENT_SCRATCH_FREE_END,
    HSA_AMD_TOOL_EVENT_SCRATCH_ASYNC_RECLAIM_START,
    HSA_AMD_TOOL_EVENT_SCRATCH_ASYNC_RECLAIM_END,
    HSA_AMD_TOOL_EVENT_MAX
} hsa_amd_tool_event_kind_t;

typedef enum
{
    HSA_AMD_EVENT_SCRATCH_ALLOC_FLAG_NONE     = 0,
    HSA_AMD_EVENT_SCRATCH_ALLOC_FLAG_USE_ONCE = (1 << 0),
    HSA_AMD_EVENT_SCRATCH_ALLOC_FLAG_ALT      = (1 << 1),
} hsa_amd_event_scratch_alloc_flag_t;

/* The runtime's scratch events: kind and queue first, then what the event knows. */
typedef struct
{
    hsa_amd_tool_event_kind_t kind;
} hsa_amd_tool_event_none_t;

typedef struct
{
    hsa_amd_tool_event_kind_t          kind;
    const hsa_queue_t*                 queue;
    hsa_amd_event_scratch_alloc_flag_t flags;
    uint64_t                           dispatch_id; /* the dispatch that needs more scratch */
} hsa_amd_event_scratch_alloc_start_t;

typedef struct
{
    hsa_amd_tool_event_kind_t          kind;
    const hsa_queue_t*                 queue;
    hsa_amd_event_scratch_alloc_flag_t flags;
    uint64_t                           dispatch_id;
    size_t                             size;      /* bytes allocated */
    size_t                             num_slots; /* waves it can hold */
} hsa_amd_event_scratch_alloc_end_t;

typedef struct
{
    hsa_amd_tool_event_kind_t          kind;
    const hsa_queue_t*                 queue;
    hsa_amd_event_scratch_alloc_flag_t flags;
} hsa_amd_event_scratch_free_start_t;

typedef struct
{
    hsa_amd_tool_event_kind_t          kind;
    const hsa_queue_t*                 queue;
    hsa_amd_event_scratch_alloc_flag_t flags;
} hsa_amd_event_scratch_free_end_t;

typedef struct
{
    hsa_amd_tool_event_kind_t          kind;
    const hsa_queue_t*                 queue;
    hsa_amd_event_scratch_alloc_flag_t flags;
} hsa_amd_event_scratch_async_reclaim_start_t;

typedef struct
{
    hsa_amd_tool_event_kind_t          kind;
    const hsa_queue_t*                 queue;
    hsa_amd_event_scratch_alloc_flag_t flags;
} hsa_amd_event_scratch_async_reclaim_end_t;

typedef union
{
    const hsa_amd_tool_event_none_t*                   none;
    const hsa_amd_event_scratch_alloc_start_t*         scratch_alloc_start;
    const hsa_amd_event_scratch_alloc_end_t*           scratch_alloc_end;
    const hsa_amd_event_scratch_free_start_t*          scratch_free_start;
    const hsa_amd_event_scratch_free_end_t*            scratch_free_end;
    const hsa_amd_event_scratch_async_reclaim_start_t* scratch_async_reclaim_start;
    const hsa_amd_event_scratch_async_reclaim_end_t*   scratch_async_reclaim_end;
} hsa_amd_tool_event_t;
#endif
