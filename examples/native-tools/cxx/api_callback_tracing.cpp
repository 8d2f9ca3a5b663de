// api_callback_tracing.cpp -- callback tracing of HIP runtime calls: a callback at ENTER
// and at EXIT of every call on the calling thread, per-call data kept in the
// rocprofiler_user_data_t between the two, and the call's arguments iterated at EXIT.
//
// What it checks, and reports at finalization (tool_report.hpp):
//
//   enter, exit    callbacks of each phase (equal once the application is done)
//   udata_bad      EXIT callbacks whose user data is not what ENTER stored for that call
//   unbalanced     EXIT callbacks on a thread with no call open (per-thread depth)
//   tid_bad        callbacks whose record.thread_id is not the calling thread's id
//   payload_bad    callbacks without a rocprofiler_callback_tracing_hip_api_data_t
//                  of the right size
//   args           arguments iterated (rocprofiler_iterate_callback_tracing_kind_operation_args)
//   args_bad       arguments out of order or without type, name or value text
//   iterate_errors iterations that did not return ROCPROFILER_STATUS_SUCCESS
//   mallocs        EXITs of hipMalloc; malloc_args_ok = those whose arguments were
//                  exactly `ptr` and `size` with a size > 0 and whose return value was 0
//   launches       EXITs of hipLaunchKernel that had arguments
//   none_ops       callbacks whose operation is NONE (-1: a runtime function the SDK's
//                  list lacks); they have no name and are otherwise counted as usual
//
// Argument values come as text (`arg_value_str`); rocwasm passes no `arg_value_addr`
// (NULL), so this tool never dereferences it.
//
// Build:  see CMakeLists.txt
// Run:    export ROCP_TOOL_LIBRARIES=$PWD/libapi_callback_tracing.so
//         export ROCWASM_TOOL_OUT=$PWD/tools.txt
//         rocwasm run --sim --kernel-trace -- ./app
//         (without ROCWASM_TOOL_OUT the line goes to standard error)
#include <rocprofiler-sdk/cxx/name_info.hpp>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include "tool_report.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace
{
constexpr const char* tool_name = "api_callback_tracing";

/// What ENTER leaves for EXIT of the same call, through user_data->ptr.
struct call_data
{
    uint64_t                        correlation_id = 0;
    rocprofiler_tracing_operation_t operation      = 0;
    rocprofiler_timestamp_t         enter_time     = 0;
};

struct tool_state
{
    tool_report::report                  result{tool_name};
    rocprofiler_context_id_t             context = {0};
    rocprofiler::sdk::callback_name_info names   = {};

    std::atomic<uint64_t> enter{0}, exit{0}, udata_bad{0}, unbalanced{0}, tid_bad{0},
        payload_bad{0}, args{0}, args_bad{0}, iterate_errors{0}, mallocs{0},
        malloc_args_ok{0}, launches{0}, none_ops{0};

    // The call_data objects handed out and not yet returned: EXIT looks a pointer up
    // here before it dereferences it.
    std::mutex                     live_mutex = {};
    std::unordered_set<call_data*> live       = {};
};

// Never destroyed: the library's static destructors may run before the profiler
// finalizes the tool.
tool_state* state = nullptr;

thread_local int64_t depth = 0;

std::string_view
operation_name(rocprofiler_callback_tracing_kind_t kind, rocprofiler_tracing_operation_t op)
{
    const auto k = static_cast<size_t>(kind);
    if(op < 0 || k >= state->names.size()) return {};
    const auto& entry = state->names[k];
    const auto  o     = static_cast<size_t>(op);
    return o < entry.operations.size() ? entry.operations[o] : std::string_view{};
}

/// One argument as the iteration reports it.
struct argument
{
    std::string type;
    std::string name;
    std::string value;
};

struct iteration
{
    uint32_t              next = 0;
    std::vector<argument> args = {};
};

int
on_argument(rocprofiler_callback_tracing_kind_t kind,
            rocprofiler_tracing_operation_t     operation,
            uint32_t                            arg_number,
            const void* const                   arg_value_addr,
            int32_t                             arg_indirection_count,
            const char*                         arg_type,
            const char*                         arg_name,
            const char*                         arg_value_str,
            int32_t                             arg_dereference_count,
            void*                               data)
{
    (void) kind;
    (void) operation;
    (void) arg_value_addr;  // NULL on rocwasm: values are given as text
    (void) arg_indirection_count;
    (void) arg_dereference_count;
    auto* it = static_cast<iteration*>(data);
    ++state->args;
    if(arg_number != it->next || !arg_type || !arg_name || !arg_value_str || arg_name[0] == '\0')
    {
        ++state->args_bad;
    }
    it->next = arg_number + 1;
    it->args.push_back(argument{arg_type ? arg_type : "",
                                arg_name ? arg_name : "",
                                arg_value_str ? arg_value_str : ""});
    return 0;
}

/// A decimal or 0x-prefixed number as the value text of an integer argument.
bool
positive_number(const std::string& text)
{
    if(text.empty()) return false;
    errno    = 0;
    char* end = nullptr;
    auto  v   = std::strtoull(text.c_str(), &end, 0);
    return errno == 0 && end && *end == '\0' && v > 0;
}

void
on_exit(rocprofiler_callback_tracing_record_t record,
        rocprofiler_user_data_t*              user_data,
        const rocprofiler_callback_tracing_hip_api_data_t* payload)
{
    ++state->exit;
    if(depth-- <= 0)
    {
        depth = 0;
        ++state->unbalanced;
    }

    // The user data ENTER stored for this very call.
    auto* data  = static_cast<call_data*>(user_data->ptr);
    bool  known = false;
    if(data)
    {
        auto lock = std::lock_guard<std::mutex>{state->live_mutex};
        known     = state->live.erase(data) > 0;
    }
    if(!known || data->correlation_id != record.correlation_id.internal ||
       data->operation != record.operation)
        ++state->udata_bad;
    if(known) delete data;
    user_data->ptr = nullptr;

    auto it     = iteration{};
    auto status = rocprofiler_iterate_callback_tracing_kind_operation_args(
        record, on_argument, 1, &it);
    if(status != ROCPROFILER_STATUS_SUCCESS) ++state->iterate_errors;

    const auto name = operation_name(record.kind, record.operation);
    if(name == "hipMalloc")
    {
        ++state->mallocs;
        if(it.args.size() == 2 && it.args[0].name == "ptr" && it.args[1].name == "size" &&
           positive_number(it.args[1].value) && payload && payload->retval.hipError_t_retval == 0)
            ++state->malloc_args_ok;
    }
    else if(name == "hipLaunchKernel" && !it.args.empty())
    {
        ++state->launches;
    }
}

void
on_hip_call(rocprofiler_callback_tracing_record_t record,
            rocprofiler_user_data_t*              user_data,
            void*                                 callback_data)
{
    (void) callback_data;
    try
    {
        rocprofiler_thread_id_t tid = 0;
        if(rocprofiler_get_thread_id(&tid) != ROCPROFILER_STATUS_SUCCESS ||
           tid != record.thread_id)
            ++state->tid_bad;
        if(record.operation < 0) ++state->none_ops;

        const auto* payload =
            static_cast<const rocprofiler_callback_tracing_hip_api_data_t*>(record.payload);
        if(record.kind != ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API || payload == nullptr ||
           payload->size != sizeof(rocprofiler_callback_tracing_hip_api_data_t))
        {
            ++state->payload_bad;
            payload = nullptr;
        }

        if(record.phase == ROCPROFILER_CALLBACK_PHASE_ENTER)
        {
            ++state->enter;
            ++depth;
            auto* data = new call_data{record.correlation_id.internal, record.operation, 0};
            rocprofiler_get_timestamp(&data->enter_time);
            {
                auto lock = std::lock_guard<std::mutex>{state->live_mutex};
                state->live.insert(data);
            }
            user_data->ptr = data;
        }
        else if(record.phase == ROCPROFILER_CALLBACK_PHASE_EXIT)
        {
            on_exit(record, user_data, payload);
        }
    } catch(...)
    {
        state->result.fail("exception_in_tracing_callback");
    }
}

bool
set_up()
{
    auto& r      = state->result;
    state->names = rocprofiler::sdk::get_callback_tracing_names();
    if(state->names.size() <= static_cast<size_t>(ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API) ||
       state->names.at(ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API) != "HIP_RUNTIME_API" ||
       operation_name(ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API,
                      ROCPROFILER_HIP_RUNTIME_API_ID_hipMalloc) != "hipMalloc")
    {
        r.fail("name_table");
        return false;
    }
    if(!r.check(rocprofiler_create_context(&state->context), "rocprofiler_create_context"))
        return false;
    if(!r.check(rocprofiler_configure_callback_tracing_service(
                    state->context,
                    ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API,
                    nullptr,
                    0,
                    on_hip_call,
                    nullptr),
                "rocprofiler_configure_callback_tracing_service"))
        return false;
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
        size_t open_calls = 0;
        {
            auto lock  = std::lock_guard<std::mutex>{state->live_mutex};
            open_calls = state->live.size();
        }
        r.expect(state->enter > 0, "enter>0");
        r.expect(state->enter == state->exit, "enter==exit");
        r.expect(open_calls == 0, "every_call_exited");
        r.expect(state->udata_bad == 0, "udata_bad==0");
        r.expect(state->unbalanced == 0, "unbalanced==0");
        r.expect(state->tid_bad == 0, "tid_bad==0");
        r.expect(state->payload_bad == 0, "payload_bad==0");
        r.expect(state->args > 0, "args>0");
        r.expect(state->args_bad == 0, "args_bad==0");
        r.expect(state->iterate_errors == 0, "iterate_errors==0");
        r.expect(state->mallocs == state->malloc_args_ok, "malloc_args");

        r.write({{"enter", state->enter},
                 {"exit", state->exit},
                 {"udata_bad", state->udata_bad},
                 {"unbalanced", state->unbalanced},
                 {"tid_bad", state->tid_bad},
                 {"payload_bad", state->payload_bad},
                 {"args", state->args},
                 {"args_bad", state->args_bad},
                 {"iterate_errors", state->iterate_errors},
                 {"mallocs", state->mallocs},
                 {"malloc_args_ok", state->malloc_args_ok},
                 {"launches", state->launches},
                 {"none_ops", state->none_ops}});
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
