/* rocprofiler-sdk/hsa/api_args.h -- argument and return-value storage of traced HSA calls.
 *
 * LAYOUT PLACEHOLDER (rocwasm): AMD's rocprofiler_hsa_api_args_t has one struct per HSA
 * function with members typed by the ROCm 7 HSA headers (several by value).  Here it is
 * opaque storage of AMD's size and alignment (192 bytes, 8-byte aligned, measured from
 * AMD's header against ROCm 7.0 HSA -- see capi/abi/), so records embedding it keep
 * AMD's offsets.  Read arguments with rocprofiler_iterate_callback_tracing_kind_operation_args.
 *
 * The return-value union is declared member by member.  With the real HSA headers in
 * use (see compat/hsa_types.h) its members have the HSA types; otherwise the
 * layout-identical integer types (hsa_signal_value_t is int64_t on 64-bit hosts,
 * hsa_status_t is an int-sized enum).
 */
#pragma once

#include <rocprofiler-sdk/compat/hsa_types.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/ext_version.h>
#include <rocprofiler-sdk/hsa/api_trace_version.h>

#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

typedef struct rocprofiler_hsa_api_no_args
{
    char empty;
} rocprofiler_hsa_api_no_args;

typedef union rocprofiler_hsa_api_retval_t
{
    uint64_t uint64_t_retval;
    uint32_t uint32_t_retval;
#if ROCPROFILER_SDK_USE_SYSTEM_HSA > 0
    hsa_signal_value_t hsa_signal_value_t_retval;
    hsa_status_t       hsa_status_t_retval;
#else
    int64_t hsa_signal_value_t_retval;
    int32_t hsa_status_t_retval;
#endif
} rocprofiler_hsa_api_retval_t;

/* Opaque: see the note at the top of this file. */
typedef union rocprofiler_hsa_api_args_t
{
    uint8_t  rocprofiler_opaque_bytes[192];
    uint64_t rocprofiler_opaque_align;
} rocprofiler_hsa_api_args_t;

ROCPROFILER_EXTERN_C_FINI

ROCPROFILER_CXX_CODE(static_assert(sizeof(rocprofiler_hsa_api_args_t) == 192,
                                   "rocprofiler_hsa_api_args_t must match AMD's size");)
