// An HSA tool for the simulated runtime's tests, compiled against the real
// ROCm 5.2 hsa_api_trace.h. Given through HSA_TOOLS_LIB it:
// - reports the table versions it receives next to the header's sizeof;
// - rewrites core slots (hsa_queue_create, hsa_agent_get_info,
//   hsa_executable_freeze) and counts the calls it sees;
// - turns every queue into an intercept queue with profiling enabled; its
//   handler gives each kernel dispatch a tool-owned completion signal and
//   appends a barrier-AND packet carrying the application's signal, then
//   reads the dispatch time when the tool signal completes;
// - lists code objects through the loader extension (0x201) and kernel
//   symbols at each freeze.
// Everything is written to $SIM_TOOL_OUT at OnUnload, one record per line.
// $SIM_TOOL_HANDLER_DELAY_US makes the packet handler sleep that long per
// batch: a slow tool, so the queue falls behind the application.
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ven_amd_loader.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

static CoreApiTable core;
static AmdExtTable amd;
static std::atomic<int> queue_creates{0}, agent_infos{0}, freezes{0}, dispatches{0}, completions{0}, other_packets{0};
static std::mutex mu;
static std::vector<std::string> lines;
static std::map<uint64_t, std::string> names;

static void emit(const std::string& line) {
    std::lock_guard<std::mutex> g(mu);
    lines.push_back(line);
}

struct Pending {
    hsa_agent_t agent;
    hsa_signal_t signal;
    std::string name;
    uint32_t grid[3];
};

static bool on_done(hsa_signal_value_t, void* arg) {
    Pending* p = static_cast<Pending*>(arg);
    hsa_amd_profiling_dispatch_time_t t{};
    hsa_status_t s = amd.hsa_amd_profiling_get_dispatch_time_fn(p->agent, p->signal, &t);
    char buf[512];
    std::snprintf(buf, sizeof buf, "DISPATCH name=%s grid=%u,%u,%u start=%llu end=%llu status=%d", p->name.c_str(),
                  p->grid[0], p->grid[1], p->grid[2], (unsigned long long)t.start, (unsigned long long)t.end, (int)s);
    emit(buf);
    completions++;
    delete p;
    return false;
}

static std::string name_of(uint64_t object) {
    std::lock_guard<std::mutex> g(mu);
    auto it = names.find(object);
    return it == names.end() ? "unknown" : it->second;
}

static void handler(const void* pkts, uint64_t count, uint64_t, void* data, hsa_amd_queue_intercept_packet_writer writer) {
    static const long delay_us = [] {
        const char* v = std::getenv("SIM_TOOL_HANDLER_DELAY_US");
        return v ? std::atol(v) : 0L;
    }();
    if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    hsa_agent_t agent = *static_cast<hsa_agent_t*>(data);
    const hsa_kernel_dispatch_packet_t* p = static_cast<const hsa_kernel_dispatch_packet_t*>(pkts);
    for (uint64_t i = 0; i < count; i++) {
        if ((p[i].header & 0xff) != HSA_PACKET_TYPE_KERNEL_DISPATCH) {
            other_packets++;
            writer(&p[i], 1);
            continue;
        }
        dispatches++;
        hsa_kernel_dispatch_packet_t copy = p[i];
        hsa_signal_t original = copy.completion_signal;
        hsa_signal_t mine;
        core.hsa_signal_create_fn(1, 0, nullptr, &mine);
        copy.completion_signal = mine;
        writer(&copy, 1);
        hsa_barrier_and_packet_t barrier;
        std::memset(&barrier, 0, sizeof barrier);
        barrier.header = HSA_PACKET_TYPE_BARRIER_AND | (1 << HSA_PACKET_HEADER_BARRIER);
        barrier.dep_signal[0] = mine;
        barrier.completion_signal = original;
        writer(&barrier, 1);
        Pending* pending = new Pending{agent, mine, name_of(copy.kernel_object),
                                       {copy.grid_size_x, copy.grid_size_y, copy.grid_size_z}};
        amd.hsa_amd_signal_async_handler_fn(mine, HSA_SIGNAL_CONDITION_LT, 1, on_done, pending);
    }
}

static hsa_status_t my_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                    void (*cb)(hsa_status_t, hsa_queue_t*, void*), void* data, uint32_t priv,
                                    uint32_t group, hsa_queue_t** queue) {
    queue_creates++;
    hsa_status_t s = amd.hsa_amd_queue_intercept_create_fn(agent, size, type, cb, data, priv, group, queue);
    if (s != HSA_STATUS_SUCCESS) return s;
    amd.hsa_amd_profiling_set_profiler_enabled_fn(*queue, 1);
    return amd.hsa_amd_queue_intercept_register_fn(*queue, handler, new hsa_agent_t(agent));
}

static hsa_status_t my_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void* value) {
    agent_infos++;
    return core.hsa_agent_get_info_fn(agent, attribute, value);
}

static hsa_status_t on_symbol(hsa_executable_t, hsa_executable_symbol_t sym, void*) {
    uint32_t kind = 0, len = 0;
    core.hsa_executable_symbol_get_info_fn(sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind);
    if (kind != HSA_SYMBOL_KIND_KERNEL) return HSA_STATUS_SUCCESS;
    core.hsa_executable_symbol_get_info_fn(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len);
    std::string name(len, '\0');
    core.hsa_executable_symbol_get_info_fn(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, &name[0]);
    uint64_t object = 0;
    core.hsa_executable_symbol_get_info_fn(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".kd") == 0) name.resize(name.size() - 3);
    {
        std::lock_guard<std::mutex> g(mu);
        names[object] = name;
    }
    emit("SYMBOL " + name);
    return HSA_STATUS_SUCCESS;
}

static hsa_ven_amd_loader_1_01_pfn_t loader;

static hsa_status_t on_code_object(hsa_executable_t, hsa_loaded_code_object_t lco, void*) {
    uint64_t base = 0, size = 0;
    int64_t delta = 0;
    uint32_t uri_len = 0;
    hsa_agent_t agent{};
    loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE, &base);
    loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE, &size);
    loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA, &delta);
    loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT, &agent);
    loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH, &uri_len);
    std::string uri(uri_len, '\0');
    loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI, &uri[0]);
    char buf[512];
    std::snprintf(buf, sizeof buf, "CODE_OBJECT uri=%s base=%llu size=%llu delta=%lld agent=%llu", uri.c_str(),
                  (unsigned long long)base, (unsigned long long)size, (long long)delta, (unsigned long long)agent.handle);
    emit(buf);
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t my_freeze(hsa_executable_t exe, const char* options) {
    freezes++;
    hsa_status_t s = core.hsa_executable_freeze_fn(exe, options);
    if (s != HSA_STATUS_SUCCESS) return s;
    core.hsa_executable_iterate_symbols_fn(exe, on_symbol, nullptr);
    if (core.hsa_system_get_major_extension_table_fn(HSA_EXTENSION_AMD_LOADER, 1, sizeof loader, &loader) ==
        HSA_STATUS_SUCCESS)
        loader.hsa_ven_amd_loader_executable_iterate_loaded_code_objects(exe, on_code_object, nullptr);
    return s;
}

extern "C" bool OnLoad(HsaApiTable* table, uint64_t runtime_version, uint64_t failed_count, const char* const*) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "ONLOAD version=%llu failed=%llu root_major=%u root_size=%u core_major=%u core_size=%u "
                  "amd_ext_size=%u finalizer_size=%u image_size=%u header_root=%zu header_core=%zu "
                  "header_amd_ext=%zu header_finalizer=%zu header_image=%zu",
                  (unsigned long long)runtime_version, (unsigned long long)failed_count, table->version.major_id,
                  table->version.minor_id, table->core_->version.major_id, table->core_->version.minor_id,
                  table->amd_ext_->version.minor_id, table->finalizer_ext_->version.minor_id,
                  table->image_ext_->version.minor_id, sizeof(HsaApiTable), sizeof(CoreApiTable), sizeof(AmdExtTable),
                  sizeof(FinalizerExtTable), sizeof(ImageExtTable));
    emit(buf);
    core = *table->core_;
    amd = *table->amd_ext_;
    table->core_->hsa_queue_create_fn = my_queue_create;
    table->core_->hsa_agent_get_info_fn = my_agent_get_info;
    table->core_->hsa_executable_freeze_fn = my_freeze;
    return true;
}

extern "C" void OnUnload() {
    char buf[256];
    std::snprintf(buf, sizeof buf, "COUNTS queue_creates=%d agent_infos=%d freezes=%d dispatches=%d completions=%d other=%d",
                  queue_creates.load(), agent_infos.load(), freezes.load(), dispatches.load(), completions.load(),
                  other_packets.load());
    emit(buf);
    const char* path = std::getenv("SIM_TOOL_OUT");
    FILE* f = path ? std::fopen(path, "w") : stderr;
    std::lock_guard<std::mutex> g(mu);
    for (auto& l : lines) std::fprintf(f, "%s\n", l.c_str());
    std::fprintf(f, "UNLOADED\n");
    if (f != stderr) std::fclose(f);
}
