// rocprofiler-sdk/cxx/details/name_info.hpp -- implementation part of
// <rocprofiler-sdk/cxx/name_info.hpp> (rocwasm's own code).
#pragma once

#if !defined(ROCPROFILER_SDK_CXX_NAME_INFO_HPP_)
#    include <rocprofiler-sdk/cxx/name_info.hpp>
#endif

#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/callback_tracing.h>
#include <rocprofiler-sdk/fwd.h>

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rocprofiler
{
namespace sdk
{
namespace utility
{
template <typename EnumT, typename ValueT>
typename name_info_impl<EnumT, ValueT>::item_array_t
name_info_impl<EnumT, ValueT>::items() const
{
    auto out = item_array_t{};
    out.reserve(operations.size());
    for(size_t i = 0; i < operations.size(); ++i)
        out.emplace_back(static_cast<rocprofiler_tracing_operation_t>(i), &operations[i]);
    return out;
}

template <typename EnumT, typename ValueT>
typename name_info<EnumT, ValueT>::value_type&
name_info<EnumT, ValueT>::slot(EnumT idx)
{
    const auto pos = static_cast<size_t>(idx);
    // grow only: entries may be added in any order
    if(impl.size() <= pos) impl.resize(pos + 1, value_type{});
    impl[pos].value = idx;
    return impl[pos];
}

template <typename EnumT, typename ValueT>
inline void
name_info<EnumT, ValueT>::emplace(EnumT idx, const char* name)
{
    slot(idx).name = support_type{}(name);
}

template <typename EnumT, typename ValueT>
inline void
name_info<EnumT, ValueT>::emplace(EnumT idx, rocprofiler_tracing_operation_t opidx, const char* name)
{
    auto&      entry = slot(idx);
    const auto pos   = static_cast<size_t>(opidx);
    if(entry.operations.size() <= pos) entry.operations.resize(pos + 1, support_type::default_value());
    entry.operations[pos] = support_type{}(name);
}

template <typename EnumT, typename ValueT>
typename name_info<EnumT, ValueT>::return_type
name_info<EnumT, ValueT>::at(EnumT idx) const
{
    return impl.at(static_cast<size_t>(idx)).name;
}

template <typename EnumT, typename ValueT>
typename name_info<EnumT, ValueT>::return_type
name_info<EnumT, ValueT>::at(EnumT idx, rocprofiler_tracing_operation_t opidx) const
{
    return impl.at(static_cast<size_t>(idx)).operations.at(static_cast<size_t>(opidx));
}

template <typename EnumT, typename ValueT>
typename name_info<EnumT, ValueT>::item_array_t
name_info<EnumT, ValueT>::items() const
{
    auto out = item_array_t{};
    out.reserve(impl.size());
    for(const auto& entry : impl)
        out.emplace_back(&entry);
    return out;
}
}  // namespace utility

namespace details
{
// C callbacks (no captures) that fill a name table through the query functions.
template <typename TableT>
int
callback_operation_cb(rocprofiler_callback_tracing_kind_t kind,
                      rocprofiler_tracing_operation_t     op,
                      void*                               data)
{
    const char* name = nullptr;
    if(rocprofiler_query_callback_tracing_kind_operation_name(kind, op, &name, nullptr) ==
           ROCPROFILER_STATUS_SUCCESS &&
       name)
        static_cast<TableT*>(data)->emplace(kind, op, name);
    return 0;
}

template <typename TableT>
int
callback_kind_cb(rocprofiler_callback_tracing_kind_t kind, void* data)
{
    const char* name = nullptr;
    if(rocprofiler_query_callback_tracing_kind_name(kind, &name, nullptr) ==
           ROCPROFILER_STATUS_SUCCESS &&
       name)
        static_cast<TableT*>(data)->emplace(kind, name);
    rocprofiler_iterate_callback_tracing_kind_operations(
        kind, &callback_operation_cb<TableT>, data);
    return 0;
}

template <typename TableT>
int
buffer_operation_cb(rocprofiler_buffer_tracing_kind_t kind,
                    rocprofiler_tracing_operation_t   op,
                    void*                             data)
{
    const char* name = nullptr;
    if(rocprofiler_query_buffer_tracing_kind_operation_name(kind, op, &name, nullptr) ==
           ROCPROFILER_STATUS_SUCCESS &&
       name)
        static_cast<TableT*>(data)->emplace(kind, op, name);
    return 0;
}

template <typename TableT>
int
buffer_kind_cb(rocprofiler_buffer_tracing_kind_t kind, void* data)
{
    const char* name = nullptr;
    if(rocprofiler_query_buffer_tracing_kind_name(kind, &name, nullptr) ==
           ROCPROFILER_STATUS_SUCCESS &&
       name)
        static_cast<TableT*>(data)->emplace(kind, name);
    rocprofiler_iterate_buffer_tracing_kind_operations(kind, &buffer_operation_cb<TableT>, data);
    return 0;
}
}  // namespace details

template <typename Tp>
inline callback_name_info_t<Tp>
get_callback_tracing_names()
{
    using table_t = callback_name_info_t<Tp>;
    auto table    = table_t{};
    rocprofiler_iterate_callback_tracing_kinds(&details::callback_kind_cb<table_t>, &table);
    return table;
}

template <typename Tp>
inline buffer_name_info_t<Tp>
get_buffer_tracing_names()
{
    using table_t = buffer_name_info_t<Tp>;
    auto table    = table_t{};
    rocprofiler_iterate_buffer_tracing_kinds(&details::buffer_kind_cb<table_t>, &table);
    return table;
}
}  // namespace sdk
}  // namespace rocprofiler
