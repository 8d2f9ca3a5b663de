/* rocprofiler-sdk/hip/api_args.h -- argument and return-value storage of traced HIP calls.
 *
 * LAYOUT PLACEHOLDER (rocwasm): AMD's rocprofiler_hip_api_args_t is a union with one
 * struct per HIP function (~480 members) whose member types come from the ROCm 7 HIP
 * headers.  rocwasm's headers do not depend on HIP, so the union is declared here as
 * opaque storage of the same size and alignment (88 bytes, 8-byte aligned, measured
 * from AMD's header against HIP 7.0 -- see capi/abi/).  Records that embed it
 * (rocprofiler_callback_tracing_hip_api_data_t, the *_hip_api_ext_record_t buffer
 * record) therefore keep AMD's offsets.  Tools read the arguments through
 * rocprofiler_iterate_callback_tracing_kind_operation_args /
 * rocprofiler_iterate_buffer_tracing_record_args, which need no per-function types;
 * source that names members such as `args.hipMalloc.ptr` does not compile here.
 *
 * The return-value union is declared member by member; its two HIP-typed members use
 * layout-identical plain C types (hipError_t is an int-sized enum; hipChannelFormatDesc
 * is five ints).
 */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

#include <stdint.h>

/* AMD's version reaches these C library headers through the HIP runtime headers, and
 * tool sources (AMD's samples among them) rely on that for assert/memset/printf. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ROCPROFILER_EXTERN_C_INIT

/* Member type of argument-less functions. */
typedef struct rocprofiler_hip_api_no_args
{
    char empty;
} rocprofiler_hip_api_no_args;

typedef union rocprofiler_hip_api_retval_t
{
    uint64_t    uint64_t_retval;
    int         int_retval;
    const char* const_charp_retval;
    int         hipError_t_retval;           /* hipError_t */
    struct
    {
        int x;
        int y;
        int z;
        int w;
        int f;                               /* hipChannelFormatKind */
    } hipChannelFormatDesc_retval;           /* hipChannelFormatDesc */
    void** voidpp_retval;
} rocprofiler_hip_api_retval_t;

/* Opaque: see the note at the top of this file. */
typedef union rocprofiler_hip_api_args_t
{
    uint8_t  rocprofiler_opaque_bytes[88];
    uint64_t rocprofiler_opaque_align;
} rocprofiler_hip_api_args_t;

ROCPROFILER_EXTERN_C_FINI

ROCPROFILER_CXX_CODE(static_assert(sizeof(rocprofiler_hip_api_args_t) == 88,
                                   "rocprofiler_hip_api_args_t must match AMD's size");)
