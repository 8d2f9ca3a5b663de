/* rocprofiler-sdk/rccl/api_args.h -- arguments and return values of traced RCCL calls.
 *
 * LAYOUT PLACEHOLDER (rocwasm): AMD's args union uses RCCL and HIP types (AMD vendors
 * rccl.h for them).  Here it is opaque storage of AMD's size/alignment (152 bytes,
 * 8-aligned); use the argument iteration functions to read arguments.
 */
#pragma once

#include <rocprofiler-sdk/defines.h>

#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

typedef struct rocprofiler_rccl_api_no_args
{
    char empty;
} rocprofiler_rccl_api_no_args;

typedef union rocprofiler_rccl_api_retval_t
{
    int32_t     ncclResult_t_retval;
    const char* const_charp_retval;
} rocprofiler_rccl_api_retval_t;

typedef union rocprofiler_rccl_api_args_t
{
    uint8_t  rocprofiler_opaque_bytes[152];
    uint64_t rocprofiler_opaque_align;
} rocprofiler_rccl_api_args_t;

ROCPROFILER_EXTERN_C_FINI
