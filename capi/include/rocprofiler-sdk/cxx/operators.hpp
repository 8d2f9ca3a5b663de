// rocprofiler-sdk/cxx/operators.hpp -- comparison operators for the handle types and a
// few small structs, so they work with std::map/std::set/== (rocwasm's own
// implementation; same operator set as AMD's header).
//
// Handle types compare by `handle`; agents by id; dim3 by x*y*z, then x, y, z;
// dimension info by (id, instance_size, name); version triplets lexicographically.
#pragma once

#include <rocprofiler-sdk/agent.h>
#include <rocprofiler-sdk/defines.h>
#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/hsa.h>
#include <rocprofiler-sdk/internal_threading.h>

#include <cstdint>
#include <tuple>

namespace rocprofiler
{
namespace sdk
{
namespace operators
{
template <typename Tp>
bool
equal(Tp lhs, Tp rhs) ROCPROFILER_ATTRIBUTE(pure);

template <typename Tp>
bool
less(Tp lhs, Tp rhs) ROCPROFILER_ATTRIBUTE(pure);

template <typename Tp>
bool
equal(Tp lhs, Tp rhs)
{
    static_assert(sizeof(Tp) == sizeof(uint64_t), "only for 64-bit handle types");
    return lhs.handle == rhs.handle;
}

template <typename Tp>
bool
less(Tp lhs, Tp rhs)
{
    static_assert(sizeof(Tp) == sizeof(uint64_t), "only for 64-bit handle types");
    return lhs.handle < rhs.handle;
}
}  // namespace operators
}  // namespace sdk
}  // namespace rocprofiler

// Declares the six comparison operators of TYPE.
#define ROCPROFILER_CXX_DECLARE_OPERATORS(TYPE)                                                    \
    bool operator==(TYPE lhs, TYPE rhs) ROCPROFILER_ATTRIBUTE(pure);                               \
    bool operator!=(TYPE lhs, TYPE rhs) ROCPROFILER_ATTRIBUTE(pure);                               \
    bool operator<(TYPE lhs, TYPE rhs) ROCPROFILER_ATTRIBUTE(pure);                                \
    bool operator>(TYPE lhs, TYPE rhs) ROCPROFILER_ATTRIBUTE(pure);                                \
    bool operator<=(TYPE lhs, TYPE rhs) ROCPROFILER_ATTRIBUTE(pure);                               \
    bool operator>=(TYPE lhs, TYPE rhs) ROCPROFILER_ATTRIBUTE(pure);

// != from ==.
#define ROCPROFILER_CXX_DEFINE_NE_OPERATOR(TYPE)                                                   \
    inline bool operator!=(TYPE lhs, TYPE rhs) { return !(lhs == rhs); }

// >, <=, >= from == and <.
#define ROCPROFILER_CXX_DEFINE_COMPARE_OPERATORS(TYPE)                                             \
    inline bool operator>(TYPE lhs, TYPE rhs) { return rhs < lhs; }                                \
    inline bool operator<=(TYPE lhs, TYPE rhs) { return !(rhs < lhs); }                            \
    inline bool operator>=(TYPE lhs, TYPE rhs) { return !(lhs < rhs); }

// all six for a 64-bit handle type (local helper, undefined below)
#define ROCPROFILER_CXX_HANDLE_OPERATORS_(TYPE)                                                    \
    ROCPROFILER_CXX_DECLARE_OPERATORS(TYPE)                                                        \
    inline bool operator==(TYPE lhs, TYPE rhs)                                                     \
    {                                                                                              \
        return ::rocprofiler::sdk::operators::equal(lhs, rhs);                                     \
    }                                                                                              \
    inline bool operator<(TYPE lhs, TYPE rhs)                                                      \
    {                                                                                              \
        return ::rocprofiler::sdk::operators::less(lhs, rhs);                                      \
    }                                                                                              \
    ROCPROFILER_CXX_DEFINE_NE_OPERATOR(TYPE)                                                       \
    ROCPROFILER_CXX_DEFINE_COMPARE_OPERATORS(TYPE)

ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_context_id_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_address_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_agent_id_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_queue_id_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_stream_id_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_buffer_id_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_counter_id_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_counter_config_id_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(rocprofiler_callback_thread_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(hsa_agent_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(hsa_signal_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(hsa_executable_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(hsa_region_t)
ROCPROFILER_CXX_HANDLE_OPERATORS_(hsa_amd_memory_pool_t)

#undef ROCPROFILER_CXX_HANDLE_OPERATORS_

ROCPROFILER_CXX_DECLARE_OPERATORS(const rocprofiler_agent_v0_t&)
ROCPROFILER_CXX_DECLARE_OPERATORS(rocprofiler_dim3_t)
ROCPROFILER_CXX_DECLARE_OPERATORS(const rocprofiler_counter_record_dimension_info_t&)
ROCPROFILER_CXX_DECLARE_OPERATORS(rocprofiler_version_triplet_t)

inline bool
operator==(const rocprofiler_agent_v0_t& lhs, const rocprofiler_agent_v0_t& rhs)
{
    return lhs.id == rhs.id;
}

inline bool
operator<(const rocprofiler_agent_v0_t& lhs, const rocprofiler_agent_v0_t& rhs)
{
    return lhs.id < rhs.id;
}

inline bool
operator==(rocprofiler_dim3_t lhs, rocprofiler_dim3_t rhs)
{
    return lhs.x == rhs.x && lhs.y == rhs.y && lhs.z == rhs.z;
}

inline bool
operator<(rocprofiler_dim3_t lhs, rocprofiler_dim3_t rhs)
{
    const uint32_t lsize = lhs.x * lhs.y * lhs.z;
    const uint32_t rsize = rhs.x * rhs.y * rhs.z;
    if(lsize != rsize) return lsize < rsize;
    return std::make_tuple(lhs.x, lhs.y, lhs.z) < std::make_tuple(rhs.x, rhs.y, rhs.z);
}

inline bool
operator==(const rocprofiler_counter_record_dimension_info_t& lhs,
           const rocprofiler_counter_record_dimension_info_t& rhs)
{
    return std::make_tuple(lhs.id, lhs.instance_size, lhs.name) ==
           std::make_tuple(rhs.id, rhs.instance_size, rhs.name);
}

inline bool
operator<(const rocprofiler_counter_record_dimension_info_t& lhs,
          const rocprofiler_counter_record_dimension_info_t& rhs)
{
    return std::make_tuple(lhs.id, lhs.instance_size, lhs.name) <
           std::make_tuple(rhs.id, rhs.instance_size, rhs.name);
}

inline bool
operator==(rocprofiler_version_triplet_t lhs, rocprofiler_version_triplet_t rhs)
{
    return std::make_tuple(lhs.major, lhs.minor, lhs.patch) ==
           std::make_tuple(rhs.major, rhs.minor, rhs.patch);
}

inline bool
operator<(rocprofiler_version_triplet_t lhs, rocprofiler_version_triplet_t rhs)
{
    return std::make_tuple(lhs.major, lhs.minor, lhs.patch) <
           std::make_tuple(rhs.major, rhs.minor, rhs.patch);
}

ROCPROFILER_CXX_DEFINE_NE_OPERATOR(const rocprofiler_agent_v0_t&)
ROCPROFILER_CXX_DEFINE_NE_OPERATOR(rocprofiler_dim3_t)
ROCPROFILER_CXX_DEFINE_NE_OPERATOR(const rocprofiler_counter_record_dimension_info_t&)
ROCPROFILER_CXX_DEFINE_NE_OPERATOR(rocprofiler_version_triplet_t)

ROCPROFILER_CXX_DEFINE_COMPARE_OPERATORS(const rocprofiler_agent_v0_t&)
ROCPROFILER_CXX_DEFINE_COMPARE_OPERATORS(rocprofiler_dim3_t)
ROCPROFILER_CXX_DEFINE_COMPARE_OPERATORS(const rocprofiler_counter_record_dimension_info_t&)
ROCPROFILER_CXX_DEFINE_COMPARE_OPERATORS(rocprofiler_version_triplet_t)
