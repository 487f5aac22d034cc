#include "burst/burst.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <utility>

namespace commsched::burst {

std::uint64_t signature_hash(std::span<const Post> posts) {
  // FNV-1a over the fields; equality is always checked on the posts themselves.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xffu;
      h *= 0x100000001b3ULL;
    }
  };
  for (const Post& p : posts) {
    mix(static_cast<std::uint64_t>(p.kind));
    mix(p.comm);
    mix(static_cast<std::uint32_t>(p.peer));
    mix(static_cast<std::uint32_t>(p.tag));
    mix(p.bytes);
  }
  mix(posts.size());
  return h;
}

void Learner::finish(const Signature& posts, bool clean) {
  if (!clean || posts.empty()) {
    repeats_ = 0;
    last_.clear();
    last_hash_ = 0;
    return;
  }
  const std::uint64_t h = signature_hash(posts);
  if (repeats_ > 0 && h == last_hash_ && posts == last_) {
    ++repeats_;
    return;
  }
  last_ = posts;
  last_hash_ = h;
  repeats_ = 1;
}

std::vector<std::size_t> release_order(std::span<const Post> sends) {
  std::vector<std::size_t> order(sends.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(sends[a].distance, sends[a].comm) < std::tie(sends[b].distance, sends[b].comm);
  });
  return order;
}

bool hold_can_help(std::span<const Post> posts) {
  std::vector<Post> sends;
  for (const Post& p : posts)
    if (p.kind == Kind::send) sends.push_back(p);
  std::vector<std::pair<std::uint32_t, int>> peers;
  for (const Post& p : sends) peers.emplace_back(p.comm, p.peer);
  std::sort(peers.begin(), peers.end());
  if (static_cast<std::size_t>(std::unique(peers.begin(), peers.end()) - peers.begin()) <
      kHoldMinPeers)
    return false;
  const std::vector<std::size_t> order = release_order(sends);
  return !std::is_sorted(order.begin(), order.end());
}

bool keeps_matching_order(std::span<const Post> sends, std::span<const std::size_t> order) {
  if (order.size() != sends.size()) return false;
  std::map<std::tuple<std::uint32_t, int, int>, std::size_t> last;  // key -> last index released
  std::vector<bool> seen(sends.size(), false);
  for (std::size_t i : order) {
    if (i >= sends.size() || seen[i]) return false;
    seen[i] = true;
    const auto key = std::make_tuple(sends[i].comm, sends[i].peer, sends[i].tag);
    auto it = last.find(key);
    if (it != last.end() && it->second > i) return false;
    last[key] = i;
  }
  return true;
}

}  // namespace commsched::burst
