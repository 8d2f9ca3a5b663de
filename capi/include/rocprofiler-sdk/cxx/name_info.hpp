// rocprofiler-sdk/cxx/name_info.hpp -- C++ tables of the names of every tracing kind and
// operation, filled from the library's query/iterate functions.
//
// rocwasm's own header-only implementation of the class and function names AMD's
// rocprofiler-sdk provides here:
//
//   auto names = rocprofiler::sdk::get_buffer_tracing_names();
//   names.at(ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API)                // "HIP_RUNTIME_API"
//   names.at(ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API, op)            // "hipMalloc"
//   for(auto [op, name] : names[ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API].items()) ...
#pragma once

#include <rocprofiler-sdk/cxx/details/mpl.hpp>
#include <rocprofiler-sdk/fwd.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rocprofiler
{
namespace sdk
{
namespace utility
{
/// Names of one tracing kind: the kind's own name and one name per operation.
template <typename EnumT, typename ValueT = std::string_view>
struct name_info_impl
{
    using support_type = mpl::string_support<ValueT>;
    using enum_type    = EnumT;
    using value_type   = ValueT;
    using return_type  = typename support_type::return_type;
    using item_type    = std::pair<rocprofiler_tracing_operation_t, const value_type*>;
    using item_array_t = std::vector<item_type>;

    static_assert(support_type::value,
                  "value_type must be const char*, std::string_view or std::string");

    return_type operator()() const { return name; }
    return_type operator()(size_t idx) const { return operations.at(idx); }
    return_type operator[](size_t idx) const { return operations.at(idx); }

    /// (operation, &name) for every operation slot.
    item_array_t items() const;

    EnumT                   value      = static_cast<EnumT>(0);
    value_type              name       = {};
    std::vector<value_type> operations = {};
};

/// Names of every kind of one tracing domain (callback or buffer), indexed by kind.
template <typename EnumT, typename ValueT = std::string_view>
struct name_info
{
    using value_type   = name_info_impl<EnumT, ValueT>;
    using enum_type    = EnumT;
    using support_type = typename value_type::support_type;
    using return_type  = typename value_type::return_type;
    using item_type    = const value_type*;
    using item_array_t = std::vector<item_type>;

    void emplace(EnumT idx, const char* name);
    void emplace(EnumT idx, rocprofiler_tracing_operation_t opidx, const char* name);

    return_type at(EnumT idx) const;
    return_type at(EnumT idx, rocprofiler_tracing_operation_t opidx) const;

    /// Pointers to every kind's entry, in kind order.
    item_array_t items() const;

    decltype(auto) size() const { return impl.size(); }
    decltype(auto) begin() { return impl.begin(); }
    decltype(auto) begin() const { return impl.begin(); }
    decltype(auto) end() { return impl.end(); }
    decltype(auto) end() const { return impl.end(); }

    value_type&       operator[](size_t idx) { return impl.at(idx); }
    const value_type& operator[](size_t idx) const { return impl.at(idx); }

private:
    value_type& slot(EnumT idx);

    std::vector<value_type> impl = {};
};
}  // namespace utility

template <typename Tp = std::string_view>
using callback_name_info_t = utility::name_info<rocprofiler_callback_tracing_kind_t, Tp>;

template <typename Tp = std::string_view>
using buffer_name_info_t = utility::name_info<rocprofiler_buffer_tracing_kind_t, Tp>;

using callback_name_info = callback_name_info_t<std::string_view>;
using buffer_name_info   = buffer_name_info_t<std::string_view>;

/// Queries the library for the names of every callback-tracing kind and operation.
template <typename Tp = std::string_view>
callback_name_info_t<Tp>
get_callback_tracing_names();

/// Queries the library for the names of every buffer-tracing kind and operation.
template <typename Tp = std::string_view>
buffer_name_info_t<Tp>
get_buffer_tracing_names();
}  // namespace sdk
}  // namespace rocprofiler

#define ROCPROFILER_SDK_CXX_NAME_INFO_HPP_ 1
#include <rocprofiler-sdk/cxx/details/name_info.hpp>
