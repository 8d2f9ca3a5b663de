// external_correlation.cpp -- external correlation ids: the request service asks the tool
// for a value when a HIP runtime call starts and when a kernel dispatch is enqueued; the
// tool answers one derived from the internal correlation id and the request's kind, and
// checks that every buffered HIP and dispatch record carries exactly that answer. While it
// initializes it also pushes an external id for its own thread and pops it again.
//
// What it reports at finalization (tool_report.hpp):
//
//   requests       requests answered (hip_requests + dispatch_requests)
//   requests_bad   requests of a kind it did not ask for, for another context, of a
//                  dispatch whose operation is not ENQUEUE, or made on a thread other than
//                  the one the request names
//   none_ops       HIP requests whose operation is NONE (-1: a runtime function the SDK's
//                  list lacks); answered like the others
//   hip, dispatches  buffered records of each kind
//   ext_ok, ext_bad  records whose external id is / is not the answer for their kind and
//                  internal id
//   pushpop        1 when rocprofiler_pop_external_correlation_id returned the value pushed
//                  on the initializing thread (rocprofiler_get_thread_id)
//   init_main      1 when the tool was initialized on the process's main thread
//   drops          drop count given to the buffer callback (LOSSLESS: 0)
//
// Build:  see CMakeLists.txt
// Run:    export ROCP_TOOL_LIBRARIES=$PWD/libexternal_correlation.so
//         export ROCWASM_TOOL_OUT=$PWD/tools.txt
//         rocwasm run --sim --kernel-trace -- ./app
//         (without ROCWASM_TOOL_OUT the line goes to standard error)
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include "tool_report.hpp"

#include <atomic>
#include <cstdint>

#include <unistd.h>

namespace
{
constexpr const char* tool_name = "external_correlation";

// What the tool pushes around its initialization.
constexpr uint64_t pushed_value = 0x5eed'0000'0000'0001ULL;

struct tool_state
{
    tool_report::report      result{tool_name};
    rocprofiler_context_id_t context = {0};
    rocprofiler_buffer_id_t  buffer  = {0};

    std::atomic<uint64_t> hip_requests{0}, dispatch_requests{0}, requests_bad{0}, hip{0},
        dispatches{0}, ext_ok{0}, ext_bad{0}, drops{0}, pushpop{0}, init_main{0}, none_ops{0};
};

// Never destroyed: the library's static destructors may run before the profiler
// finalizes the tool.
tool_state* state = nullptr;

/// The answer for an operation of request kind `kind` with internal id `internal`: the
/// kind in the top byte, so a record carrying another kind's answer is caught too.
uint64_t
answer_for(rocprofiler_external_correlation_id_request_kind_t kind, uint64_t internal)
{
    return (static_cast<uint64_t>(kind) << 56) | (internal & 0x00ff'ffff'ffff'ffffULL);
}

int
on_request(rocprofiler_thread_id_t                            thread_id,
           rocprofiler_context_id_t                           context_id,
           rocprofiler_external_correlation_id_request_kind_t kind,
           rocprofiler_tracing_operation_t                    operation,
           uint64_t                                           internal_corr_id_value,
           rocprofiler_user_data_t*                           external_corr_id_value,
           void*                                              data)
{
    (void) data;
    rocprofiler_thread_id_t tid = 0;
    rocprofiler_get_thread_id(&tid);
    bool ok = context_id.handle == state->context.handle && tid == thread_id;
    if(kind == ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HIP_RUNTIME_API)
    {
        ++state->hip_requests;
        if(operation < 0) ++state->none_ops;
    }
    else if(kind == ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_KERNEL_DISPATCH)
    {
        ++state->dispatch_requests;
        ok = ok && operation == ROCPROFILER_KERNEL_DISPATCH_ENQUEUE;
    }
    else
    {
        ok = false;
    }
    if(!ok) ++state->requests_bad;
    external_corr_id_value->value = answer_for(kind, internal_corr_id_value);
    return 0;  // 0: use the value just set
}

void
on_records(rocprofiler_context_id_t      context,
           rocprofiler_buffer_id_t       buffer,
           rocprofiler_record_header_t** headers,
           size_t                        num_headers,
           void*                         user_data,
           uint64_t                      drop_count)
{
    (void) context;
    (void) buffer;
    (void) user_data;
    state->drops += drop_count;
    for(size_t i = 0; i < num_headers; ++i)
    {
        const auto* header = headers[i];
        if(header->category != ROCPROFILER_BUFFER_CATEGORY_TRACING) continue;
        uint64_t want = 0, got = 0;
        if(header->kind == ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API)
        {
            const auto* r =
                static_cast<const rocprofiler_buffer_tracing_hip_api_record_t*>(header->payload);
            ++state->hip;
            want = answer_for(ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HIP_RUNTIME_API,
                              r->correlation_id.internal);
            got  = r->correlation_id.external.value;
        }
        else if(header->kind == ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH)
        {
            const auto* r =
                static_cast<const rocprofiler_buffer_tracing_kernel_dispatch_record_t*>(
                    header->payload);
            ++state->dispatches;
            want = answer_for(ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_KERNEL_DISPATCH,
                              r->correlation_id.internal);
            got  = r->correlation_id.external.value;
        }
        else
        {
            continue;
        }
        if(got == want)
            ++state->ext_ok;
        else
            ++state->ext_bad;
    }
}

bool
set_up()
{
    auto& r = state->result;
    if(!r.check(rocprofiler_create_context(&state->context), "rocprofiler_create_context"))
        return false;

    // Push an external id for this thread now and pop it when initialization is done.
    rocprofiler_thread_id_t tid = 0;
    if(!r.check(rocprofiler_get_thread_id(&tid), "rocprofiler_get_thread_id")) return false;
    state->init_main = tid == static_cast<rocprofiler_thread_id_t>(::getpid()) ? 1 : 0;
    auto pushed      = rocprofiler_user_data_t{};
    pushed.value     = pushed_value;
    if(!r.check(rocprofiler_push_external_correlation_id(state->context, tid, pushed),
                "rocprofiler_push_external_correlation_id"))
        return false;

    if(!r.check(rocprofiler_create_buffer(state->context,
                                          64 * 1024,
                                          48 * 1024,
                                          ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                          on_records,
                                          nullptr,
                                          &state->buffer),
                "rocprofiler_create_buffer"))
        return false;
    for(auto kind :
        {ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API, ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH})
    {
        if(!r.check(rocprofiler_configure_buffer_tracing_service(
                        state->context, kind, nullptr, 0, state->buffer),
                    "rocprofiler_configure_buffer_tracing_service"))
            return false;
    }
    rocprofiler_external_correlation_id_request_kind_t kinds[] = {
        ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_HIP_RUNTIME_API,
        ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_KERNEL_DISPATCH};
    if(!r.check(rocprofiler_configure_external_correlation_id_request_service(
                    state->context, kinds, sizeof(kinds) / sizeof(kinds[0]), on_request, nullptr),
                "rocprofiler_configure_external_correlation_id_request_service"))
        return false;

    auto popped  = rocprofiler_user_data_t{};
    popped.value = 0;
    if(!r.check(rocprofiler_pop_external_correlation_id(state->context, tid, &popped),
                "rocprofiler_pop_external_correlation_id"))
        return false;
    state->pushpop = popped.value == pushed_value ? 1 : 0;

    return r.check(rocprofiler_start_context(state->context), "rocprofiler_start_context");
}

int
tool_init(rocprofiler_client_finalize_t fini_func, void* tool_data)
{
    (void) fini_func;
    (void) tool_data;
    return set_up() ? 0 : -1;
}

void
tool_fini(void* tool_data)
{
    (void) tool_data;
    auto& r = state->result;
    if(state->buffer.handle != 0)
        r.check(rocprofiler_flush_buffer(state->buffer), "rocprofiler_flush_buffer");

    const uint64_t requests = state->hip_requests + state->dispatch_requests;
    r.expect(state->hip > 0 && state->dispatches > 0, "records");
    r.expect(state->ext_bad == 0, "ext_bad==0");
    r.expect(state->ext_ok == state->hip + state->dispatches, "ext_ok==hip+dispatches");
    r.expect(state->requests_bad == 0, "requests_bad==0");
    r.expect(state->hip_requests >= state->hip && state->dispatch_requests >= state->dispatches,
             "a_request_per_record");
    r.expect(state->pushpop == 1, "pushpop");
    r.expect(state->drops == 0, "drops==0");

    r.write({{"requests", requests},
             {"hip_requests", state->hip_requests},
             {"dispatch_requests", state->dispatch_requests},
             {"requests_bad", state->requests_bad},
             {"hip", state->hip},
             {"dispatches", state->dispatches},
             {"ext_ok", state->ext_ok},
             {"ext_bad", state->ext_bad},
             {"pushpop", state->pushpop},
             {"init_main", state->init_main},
             {"none_ops", state->none_ops},
             {"drops", state->drops}});
}
}  // namespace

extern "C" rocprofiler_tool_configure_result_t*
rocprofiler_configure(uint32_t                 version,
                      const char*              runtime_version,
                      uint32_t                 priority,
                      rocprofiler_client_id_t* id)
{
    (void) version;
    (void) runtime_version;
    (void) priority;
    id->name = tool_name;
    state    = new tool_state{};

    static auto result = rocprofiler_tool_configure_result_t{
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, nullptr};
    return &result;
}
