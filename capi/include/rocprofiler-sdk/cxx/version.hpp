// rocprofiler-sdk/cxx/version.hpp -- decode the version number rocprofiler_configure()
// receives (rocwasm's own implementation).
#pragma once

#include <rocprofiler-sdk/fwd.h>

#include <cstdint>

namespace rocprofiler
{
namespace sdk
{
namespace version
{
/// Splits `major*F*F + minor*F + patch` (F = FactorV, 100 for
/// ROCPROFILER_SDK_COMPUTE_VERSION) into a triplet.
template <uint64_t FactorV = 100>
constexpr rocprofiler_version_triplet_t
compute_version_triplet(uint64_t version)
{
    return rocprofiler_version_triplet_t{static_cast<uint32_t>(version / (FactorV * FactorV)),
                                         static_cast<uint32_t>((version / FactorV) % FactorV),
                                         static_cast<uint32_t>(version % FactorV)};
}
}  // namespace version
}  // namespace sdk
}  // namespace rocprofiler
