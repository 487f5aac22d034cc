#include "learn/learner.hpp"

#include <algorithm>

namespace commsched::learn {

bool Learner::same_as_last(std::span<const Bytes> send, std::span<const Bytes> recv) const {
  return last_.size() == send.size() + recv.size() &&
         std::equal(send.begin(), send.end(), last_.begin()) &&
         std::equal(recv.begin(), recv.end(), last_.begin() + static_cast<std::ptrdiff_t>(send.size()));
}

std::int64_t Learner::vote(std::span<const Bytes> send, std::span<const Bytes> recv, bool can_run) {
  const bool same = same_as_last(send, recv);
  if (!same) {
    last_.assign(send.begin(), send.end());
    last_.insert(last_.end(), recv.begin(), recv.end());
  }
  switch (state_) {
    case State::learning:
      streak_ = same ? std::min(streak_ + 1, learn_calls_) : 1;
      return streak_;
    case State::optimised:
      // The learned pattern is exactly `last_` while optimised; a change anywhere votes 0.
      return (same && can_run) ? 1 : 0;
    case State::pinned_native:
      return same ? 1 : 0;
  }
  return 0;
}

Action Learner::decide(std::int64_t agreed_min) {
  switch (state_) {
    case State::learning:
      if (agreed_min >= learn_calls_) {
        state_ = State::optimised;
        return Action::learn_and_run;
      }
      return Action::native;
    case State::optimised:
      if (agreed_min == 1) return Action::run_plan;
      break;
    case State::pinned_native:
      if (agreed_min == 1) return Action::native;
      break;
  }
  // Somebody's counts changed (or could not run): this call is native and learning restarts
  // with this call as the first of a new streak.
  state_ = State::learning;
  streak_ = 1;
  return Action::native;
}

void Learner::planned(bool all_ok) {
  if (!all_ok) state_ = State::pinned_native;
}

}  // namespace commsched::learn
