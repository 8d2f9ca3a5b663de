/* rocprofiler-sdk/counters.h -- discovering hardware/derived counters and decoding
 * counter instance ids. */
#pragma once

#include <rocprofiler-sdk/agent.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>

#include <rocprofiler-sdk/deprecated/counters.h>

ROCPROFILER_EXTERN_C_INIT

typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_counter_info_v0_t
{
    rocprofiler_counter_id_t id;
    const char*              name;
    const char*              description;
    const char*              block;        /* hardware block, empty for derived counters */
    const char*              expression;   /* formula of a derived counter */
    uint8_t                  is_constant : 1;
    uint8_t                  is_derived  : 1;
} rocprofiler_counter_info_v0_t;

/* One dimension of a counter instance: its name ("XCC", "SE", ...) and the instance's
 * zero-based position along it. `size` is sizeof this struct. */
typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_counter_dimension_info_t
{
    uint64_t    size;
    const char* dimension_name;
    size_t      index;
} rocprofiler_counter_dimension_info_t;

/* One instance a counter can produce: its encoded instance id, the counter, and where it
 * sits along each of the counter's dimensions (`dimensions_count` pointers). */
typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_counter_record_dimension_instance_info_t
{
    uint64_t                                     size;
    rocprofiler_counter_instance_id_t            instance_id;
    uint64_t                                     counter_id;
    uint64_t                                     dimensions_count;
    const rocprofiler_counter_dimension_info_t** dimensions;
} rocprofiler_counter_record_dimension_instance_info_t;

/* v0 plus the counter's dimensions and every instance it can produce (each an array of
 * pointers with its count). `size` is sizeof this struct. */
typedef struct ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_counter_info_v1_t
{
    uint64_t                 size;
    rocprofiler_counter_id_t id;
    const char*              name;
    const char*              description;
    const char*              block;
    const char*              expression;
    uint8_t                  is_constant : 1;
    uint8_t                  is_derived  : 1;

    uint64_t                                                     dimensions_count;
    const rocprofiler_counter_record_dimension_info_t**          dimensions;
    uint64_t                                                     dimensions_instances_count;
    const rocprofiler_counter_record_dimension_instance_info_t** dimensions_instances;
} rocprofiler_counter_info_v1_t;

/* Counter an instance id (rocprofiler_counter_record_t::id) belongs to. */
ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_status_t
rocprofiler_query_record_counter_id(rocprofiler_counter_instance_id_t id,
                                    rocprofiler_counter_id_t*         counter_id) ROCPROFILER_API
    ROCPROFILER_NONNULL(2);

/* Index along dimension `dim` encoded in an instance id. */
ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_status_t
rocprofiler_query_record_dimension_position(rocprofiler_counter_instance_id_t  id,
                                            rocprofiler_counter_dimension_id_t dim,
                                            size_t* pos) ROCPROFILER_API ROCPROFILER_NONNULL(3);

/* Fills *info, a rocprofiler_counter_info_v0_t or _v1_t according to `version`. */
ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_status_t
rocprofiler_query_counter_info(rocprofiler_counter_id_t              counter_id,
                               rocprofiler_counter_info_version_id_t version,
                               void* info) ROCPROFILER_API ROCPROFILER_NONNULL(3);

ROCPROFILER_SDK_EXPERIMENTAL typedef rocprofiler_status_t (*rocprofiler_available_counters_cb_t)(
    rocprofiler_agent_id_t    agent_id,
    rocprofiler_counter_id_t* counters,
    size_t                    num_counters,
    void*                     user_data);

ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_status_t
rocprofiler_iterate_agent_supported_counters(rocprofiler_agent_id_t              agent_id,
                                             rocprofiler_available_counters_cb_t cb,
                                             void* user_data) ROCPROFILER_API
    ROCPROFILER_NONNULL(2);

/* Defines a new derived counter from an expression over existing ones.  (AMD declares
 * this one without ROCPROFILER_API; kept as is.) */
ROCPROFILER_SDK_EXPERIMENTAL rocprofiler_status_t
rocprofiler_create_counter(const char*               name,
                           size_t                    name_len,
                           const char*               expr,
                           size_t                    expr_len,
                           const char*               description,
                           size_t                    description_len,
                           rocprofiler_agent_id_t    agent,
                           rocprofiler_counter_id_t* counter_id) ROCPROFILER_NONNULL(1, 3, 8);

ROCPROFILER_EXTERN_C_FINI
