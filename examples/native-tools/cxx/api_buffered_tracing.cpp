// api_buffered_tracing.cpp -- buffered tracing of HIP runtime calls, kernel dispatches and
// memory copies into one LOSSLESS buffer that a callback thread of its own serves.
//
// What it checks while records arrive, and reports at finalization (tool_report.hpp):
//
//   records      records delivered (hip + dispatches + copies)
//   hip, dispatches, copies   records of each kind
//   launches     HIP records whose operation is named hipLaunchKernel (name table of
//                rocprofiler::sdk::get_buffer_tracing_names())
//   drops        the drop count the buffer callback was given (LOSSLESS: must stay 0)
//   deliveries   buffer callbacks; threads = distinct threads they ran on (must be 1,
//                the created callback thread, which is not the thread that initialized)
//   bad          malformed records: header hash, record size, start > end, operation,
//                empty grid or workgroup, zero-byte copy, a kind not configured
//   unnamed      records whose kind or operation has no name in the name table
//   none_ops     records whose operation is the kind's NONE (an operation of the runtime
//                that the SDK's list lacks; -1 for API kinds, 0 for the others)
//   unordered    deliveries whose records are not in completion (end time) order
//   precreate, postcreate   rocprofiler_at_internal_thread_create notifications
//
// Build:  see CMakeLists.txt
// Run:    export ROCP_TOOL_LIBRARIES=$PWD/libapi_buffered_tracing.so
//         export ROCWASM_TOOL_OUT=$PWD/tools.txt
//         rocwasm run --sim --kernel-trace -- ./app
//         (without ROCWASM_TOOL_OUT the line goes to standard error)
#include <rocprofiler-sdk/cxx/name_info.hpp>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include "tool_report.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace
{
constexpr const char* tool_name = "api_buffered_tracing";

// 4 KiB halves and a 2 KiB watermark: a run fills the buffer many times over, so the
// LOSSLESS policy is exercised (producers wait rather than lose records).
constexpr size_t buffer_size      = 4096;
constexpr size_t buffer_watermark = 2048;

struct tool_state
{
    tool_report::report          result{tool_name};
    rocprofiler_context_id_t     context  = {0};
    rocprofiler_buffer_id_t      buffer   = {0};
    rocprofiler_thread_id_t      init_tid = 0;
    rocprofiler::sdk::buffer_name_info names = {};

    std::atomic<uint64_t> hip{0}, dispatches{0}, copies{0}, launches{0}, drops{0},
        deliveries{0}, bad{0}, unnamed{0}, none_ops{0}, unordered{0}, precreate{0},
        postcreate{0};

    std::mutex                        thread_mutex = {};
    std::set<rocprofiler_thread_id_t> delivery_threads = {};
};

// Never destroyed: the library's static destructors may run before the profiler
// finalizes the tool.
tool_state* state = nullptr;

/// The operation's name, empty when the table has none.
std::string_view
operation_name(rocprofiler_buffer_tracing_kind_t kind, rocprofiler_tracing_operation_t op)
{
    const auto k = static_cast<size_t>(kind);
    if(op < 0 || k >= state->names.size()) return {};
    const auto& entry = state->names[k];
    const auto  o     = static_cast<size_t>(op);
    return o < entry.operations.size() ? entry.operations[o] : std::string_view{};
}

bool
kind_named(rocprofiler_buffer_tracing_kind_t kind)
{
    const auto k = static_cast<size_t>(kind);
    return k < state->names.size() && !state->names[k].name.empty();
}

/// Checks one record of kind `Record`; returns its end timestamp.
template <typename Record>
uint64_t
check_common(const Record* r, rocprofiler_buffer_tracing_kind_t kind)
{
    if(r->size != sizeof(Record) || r->start_timestamp > r->end_timestamp ||
       static_cast<rocprofiler_buffer_tracing_kind_t>(r->kind) != kind)
        ++state->bad;
    const bool api = kind == ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API;
    if(r->operation == (api ? -1 : 0))
        ++state->none_ops;
    else if(!kind_named(kind) || operation_name(kind, r->operation).empty())
        ++state->unnamed;
    return r->end_timestamp;
}

void
on_records(rocprofiler_context_id_t      context,
           rocprofiler_buffer_id_t       buffer,
           rocprofiler_record_header_t** headers,
           size_t                        num_headers,
           void*                         user_data,
           uint64_t                      drop_count)
{
    (void) user_data;
    // Nothing may propagate into the profiler: a C++ exception through a C callback
    // would terminate the application.
    try
    {
        ++state->deliveries;
        state->drops += drop_count;
        if(context.handle != state->context.handle || buffer.handle != state->buffer.handle)
            ++state->bad;
        rocprofiler_thread_id_t tid = 0;
        if(rocprofiler_get_thread_id(&tid) == ROCPROFILER_STATUS_SUCCESS)
        {
            auto lock = std::lock_guard<std::mutex>{state->thread_mutex};
            state->delivery_threads.insert(tid);
        }
        if(num_headers > 0 && headers == nullptr)
        {
            ++state->bad;
            return;
        }

        uint64_t last_end = 0;
        bool     ordered  = true;
        for(size_t i = 0; i < num_headers; ++i)
        {
            const auto* header = headers[i];
            if(header == nullptr || header->payload == nullptr ||
               header->hash !=
                   rocprofiler_record_header_compute_hash(header->category, header->kind) ||
               header->category != ROCPROFILER_BUFFER_CATEGORY_TRACING)
            {
                ++state->bad;
                continue;
            }
            const auto kind = static_cast<rocprofiler_buffer_tracing_kind_t>(header->kind);
            uint64_t   end  = 0;
            if(kind == ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API)
            {
                const auto* r = static_cast<const rocprofiler_buffer_tracing_hip_api_record_t*>(
                    header->payload);
                ++state->hip;
                end = check_common(r, kind);
                if(operation_name(kind, r->operation) == "hipLaunchKernel") ++state->launches;
            }
            else if(kind == ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH)
            {
                const auto* r =
                    static_cast<const rocprofiler_buffer_tracing_kernel_dispatch_record_t*>(
                        header->payload);
                ++state->dispatches;
                end             = check_common(r, kind);
                const auto& d   = r->dispatch_info;
                if(r->operation != ROCPROFILER_KERNEL_DISPATCH_COMPLETE ||
                   d.size != sizeof(rocprofiler_kernel_dispatch_info_t) || d.grid_size.x == 0 ||
                   d.workgroup_size.x == 0)
                    ++state->bad;
            }
            else if(kind == ROCPROFILER_BUFFER_TRACING_MEMORY_COPY)
            {
                const auto* r = static_cast<const rocprofiler_buffer_tracing_memory_copy_record_t*>(
                    header->payload);
                ++state->copies;
                end = check_common(r, kind);
                if(r->bytes == 0 ||
                   operation_name(kind, r->operation).substr(0, 12) != "MEMORY_COPY_")
                    ++state->bad;
            }
            else
            {
                ++state->bad;
                continue;
            }
            if(end < last_end) ordered = false;
            last_end = end;
        }
        if(!ordered) ++state->unordered;
    } catch(...)
    {
        state->result.fail("exception_in_buffer_callback");
    }
}

void
thread_precreate(rocprofiler_runtime_library_t lib, void* data)
{
    (void) data;
    if(lib == ROCPROFILER_LIBRARY) ++state->precreate;
}

void
thread_postcreate(rocprofiler_runtime_library_t lib, void* data)
{
    (void) data;
    if(lib == ROCPROFILER_LIBRARY) ++state->postcreate;
}

/// Every step of the set-up; false (the failure remembered) at the first error.
bool
set_up()
{
    auto& r = state->result;
    rocprofiler_get_thread_id(&state->init_tid);

    state->names = rocprofiler::sdk::get_buffer_tracing_names();
    if(!kind_named(ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API) ||
       state->names.at(ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API) != "HIP_RUNTIME_API" ||
       operation_name(ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API,
                      ROCPROFILER_HIP_RUNTIME_API_ID_hipLaunchKernel) != "hipLaunchKernel")
    {
        r.fail("name_table");
        return false;
    }

    if(!r.check(rocprofiler_create_context(&state->context), "rocprofiler_create_context"))
        return false;
    if(!r.check(rocprofiler_create_buffer(state->context,
                                          buffer_size,
                                          buffer_watermark,
                                          ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                          on_records,
                                          nullptr,
                                          &state->buffer),
                "rocprofiler_create_buffer"))
        return false;

    auto thread = rocprofiler_callback_thread_t{};
    if(!r.check(rocprofiler_create_callback_thread(&thread), "rocprofiler_create_callback_thread"))
        return false;
    if(!r.check(rocprofiler_assign_callback_thread(state->buffer, thread),
                "rocprofiler_assign_callback_thread"))
        return false;

    for(auto kind : {ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API,
                     ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
                     ROCPROFILER_BUFFER_TRACING_MEMORY_COPY})
    {
        if(!r.check(rocprofiler_configure_buffer_tracing_service(
                        state->context, kind, nullptr, 0, state->buffer),
                    "rocprofiler_configure_buffer_tracing_service"))
            return false;
    }

    int valid = 0;
    if(!r.check(rocprofiler_context_is_valid(state->context, &valid),
                "rocprofiler_context_is_valid"))
        return false;
    if(valid == 0)
    {
        r.fail("context_not_valid");
        return false;
    }
    return r.check(rocprofiler_start_context(state->context), "rocprofiler_start_context");
}

int
tool_init(rocprofiler_client_finalize_t fini_func, void* tool_data)
{
    (void) fini_func;
    (void) tool_data;
    try
    {
        // Non-zero tells the profiler the tool gave up; it still finalizes the tool,
        // which then writes its FAIL line.
        return set_up() ? 0 : -1;
    } catch(...)
    {
        state->result.fail("exception_in_init");
        return -1;
    }
}

void
tool_fini(void* tool_data)
{
    (void) tool_data;
    auto& r = state->result;
    try
    {
        if(state->buffer.handle != 0)
            r.check(rocprofiler_flush_buffer(state->buffer), "rocprofiler_flush_buffer");

        size_t                  threads   = 0;
        rocprofiler_thread_id_t delivered = 0;
        {
            auto lock = std::lock_guard<std::mutex>{state->thread_mutex};
            threads   = state->delivery_threads.size();
            if(threads > 0) delivered = *state->delivery_threads.begin();
        }
        const uint64_t records = state->hip + state->dispatches + state->copies;
        r.expect(records > 0, "records>0");
        r.expect(state->drops == 0, "drops==0");
        r.expect(state->bad == 0, "bad==0");
        r.expect(state->unnamed == 0, "unnamed==0");
        r.expect(state->unordered == 0, "unordered==0");
        r.expect(threads == 1 && delivered != state->init_tid, "one_callback_thread");
        r.expect(state->precreate >= 1 && state->precreate == state->postcreate,
                 "thread_notifications");

        r.write({{"records", records},
                 {"hip", state->hip},
                 {"dispatches", state->dispatches},
                 {"copies", state->copies},
                 {"launches", state->launches},
                 {"drops", state->drops},
                 {"deliveries", state->deliveries},
                 {"threads", threads},
                 {"bad", state->bad},
                 {"unnamed", state->unnamed},
                 {"none_ops", state->none_ops},
                 {"unordered", state->unordered},
                 {"precreate", state->precreate},
                 {"postcreate", state->postcreate}});
    } catch(...)
    {
        r.fail("exception_in_fini");
        r.write({});
    }
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
    (void) priority;  // several tools share the process: every priority is welcome
    id->name = tool_name;
    state    = new tool_state{};

    // Registered now, before any tool initializes, so the callback thread created in
    // tool_init is announced.
    state->result.check(rocprofiler_at_internal_thread_create(thread_precreate,
                                                              thread_postcreate,
                                                              ROCPROFILER_LIBRARY |
                                                                  ROCPROFILER_HIP_LIBRARY |
                                                                  ROCPROFILER_HSA_LIBRARY |
                                                                  ROCPROFILER_MARKER_LIBRARY,
                                                              nullptr),
                        "rocprofiler_at_internal_thread_create");

    static auto result = rocprofiler_tool_configure_result_t{
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, nullptr};
    return &result;
}
