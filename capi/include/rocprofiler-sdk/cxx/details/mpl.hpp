// rocprofiler-sdk/cxx/details/mpl.hpp -- small type-trait helpers used by the C++
// convenience headers (rocwasm's own header-only C++17 implementation of the names
// AMD's rocprofiler-sdk provides in this header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace rocprofiler
{
namespace sdk
{
namespace mpl
{
/// `Tp` with references, cv-qualifiers and array/function decay removed.
template <typename Tp>
struct unqualified_identity
{
    using type = std::remove_cv_t<std::remove_reference_t<std::decay_t<Tp>>>;
};

template <typename Tp>
using unqualified_identity_t = typename unqualified_identity<Tp>::type;

template <typename Tp, typename Up>
struct is_same_unqualified_identity
: std::is_same<unqualified_identity_t<Tp>, unqualified_identity_t<Up>>
{};

/// How a string-like type is built from the `const char*` names the C API returns.
/// `value` is true for the supported types: const char*, std::string_view, std::string.
template <typename Tp>
struct string_support
{
    using type                  = Tp;
    using return_type           = void;
    static constexpr bool value = false;
};

template <>
struct string_support<const char*>
{
    using type                  = const char*;
    using return_type           = type;
    static constexpr bool value = true;

    static constexpr type default_value() { return nullptr; }
    type                  operator()(const char* str) const { return str; }
};

template <>
struct string_support<std::string_view>
{
    using type                  = std::string_view;
    using return_type           = type;
    static constexpr bool value = true;

    static constexpr type default_value() { return type{}; }
    type operator()(const char* str) const { return (str) ? type{str} : type{}; }
};

template <>
struct string_support<std::string>
{
    using type                  = std::string;
    using return_type           = const type&;
    static constexpr bool value = true;

    static type default_value() { return type{}; }
    type        operator()(const char* str) const { return (str) ? type{str} : type{}; }
};

/// True for the character-string types (std::string, std::string_view, [const] char*).
template <typename Tp>
struct is_string_type
: std::integral_constant<bool,
                         std::is_same<unqualified_identity_t<Tp>, std::string>::value ||
                             std::is_same<unqualified_identity_t<Tp>, std::string_view>::value ||
                             std::is_same<unqualified_identity_t<Tp>, char*>::value ||
                             std::is_same<unqualified_identity_t<Tp>, const char*>::value>
{};

/// `can_stringify<Tp>::value`: whether `std::ostream& << Tp` is well-formed (also callable:
/// `can_stringify<Tp>{}()`).
template <typename Tp>
struct can_stringify
{
private:
    template <typename Up>
    static constexpr auto probe(int)
        -> decltype(std::declval<std::ostream&>() << std::declval<Up>(), bool())
    {
        return true;
    }

    template <typename Up>
    static constexpr bool probe(...)
    {
        return false;
    }

public:
    static constexpr bool value = probe<Tp>(0);
    constexpr bool        operator()() const { return value; }
};

/// The older name of can_stringify.
template <typename Tp>
using supports_ostream = can_stringify<Tp>;

/// Always-false value for static_assert in templates that must not be instantiated.
template <typename Tp>
struct assert_false : std::false_type
{};
}  // namespace mpl
}  // namespace sdk
}  // namespace rocprofiler
