// code_object_tracing.cpp -- code-object callbacks: code objects loaded onto and unloaded
// from agents (ROCPROFILER_CODE_OBJECT_LOAD, phases LOAD / UNLOAD) and the kernel symbols
// they hold (ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER). The kernel names it
// records are used to name the kernel dispatches it buffers (the buffer is served by the
// profiler's default callback thread), the way a tool names its kernels.
//
// What it checks, and reports at finalization (tool_report.hpp):
//
//   loads, unloads         code-object LOAD / UNLOAD callbacks
//   symbols, symbol_unloads  kernel-symbol LOAD / UNLOAD callbacks
//   bad                    payloads of the wrong size, code objects without an id or URI,
//                          symbols without a name, unloads of unknown code objects
//   orphans                symbols whose code object was not reported loaded first
//   kernels                distinct kernel names (demangled, up to the parameter list)
//   names                  those names, comma-separated
//   dispatches, unresolved kernel dispatches, and those whose kernel_id no registered
//                          symbol has
//
// Build:  see CMakeLists.txt
// Run:    export ROCP_TOOL_LIBRARIES=$PWD/libcode_object_tracing.so
//         export ROCWASM_TOOL_OUT=$PWD/tools.txt
//         rocwasm run --sim --kernel-trace -- ./app
//         (without ROCWASM_TOOL_OUT the line goes to standard error)
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include "tool_report.hpp"

#include <cxxabi.h>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace
{
constexpr const char* tool_name = "code_object_tracing";

using code_object_data_t   = rocprofiler_callback_tracing_code_object_load_data_t;
using kernel_symbol_data_t = rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t;

struct tool_state
{
    tool_report::report      result{tool_name};
    rocprofiler_context_id_t context = {0};
    rocprofiler_buffer_id_t  buffer  = {0};

    std::atomic<uint64_t> loads{0}, unloads{0}, symbols{0}, symbol_unloads{0}, bad{0},
        orphans{0}, dispatches{0}, unresolved{0};

    // Guarded by `mutex`: code-object callbacks arrive on the application's threads,
    // dispatch records on the callback thread.
    std::mutex                                      mutex        = {};
    std::unordered_set<uint64_t>                    code_objects = {};
    std::unordered_map<rocprofiler_kernel_id_t, std::string> kernels = {};
    std::set<std::string>                           names        = {};
};

// Never destroyed: the library's static destructors may run before the profiler
// finalizes the tool.
tool_state* state = nullptr;

/// `_Z10vector_addPKfS0_Pfi.kd` -> `vector_add`: without the descriptor suffix,
/// demangled, without the parameter list.
std::string
short_name(const char* symbol)
{
    auto name = std::string{symbol};
    if(name.size() > 3 && name.compare(name.size() - 3, 3, ".kd") == 0)
        name.resize(name.size() - 3);
    int   status    = 0;
    char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if(status == 0 && demangled) name = demangled;
    std::free(demangled);
    if(auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
    // a template's return type ("void foo<unsigned int>") is not part of the name
    if(auto space = name.rfind(' ', name.find('<')); space != std::string::npos)
        name.erase(0, space + 1);
    return name;
}

void
on_code_object(rocprofiler_callback_tracing_record_t record,
               rocprofiler_user_data_t*              user_data,
               void*                                 callback_data)
{
    (void) user_data;
    (void) callback_data;
    try
    {
        if(record.kind != ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT || record.payload == nullptr)
        {
            ++state->bad;
            return;
        }
        const bool load = record.phase == ROCPROFILER_CALLBACK_PHASE_LOAD;
        if(record.operation == ROCPROFILER_CODE_OBJECT_LOAD)
        {
            const auto* data = static_cast<const code_object_data_t*>(record.payload);
            if(data->size != sizeof(code_object_data_t) || data->code_object_id == 0 ||
               data->uri == nullptr || data->uri[0] == '\0')
                ++state->bad;
            if(load)
            {
                ++state->loads;
                auto lock = std::lock_guard<std::mutex>{state->mutex};
                state->code_objects.insert(data->code_object_id);
            }
            else
            {
                ++state->unloads;
                // Deliver what is buffered while the names are still known (BUSY: a
                // delivery on this very thread is under way).
                auto status = rocprofiler_flush_buffer(state->buffer);
                if(status != ROCPROFILER_STATUS_ERROR_BUFFER_BUSY)
                    state->result.check(status, "rocprofiler_flush_buffer");
                auto lock = std::lock_guard<std::mutex>{state->mutex};
                if(state->code_objects.erase(data->code_object_id) == 0) ++state->bad;
            }
        }
        else if(record.operation == ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER)
        {
            const auto* data = static_cast<const kernel_symbol_data_t*>(record.payload);
            if(data->size != sizeof(kernel_symbol_data_t) || data->kernel_name == nullptr ||
               data->kernel_name[0] == '\0')
            {
                ++state->bad;
                return;
            }
            if(load)
            {
                ++state->symbols;
                auto name = short_name(data->kernel_name);
                auto lock = std::lock_guard<std::mutex>{state->mutex};
                if(state->code_objects.count(data->code_object_id) == 0) ++state->orphans;
                state->kernels[data->kernel_id] = name;
                state->names.insert(name);
            }
            else
            {
                ++state->symbol_unloads;
                auto status = rocprofiler_flush_buffer(state->buffer);
                if(status != ROCPROFILER_STATUS_ERROR_BUFFER_BUSY)
                    state->result.check(status, "rocprofiler_flush_buffer");
                auto lock = std::lock_guard<std::mutex>{state->mutex};
                state->kernels.erase(data->kernel_id);
            }
        }
        // HOST_KERNEL_SYMBOL_REGISTER and operations of later SDKs: not counted.
    } catch(...)
    {
        state->result.fail("exception_in_code_object_callback");
    }
}

void
on_dispatches(rocprofiler_context_id_t      context,
              rocprofiler_buffer_id_t       buffer,
              rocprofiler_record_header_t** headers,
              size_t                        num_headers,
              void*                         user_data,
              uint64_t                      drop_count)
{
    (void) context;
    (void) buffer;
    (void) user_data;
    (void) drop_count;
    try
    {
        for(size_t i = 0; i < num_headers; ++i)
        {
            const auto* header = headers[i];
            if(header->category != ROCPROFILER_BUFFER_CATEGORY_TRACING ||
               header->kind != ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH)
                continue;
            const auto* r =
                static_cast<const rocprofiler_buffer_tracing_kernel_dispatch_record_t*>(
                    header->payload);
            ++state->dispatches;
            auto lock = std::lock_guard<std::mutex>{state->mutex};
            if(state->kernels.count(r->dispatch_info.kernel_id) == 0) ++state->unresolved;
        }
    } catch(...)
    {
        state->result.fail("exception_in_buffer_callback");
    }
}

bool
set_up()
{
    auto& r = state->result;
    if(!r.check(rocprofiler_create_context(&state->context), "rocprofiler_create_context"))
        return false;
    if(!r.check(rocprofiler_configure_callback_tracing_service(
                    state->context,
                    ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT,
                    nullptr,
                    0,
                    on_code_object,
                    nullptr),
                "rocprofiler_configure_callback_tracing_service"))
        return false;
    if(!r.check(rocprofiler_create_buffer(state->context,
                                          64 * 1024,
                                          48 * 1024,
                                          ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                          on_dispatches,
                                          nullptr,
                                          &state->buffer),
                "rocprofiler_create_buffer"))
        return false;
    if(!r.check(rocprofiler_configure_buffer_tracing_service(
                    state->context,
                    ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
                    nullptr,
                    0,
                    state->buffer),
                "rocprofiler_configure_buffer_tracing_service"))
        return false;
    return r.check(rocprofiler_start_context(state->context), "rocprofiler_start_context");
}

int
tool_init(rocprofiler_client_finalize_t fini_func, void* tool_data)
{
    (void) fini_func;
    (void) tool_data;
    try
    {
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

        std::string names;
        size_t      kernels = 0;
        {
            auto lock = std::lock_guard<std::mutex>{state->mutex};
            kernels   = state->names.size();
            for(const auto& n : state->names)
                names += (names.empty() ? "" : ",") + n;
        }
        r.expect(state->loads > 0, "loads>0");
        r.expect(state->symbols > 0, "symbols>0");
        r.expect(state->bad == 0, "bad==0");
        r.expect(state->orphans == 0, "orphans==0");
        r.expect(state->unresolved == 0, "unresolved==0");

        r.write({{"loads", state->loads},
                 {"unloads", state->unloads},
                 {"symbols", state->symbols},
                 {"symbol_unloads", state->symbol_unloads},
                 {"kernels", kernels},
                 {"dispatches", state->dispatches},
                 {"unresolved", state->unresolved},
                 {"bad", state->bad},
                 {"orphans", state->orphans}},
                {{"names", names}});
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
    (void) priority;
    id->name = tool_name;
    state    = new tool_state{};

    static auto result = rocprofiler_tool_configure_result_t{
        sizeof(rocprofiler_tool_configure_result_t), tool_init, tool_fini, nullptr};
    return &result;
}
