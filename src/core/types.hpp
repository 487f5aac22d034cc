#pragma once
/// Small shared vocabulary types of commsched.
#include <cstdint>

namespace commsched {

using Rank = std::int32_t;    ///< rank within one communicator
using Bytes = std::uint64_t;  ///< a byte count or byte offset

}  // namespace commsched
