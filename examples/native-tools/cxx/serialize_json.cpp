// serialize_json.cpp -- records everything it traces and writes it as one JSON document
// through the SDK's C++ serializers (rocprofiler-sdk/cxx/serialization.hpp) and cereal's
// JSONOutputArchive, the way AMD's own test tools dump a run.
//
// Traced: buffered HIP runtime calls, kernel dispatches and memory copies (one LOSSLESS
// buffer), and through callbacks the code objects and kernel symbols (loads only) of the
// CODE_OBJECT kind. At finalization the file named by ROCWASM_JSON_OUT (default
// serialize_json.json in the working directory) gets:
//
//   { "rocprofiler-sdk-json-tool": {
//       "metadata": { "pid", "init_time", "fini_time", "buffer_drops" },
//       "agents": [ rocprofiler_agent_v0_t, ... ],
//       "callback_records": {
//           "names": the callback tracing name table,
//           "code_objects": [ { "timestamp", <the callback record's members>,
//                               "payload": rocprofiler_callback_tracing_code_object_load_data_t } ],
//           "kernel_symbols": [ { "timestamp", <record members>, "payload":
//                 rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t } ] },
//       "buffer_records": {
//           "names": the buffer tracing name table,
//           "kernel_dispatch": [ rocprofiler_buffer_tracing_kernel_dispatch_record_t ],
//           "memory_copies": [ rocprofiler_buffer_tracing_memory_copy_record_t ],
//           "hip_api_traces": [ rocprofiler_buffer_tracing_hip_api_record_t ] } } }
//
// every struct's members under their C names. It also writes the usual result line
// (tool_report.hpp): records=<all records written>.
//
// Build:  see CMakeLists.txt (needs cereal: Debian's libcereal-dev)
// Run:    export ROCP_TOOL_LIBRARIES=$PWD/libserialize_json.so ROCWASM_JSON_OUT=$PWD/run.json
//         rocwasm run --sim --kernel-trace -- ./app
#include <rocprofiler-sdk/cxx/name_info.hpp>
#include <rocprofiler-sdk/cxx/serialization.hpp>
#include <rocprofiler-sdk/registration.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include "tool_report.hpp"

#include <cereal/archives/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

namespace
{
constexpr const char* tool_name = "serialize_json";

/// A callback record with the copy of its payload, as the JSON shows it.
template <typename PayloadT>
struct callback_entry
{
    uint64_t                              timestamp = 0;
    rocprofiler_callback_tracing_record_t record    = {};
    PayloadT                              payload   = {};

    template <typename ArchiveT>
    void save(ArchiveT& ar) const
    {
        ar(cereal::make_nvp("timestamp", timestamp));
        // The record's own members at this level, as AMD's tools write them.
        cereal::save(ar, record);
        ar(cereal::make_nvp("payload", payload));
    }
};

using code_object_entry = callback_entry<rocprofiler_callback_tracing_code_object_load_data_t>;
using kernel_symbol_entry =
    callback_entry<rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t>;

struct tool_state
{
    tool_report::report      result{tool_name};
    rocprofiler_context_id_t context   = {0};
    rocprofiler_buffer_id_t  buffer    = {0};
    uint64_t                 init_time = 0;
    uint64_t                 drops     = 0;

    std::mutex                                                        mutex = {};
    std::vector<rocprofiler_agent_v0_t>                               agents;
    std::deque<code_object_entry>                                     code_objects;
    std::deque<kernel_symbol_entry>                                   kernel_symbols;
    std::deque<rocprofiler_buffer_tracing_kernel_dispatch_record_t>  dispatches;
    std::deque<rocprofiler_buffer_tracing_memory_copy_record_t>      copies;
    std::deque<rocprofiler_buffer_tracing_hip_api_record_t>          hip_calls;
    // Copies of the strings the payloads point to (the SDK's may not outlive the
    // callback); std::deque never moves its elements.
    std::deque<std::string> strings;

    const char* keep(const char* text)
    {
        strings.emplace_back(text ? text : "");
        return strings.back().c_str();
    }
};

// Never destroyed: the library's static destructors may run before the profiler
// finalizes the tool.
tool_state* state = nullptr;

uint64_t
now()
{
    auto ts = rocprofiler_timestamp_t{};
    rocprofiler_get_timestamp(&ts);
    return ts;
}

void
on_code_object(rocprofiler_callback_tracing_record_t record,
               rocprofiler_user_data_t*              user_data,
               void*                                 data)
{
    (void) user_data;
    (void) data;
    try
    {
        if(record.kind != ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT ||
           record.phase != ROCPROFILER_CALLBACK_PHASE_LOAD || record.payload == nullptr)
            return;
        auto lock = std::lock_guard<std::mutex>{state->mutex};
        if(record.operation == ROCPROFILER_CODE_OBJECT_LOAD)
        {
            auto entry = code_object_entry{now(), record, {}};
            entry.payload =
                *static_cast<const rocprofiler_callback_tracing_code_object_load_data_t*>(
                    record.payload);
            entry.payload.uri    = state->keep(entry.payload.uri);
            entry.record.payload = nullptr;
            state->code_objects.emplace_back(entry);
        }
        else if(record.operation == ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER)
        {
            auto entry    = kernel_symbol_entry{now(), record, {}};
            entry.payload = *static_cast<
                const rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t*>(
                record.payload);
            entry.payload.kernel_name = state->keep(entry.payload.kernel_name);
            entry.record.payload      = nullptr;
            state->kernel_symbols.emplace_back(entry);
        }
    } catch(...)
    {
        state->result.fail("exception_in_code_object_callback");
    }
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
    try
    {
        auto lock = std::lock_guard<std::mutex>{state->mutex};
        state->drops += drop_count;
        for(size_t i = 0; i < num_headers; ++i)
        {
            const auto* header = headers[i];
            if(header == nullptr || header->category != ROCPROFILER_BUFFER_CATEGORY_TRACING)
                continue;
            switch(static_cast<rocprofiler_buffer_tracing_kind_t>(header->kind))
            {
                case ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH:
                    state->dispatches.emplace_back(
                        *static_cast<const rocprofiler_buffer_tracing_kernel_dispatch_record_t*>(
                            header->payload));
                    break;
                case ROCPROFILER_BUFFER_TRACING_MEMORY_COPY:
                    state->copies.emplace_back(
                        *static_cast<const rocprofiler_buffer_tracing_memory_copy_record_t*>(
                            header->payload));
                    break;
                case ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API:
                    state->hip_calls.emplace_back(
                        *static_cast<const rocprofiler_buffer_tracing_hip_api_record_t*>(
                            header->payload));
                    break;
                default: state->result.fail("unexpected_record_kind"); break;
            }
        }
    } catch(...)
    {
        state->result.fail("exception_in_buffer_callback");
    }
}

rocprofiler_status_t
on_agents(rocprofiler_agent_version_t version,
          const void**                agents,
          size_t                      num_agents,
          void*                       user_data)
{
    (void) user_data;
    if(version != ROCPROFILER_AGENT_INFO_VERSION_0) return ROCPROFILER_STATUS_ERROR;
    for(size_t i = 0; i < num_agents; ++i)
        state->agents.emplace_back(*static_cast<const rocprofiler_agent_v0_t*>(agents[i]));
    return ROCPROFILER_STATUS_SUCCESS;
}

bool
set_up()
{
    auto& r          = state->result;
    state->init_time = now();
    if(!r.check(rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0,
                                                   on_agents,
                                                   sizeof(rocprofiler_agent_v0_t),
                                                   nullptr),
                "rocprofiler_query_available_agents"))
        return false;
    if(!r.check(rocprofiler_create_context(&state->context), "rocprofiler_create_context"))
        return false;
    if(!r.check(rocprofiler_configure_callback_tracing_service(state->context,
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
                                          on_records,
                                          nullptr,
                                          &state->buffer),
                "rocprofiler_create_buffer"))
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

/// Writes the whole document to `path`; false when the file cannot be written.
bool
write_json(const std::string& path)
{
    auto out = std::ofstream{path};
    if(!out) return false;
    {
        auto ar = cereal::JSONOutputArchive{out, cereal::JSONOutputArchive::Options::Default()};
        ar.setNextName("rocprofiler-sdk-json-tool");
        ar.startNode();

        ar.setNextName("metadata");
        ar.startNode();
        ar(cereal::make_nvp("pid", static_cast<int64_t>(getpid())));
        ar(cereal::make_nvp("init_time", state->init_time));
        ar(cereal::make_nvp("fini_time", now()));
        ar(cereal::make_nvp("buffer_drops", state->drops));
        ar.finishNode();

        ar(cereal::make_nvp("agents", state->agents));

        ar.setNextName("callback_records");
        ar.startNode();
        ar(cereal::make_nvp("names", rocprofiler::sdk::get_callback_tracing_names()));
        ar(cereal::make_nvp("code_objects", state->code_objects));
        ar(cereal::make_nvp("kernel_symbols", state->kernel_symbols));
        ar.finishNode();

        ar.setNextName("buffer_records");
        ar.startNode();
        ar(cereal::make_nvp("names", rocprofiler::sdk::get_buffer_tracing_names()));
        ar(cereal::make_nvp("kernel_dispatch", state->dispatches));
        ar(cereal::make_nvp("memory_copies", state->copies));
        ar(cereal::make_nvp("hip_api_traces", state->hip_calls));
        ar.finishNode();

        ar.finishNode();
    }  // the archive closes the document when it goes away
    out << "\n";
    return static_cast<bool>(out);
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
        const char* env  = std::getenv("ROCWASM_JSON_OUT");
        auto        path = std::string{env && *env ? env : "serialize_json.json"};
        auto        lock = std::lock_guard<std::mutex>{state->mutex};
        if(!write_json(path)) r.fail("cannot_write_" + path);
        r.write({{"records",
                  state->dispatches.size() + state->copies.size() + state->hip_calls.size() +
                      state->code_objects.size() + state->kernel_symbols.size()},
                 {"agents", state->agents.size()},
                 {"drops", state->drops}});
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
