/* rocprofiler-sdk/rocdecode/api_args.h -- arguments and return values of traced rocDecode
 * calls.
 *
 * LAYOUT PLACEHOLDER (rocwasm): AMD's args union uses rocDecode types (AMD vendors the
 * rocDecode headers for them).  Here it is opaque storage of AMD's size/alignment
 * (40 bytes, 8-aligned, rocDecode table step 1); use the argument iteration functions.
 */
#pragma once

#include <rocprofiler-sdk/defines.h>

#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

typedef struct rocprofiler_rocdecode_api_no_args
{
    char empty;
} rocprofiler_rocdecode_api_no_args;

typedef union rocprofiler_rocdecode_api_retval_t
{
    uint64_t    uint64_t_retval;
    int32_t     rocDecStatus_retval;
    const char* const_charp_retval;
} rocprofiler_rocdecode_api_retval_t;

typedef union rocprofiler_rocdecode_api_args_t
{
    uint8_t  rocprofiler_opaque_bytes[40];
    uint64_t rocprofiler_opaque_align;
} rocprofiler_rocdecode_api_args_t;

ROCPROFILER_EXTERN_C_FINI
