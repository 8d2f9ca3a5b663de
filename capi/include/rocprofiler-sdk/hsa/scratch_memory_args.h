/* rocprofiler-sdk/hsa/scratch_memory_args.h -- payload of scratch-memory callbacks,
 * one member per HSA tool event kind. */
#pragma once

#include <rocprofiler-sdk/defines.h>

#include <stddef.h>
#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

typedef struct rocprofiler_scratch_memory_no_args
{
    char empty;
} rocprofiler_scratch_memory_no_args;

typedef union rocprofiler_scratch_memory_args_t
{
    struct
    {
        uint64_t dispatch_id;
    } alloc_start;
    struct
    {
        uint64_t dispatch_id;
        size_t   size;       /* bytes allocated */
        size_t   num_slots;
    } alloc_end;
    struct
    {
        rocprofiler_scratch_memory_no_args no_args;
    } free_start;
    struct
    {
        rocprofiler_scratch_memory_no_args no_args;
    } free_end;
    struct
    {
        rocprofiler_scratch_memory_no_args no_args;
    } async_reclaim_start;
    struct
    {
        rocprofiler_scratch_memory_no_args no_args;
    } async_reclaim_end;
} rocprofiler_scratch_memory_args_t;

ROCPROFILER_EXTERN_C_FINI
