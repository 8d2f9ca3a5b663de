/* A native tool that lists every GPU's counters through rocprofiler-sdk's
 * counters.h (rocprofiler_iterate_agent_supported_counters,
 * rocprofiler_query_counter_info), as rocprofv3-avail does, one line each:
 *
 *     counter <agent> <id> <name> block=<block> expression=<expression> constant=<0|1> derived=<0|1>
 *
 * into the file $COUNTERS_OUT. Build it against any rocprofiler-sdk
 * (rocwasm's: `PKG_CONFIG_PATH=$(rocwasm sdk prefix)/lib/pkgconfig`):
 *
 *     cc -shared -fPIC counters.c $(pkg-config --cflags --libs rocprofiler-sdk) -o libcounters.so
 *     ROCP_TOOL_LIBRARIES=./libcounters.so COUNTERS_OUT=counters.txt \
 *         rocwasm run --sim --kernel-trace -- ./app
 */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <stdio.h>
#include <stdlib.h>

static FILE* out = NULL;

static rocprofiler_status_t
list_counters(rocprofiler_agent_id_t agent, rocprofiler_counter_id_t* ids, size_t n, void* data)
{
    (void) data;
    for(size_t i = 0; i < n; ++i)
    {
        rocprofiler_counter_info_v0_t info;
        rocprofiler_status_t s =
            rocprofiler_query_counter_info(ids[i], ROCPROFILER_COUNTER_INFO_VERSION_0, &info);
        if(s != ROCPROFILER_STATUS_SUCCESS)
        {
            fprintf(out, "error %s\n", rocprofiler_get_status_string(s));
            continue;
        }
        fprintf(out,
                "counter %lu %lu %s block=%s expression=%s constant=%d derived=%d\n",
                (unsigned long) agent.handle,
                (unsigned long) info.id.handle,
                info.name,
                info.block,
                info.expression,
                (int) info.is_constant,
                (int) info.is_derived);
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

static rocprofiler_status_t
each_agent(rocprofiler_agent_version_t version, const void** agents, size_t n, void* data)
{
    (void) version;
    (void) data;
    for(size_t i = 0; i < n; ++i)
    {
        const rocprofiler_agent_v0_t* a = (const rocprofiler_agent_v0_t*) agents[i];
        if(a->type != ROCPROFILER_AGENT_TYPE_GPU) continue;
        rocprofiler_status_t s = rocprofiler_iterate_agent_supported_counters(a->id, list_counters, NULL);
        if(s != ROCPROFILER_STATUS_SUCCESS)
            fprintf(out, "error %s on %s\n", rocprofiler_get_status_string(s), a->name);
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

static int
tool_init(rocprofiler_client_finalize_t fini, void* tool_data)
{
    (void) fini;
    (void) tool_data;
    const char* path = getenv("COUNTERS_OUT");
    out = fopen(path ? path : "counters.txt", "w");
    if(!out) return -1;
    rocprofiler_query_available_agents(
        ROCPROFILER_AGENT_INFO_VERSION_0, each_agent, sizeof(rocprofiler_agent_v0_t), NULL);
    fclose(out);
    return 0;
}

static void
tool_fini(void* tool_data)
{
    (void) tool_data;
}

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* runtime_version, uint32_t priority,
                      rocprofiler_client_id_t* id)
{
    (void) version;
    (void) runtime_version;
    (void) priority;
    id->name = "counters";
    static rocprofiler_tool_configure_result_t cfg = {
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, NULL};
    return &cfg;
}
