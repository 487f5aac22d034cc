#pragma once
/// `auto` until the cost model arrives: a simple documented rule over the learned matrix.
#include <string_view>

#include "core/comm_matrix.hpp"

namespace commsched::learn {

/// The strategy id `auto` picks for `m`:
///  - `native` for 1-2 ranks, an empty matrix, or a dense one (more than half of all ordered
///    pairs exchange data): the MPI library's own algorithms are tuned for those;
///  - `rs_nh` when message sizes are skewed (largest >= 8x the median): it splits the large ones
///    so phases stay balanced (paper 000 §5.2);
///  - `color` otherwise: the fewest contention-free phases, exactly Δ.
std::string_view choose_auto(const core::CommMatrix& m);

}  // namespace commsched::learn
