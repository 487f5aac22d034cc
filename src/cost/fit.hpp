#pragma once
/// The α + β·m line of a link class from timed messages (commsched-calibrate's fit; no MPI).
///
/// The sizes a calibration times span six decades (0 B to 1 MiB), and real links have more than
/// one regime: an MPI library changes protocol with the size, and a shaped link (a token bucket,
/// such as the emulated cluster's tbf) passes a small message at full speed and a stream of large
/// ones at its rate. One least-squares line over all sizes is then decided by the largest
/// messages and puts α anywhere, often below zero (clamped to 0): the emulated cluster's
/// 25 µs start-up came out as 0. So the line is taken the way Hockney's model is measured: α is
/// the start-up of the smallest message, β the sustained cost per byte, the least-squares slope
/// over the larger half of the sizes. Schedules of small messages are ranked by α, schedules of
/// large ones by β, and each comes from the sizes it governs.
#include <vector>

#include "core/types.hpp"
#include "cost/machine.hpp"

namespace commsched::cost {

/// β: the least-squares slope over the points whose size is at least the median size (all
/// points when there are two; the line through the origin and the point when there is one);
/// α: the smallest size's time less β times that size. α is clamped at 0 and β at 1e-13 s/B
/// (machine files need β > 0). Points with a time ≤ 0 are left out; none usable gives
/// {0, 1e-13}.
Link fit_link(const std::vector<Bytes>& sizes, const std::vector<double>& times);

}  // namespace commsched::cost
