/* rocprofiler-sdk/ompt/api_args.h -- payload of OpenMP tools (OMPT) callbacks.
 *
 * LAYOUT PLACEHOLDER (rocwasm): AMD builds these from the OpenMP <omp-tools.h> types,
 * which AMD ships as rocprofiler-sdk/ompt/omp-tools.h.  rocwasm does not ship that
 * header; rocprofiler_ompt_args_t is opaque storage of AMD's size/alignment (128 bytes,
 * 8-aligned) and the entry points in rocprofiler_ompt_callback_functions_t are typed
 * as generic function pointers (same size and order as AMD's ompt_*_t members).
 */
#pragma once

#include <rocprofiler-sdk/defines.h>

#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

/* Stand-in for the specific ompt_* function-pointer types; cast before calling. */
typedef void (*rocprofiler_ompt_generic_fn_t)(void);

/* OMPT runtime entry points, as looked up by the profiler's OMPT tool. */
typedef struct rocprofiler_ompt_callback_functions_t
{
    rocprofiler_ompt_generic_fn_t ompt_enumerate_states;
    rocprofiler_ompt_generic_fn_t ompt_enumerate_mutex_impls;
    rocprofiler_ompt_generic_fn_t ompt_get_thread_data;
    rocprofiler_ompt_generic_fn_t ompt_get_num_places;
    rocprofiler_ompt_generic_fn_t ompt_get_place_proc_ids;
    rocprofiler_ompt_generic_fn_t ompt_get_place_num;
    rocprofiler_ompt_generic_fn_t ompt_get_partition_place_nums;
    rocprofiler_ompt_generic_fn_t ompt_get_proc_id;
    rocprofiler_ompt_generic_fn_t ompt_get_state;
    rocprofiler_ompt_generic_fn_t ompt_get_parallel_info;
    rocprofiler_ompt_generic_fn_t ompt_get_task_info;
    rocprofiler_ompt_generic_fn_t ompt_get_task_memory;
    rocprofiler_ompt_generic_fn_t ompt_get_num_devices;
    rocprofiler_ompt_generic_fn_t ompt_get_num_procs;
    rocprofiler_ompt_generic_fn_t ompt_get_target_info;
    rocprofiler_ompt_generic_fn_t ompt_get_unique_id;
} rocprofiler_ompt_callback_functions_t;

typedef struct rocprofiler_ompt_no_args
{
    char empty;
} rocprofiler_ompt_no_args;

/* Opaque: see the note at the top of this file. */
typedef union rocprofiler_ompt_args_t
{
    uint8_t  rocprofiler_opaque_bytes[128];
    uint64_t rocprofiler_opaque_align;
} rocprofiler_ompt_args_t;

ROCPROFILER_EXTERN_C_FINI
