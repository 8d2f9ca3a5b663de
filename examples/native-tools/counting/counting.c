/* A native tool that collects hardware counters through rocprofiler-sdk's
 * three counting services, each in its own context:
 *
 *   - callback dispatch counting: the record callback gets each counted
 *     dispatch's values;
 *   - buffered dispatch counting: the values reach a buffer, after a
 *     header record per dispatch;
 *   - device counting: the agent's counters, sampled when the tool ends.
 *
 * The counters are $COUNTING_COUNTERS (space-separated; default SQ_WAVES).
 * $COUNTING_CREATE=NAME=EXPRESSION first defines a counter of its own
 * (rocprofiler_create_counter), which the list may then name.
 * For every dispatch it writes, into $COUNTING_OUT, the sum of each
 * counter's instances, as rocprofv3's counter_collection.csv has it:
 *
 *     callback <dispatch id> <counter> <value> <instances>
 *     buffered <dispatch id> <counter> <value> <instances>
 *     device <agent> <counter> <value> <instances>
 *     info <counter> dimensions=<n> instances=<n> <DIMENSION[0:n-1]>...
 *     over-limit <status name>
 *     created <name> <status name>, duplicate <status name>, bad-expression <status name>
 *
 * Build it against any rocprofiler-sdk (rocwasm's:
 * `PKG_CONFIG_PATH=$(rocwasm sdk prefix)/lib/pkgconfig`):
 *
 *     cc -shared -fPIC counting.c $(pkg-config --cflags --libs rocprofiler-sdk) -o libcounting.so
 *     ROCP_TOOL_LIBRARIES=./libcounting.so rocwasm run --sim -- ./app
 */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AGENTS 8
#define MAX_COUNTERS 16

static FILE*                    out = NULL;
static pthread_mutex_t          lock = PTHREAD_MUTEX_INITIALIZER;
static rocprofiler_context_id_t callback_ctx = {0};
static rocprofiler_context_id_t buffered_ctx = {0};
static rocprofiler_context_id_t device_ctx = {0};
static rocprofiler_buffer_id_t  buffer = {0};
static rocprofiler_buffer_id_t  device_buffer = {0};

/* One configuration per GPU agent, made on first use. */
static struct
{
    uint64_t                        agent;
    rocprofiler_counter_config_id_t config;
} configs[MAX_AGENTS];
static size_t n_configs = 0;

/* The counters asked for, by name; the ids found for one agent. */
static char*  wanted[MAX_COUNTERS];
static size_t n_wanted = 0;

struct found
{
    rocprofiler_counter_id_t ids[MAX_COUNTERS];
    size_t                   n;
};

static rocprofiler_status_t
find_counters(rocprofiler_agent_id_t agent, rocprofiler_counter_id_t* ids, size_t n, void* data)
{
    (void) agent;
    struct found* f = (struct found*) data;
    for(size_t w = 0; w < n_wanted; ++w)
        for(size_t i = 0; i < n; ++i)
        {
            rocprofiler_counter_info_v0_t info;
            if(rocprofiler_query_counter_info(ids[i], ROCPROFILER_COUNTER_INFO_VERSION_0, &info) ==
                   ROCPROFILER_STATUS_SUCCESS &&
               strcmp(info.name, wanted[w]) == 0)
                f->ids[f->n++] = ids[i];
        }
    return ROCPROFILER_STATUS_SUCCESS;
}

/* The agent's configuration (0 when it cannot be made). */
static rocprofiler_counter_config_id_t
config_for(rocprofiler_agent_id_t agent)
{
    rocprofiler_counter_config_id_t none = {0};
    pthread_mutex_lock(&lock);
    for(size_t i = 0; i < n_configs; ++i)
        if(configs[i].agent == agent.handle)
        {
            rocprofiler_counter_config_id_t c = configs[i].config;
            pthread_mutex_unlock(&lock);
            return c;
        }
    struct found f = {.n = 0};
    rocprofiler_iterate_agent_supported_counters(agent, find_counters, &f);
    rocprofiler_counter_config_id_t c = {0};
    rocprofiler_status_t s = rocprofiler_create_counter_config(agent, f.ids, f.n, &c);
    if(s != ROCPROFILER_STATUS_SUCCESS)
    {
        fprintf(out, "error create_counter_config %s\n", rocprofiler_get_status_name(s));
        pthread_mutex_unlock(&lock);
        return none;
    }
    if(n_configs < MAX_AGENTS)
    {
        configs[n_configs].agent = agent.handle;
        configs[n_configs].config = c;
        ++n_configs;
    }
    pthread_mutex_unlock(&lock);
    return c;
}

/* Sums each counter's instances over `n` records and writes one line per
 * counter. */
static void
write_sums(const char* what, uint64_t key, rocprofiler_counter_record_t* r, size_t n)
{
    uint64_t counters[MAX_COUNTERS];
    double   sums[MAX_COUNTERS];
    size_t   instances[MAX_COUNTERS];
    size_t   k = 0;
    for(size_t i = 0; i < n; ++i)
    {
        rocprofiler_counter_id_t id = {0};
        rocprofiler_query_record_counter_id(r[i].id, &id);
        size_t j = 0;
        while(j < k && counters[j] != id.handle) ++j;
        if(j == k)
        {
            if(k == MAX_COUNTERS) continue;
            counters[k] = id.handle;
            sums[k] = 0;
            instances[k] = 0;
            ++k;
        }
        sums[j] += r[i].counter_value;
        instances[j] += 1;
    }
    pthread_mutex_lock(&lock);
    for(size_t j = 0; j < k; ++j)
    {
        rocprofiler_counter_info_v0_t info;
        rocprofiler_counter_id_t      id = {.handle = counters[j]};
        rocprofiler_query_counter_info(id, ROCPROFILER_COUNTER_INFO_VERSION_0, &info);
        fprintf(out,
                "%s %lu %s %.6f %lu\n",
                what,
                (unsigned long) key,
                info.name,
                sums[j],
                (unsigned long) instances[j]);
    }
    pthread_mutex_unlock(&lock);
}

static void
choose(rocprofiler_dispatch_counting_service_data_t data,
       rocprofiler_counter_config_id_t*             config,
       rocprofiler_user_data_t*                     user_data,
       void*                                        args)
{
    (void) args;
    *config = config_for(data.dispatch_info.agent_id);
    user_data->value = data.dispatch_info.dispatch_id;
}

static void
counted(rocprofiler_dispatch_counting_service_data_t data,
        rocprofiler_counter_record_t*                records,
        size_t                                       n,
        rocprofiler_user_data_t                      user_data,
        void*                                        args)
{
    (void) args;
    if(user_data.value != data.dispatch_info.dispatch_id)
        fprintf(out, "error user data %lu\n", (unsigned long) user_data.value);
    write_sums("callback", data.dispatch_info.dispatch_id, records, n);
}

static void
delivered(rocprofiler_context_id_t      ctx,
          rocprofiler_buffer_id_t       id,
          rocprofiler_record_header_t** headers,
          size_t                        n,
          void*                         data,
          uint64_t                      drops)
{
    (void) ctx;
    (void) data;
    (void) drops;
    const char* what = id.handle == device_buffer.handle ? "device-buffer" : "buffered";
    for(size_t i = 0; i < n; ++i)
    {
        if(headers[i]->category != ROCPROFILER_BUFFER_CATEGORY_COUNTERS) continue;
        if(headers[i]->kind == ROCPROFILER_COUNTER_RECORD_PROFILE_COUNTING_DISPATCH_HEADER)
        {
            const rocprofiler_dispatch_counting_service_record_t* h =
                (const rocprofiler_dispatch_counting_service_record_t*) headers[i]->payload;
            /* The values follow their header. */
            rocprofiler_counter_record_t values[256];
            size_t                       k = 0;
            for(size_t j = 0; j < h->num_records && i + 1 < n && k < 256; ++j)
            {
                ++i;
                values[k++] = *(rocprofiler_counter_record_t*) headers[i]->payload;
            }
            write_sums(what, h->dispatch_info.dispatch_id, values, k);
        }
        else if(headers[i]->kind == ROCPROFILER_COUNTER_RECORD_VALUE)
        {
            /* Device counting's values come without a header: one sample's
             * values are consecutive. */
            rocprofiler_counter_record_t values[256];
            size_t                       k = 0;
            values[k++] = *(rocprofiler_counter_record_t*) headers[i]->payload;
            while(i + 1 < n && k < 256 &&
                  headers[i + 1]->category == ROCPROFILER_BUFFER_CATEGORY_COUNTERS &&
                  headers[i + 1]->kind == ROCPROFILER_COUNTER_RECORD_VALUE)
            {
                ++i;
                values[k++] = *(rocprofiler_counter_record_t*) headers[i]->payload;
            }
            write_sums(what, values[0].agent_id.handle, values, k);
        }
    }
}

static rocprofiler_agent_id_t device_agent = {0};

static void
setup_device(rocprofiler_context_id_t               ctx,
             rocprofiler_agent_id_t                 agent,
             rocprofiler_device_counting_agent_cb_t set_config,
             void*                                  data)
{
    (void) data;
    rocprofiler_status_t s = set_config(ctx, config_for(agent));
    if(s != ROCPROFILER_STATUS_SUCCESS)
        fprintf(out, "error set_config %s\n", rocprofiler_get_status_name(s));
}

/* The first GPU agent; prints what info version 1 tells of each counter. */
static rocprofiler_status_t
first_gpu(rocprofiler_agent_version_t version, const void** agents, size_t n, void* data)
{
    (void) version;
    (void) data;
    for(size_t i = 0; i < n; ++i)
    {
        const rocprofiler_agent_v0_t* a = (const rocprofiler_agent_v0_t*) agents[i];
        if(a->type == ROCPROFILER_AGENT_TYPE_GPU && device_agent.handle == 0) device_agent = a->id;
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

static void
describe(void)
{
    struct found f = {.n = 0};
    rocprofiler_iterate_agent_supported_counters(device_agent, find_counters, &f);
    for(size_t i = 0; i < f.n; ++i)
    {
        rocprofiler_counter_info_v1_t info;
        memset(&info, 0, sizeof(info));
        if(rocprofiler_query_counter_info(f.ids[i], ROCPROFILER_COUNTER_INFO_VERSION_1, &info) !=
           ROCPROFILER_STATUS_SUCCESS)
        {
            fprintf(out, "error counter info v1\n");
            continue;
        }
        fprintf(out,
                "info %s dimensions=%lu instances=%lu",
                info.name,
                (unsigned long) info.dimensions_count,
                (unsigned long) info.dimensions_instances_count);
        for(uint64_t d = 0; d < info.dimensions_count; ++d)
            fprintf(out,
                    " %s[0:%lu]",
                    info.dimensions[d]->name,
                    (unsigned long) info.dimensions[d]->instance_size - 1);
        fprintf(out, "\n");
    }
    /* Five TCC counters: one more than the block's registers. */
    const char* tcc[] = {"TCC_HIT", "TCC_MISS", "TCC_REQ", "TCC_READ", "TCC_WRITE"};
    char*       saved[MAX_COUNTERS];
    size_t      n_saved = n_wanted;
    memcpy(saved, wanted, sizeof(saved));
    n_wanted = 5;
    for(size_t i = 0; i < 5; ++i) wanted[i] = (char*) tcc[i];
    struct found over = {.n = 0};
    rocprofiler_iterate_agent_supported_counters(device_agent, find_counters, &over);
    memcpy(wanted, saved, sizeof(saved));
    n_wanted = n_saved;
    rocprofiler_counter_config_id_t c = {0};
    fprintf(out,
            "over-limit %lu %s\n",
            (unsigned long) over.n,
            rocprofiler_get_status_name(
                rocprofiler_create_counter_config(device_agent, over.ids, over.n, &c)));
}

#define CHECK(call)                                                                                \
    do                                                                                             \
    {                                                                                              \
        rocprofiler_status_t s_ = (call);                                                          \
        if(s_ != ROCPROFILER_STATUS_SUCCESS)                                                       \
        {                                                                                          \
            fprintf(out, "error %s: %s\n", #call, rocprofiler_get_status_name(s_));                \
            return -1;                                                                             \
        }                                                                                          \
    } while(0)

static int
tool_init(rocprofiler_client_finalize_t fini, void* tool_data)
{
    (void) fini;
    (void) tool_data;
    const char* path = getenv("COUNTING_OUT");
    out = fopen(path ? path : "counting.txt", "w");
    if(!out) return -1;
    const char* list = getenv("COUNTING_COUNTERS");
    char*       copy = strdup(list ? list : "SQ_WAVES");
    for(char* t = strtok(copy, " "); t && n_wanted < MAX_COUNTERS; t = strtok(NULL, " "))
        wanted[n_wanted++] = t;

    CHECK(rocprofiler_query_available_agents(
        ROCPROFILER_AGENT_INFO_VERSION_0, first_gpu, sizeof(rocprofiler_agent_v0_t), NULL));
    const char* create = getenv("COUNTING_CREATE");
    if(create && strchr(create, '='))
    {
        const char*              eq = strchr(create, '=');
        rocprofiler_counter_id_t id = {0};
        const char*              about = "defined by the counting example";
        rocprofiler_status_t     s = rocprofiler_create_counter(create,
                                                            (size_t)(eq - create),
                                                            eq + 1,
                                                            strlen(eq + 1),
                                                            about,
                                                            strlen(about),
                                                            device_agent,
                                                            &id);
        fprintf(out, "created %.*s %s\n", (int) (eq - create), create, rocprofiler_get_status_name(s));
        /* A name the agent has, and an expression that does not parse. */
        s = rocprofiler_create_counter(
            "SQ_WAVES", 8, "SQ_WAVES", 8, NULL, 0, device_agent, &id);
        fprintf(out, "duplicate %s\n", rocprofiler_get_status_name(s));
        s = rocprofiler_create_counter(
            "BROKEN", 6, "reduce(SQ_WAVES", 15, NULL, 0, device_agent, &id);
        fprintf(out, "bad-expression %s\n", rocprofiler_get_status_name(s));
    }
    describe();

    CHECK(rocprofiler_create_context(&callback_ctx));
    CHECK(rocprofiler_configure_callback_dispatch_counting_service(
        callback_ctx, choose, NULL, counted, NULL));

    CHECK(rocprofiler_create_context(&buffered_ctx));
    CHECK(rocprofiler_create_buffer(buffered_ctx,
                                    4096,
                                    2048,
                                    ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                    delivered,
                                    NULL,
                                    &buffer));
    CHECK(rocprofiler_configure_buffer_dispatch_counting_service(
        buffered_ctx, buffer, choose, NULL));

    CHECK(rocprofiler_create_context(&device_ctx));
    CHECK(rocprofiler_create_buffer(device_ctx,
                                    4096,
                                    2048,
                                    ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                    delivered,
                                    NULL,
                                    &device_buffer));
    CHECK(rocprofiler_configure_device_counting_service(
        device_ctx, device_buffer, device_agent, setup_device, NULL));

    CHECK(rocprofiler_start_context(callback_ctx));
    CHECK(rocprofiler_start_context(buffered_ctx));
    CHECK(rocprofiler_start_context(device_ctx));
    return 0;
}

static void
tool_fini(void* tool_data)
{
    (void) tool_data;
    /* The device's counters over the whole run, into an array... */
    rocprofiler_counter_record_t records[256];
    size_t                       n = 256;
    rocprofiler_user_data_t      user = {.value = 7};
    rocprofiler_status_t         s = rocprofiler_sample_device_counting_service(
        device_ctx, user, ROCPROFILER_COUNTER_FLAG_NONE, records, &n);
    if(s == ROCPROFILER_STATUS_SUCCESS)
        write_sums("device", device_agent.handle, records, n);
    else
        fprintf(out, "error sample %s\n", rocprofiler_get_status_name(s));
    /* ... and into its buffer. */
    rocprofiler_flush_buffer(buffer);
    rocprofiler_flush_buffer(device_buffer);
    fclose(out);
}

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t version, const char* runtime_version, uint32_t priority,
                      rocprofiler_client_id_t* id)
{
    (void) version;
    (void) runtime_version;
    (void) priority;
    id->name = "counting";
    static rocprofiler_tool_configure_result_t cfg = {
        sizeof(rocprofiler_tool_configure_result_t), &tool_init, &tool_fini, NULL};
    return &cfg;
}
