#include "intercept/pcontrol.hpp"

#include <atomic>

#include "intercept/p2p.hpp"

namespace commsched::intercept {
namespace {

std::atomic<std::int64_t> paused_count{0};

}  // namespace

void pcontrol(int level) {
  const bool pause = level == 0;
  // Sends held for a burst in progress go now: nothing stays held while paused.
  if (pause && !detail::paused_now.load(std::memory_order_relaxed)) p2p_flush(nullptr);
  detail::paused_now.store(pause, std::memory_order_relaxed);
}

bool note_paused_call() {
  const bool now = detail::paused_now.load(std::memory_order_relaxed);
  if (now) paused_count.fetch_add(1, std::memory_order_relaxed);
  return now;
}

std::int64_t paused_calls() { return paused_count.load(); }

}  // namespace commsched::intercept
