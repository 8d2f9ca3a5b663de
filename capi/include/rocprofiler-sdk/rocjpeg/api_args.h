/* rocprofiler-sdk/rocjpeg/api_args.h -- arguments and return values of traced rocJPEG
 * calls.
 *
 * LAYOUT PLACEHOLDER (rocwasm): AMD's args union uses rocJPEG types (AMD vendors the
 * rocJPEG header for them).  Here it is opaque storage of AMD's size/alignment
 * (48 bytes, 8-aligned); use the argument iteration functions.
 */
#pragma once

#include <rocprofiler-sdk/defines.h>

#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

typedef struct rocprofiler_rocjpeg_api_no_args
{
    char empty;
} rocprofiler_rocjpeg_api_no_args;

typedef union rocprofiler_rocjpeg_api_retval_t
{
    int32_t     rocJpegStatus_retval;
    const char* const_charp_retval;
} rocprofiler_rocjpeg_api_retval_t;

typedef union rocprofiler_rocjpeg_api_args_t
{
    uint8_t  rocprofiler_opaque_bytes[48];
    uint64_t rocprofiler_opaque_align;
} rocprofiler_rocjpeg_api_args_t;

ROCPROFILER_EXTERN_C_FINI
