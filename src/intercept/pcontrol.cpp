#include "intercept/pcontrol.hpp"

#include "intercept/p2p.hpp"

namespace commsched::intercept {
namespace {

// Plain values: the library runs only where one thread calls MPI at a time.
bool paused_now = false;
std::int64_t paused_count = 0;

}  // namespace

void pcontrol(int level) {
  const bool pause = level == 0;
  // Sends held for a burst in progress go now: nothing stays held while paused.
  if (pause && !paused_now) p2p_flush(nullptr);
  paused_now = pause;
}

bool paused() { return paused_now; }

bool note_paused_call() {
  if (paused_now) ++paused_count;
  return paused_now;
}

std::int64_t paused_calls() { return paused_count; }

}  // namespace commsched::intercept
