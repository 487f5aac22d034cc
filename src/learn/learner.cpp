#include "learn/learner.hpp"

#include <algorithm>

namespace commsched::learn {

bool Learner::same_as_last(std::span<const Bytes> send, std::span<const Bytes> recv) const {
  return last_.size() == send.size() + recv.size() &&
         std::equal(send.begin(), send.end(), last_.begin()) &&
         std::equal(recv.begin(), recv.end(), last_.begin() + static_cast<std::ptrdiff_t>(send.size()));
}

std::uint64_t Learner::counts_hash(std::span<const Bytes> send, std::span<const Bytes> recv) {
  std::uint64_t h = 1469598103934665603ull ^ send.size();
  auto mix = [&h](Bytes v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 1099511628211ull;
  };
  for (const Bytes b : send) mix(b);
  for (const Bytes b : recv) mix(b);
  return h;
}

std::int64_t Learner::vote(std::span<const Bytes> send, std::span<const Bytes> recv,
                           std::uint64_t h, bool can_run) {
  const bool same = same_as_last(send, recv);
  if (!same) {
    last_.assign(send.begin(), send.end());
    last_.insert(last_.end(), recv.begin(), recv.end());
  }
  repeat(h);
  switch (state_) {
    case State::learning:
      return streak_;
    case State::optimised:
      // The learned pattern is exactly `last_` while optimised: a match votes kMatch; counts
      // that changed vote how often they were seen, so a pattern met before is learned at once.
      if (same) return can_run ? kMatch : 0;
      return streak_;
    case State::pinned_native:
      return same ? kMatch : streak_;
  }
  return 0;
}

void Learner::repeat(std::uint64_t h) {
  // The previous call's counts again, already seen learn_calls_ times: the oldest slot may
  // drop one copy, the newest adds one, so the streak stays (the path of a repeating pattern).
  const bool again = filled_ > 0 && streak_ >= learn_calls_ &&
                     history_[(next_ + kHistory - 1) % kHistory] == h;
  history_[next_] = h;
  next_ = (next_ + 1) % kHistory;
  filled_ = std::min(filled_ + 1, kHistory);
  if (again) return;
  // Only whether h was seen learn_calls_ times matters: count from the newest slot, where a
  // repeating pattern's copies are, and stop there (this runs on every intercepted call).
  int seen = 0;
  for (std::size_t k = 0, i = next_; k < filled_ && seen < learn_calls_; ++k) {
    i = (i + kHistory - 1) % kHistory;
    seen += history_[i] == h ? 1 : 0;
  }
  streak_ = seen;
}

Action Learner::decide(std::int64_t agreed_min) {
  const bool learn = agreed_min >= learn_calls_;
  switch (state_) {
    case State::learning:
      if (learn) {
        state_ = State::optimised;
        return Action::learn_and_run;
      }
      return Action::native;
    case State::optimised:
      if (agreed_min >= kMatch) return Action::run_plan;
      break;
    case State::pinned_native:
      if (agreed_min >= kMatch) return Action::native;
      break;
  }
  // Somebody's counts changed (or could not run). If every rank has seen its current counts
  // often enough, learn them now; otherwise this call is native and learning goes on.
  if (learn && agreed_min < kMatch) {
    state_ = State::optimised;
    return Action::learn_and_run;
  }
  state_ = State::learning;
  return Action::native;
}

void Learner::planned(bool all_ok) {
  if (!all_ok) state_ = State::pinned_native;
}

}  // namespace commsched::learn
