/*
 * The bench's native rocprofiler-sdk tool: buffered tracing of the HIP
 * runtime API into a 1 MiB LOSSLESS buffer (the Wasm path's rows use the
 * same buffer), counting the records it is delivered. At finalization it
 * prints `native-bench-tool: records=N drops=N` on standard error, so the
 * bench can check that it traced.
 *
 * cc -O2 -shared -fPIC native_tool.c -I capi/include -o libnative_bench_tool.so
 */
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include <stdatomic.h>
#include <stdio.h>

static rocprofiler_context_id_t ctx;
static rocprofiler_buffer_id_t buffer;
static atomic_ulong records, drops;

static void on_records(rocprofiler_context_id_t c, rocprofiler_buffer_id_t b,
                       rocprofiler_record_header_t** headers, size_t n, void* data,
                       uint64_t dropped) {
    (void) c; (void) b; (void) headers; (void) data;
    atomic_fetch_add(&records, n);
    atomic_fetch_add(&drops, dropped);
}

static int init(rocprofiler_client_finalize_t fini, void* data) {
    (void) fini; (void) data;
    if (rocprofiler_create_context(&ctx) != ROCPROFILER_STATUS_SUCCESS ||
        rocprofiler_create_buffer(ctx, 1 << 20, 1 << 19, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                  on_records, NULL, &buffer) != ROCPROFILER_STATUS_SUCCESS ||
        rocprofiler_configure_buffer_tracing_service(
            ctx, ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API, NULL, 0, buffer) !=
            ROCPROFILER_STATUS_SUCCESS ||
        rocprofiler_start_context(ctx) != ROCPROFILER_STATUS_SUCCESS) {
        fprintf(stderr, "native-bench-tool: configuration failed\n");
        return -1;
    }
    return 0;
}

static void fini(void* data) {
    (void) data;
    rocprofiler_flush_buffer(buffer);
    fprintf(stderr, "native-bench-tool: records=%lu drops=%lu\n", atomic_load(&records),
            atomic_load(&drops));
}

rocprofiler_tool_configure_result_t* rocprofiler_configure(uint32_t version, const char* rt,
                                                           uint32_t priority,
                                                           rocprofiler_client_id_t* id) {
    (void) version; (void) rt; (void) priority;
    id->name = "native-bench-tool";
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), init, fini, NULL};
    return &result;
}
