// rocprofiler-sdk/cxx/hash.hpp -- std::hash for the 64-bit handle types, so they can be
// keys of unordered containers (rocwasm's own implementation).
#pragma once

#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/hsa.h>
#include <rocprofiler-sdk/internal_threading.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace rocprofiler
{
namespace sdk
{
namespace hash
{
/// Hashes a handle struct by its `handle` value.
template <typename Tp>
struct handle_hasher
{
    static_assert(sizeof(Tp) == sizeof(uint64_t), "handle_hasher is for 64-bit handle types");

    size_t operator()(Tp val) const { return static_cast<size_t>(val.handle); }
};
}  // namespace hash
}  // namespace sdk
}  // namespace rocprofiler

#define ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(TYPE)                                             \
    template <>                                                                                    \
    struct hash<TYPE> : public ::rocprofiler::sdk::hash::handle_hasher<TYPE>                       \
    {                                                                                              \
        using parent_type = ::rocprofiler::sdk::hash::handle_hasher<TYPE>;                         \
        using parent_type::operator();                                                             \
    };

namespace std
{
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_context_id_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_agent_id_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_address_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_queue_id_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_stream_id_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_buffer_id_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_counter_id_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_counter_config_id_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(rocprofiler_callback_thread_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(hsa_agent_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(hsa_signal_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(hsa_executable_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(hsa_region_t)
ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER(hsa_amd_memory_pool_t)
}  // namespace std

#undef ROCPROFILER_CXX_SPECIALIZE_HANDLE_HASHER
