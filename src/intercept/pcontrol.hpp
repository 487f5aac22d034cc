#pragma once
/// MPI_Pcontrol: level 0 pauses learning and substitution on this rank, any other level resumes
/// (as mpiP reads it). MPI_Pcontrol is local, so a pause never skips a step the ranks take
/// together: a paused rank still joins every agreement and votes "cannot run", which sends the
/// call native on every rank (intercept.cpp), and its Isend/Irecv posts are never held (p2p.cpp).
#include <atomic>
#include <cstdint>

namespace commsched::intercept {

namespace detail {
// Atomic: under MPI_THREAD_MULTIPLE any thread may pause, and every thread's calls read it.
inline std::atomic<bool> paused_now{false};
}  // namespace detail

/// The MPI_Pcontrol entry points (C and Fortran) call this with the level.
void pcontrol(int level);
/// Whether this rank is paused (read on every intercepted call).
inline bool paused() { return detail::paused_now.load(std::memory_order_relaxed); }
/// Counts one MPI_Alltoallv call that a pause sent native (for the report); returns paused().
bool note_paused_call();
/// MPI_Alltoallv calls this rank made while paused.
std::int64_t paused_calls();

}  // namespace commsched::intercept
