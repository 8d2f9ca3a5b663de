/*
 * A native rocprofiler-sdk tool in C, written from the SDK's documented API
 * only. It checks what a tool relies on and prints one line of counts at
 * finalization (to the file named by C_TOOL_OUT, else standard error):
 *
 *   dispatches   kernel-dispatch records delivered to its buffer
 *   copies       memory-copy records
 *   hip          HIP runtime API records
 *   drops        records the LOSSLESS buffer reported dropped (must be 0)
 *   ext_ok/ext_bad  HIP and kernel-dispatch records whose external
 *                correlation id is / is not the value this tool answered
 *   dispatch_requests  external-correlation requests for kernel dispatches
 *   enter/exit   HIP callback-tracing phases seen
 *   udata_bad    EXIT callbacks whose user data was not what ENTER stored
 *   args         arguments iterated at the EXIT of hipLaunchKernel / hipMalloc
 *   arg_values   of those, size_t arguments whose value read through arg_value_addr
 *                equals their text
 *   mallocs_ok   hipMalloc EXITs whose argument struct (args.hipMalloc) holds the size
 *                and an output pointer the call wrote
 *   launches_ok  hipLaunchKernel EXITs whose args.hipLaunchKernel has the kernel's
 *                address and a non-empty grid
 *   symbols      kernel symbols registered (CODE_OBJECT callbacks)
 *   hsa_tables   HSA API tables handed to it (rocprofiler_at_intercept_table_registration)
 *   cb_dispatches  KERNEL_DISPATCH completion callbacks whose payload has the
 *                dispatch's times and kernel
 *   gpu_agents   GPU agents listed in its initialize whose hardware fields are
 *                filled (compute units, SIMDs, wavefront size, gfx version)
 *   gpu_cus      the first GPU agent's compute units
 *   symbol_unloads  kernel symbols unregistered (UNLOAD), at the latest at finalize
 *   co_loads/co_unloads  code objects loaded / unloaded
 *
 * Build:  cc -shared -fPIC tool.c $(pkg-config --cflags --libs rocprofiler-sdk) -o libctool.so
 * Run:    ROCP_TOOL_LIBRARIES=$PWD/libctool.so rocwasm run --sim --kernel-trace -- ./app
 */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/intercept_table.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXT_OFFSET 1000000u
#define UDATA_OFFSET 7u

static rocprofiler_context_id_t ctx;
static rocprofiler_buffer_id_t buffer;
static rocprofiler_client_id_t* client;

static atomic_ulong dispatches, copies, hip, drops, ext_ok, ext_bad, enter, exit_, udata_bad,
    args, symbols, dispatch_requests, hsa_tables, cb_dispatches, gpu_agents, symbol_unloads,
    co_loads, co_unloads, arg_values, mallocs_ok, launches_ok;
static unsigned gpu_cus;

#define CHECK(call)                                                                                \
    do {                                                                                           \
        rocprofiler_status_t s_ = (call);                                                          \
        if (s_ != ROCPROFILER_STATUS_SUCCESS) {                                                    \
            fprintf(stderr, "c-tool: %s failed: %s\n", #call, rocprofiler_get_status_string(s_)); \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void on_records(rocprofiler_context_id_t context, rocprofiler_buffer_id_t buffer_id,
                       rocprofiler_record_header_t** headers, size_t n, void* data,
                       uint64_t drop_count) {
    (void) context; (void) buffer_id; (void) data;
    atomic_fetch_add(&drops, drop_count);
    for (size_t i = 0; i < n; ++i) {
        rocprofiler_record_header_t* h = headers[i];
        if (h->category != ROCPROFILER_BUFFER_CATEGORY_TRACING) continue;
        if (h->kind == ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH) {
            rocprofiler_buffer_tracing_kernel_dispatch_record_t* r = h->payload;
            atomic_fetch_add(&dispatches, 1);
            if (r->correlation_id.external.value == r->correlation_id.internal + EXT_OFFSET)
                atomic_fetch_add(&ext_ok, 1);
            else
                atomic_fetch_add(&ext_bad, 1);
        } else if (h->kind == ROCPROFILER_BUFFER_TRACING_MEMORY_COPY) {
            atomic_fetch_add(&copies, 1);
        } else if (h->kind == ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API) {
            rocprofiler_buffer_tracing_hip_api_record_t* r = h->payload;
            atomic_fetch_add(&hip, 1);
            if (r->correlation_id.external.value == r->correlation_id.internal + EXT_OFFSET)
                atomic_fetch_add(&ext_ok, 1);
            else
                atomic_fetch_add(&ext_bad, 1);
        }
    }
}

static int answer_external(rocprofiler_thread_id_t tid, rocprofiler_context_id_t context,
                           rocprofiler_external_correlation_id_request_kind_t kind,
                           rocprofiler_tracing_operation_t op, uint64_t internal,
                           rocprofiler_user_data_t* external, void* data) {
    (void) tid; (void) context; (void) op; (void) data;
    if (kind == ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_KERNEL_DISPATCH)
        atomic_fetch_add(&dispatch_requests, 1);
    external->value = internal + EXT_OFFSET;
    return 0;
}

static int count_arg(rocprofiler_callback_tracing_kind_t kind, rocprofiler_tracing_operation_t op,
                     uint32_t number, const void* const value_addr, int32_t indirection,
                     const char* type, const char* name, const char* value_str,
                     int32_t dereferences, void* data) {
    (void) kind; (void) op; (void) number; (void) indirection; (void) dereferences; (void) data;
    if (type && name && value_str && name[0] != '\0') atomic_fetch_add(&args, 1);
    if (type && value_addr && strcmp(type, "size_t") == 0 &&
        *(const size_t*) value_addr == (size_t) strtoull(value_str, NULL, 10))
        atomic_fetch_add(&arg_values, 1);
    return 0;
}

static void on_hip_call(rocprofiler_callback_tracing_record_t record,
                        rocprofiler_user_data_t* user_data, void* data) {
    (void) data;
    if (record.phase == ROCPROFILER_CALLBACK_PHASE_ENTER) {
        atomic_fetch_add(&enter, 1);
        user_data->value = record.correlation_id.internal + UDATA_OFFSET;
    } else if (record.phase == ROCPROFILER_CALLBACK_PHASE_EXIT) {
        atomic_fetch_add(&exit_, 1);
        if (user_data->value != record.correlation_id.internal + UDATA_OFFSET)
            atomic_fetch_add(&udata_bad, 1);
        const char* name = NULL;
        rocprofiler_query_callback_tracing_kind_operation_name(record.kind, record.operation,
                                                               &name, NULL);
        if (name && (strcmp(name, "hipLaunchKernel") == 0 || strcmp(name, "hipMalloc") == 0))
            CHECK(rocprofiler_iterate_callback_tracing_kind_operation_args(record, count_arg, 1,
                                                                           NULL));
        const rocprofiler_callback_tracing_hip_api_data_t* d = record.payload;
        if (name && strcmp(name, "hipMalloc") == 0 && d->args.hipMalloc.ptr &&
            *d->args.hipMalloc.ptr != NULL && d->args.hipMalloc.size > 0)
            atomic_fetch_add(&mallocs_ok, 1);
        if (name && strcmp(name, "hipLaunchKernel") == 0 &&
            d->args.hipLaunchKernel.function_address != NULL &&
            d->args.hipLaunchKernel.numBlocks.x > 0 && d->args.hipLaunchKernel.dimBlocks.x > 0)
            atomic_fetch_add(&launches_ok, 1);
    }
}

static void on_code_object(rocprofiler_callback_tracing_record_t record,
                           rocprofiler_user_data_t* user_data, void* data) {
    (void) user_data; (void) data;
    if (record.operation == ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER) {
        rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t* s = record.payload;
        int named = s && s->kernel_name && s->kernel_name[0] != '\0';
        if (named && record.phase == ROCPROFILER_CALLBACK_PHASE_LOAD)
            atomic_fetch_add(&symbols, 1);
        else if (named && record.phase == ROCPROFILER_CALLBACK_PHASE_UNLOAD)
            atomic_fetch_add(&symbol_unloads, 1);
    } else if (record.operation == ROCPROFILER_CODE_OBJECT_LOAD) {
        atomic_fetch_add(record.phase == ROCPROFILER_CALLBACK_PHASE_LOAD ? &co_loads : &co_unloads,
                         1);
    }
}

static rocprofiler_status_t count_agents(rocprofiler_agent_version_t version, const void** agents,
                                         size_t n, void* data) {
    (void) version; (void) data;
    for (size_t i = 0; i < n; ++i) {
        const rocprofiler_agent_v0_t* a = agents[i];
        if (a->type != ROCPROFILER_AGENT_TYPE_GPU) continue;
        if (a->cu_count > 0 && a->simd_per_cu > 0 && a->wave_front_size > 0 &&
            a->gfx_target_version > 0 && a->simd_count == a->cu_count * a->simd_per_cu &&
            a->name && strncmp(a->name, "gfx", 3) == 0) {
            if (atomic_fetch_add(&gpu_agents, 1) == 0) gpu_cus = a->cu_count;
        }
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

static void on_dispatch_done(rocprofiler_callback_tracing_record_t record,
                             rocprofiler_user_data_t* user_data, void* data) {
    (void) user_data; (void) data;
    rocprofiler_callback_tracing_kernel_dispatch_data_t* d = record.payload;
    if (record.operation == ROCPROFILER_KERNEL_DISPATCH_COMPLETE && d &&
        d->size == sizeof(*d) && d->end_timestamp > d->start_timestamp &&
        d->dispatch_info.kernel_id != 0)
        atomic_fetch_add(&cb_dispatches, 1);
}

static void on_table(rocprofiler_intercept_table_t type, uint64_t version, uint64_t instance,
                     void** tables, uint64_t num_tables, void* data) {
    (void) version; (void) instance; (void) data;
    if (type == ROCPROFILER_HSA_TABLE && num_tables == 1 && tables && tables[0])
        atomic_fetch_add(&hsa_tables, 1);
}

static int tool_init(rocprofiler_client_finalize_t fini, void* tool_data) {
    (void) fini; (void) tool_data;
    /* Agents are listed from the start, as the SDK reads them before any runtime call. */
    CHECK(rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, count_agents,
                                             sizeof(rocprofiler_agent_v0_t), NULL));
    CHECK(rocprofiler_at_intercept_table_registration(on_table, ROCPROFILER_HSA_TABLE, NULL));
    CHECK(rocprofiler_create_context(&ctx));
    CHECK(rocprofiler_create_buffer(ctx, 1 << 16, 1 << 15, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                    on_records, NULL, &buffer));
    rocprofiler_callback_thread_t thread;
    CHECK(rocprofiler_create_callback_thread(&thread));
    CHECK(rocprofiler_assign_callback_thread(buffer, thread));
    rocprofiler_buffer_tracing_kind_t kinds[] = {ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
                                                 ROCPROFILER_BUFFER_TRACING_MEMORY_COPY,
                                                 ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i)
        CHECK(rocprofiler_configure_buffer_tracing_service(ctx, kinds[i], NULL, 0, buffer));
    rocprofiler_external_correlation_id_request_kind_t requests[] = {
        ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HIP_RUNTIME_API,
        ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_KERNEL_DISPATCH};
    CHECK(rocprofiler_configure_external_correlation_id_request_service(ctx, requests, 2,
                                                                        answer_external, NULL));
    CHECK(rocprofiler_configure_callback_tracing_service(
        ctx, ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API, NULL, 0, on_hip_call, NULL));
    CHECK(rocprofiler_configure_callback_tracing_service(
        ctx, ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT, NULL, 0, on_code_object, NULL));
    CHECK(rocprofiler_configure_callback_tracing_service(
        ctx, ROCPROFILER_CALLBACK_TRACING_KERNEL_DISPATCH, NULL, 0, on_dispatch_done, NULL));
    int valid = 0;
    CHECK(rocprofiler_context_is_valid(ctx, &valid));
    if (!valid) abort();
    CHECK(rocprofiler_start_context(ctx));
    return 0;
}

static void tool_fini(void* tool_data) {
    (void) tool_data;
    CHECK(rocprofiler_flush_buffer(buffer));
    const char* path = getenv("C_TOOL_OUT");
    FILE* out = path ? fopen(path, "w") : stderr;
    if (!out) out = stderr;
    fprintf(out,
            "c-tool: client=%s dispatches=%lu copies=%lu hip=%lu drops=%lu ext_ok=%lu ext_bad=%lu "
            "enter=%lu exit=%lu udata_bad=%lu args=%lu symbols=%lu dispatch_requests=%lu "
            "hsa_tables=%lu cb_dispatches=%lu gpu_agents=%lu gpu_cus=%u symbol_unloads=%lu "
            "co_loads=%lu co_unloads=%lu arg_values=%lu mallocs_ok=%lu launches_ok=%lu\n",
            client && client->name ? client->name : "?", atomic_load(&dispatches),
            atomic_load(&copies), atomic_load(&hip), atomic_load(&drops), atomic_load(&ext_ok),
            atomic_load(&ext_bad), atomic_load(&enter), atomic_load(&exit_),
            atomic_load(&udata_bad), atomic_load(&args), atomic_load(&symbols),
            atomic_load(&dispatch_requests), atomic_load(&hsa_tables),
            atomic_load(&cb_dispatches), atomic_load(&gpu_agents), gpu_cus,
            atomic_load(&symbol_unloads), atomic_load(&co_loads), atomic_load(&co_unloads),
            atomic_load(&arg_values), atomic_load(&mallocs_ok), atomic_load(&launches_ok));
    if (out != stderr) fclose(out);
}

rocprofiler_tool_configure_result_t* rocprofiler_configure(uint32_t version,
                                                           const char* runtime_version,
                                                           uint32_t priority,
                                                           rocprofiler_client_id_t* id) {
    (void) version; (void) runtime_version; (void) priority;
    id->name = "c-tool";
    client = id;
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, NULL};
    return &result;
}
