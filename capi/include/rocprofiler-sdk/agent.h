/* rocprofiler-sdk/agent.h -- enumerating the CPU and GPU agents of the system. */
#pragma once

#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

/* AMD includes <hsakmt/hsakmttypes.h> here; we use layout-identical stand-ins when it
 * is not available (see compat/hsakmt_types.h). */
#include <rocprofiler-sdk/compat/hsakmt_types.h>

#include <stdint.h>

ROCPROFILER_EXTERN_C_INIT

/* Layout version of the agent struct handed to rocprofiler_query_available_agents. */
typedef enum rocprofiler_agent_version_t
{
    ROCPROFILER_AGENT_INFO_VERSION_NONE = 0,
    ROCPROFILER_AGENT_INFO_VERSION_0    = 1,
    ROCPROFILER_AGENT_INFO_VERSION_LAST,
} rocprofiler_agent_version_t;

typedef struct rocprofiler_agent_cache_t
{
    uint64_t     processor_id_low;
    uint64_t     size;                /* bytes */
    uint32_t     level;
    uint32_t     cache_line_size;
    uint32_t     cache_lines_per_tag;
    uint32_t     association;
    uint32_t     latency;             /* ns */
    HsaCacheType type;
} rocprofiler_agent_cache_t;

typedef struct rocprofiler_agent_io_link_t
{
    HSA_IOLINKTYPE   type;
    uint32_t         version_major;
    uint32_t         version_minor;
    uint32_t         node_from;
    uint32_t         node_to;
    uint32_t         weight;
    uint32_t         min_latency;
    uint32_t         max_latency;
    uint32_t         min_bandwidth;
    uint32_t         max_bandwidth;
    uint32_t         recommended_transfer_size;
    HSA_LINKPROPERTY flags;
} rocprofiler_agent_io_link_t;

typedef struct rocprofiler_agent_mem_bank_t
{
    HSA_HEAPTYPE       heap_type;
    HSA_MEMORYPROPERTY flags;
    uint32_t           width;
    uint32_t           mem_clk_max;
    uint64_t           size_in_bytes;
} rocprofiler_agent_mem_bank_t;

/* Which runtimes can see the agent (e.g. hidden by ROCR/HIP_VISIBLE_DEVICES).
 * The misspelling "visiblity" is part of the API. */
typedef struct rocprofiler_agent_runtime_visiblity_t
{
    uint32_t hsa       : 1;
    uint32_t hip       : 1;
    uint32_t rccl      : 1;
    uint32_t rocdecode : 1;
    uint32_t reserved  : 28;
} rocprofiler_agent_runtime_visiblity_t;

ROCPROFILER_CXX_CODE(static_assert(sizeof(rocprofiler_agent_runtime_visiblity_t) ==
                                       sizeof(uint32_t),
                                   "rocprofiler_agent_runtime_visiblity_t must stay 32 bits");)

/* Description of one agent (version 0).  Mostly KFD topology properties. */
typedef struct rocprofiler_agent_v0_t
{
    uint64_t                 size;   /* sizeof this struct as the library filled it */
    rocprofiler_agent_id_t   id;
    rocprofiler_agent_type_t type;
    uint32_t                 cpu_cores_count;
    uint32_t                 simd_count;
    uint32_t                 mem_banks_count;
    uint32_t                 caches_count;
    uint32_t                 io_links_count;
    uint32_t                 cpu_core_id_base;
    uint32_t                 simd_id_base;
    uint32_t                 max_waves_per_simd;
    uint32_t                 lds_size_in_kb;
    uint32_t                 gds_size_in_kb;
    uint32_t                 num_gws;
    uint32_t                 wave_front_size;
    uint32_t                 num_xcc;
    uint32_t                 cu_count;
    uint32_t                 array_count;
    uint32_t                 num_shader_banks;
    uint32_t                 simd_arrays_per_engine;
    uint32_t                 cu_per_simd_array;
    uint32_t                 simd_per_cu;
    uint32_t                 max_slots_scratch_cu;
    uint32_t                 gfx_target_version;
    uint16_t                 vendor_id;
    uint16_t                 device_id;
    uint32_t                 location_id;
    uint32_t                 domain;
    uint32_t                 drm_render_minor;
    uint32_t                 num_sdma_engines;
    uint32_t                 num_sdma_xgmi_engines;
    uint32_t                 num_sdma_queues_per_engine;
    uint32_t                 num_cp_queues;
    uint32_t                 max_engine_clk_ccompute;
    uint32_t                 max_engine_clk_fcompute;
    HSA_ENGINE_VERSION       sdma_fw_version;
    HSA_ENGINE_ID            fw_version;
    HSA_CAPABILITY           capability;
    uint32_t                 cu_per_engine;
    uint32_t                 max_waves_per_cu;
    uint32_t                 family_id;
    uint32_t                 workgroup_max_size;
    uint32_t                 grid_max_size;
    uint64_t                 local_mem_size;
    uint64_t                 hive_id;
    uint64_t                 gpu_id;
    rocprofiler_dim3_t       workgroup_max_dim;
    rocprofiler_dim3_t       grid_max_dim;
    const rocprofiler_agent_mem_bank_t*   mem_banks;
    const rocprofiler_agent_cache_t*      caches;
    const rocprofiler_agent_io_link_t*    io_links;
    const char*                           name;          /* e.g. "gfx942" */
    const char*                           vendor_name;
    const char*                           product_name;
    const char*                           model_name;
    uint32_t                              node_id;
    int32_t                               logical_node_id;
    int32_t                               logical_node_type_id;
    rocprofiler_agent_runtime_visiblity_t runtime_visibility;
    rocprofiler_uuid_t                    uuid;
} rocprofiler_agent_v0_t;

typedef rocprofiler_agent_v0_t rocprofiler_agent_t;

/* `agents` is an array of `num_agents` pointers to structs of layout `version`. */
typedef rocprofiler_status_t (*rocprofiler_query_available_agents_cb_t)(
    rocprofiler_agent_version_t version,
    const void**                agents,
    size_t                      num_agents,
    void*                       user_data);

/* Calls `callback` once with every agent; `agent_size` is sizeof the tool's struct. */
rocprofiler_status_t
rocprofiler_query_available_agents(rocprofiler_agent_version_t             version,
                                   rocprofiler_query_available_agents_cb_t callback,
                                   size_t                                  agent_size,
                                   void* user_data) ROCPROFILER_API ROCPROFILER_NONNULL(2);

ROCPROFILER_EXTERN_C_FINI
