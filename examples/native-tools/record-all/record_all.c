/*
 * record_all: a native rocprofiler-sdk tool that asks for everything a tool
 * can ask for and writes down everything it is given — what AMD's generic
 * integration-test tool does, written from the SDK's documented API only.
 *
 * In `initialize` it
 *   - configures callback tracing of every callback kind the headers
 *     declare (1 .. ROCPROFILER_CALLBACK_TRACING_LAST-1, every operation) in
 *     one context, and buffer tracing of every buffer kind
 *     (1 .. ROCPROFILER_BUFFER_TRACING_LAST-1) into one LOSSLESS buffer in
 *     another; both with an external-correlation request service that
 *     answers each request with the requesting thread's id;
 *   - configures buffered and callback dispatch counting in contexts of
 *     their own (never started: nothing to count with);
 *   - configures a third, "late" context (kernel dispatch and memory copy
 *     buffer tracing into a buffer of its own) that it starts only from the
 *     HIP runtime's RUNTIME_INITIALIZATION callback, after the runtimes
 *     came up (what PyTorch's profiler library does at startTrace);
 *   - pushes the parent process id as external correlation id on the first
 *     two contexts, for its own thread, and starts them.
 * Every configure call's status is written down; none may fail.
 *
 * In `finalize` it stops the contexts, flushes the buffers, pops the
 * external ids for its own thread (they must be the pushed value) and
 * writes a summary line.
 *
 * With RECORD_ALL_LATE_ONLY=1 nothing else traces copies or dispatches:
 * the first context calls back RUNTIME_INITIALIZATION only and the second
 * is left unconfigured, so the late context is the only one that asks for
 * copy and dispatch timing, and it is started after the runtimes came up.
 *
 * Output: one JSON object per line, to the file named by RECORD_ALL_OUT
 * (default record_all.jsonl):
 *   {"t":"configure","service":S,"kind":K,"status":N}
 *   {"t":"init","tid":T,"time":NS}
 *   {"t":"cb","ctx":C,"kind":K,"op":O,"phase":P,"tid":T,"int":I,"ext":E,
 *    "anc":A,"ts":NS, ...payload fields}
 *   {"t":"buf","ctx":C,"kind":K,"op":O,"int":I,"ext":E,"tid":T, ...}
 *   {"t":"fini","tid":T,"time":NS,"popped":[V,…],"pushed":V}
 *
 * Build:  cc -shared -fPIC record_all.c $(pkg-config --cflags --libs rocprofiler-sdk) \
 *            -o librecord_all.so
 * Run:    ROCP_TOOL_LIBRARIES=$PWD/librecord_all.so rocwasm run --sim -- ./app
 */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static FILE*           out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* 0 callback tracing, 1 buffer tracing, 2 late, 3 dispatch counting (buffered),
 * 4 dispatch counting (callback). */
static rocprofiler_context_id_t contexts[5];
static rocprofiler_buffer_id_t  buffers[3];
static int                      late_started;

#define LINE(...)                              \
    do {                                       \
        pthread_mutex_lock(&out_lock);         \
        fprintf(out, __VA_ARGS__);             \
        fputc('\n', out);                      \
        pthread_mutex_unlock(&out_lock);       \
    } while (0)

static void
configured(const char* service, int kind, rocprofiler_status_t status)
{
    LINE("{\"t\":\"configure\",\"service\":\"%s\",\"kind\":%d,\"status\":%d}",
         service,
         kind,
         (int) status);
    if(status != ROCPROFILER_STATUS_SUCCESS)
        fprintf(stderr,
                "record_all: configuring %s kind %d failed: %s\n",
                service,
                kind,
                rocprofiler_get_status_string(status));
}

static int
external_request(rocprofiler_thread_id_t                            thread_id,
                 rocprofiler_context_id_t                           context_id,
                 rocprofiler_external_correlation_id_request_kind_t kind,
                 rocprofiler_tracing_operation_t                    operation,
                 uint64_t                                           internal,
                 rocprofiler_user_data_t*                           external,
                 void*                                              data)
{
    (void) context_id, (void) kind, (void) operation, (void) internal, (void) data;
    external->value = thread_id;
    return 0;
}

static void
on_callback(rocprofiler_callback_tracing_record_t record,
            rocprofiler_user_data_t*              user_data,
            void*                                 data)
{
    (void) data;
    rocprofiler_timestamp_t ts = 0;
    rocprofiler_get_timestamp(&ts);
    /* ENTER leaves a mark that EXIT must find. */
    if(record.phase == ROCPROFILER_CALLBACK_PHASE_ENTER)
        user_data->value = record.correlation_id.internal + 7;
    int udata_ok = record.phase != ROCPROFILER_CALLBACK_PHASE_EXIT ||
                   user_data->value == record.correlation_id.internal + 7;

    char payload[512] = "";
    if(record.kind == ROCPROFILER_CALLBACK_TRACING_KERNEL_DISPATCH && record.payload)
    {
        const rocprofiler_callback_tracing_kernel_dispatch_data_t* d = record.payload;
        snprintf(payload,
                 sizeof payload,
                 ",\"start\":%lu,\"end\":%lu,\"dispatch_id\":%lu,\"kernel_id\":%lu",
                 (unsigned long) d->start_timestamp,
                 (unsigned long) d->end_timestamp,
                 (unsigned long) d->dispatch_info.dispatch_id,
                 (unsigned long) d->dispatch_info.kernel_id);
    }
    else if(record.kind == ROCPROFILER_CALLBACK_TRACING_MEMORY_COPY && record.payload)
    {
        const rocprofiler_callback_tracing_memory_copy_data_t* c = record.payload;
        snprintf(payload,
                 sizeof payload,
                 ",\"start\":%lu,\"end\":%lu,\"bytes\":%lu",
                 (unsigned long) c->start_timestamp,
                 (unsigned long) c->end_timestamp,
                 (unsigned long) c->bytes);
    }
    else if(record.kind == ROCPROFILER_CALLBACK_TRACING_RUNTIME_INITIALIZATION)
    {
        const rocprofiler_callback_tracing_runtime_initialization_data_t* r = record.payload;
        if(r)
            snprintf(payload,
                     sizeof payload,
                     ",\"size\":%lu,\"version\":%lu,\"instance\":%lu",
                     (unsigned long) r->size,
                     (unsigned long) r->version,
                     (unsigned long) r->instance);
        else
            snprintf(payload, sizeof payload, ",\"payload_null\":true");
        if(record.operation == ROCPROFILER_RUNTIME_INITIALIZATION_HIP && !late_started)
        {
            late_started = 1;
            rocprofiler_status_t s = rocprofiler_start_context(contexts[2]);
            LINE("{\"t\":\"late_start\",\"status\":%d}", (int) s);
        }
    }
    else if(record.kind == ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT && record.payload)
    {
        if(record.operation == ROCPROFILER_CODE_OBJECT_HOST_KERNEL_SYMBOL_REGISTER)
        {
            const rocprofiler_callback_tracing_code_object_host_kernel_symbol_register_data_t* h =
                record.payload;
            snprintf(payload,
                     sizeof payload,
                     ",\"size\":%lu,\"host_function_id\":%lu,\"kernel_id\":%lu,"
                     "\"code_object_id\":%lu,\"host_function\":%lu,\"named\":%d",
                     (unsigned long) h->size,
                     (unsigned long) h->host_function_id,
                     (unsigned long) h->kernel_id,
                     (unsigned long) h->code_object_id,
                     (unsigned long) h->host_function.value,
                     h->device_function != NULL && h->device_function[0] != '\0');
        }
        else if(record.operation == ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER)
        {
            const rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t* k =
                record.payload;
            snprintf(payload,
                     sizeof payload,
                     ",\"kernel_id\":%lu,\"code_object_id\":%lu",
                     (unsigned long) k->kernel_id,
                     (unsigned long) k->code_object_id);
        }
    }
    LINE("{\"t\":\"cb\",\"ctx\":%lu,\"kind\":%d,\"op\":%d,\"phase\":%d,\"tid\":%lu,\"int\":%lu,"
         "\"ext\":%lu,\"anc\":%lu,\"ts\":%lu,\"udata_ok\":%d%s}",
         (unsigned long) record.context_id.handle,
         (int) record.kind,
         (int) record.operation,
         (int) record.phase,
         (unsigned long) record.thread_id,
         (unsigned long) record.correlation_id.internal,
         (unsigned long) record.correlation_id.external.value,
         (unsigned long) record.correlation_id.ancestor,
         (unsigned long) ts,
         udata_ok,
         payload);
}

/* The API kinds whose buffer records all share the HSA API record's layout. */
static int
is_api_kind(int kind)
{
    switch(kind)
    {
        case ROCPROFILER_BUFFER_TRACING_HSA_CORE_API:
        case ROCPROFILER_BUFFER_TRACING_HSA_AMD_EXT_API:
        case ROCPROFILER_BUFFER_TRACING_HSA_IMAGE_EXT_API:
        case ROCPROFILER_BUFFER_TRACING_HSA_FINALIZE_EXT_API:
        case ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API:
        case ROCPROFILER_BUFFER_TRACING_HIP_COMPILER_API:
        case ROCPROFILER_BUFFER_TRACING_MARKER_CORE_API:
        case ROCPROFILER_BUFFER_TRACING_MARKER_CONTROL_API:
        case ROCPROFILER_BUFFER_TRACING_MARKER_NAME_API:
        case ROCPROFILER_BUFFER_TRACING_MARKER_CORE_RANGE_API:
        case ROCPROFILER_BUFFER_TRACING_RCCL_API: return 1;
        default: return 0;
    }
}

static void
on_buffer(rocprofiler_context_id_t      context,
          rocprofiler_buffer_id_t       buffer,
          rocprofiler_record_header_t** headers,
          size_t                        count,
          void*                         data,
          uint64_t                      drops)
{
    (void) buffer, (void) data;
    if(drops != 0) LINE("{\"t\":\"drops\",\"ctx\":%lu,\"n\":%lu}", (unsigned long) context.handle,
                        (unsigned long) drops);
    for(size_t i = 0; i < count; ++i)
    {
        const rocprofiler_record_header_t* h = headers[i];
        if(h->category != ROCPROFILER_BUFFER_CATEGORY_TRACING)
        {
            LINE("{\"t\":\"other\",\"category\":%d,\"kind\":%d}", (int) h->category, (int) h->kind);
            continue;
        }
        if(is_api_kind((int) h->kind))
        {
            const rocprofiler_buffer_tracing_hsa_api_record_t* r = h->payload;
            const char* name = "";
            rocprofiler_query_buffer_tracing_kind_operation_name(
                r->kind, r->operation, &name, NULL);
            LINE("{\"t\":\"buf\",\"ctx\":%lu,\"kind\":%d,\"op\":%d,\"name\":\"%s\",\"int\":%lu,"
                 "\"ext\":%lu,\"anc\":%lu,\"tid\":%lu,\"start\":%lu,\"end\":%lu}",
                 (unsigned long) context.handle,
                 (int) r->kind,
                 (int) r->operation,
                 name ? name : "",
                 (unsigned long) r->correlation_id.internal,
                 (unsigned long) r->correlation_id.external.value,
                 (unsigned long) r->correlation_id.ancestor,
                 (unsigned long) r->thread_id,
                 (unsigned long) r->start_timestamp,
                 (unsigned long) r->end_timestamp);
        }
        else if(h->kind == ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH)
        {
            const rocprofiler_buffer_tracing_kernel_dispatch_record_t* r = h->payload;
            LINE("{\"t\":\"buf\",\"ctx\":%lu,\"kind\":%d,\"op\":%d,\"int\":%lu,\"ext\":%lu,"
                 "\"tid\":%lu,\"start\":%lu,\"end\":%lu,\"dispatch_id\":%lu,\"kernel_id\":%lu}",
                 (unsigned long) context.handle,
                 (int) r->kind,
                 (int) r->operation,
                 (unsigned long) r->correlation_id.internal,
                 (unsigned long) r->correlation_id.external.value,
                 (unsigned long) r->thread_id,
                 (unsigned long) r->start_timestamp,
                 (unsigned long) r->end_timestamp,
                 (unsigned long) r->dispatch_info.dispatch_id,
                 (unsigned long) r->dispatch_info.kernel_id);
        }
        else if(h->kind == ROCPROFILER_BUFFER_TRACING_MEMORY_COPY)
        {
            const rocprofiler_buffer_tracing_memory_copy_record_t* r = h->payload;
            LINE("{\"t\":\"buf\",\"ctx\":%lu,\"kind\":%d,\"op\":%d,\"int\":%lu,\"ext\":%lu,"
                 "\"tid\":%lu,\"start\":%lu,\"end\":%lu,\"bytes\":%lu}",
                 (unsigned long) context.handle,
                 (int) r->kind,
                 (int) r->operation,
                 (unsigned long) r->correlation_id.internal,
                 (unsigned long) r->correlation_id.external.value,
                 (unsigned long) r->thread_id,
                 (unsigned long) r->start_timestamp,
                 (unsigned long) r->end_timestamp,
                 (unsigned long) r->bytes);
        }
        else if(h->kind == ROCPROFILER_BUFFER_TRACING_CORRELATION_ID_RETIREMENT)
        {
            const rocprofiler_buffer_tracing_correlation_id_retirement_record_t* r = h->payload;
            LINE("{\"t\":\"buf\",\"ctx\":%lu,\"kind\":%d,\"int\":%lu,\"ts\":%lu}",
                 (unsigned long) context.handle,
                 (int) r->kind,
                 (unsigned long) r->internal_correlation_id,
                 (unsigned long) r->timestamp);
        }
        else
        {
            /* Every record starts with its size and kind. */
            const uint64_t* size = h->payload;
            LINE("{\"t\":\"buf\",\"ctx\":%lu,\"kind\":%d,\"size\":%lu}",
                 (unsigned long) context.handle,
                 (int) h->kind,
                 (unsigned long) *size);
        }
    }
}

static void
count_dispatch(rocprofiler_dispatch_counting_service_data_t dispatch,
               rocprofiler_counter_config_id_t*             config,
               rocprofiler_user_data_t*                     user_data,
               void*                                        data)
{
    (void) dispatch, (void) config, (void) user_data, (void) data;
}

static void
count_record(rocprofiler_dispatch_counting_service_data_t dispatch,
             rocprofiler_counter_record_t*                records,
             size_t                                       count,
             rocprofiler_user_data_t                      user_data,
             void*                                        data)
{
    (void) dispatch, (void) records, (void) count, (void) user_data, (void) data;
}

static int
tool_init(rocprofiler_client_finalize_t fini, void* data)
{
    (void) fini, (void) data;
    rocprofiler_thread_id_t tid = 0;
    rocprofiler_timestamp_t now = 0;
    rocprofiler_get_thread_id(&tid);
    rocprofiler_get_timestamp(&now);
    LINE("{\"t\":\"init\",\"tid\":%lu,\"time\":%lu}", (unsigned long) tid, (unsigned long) now);

    for(int i = 0; i < 5; ++i)
        configured("create_context", i, rocprofiler_create_context(&contexts[i]));
    LINE("{\"t\":\"contexts\",\"callback\":%lu,\"buffer\":%lu,\"late\":%lu}",
         (unsigned long) contexts[0].handle,
         (unsigned long) contexts[1].handle,
         (unsigned long) contexts[2].handle);
    for(int i = 0; i < 2; ++i)
        configured("external_correlation_request",
                   i,
                   rocprofiler_configure_external_correlation_id_request_service(
                       contexts[i], NULL, 0, external_request, NULL));

    const char* late_only_env = getenv("RECORD_ALL_LATE_ONLY");
    int         late_only     = late_only_env != NULL && late_only_env[0] == '1';
    for(int k = 1; k < ROCPROFILER_CALLBACK_TRACING_LAST; ++k)
        if(!late_only || k == ROCPROFILER_CALLBACK_TRACING_RUNTIME_INITIALIZATION)
        configured("callback_tracing",
                   k,
                   rocprofiler_configure_callback_tracing_service(
                       contexts[0], (rocprofiler_callback_tracing_kind_t) k, NULL, 0, on_callback,
                       NULL));

    for(int b = 0; b < 3; ++b)
        configured("create_buffer",
                   b,
                   rocprofiler_create_buffer(contexts[b == 2 ? 2 : (b == 0 ? 1 : 3)],
                                             1 << 16,
                                             1 << 15,
                                             ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                             on_buffer,
                                             NULL,
                                             &buffers[b]));
    for(int k = 1; k < ROCPROFILER_BUFFER_TRACING_LAST && !late_only; ++k)
        configured("buffer_tracing",
                   k,
                   rocprofiler_configure_buffer_tracing_service(
                       contexts[1], (rocprofiler_buffer_tracing_kind_t) k, NULL, 0, buffers[0]));

    configured("late_buffer_tracing",
               ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
               rocprofiler_configure_buffer_tracing_service(
                   contexts[2], ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH, NULL, 0, buffers[2]));
    configured("late_buffer_tracing",
               ROCPROFILER_BUFFER_TRACING_MEMORY_COPY,
               rocprofiler_configure_buffer_tracing_service(
                   contexts[2], ROCPROFILER_BUFFER_TRACING_MEMORY_COPY, NULL, 0, buffers[2]));

    configured("buffer_dispatch_counting",
               0,
               rocprofiler_configure_buffer_dispatch_counting_service(
                   contexts[3], buffers[1], count_dispatch, NULL));
    configured("callback_dispatch_counting",
               0,
               rocprofiler_configure_callback_dispatch_counting_service(
                   contexts[4], count_dispatch, NULL, count_record, NULL));

    for(int b = 0; b < 3; ++b)
    {
        rocprofiler_callback_thread_t thread;
        configured("create_callback_thread", b, rocprofiler_create_callback_thread(&thread));
        configured("assign_callback_thread",
                   b,
                   rocprofiler_assign_callback_thread(buffers[b], thread));
    }

    rocprofiler_user_data_t pushed = {.value = (uint64_t) getppid()};
    for(int i = 0; i < (late_only ? 1 : 2); ++i)
    {
        configured("push_external_correlation_id",
                   i,
                   rocprofiler_push_external_correlation_id(contexts[i], tid, pushed));
        configured("start_context", i, rocprofiler_start_context(contexts[i]));
    }
    return 0;
}

static void
tool_fini(void* data)
{
    (void) data;
    for(int i = 0; i < 3; ++i)
    {
        int active = 0;
        rocprofiler_context_is_active(contexts[i], &active);
        if(active) rocprofiler_stop_context(contexts[i]);
    }
    for(int b = 0; b < 3; ++b)
        rocprofiler_flush_buffer(buffers[b]);

    rocprofiler_thread_id_t tid = 0;
    rocprofiler_timestamp_t now = 0;
    rocprofiler_get_thread_id(&tid);
    rocprofiler_get_timestamp(&now);
    rocprofiler_user_data_t popped[2] = {{.value = 0}, {.value = 0}};
    for(int i = 0; i < 2; ++i)
        rocprofiler_pop_external_correlation_id(contexts[i], tid, &popped[i]);
    LINE("{\"t\":\"fini\",\"tid\":%lu,\"time\":%lu,\"popped\":[%lu,%lu],\"pushed\":%lu}",
         (unsigned long) tid,
         (unsigned long) now,
         (unsigned long) popped[0].value,
         (unsigned long) popped[1].value,
         (unsigned long) getppid());
    fclose(out);
    out = NULL;
}

rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t                 version,
                      const char*              runtime_version,
                      uint32_t                 priority,
                      rocprofiler_client_id_t* id)
{
    (void) version, (void) runtime_version, (void) priority;
    id->name              = "record_all";
    const char* path      = getenv("RECORD_ALL_OUT");
    out                   = fopen(path ? path : "record_all.jsonl", "w");
    if(!out) return NULL;
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, NULL};
    return &result;
}
