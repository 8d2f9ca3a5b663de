// rocprofiler-sdk/cxx/perfetto.hpp -- Perfetto track-event categories for rocprofiler-sdk
// records (rocwasm's own implementation of the names AMD's rocprofiler-sdk provides here).
//
// Always available (no Perfetto needed):
//   rocprofiler::sdk::category::{hsa_api, hip_api, marker_api, rccl_api, openmp,
//       kernel_dispatch, memory_copy, memory_allocation, rocdecode_api, rocjpeg_api,
//       counter_collection, kfd_events, scratch_memory, none}      tag types
//   rocprofiler::sdk::perfetto_category<Tag>::name / ::description
//   rocprofiler::sdk::get_perfetto_category(kind)     category name of a buffer or
//                                                     callback tracing kind
// With the Perfetto SDK's <perfetto.h> on the include path (or -DROCPROFILER_SDK_USE_PERFETTO=1):
//   ROCPROFILER_PERFETTO_CATEGORIES                   the categories as ::perfetto::Category
//                                                     values, and PERFETTO_DEFINE_CATEGORIES of
//                                                     them
//   rocprofiler::sdk::perfetto_event_context_t        ::perfetto::EventContext
//   rocprofiler::sdk::add_perfetto_annotation(ctx, name, value)
//                                                     one debug annotation of any printable value
#pragma once

#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/callback_tracing.h>
#include <rocprofiler-sdk/fwd.h>
#include <rocprofiler-sdk/cxx/details/mpl.hpp>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace rocprofiler
{
namespace sdk
{
/// `name` (the Perfetto category) and `description` of a category tag.
template <typename Tp>
struct perfetto_category;

namespace category
{
#define ROCPROFILER_SDK_PERFETTO_TAG(TAG, DESCRIPTION)                                             \
    struct TAG                                                                                     \
    {};                                                                                            \
    }                                                                                              \
    template <>                                                                                    \
    struct perfetto_category<category::TAG>                                                        \
    {                                                                                              \
        static constexpr const char* name        = #TAG;                                           \
        static constexpr const char* description = DESCRIPTION;                                   \
    };                                                                                             \
    namespace category                                                                             \
    {

ROCPROFILER_SDK_PERFETTO_TAG(hsa_api, "HSA API calls")
ROCPROFILER_SDK_PERFETTO_TAG(hip_api, "HIP API calls")
ROCPROFILER_SDK_PERFETTO_TAG(marker_api, "ROCTx marker ranges")
ROCPROFILER_SDK_PERFETTO_TAG(rccl_api, "RCCL API calls")
ROCPROFILER_SDK_PERFETTO_TAG(openmp, "OpenMP (OMPT) events")
ROCPROFILER_SDK_PERFETTO_TAG(kernel_dispatch, "Kernel dispatches on the GPU")
ROCPROFILER_SDK_PERFETTO_TAG(memory_copy, "Asynchronous memory copies")
ROCPROFILER_SDK_PERFETTO_TAG(memory_allocation, "Memory allocations")
ROCPROFILER_SDK_PERFETTO_TAG(rocdecode_api, "rocDecode API calls")
ROCPROFILER_SDK_PERFETTO_TAG(rocjpeg_api, "rocJPEG API calls")
ROCPROFILER_SDK_PERFETTO_TAG(counter_collection, "Hardware counter collection")
ROCPROFILER_SDK_PERFETTO_TAG(kfd_events, "KFD (kernel driver) events")
ROCPROFILER_SDK_PERFETTO_TAG(scratch_memory, "Scratch memory allocations")
ROCPROFILER_SDK_PERFETTO_TAG(none, "Other records")
}  // namespace category

#undef ROCPROFILER_SDK_PERFETTO_TAG

/// The Perfetto category name of a buffer tracing kind.
inline const char*
get_perfetto_category(rocprofiler_buffer_tracing_kind_t kind)
{
    switch(kind)
    {
        case ROCPROFILER_BUFFER_TRACING_HSA_CORE_API:
        case ROCPROFILER_BUFFER_TRACING_HSA_AMD_EXT_API:
        case ROCPROFILER_BUFFER_TRACING_HSA_IMAGE_EXT_API:
        case ROCPROFILER_BUFFER_TRACING_HSA_FINALIZE_EXT_API:
            return perfetto_category<category::hsa_api>::name;
        case ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API:
        case ROCPROFILER_BUFFER_TRACING_HIP_COMPILER_API:
        case ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API_EXT:
        case ROCPROFILER_BUFFER_TRACING_HIP_COMPILER_API_EXT:
        case ROCPROFILER_BUFFER_TRACING_HIP_STREAM: return perfetto_category<category::hip_api>::name;
        case ROCPROFILER_BUFFER_TRACING_MARKER_CORE_API:
        case ROCPROFILER_BUFFER_TRACING_MARKER_CORE_RANGE_API:
        case ROCPROFILER_BUFFER_TRACING_MARKER_CONTROL_API:
        case ROCPROFILER_BUFFER_TRACING_MARKER_NAME_API:
            return perfetto_category<category::marker_api>::name;
        case ROCPROFILER_BUFFER_TRACING_MEMORY_COPY:
            return perfetto_category<category::memory_copy>::name;
        case ROCPROFILER_BUFFER_TRACING_MEMORY_ALLOCATION:
            return perfetto_category<category::memory_allocation>::name;
        case ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH:
            return perfetto_category<category::kernel_dispatch>::name;
        case ROCPROFILER_BUFFER_TRACING_SCRATCH_MEMORY:
            return perfetto_category<category::scratch_memory>::name;
        case ROCPROFILER_BUFFER_TRACING_RCCL_API: return perfetto_category<category::rccl_api>::name;
        case ROCPROFILER_BUFFER_TRACING_OMPT: return perfetto_category<category::openmp>::name;
        case ROCPROFILER_BUFFER_TRACING_ROCDECODE_API:
        case ROCPROFILER_BUFFER_TRACING_ROCDECODE_API_EXT:
            return perfetto_category<category::rocdecode_api>::name;
        case ROCPROFILER_BUFFER_TRACING_ROCJPEG_API:
            return perfetto_category<category::rocjpeg_api>::name;
        case ROCPROFILER_BUFFER_TRACING_KFD_EVENT_PAGE_MIGRATE:
        case ROCPROFILER_BUFFER_TRACING_KFD_EVENT_PAGE_FAULT:
        case ROCPROFILER_BUFFER_TRACING_KFD_EVENT_QUEUE:
        case ROCPROFILER_BUFFER_TRACING_KFD_EVENT_UNMAP_FROM_GPU:
        case ROCPROFILER_BUFFER_TRACING_KFD_EVENT_DROPPED_EVENTS:
        case ROCPROFILER_BUFFER_TRACING_KFD_PAGE_MIGRATE:
        case ROCPROFILER_BUFFER_TRACING_KFD_PAGE_FAULT:
        case ROCPROFILER_BUFFER_TRACING_KFD_QUEUE:
            return perfetto_category<category::kfd_events>::name;
        default: return perfetto_category<category::none>::name;
    }
}

/// The Perfetto category name of a callback tracing kind.
inline const char*
get_perfetto_category(rocprofiler_callback_tracing_kind_t kind)
{
    switch(kind)
    {
        case ROCPROFILER_CALLBACK_TRACING_HSA_CORE_API:
        case ROCPROFILER_CALLBACK_TRACING_HSA_AMD_EXT_API:
        case ROCPROFILER_CALLBACK_TRACING_HSA_IMAGE_EXT_API:
        case ROCPROFILER_CALLBACK_TRACING_HSA_FINALIZE_EXT_API:
            return perfetto_category<category::hsa_api>::name;
        case ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API:
        case ROCPROFILER_CALLBACK_TRACING_HIP_COMPILER_API:
        case ROCPROFILER_CALLBACK_TRACING_HIP_STREAM:
            return perfetto_category<category::hip_api>::name;
        case ROCPROFILER_CALLBACK_TRACING_MARKER_CORE_API:
        case ROCPROFILER_CALLBACK_TRACING_MARKER_CORE_RANGE_API:
        case ROCPROFILER_CALLBACK_TRACING_MARKER_CONTROL_API:
        case ROCPROFILER_CALLBACK_TRACING_MARKER_NAME_API:
            return perfetto_category<category::marker_api>::name;
        case ROCPROFILER_CALLBACK_TRACING_KERNEL_DISPATCH:
            return perfetto_category<category::kernel_dispatch>::name;
        case ROCPROFILER_CALLBACK_TRACING_MEMORY_COPY:
            return perfetto_category<category::memory_copy>::name;
        case ROCPROFILER_CALLBACK_TRACING_MEMORY_ALLOCATION:
            return perfetto_category<category::memory_allocation>::name;
        case ROCPROFILER_CALLBACK_TRACING_SCRATCH_MEMORY:
            return perfetto_category<category::scratch_memory>::name;
        case ROCPROFILER_CALLBACK_TRACING_RCCL_API:
            return perfetto_category<category::rccl_api>::name;
        case ROCPROFILER_CALLBACK_TRACING_OMPT: return perfetto_category<category::openmp>::name;
        case ROCPROFILER_CALLBACK_TRACING_ROCDECODE_API:
            return perfetto_category<category::rocdecode_api>::name;
        case ROCPROFILER_CALLBACK_TRACING_ROCJPEG_API:
            return perfetto_category<category::rocjpeg_api>::name;
        default: return perfetto_category<category::none>::name;
    }
}
}  // namespace sdk
}  // namespace rocprofiler

#if !defined(ROCPROFILER_SDK_USE_PERFETTO)
#    if defined(__has_include)
#        if __has_include(<perfetto.h>)
#            define ROCPROFILER_SDK_USE_PERFETTO 1
#        endif
#    endif
#endif

#if defined(ROCPROFILER_SDK_USE_PERFETTO) && ROCPROFILER_SDK_USE_PERFETTO > 0
#    include <perfetto.h>

#    define ROCPROFILER_PERFETTO_CATEGORY(TAG)                                                     \
        ::perfetto::Category(::rocprofiler::sdk::perfetto_category<::rocprofiler::sdk::TAG>::name) \
            .SetDescription(                                                                       \
                ::rocprofiler::sdk::perfetto_category<::rocprofiler::sdk::TAG>::description)

#    define ROCPROFILER_PERFETTO_CATEGORIES                                                        \
        ROCPROFILER_PERFETTO_CATEGORY(category::hsa_api),                                          \
            ROCPROFILER_PERFETTO_CATEGORY(category::hip_api),                                      \
            ROCPROFILER_PERFETTO_CATEGORY(category::marker_api),                                   \
            ROCPROFILER_PERFETTO_CATEGORY(category::rccl_api),                                     \
            ROCPROFILER_PERFETTO_CATEGORY(category::openmp),                                       \
            ROCPROFILER_PERFETTO_CATEGORY(category::kernel_dispatch),                              \
            ROCPROFILER_PERFETTO_CATEGORY(category::memory_copy),                                  \
            ROCPROFILER_PERFETTO_CATEGORY(category::counter_collection),                           \
            ROCPROFILER_PERFETTO_CATEGORY(category::memory_allocation),                            \
            ROCPROFILER_PERFETTO_CATEGORY(category::rocdecode_api),                                \
            ROCPROFILER_PERFETTO_CATEGORY(category::rocjpeg_api),                                  \
            ROCPROFILER_PERFETTO_CATEGORY(category::kfd_events),                                   \
            ROCPROFILER_PERFETTO_CATEGORY(category::scratch_memory),                               \
            ROCPROFILER_PERFETTO_CATEGORY(category::none)

PERFETTO_DEFINE_CATEGORIES(ROCPROFILER_PERFETTO_CATEGORIES);

namespace rocprofiler
{
namespace sdk
{
using perfetto_event_context_t = ::perfetto::EventContext;

/// Adds the debug annotation `name` = `value` to the event: strings, booleans, enums (as
/// integers), floating-point and integer numbers, pointers, else anything with operator<<.
template <typename NameT, typename ValueT>
void
add_perfetto_annotation(perfetto_event_context_t& ctx, NameT&& name, ValueT&& value)
{
    using name_type  = mpl::unqualified_identity_t<NameT>;
    using value_type = mpl::unqualified_identity_t<ValueT>;
    static_assert(mpl::is_string_type<name_type>::value, "the annotation's name is a string");

    auto* note = ctx.event()->add_debug_annotations();
    note->set_name(std::string_view{name}.data());
    if constexpr(mpl::is_string_type<value_type>::value)
        note->set_string_value(std::forward<ValueT>(value));
    else if constexpr(std::is_same<value_type, bool>::value)
        note->set_bool_value(value);
    else if constexpr(std::is_enum<value_type>::value)
        note->set_int_value(static_cast<int64_t>(value));
    else if constexpr(std::is_floating_point<value_type>::value)
        note->set_double_value(static_cast<double>(value));
    else if constexpr(std::is_integral<value_type>::value && std::is_unsigned<value_type>::value)
        note->set_uint_value(value);
    else if constexpr(std::is_integral<value_type>::value)
        note->set_int_value(value);
    else if constexpr(std::is_pointer<value_type>::value)
        note->set_pointer_value(reinterpret_cast<uint64_t>(value));
    else if constexpr(mpl::can_stringify<value_type>::value)
    {
        auto text = std::ostringstream{};
        text << std::forward<ValueT>(value);
        note->set_string_value(text.str());
    }
    else
        static_assert(mpl::assert_false<value_type>::value, "no way to annotate this type");
}
}  // namespace sdk
}  // namespace rocprofiler
#endif
