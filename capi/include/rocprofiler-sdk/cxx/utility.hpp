// rocprofiler-sdk/cxx/utility.hpp -- small formatting helpers of the C++ convenience
// headers (rocwasm's own implementation of the names AMD's rocprofiler-sdk provides here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <string>
#include <type_traits>

namespace rocprofiler
{
namespace sdk
{
namespace utility
{
/// `val` (an integer or a pointer) as "0x" and lower-case hex digits, zero-padded to at
/// least `width` digits: as_hex(255, 4) == "0x00ff".
template <typename Tp>
std::string
as_hex(Tp val, size_t width = 0)
{
    static_assert(std::is_integral<Tp>::value || std::is_enum<Tp>::value ||
                      std::is_pointer<Tp>::value,
                  "as_hex takes an integer or a pointer");
    uintptr_t bits = 0;
    if constexpr(std::is_pointer<Tp>::value)
        bits = reinterpret_cast<uintptr_t>(val);
    else
        bits = static_cast<uintptr_t>(val);

    auto out = std::ostringstream{};
    out << "0x" << std::hex << std::setfill('0') << std::setw(static_cast<int>(width)) << bits;
    return out.str();
}
}  // namespace utility
}  // namespace sdk
}  // namespace rocprofiler
