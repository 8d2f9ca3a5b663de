/* rocprofiler-sdk/compat/hsakmt_types.h -- (rocwasm addition, not part of AMD's tree)
 *
 * rocprofiler_agent_v0_t embeds eight small types from ROCm's <hsakmt/hsakmttypes.h>
 * (the KFD thunk).  This file gives layout-identical stand-alone definitions (each a
 * 32-bit union or a 32-bit enum, with the thunk's member names) so <rocprofiler-sdk/agent.h>
 * compiles without ROCm.  Like compat/hsa_types.h it prefers the real header when it is
 * reachable; -DROCPROFILER_SDK_USE_SYSTEM_HSAKMT=0/1 overrides the detection.
 */
#pragma once

#include <stdint.h>

#if !defined(ROCPROFILER_SDK_USE_SYSTEM_HSAKMT)
#    if defined(__has_include)
#        if __has_include(<hsakmt/hsakmttypes.h>)
#            define ROCPROFILER_SDK_USE_SYSTEM_HSAKMT 1
#        endif
#    endif
#endif
#if !defined(ROCPROFILER_SDK_USE_SYSTEM_HSAKMT)
#    define ROCPROFILER_SDK_USE_SYSTEM_HSAKMT 0
#endif

#if ROCPROFILER_SDK_USE_SYSTEM_HSAKMT > 0
#    include <hsakmt/hsakmttypes.h>
#endif

/* guard of <hsakmt/hsakmttypes.h> */
#if !defined(_HSAKMTTYPES_H_) && !defined(ROCPROFILER_SDK_COMPAT_HSAKMT_DEFINED)
#    define ROCPROFILER_SDK_COMPAT_HSAKMT_DEFINED 1

/* kind of cache a rocprofiler_agent_cache_t describes */
typedef union
{
    uint32_t Value;
    struct
    {
        unsigned int Data        : 1;
        unsigned int Instruction : 1;
        unsigned int CPU         : 1;
        unsigned int HSACU       : 1;
        unsigned int Reserved    : 28;
    } ui32;
} HsaCacheType;

/* bus / fabric type of an IO link (0xFFFFFFFF member pins the enum to 32 bits) */
typedef enum _HSA_IOLINKTYPE
{
    HSA_IOLINKTYPE_UNDEFINED      = 0,
    HSA_IOLINKTYPE_HYPERTRANSPORT = 1,
    HSA_IOLINKTYPE_PCIEXPRESS     = 2,
    HSA_IOLINKTYPE_AMBA           = 3,
    HSA_IOLINKTYPE_MIPI           = 4,
    HSA_IOLINK_TYPE_QPI_1_1       = 5,
    HSA_IOLINK_TYPE_RESERVED1     = 6,
    HSA_IOLINK_TYPE_RESERVED2     = 7,
    HSA_IOLINK_TYPE_RAPID_IO      = 8,
    HSA_IOLINK_TYPE_INFINIBAND    = 9,
    HSA_IOLINK_TYPE_RESERVED3     = 10,
    HSA_IOLINK_TYPE_XGMI          = 11,
    HSA_IOLINK_TYPE_XGOP          = 12,
    HSA_IOLINK_TYPE_GZ            = 13,
    HSA_IOLINK_TYPE_ETHERNET_RDMA = 14,
    HSA_IOLINK_TYPE_RDMA_OTHER    = 15,
    HSA_IOLINK_TYPE_OTHER         = 16,
    HSA_IOLINKTYPE_NUMIOLINKTYPES,
    HSA_IOLINKTYPE_SIZE = 0xFFFFFFFF
} HSA_IOLINKTYPE;

typedef union
{
    uint32_t LinkProperty;
    struct
    {
        unsigned int Override        : 1;
        unsigned int NonCoherent     : 1;
        unsigned int NoAtomics32bit  : 1;
        unsigned int NoAtomics64bit  : 1;
        unsigned int NoPeerToPeerDMA : 1;
        unsigned int Reserved        : 27;
    } ui32;
} HSA_LINKPROPERTY;

/* memory heap kind of a memory bank */
typedef enum _HSA_HEAPTYPE
{
    HSA_HEAPTYPE_SYSTEM               = 0,
    HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC  = 1,
    HSA_HEAPTYPE_FRAME_BUFFER_PRIVATE = 2,
    HSA_HEAPTYPE_GPU_GDS              = 3,
    HSA_HEAPTYPE_GPU_LDS              = 4,
    HSA_HEAPTYPE_GPU_SCRATCH          = 5,
    HSA_HEAPTYPE_DEVICE_SVM           = 6,
    HSA_HEAPTYPE_MMIO_REMAP           = 7,
    HSA_HEAPTYPE_NUMHEAPTYPES,
    HSA_HEAPTYPE_SIZE = 0xFFFFFFFF
} HSA_HEAPTYPE;

typedef union
{
    uint32_t MemoryProperty;
    struct
    {
        unsigned int HotPluggable : 1;
        unsigned int NonVolatile  : 1;
        unsigned int Reserved     : 30;
    } ui32;
} HSA_MEMORYPROPERTY;

/* SDMA engine firmware version (the bit-field struct is anonymous in the thunk) */
typedef union
{
    uint32_t Value;
    struct
    {
        unsigned int uCodeSDMA : 10;
        unsigned int uCodeRes  : 10;
        unsigned int Reserved  : 12;
    };
} HSA_ENGINE_VERSION;

/* compute engine firmware / IP version */
typedef union
{
    uint32_t Value;
    struct
    {
        unsigned int uCode    : 10;
        unsigned int Major    : 6;
        unsigned int Minor    : 8;
        unsigned int Stepping : 8;
    } ui32;
} HSA_ENGINE_ID;

/* node capability bits */
typedef union
{
    uint32_t Value;
    struct
    {
        unsigned int HotPluggable                     : 1;
        unsigned int HSAMMUPresent                    : 1;
        unsigned int SharedWithGraphics               : 1;
        unsigned int QueueSizePowerOfTwo              : 1;
        unsigned int QueueSize32bit                   : 1;
        unsigned int QueueIdleEvent                   : 1;
        unsigned int VALimit                          : 1;
        unsigned int WatchPointsSupported             : 1;
        unsigned int WatchPointsTotalBits             : 4;
        unsigned int DoorbellType                     : 2;
        unsigned int AQLQueueDoubleMap                : 1;
        unsigned int DebugTrapSupported               : 1;
        unsigned int WaveLaunchTrapOverrideSupported  : 1;
        unsigned int WaveLaunchModeSupported          : 1;
        unsigned int PreciseMemoryOperationsSupported : 1;
        unsigned int DEPRECATED_SRAM_EDCSupport       : 1;
        unsigned int Mem_EDCSupport                   : 1;
        unsigned int RASEventNotify                   : 1;
        unsigned int ASICRevision                     : 4;
        unsigned int SRAM_EDCSupport                  : 1;
        unsigned int SVMAPISupported                  : 1;
        unsigned int CoherentHostAccess               : 1;
        unsigned int DebugSupportedFirmware           : 1;
        unsigned int PreciseALUOperationsSupported    : 1;
        unsigned int PerQueueResetSupported           : 1;
    } ui32;
} HSA_CAPABILITY;

#endif
