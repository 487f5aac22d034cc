#include "burst/agree.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

namespace commsched::burst {
namespace {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Ordinal of each post among the posts of its kind with the same (peer, tag), in post order.
std::vector<std::uint64_t> ordinals(std::span<const Post> posts) {
  std::map<std::tuple<Kind, int, int>, std::uint64_t> next;
  std::vector<std::uint64_t> out(posts.size());
  for (std::size_t i = 0; i < posts.size(); ++i)
    out[i] = next[{posts[i].kind, posts[i].peer, posts[i].tag}]++;
  return out;
}

}  // namespace

std::uint64_t key(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d,
                  std::uint64_t e) {
  std::uint64_t h = splitmix(a ^ 0x636f6d6d73636864ULL);
  for (std::uint64_t v : {b, c, d, e}) h = splitmix(h ^ splitmix(v));
  return h;
}

std::uint64_t equal_share(std::uint64_t value, int rank, int size) {
  if (size <= 1) return 0;
  const auto r = static_cast<std::uint64_t>(rank);
  const auto next = static_cast<std::uint64_t>((rank + 1) % size);
  return value * (key(1, r) - key(1, next));
}

std::uint64_t match_key(int src, int dst, int tag) {
  return key(2, static_cast<std::uint32_t>(src), static_cast<std::uint32_t>(dst),
             static_cast<std::uint32_t>(tag));
}

std::uint64_t content_share(std::span<const Post> posts, int rank) {
  const std::vector<std::uint64_t> ord = ordinals(posts);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < posts.size(); ++i) {
    const Post& p = posts[i];
    const bool send = p.kind == Kind::send;
    const auto src = static_cast<std::uint32_t>(send ? rank : p.peer);
    const auto dst = static_cast<std::uint32_t>(send ? p.peer : rank);
    const std::uint64_t k = key(3, src, dst, static_cast<std::uint32_t>(p.tag), ord[i]) ^
                            key(4, p.bytes);
    sum += send ? k : 0 - k;
  }
  return sum;
}

bool all_follow(const Vote& sum, int size) {
  return sum[quit] == 0 && sum[follow] == static_cast<std::uint64_t>(size);
}

Verdict verdict(const Vote& sum, int size) {
  if (sum[quit] != 0) return Verdict::quit;
  if (sum[yes] != static_cast<std::uint64_t>(size)) return Verdict::native;
  // Every rank promised: any inconsistency is structural and will not go away by waiting.
  if (sum[same] != 0 || sum[aligned] != 0 || sum[content] != 0) return Verdict::quit;
  return Verdict::go;
}

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

bool ModeTrial::collective() const {
  if (!decided_) return collective_.size() <= local_.size();  // alternate, collective first
  if (recheck_ > 0 && since_decision_ >= recheck_) return !winner_collective_;  // re-measure
  return winner_collective_;
}

bool ModeTrial::collective_faster() const {
  auto estimate = [this](const std::vector<double>& v) {
    return fastest_ ? *std::min_element(v.begin(), v.end()) : median(v);
  };
  return estimate(collective_) <= estimate(local_) * (1 - margin_);
}

void ModeTrial::sample(bool collective, double seconds) {
  std::vector<double>& mine = collective ? collective_ : local_;
  mine.push_back(seconds);
  const auto keep = static_cast<std::size_t>(samples_);
  if (mine.size() > keep) mine.erase(mine.begin());  // the most recent `samples`
  if (!decided_) {
    if (local_.size() >= keep && collective_.size() >= keep) {
      decided_ = true;
      winner_collective_ = collective_faster();
      since_decision_ = 0;
    }
    return;
  }
  if (collective == winner_collective_) {
    ++since_decision_;
    return;
  }
  // A re-measurement of the other way: after `samples` of them, decide again.
  if (++since_decision_ >= recheck_ + samples_) {
    winner_collective_ = collective_faster();
    since_decision_ = 0;
  }
}

void CycleLearner::finish(const std::vector<std::uint64_t>& calls) {
  if (repeats_ > 0 && calls == last_) {
    ++repeats_;
    return;
  }
  last_ = calls;
  repeats_ = 1;
}

std::uint64_t CycleLearner::hash() const {
  std::uint64_t h = key(5, last_.size());
  for (std::uint64_t c : last_) h = key(6, h, c);
  return h;
}

CallClass classify_call(std::string_view name) {
  std::string n;
  for (char c : name) n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (std::string_view prefix : {"pmpi_", "mpi_"})
    if (n.rfind(prefix, 0) == 0) {
      n.erase(0, prefix.size());
      break;
    }
  while (!n.empty() && n.back() == '_') n.pop_back();
  for (std::string_view suffix : {"_f08ts", "_f08"})
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      n.erase(n.size() - suffix.size());
      break;
    }
  // A large-count form (MPI-4's "_c") is the same call.
  if (n.size() > 2 && n.compare(n.size() - 2, 2, "_c") == 0) n.erase(n.size() - 2);
  // Blocking collectives, the communicator constructors among them (collective on their
  // parent, or on the group for comm_create_group).
  static constexpr std::array<std::string_view, 36> kCollectives{
      "barrier",   "bcast",      "reduce",    "allreduce", "gather",         "gatherv",
      "scatter",   "scatterv",   "allgather", "allgatherv", "alltoall",      "alltoallv",
      "alltoallw", "reduce_scatter", "reduce_scatter_block", "scan",         "exscan",
      "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
      "neighbor_alltoallw",
      "comm_free", "win_fence",  "comm_dup",  "comm_dup_with_info", "comm_split",
      "comm_split_type", "comm_create", "comm_create_group", "intercomm_merge", "cart_create",
      "cart_sub",  "graph_create", "dist_graph_create", "dist_graph_create_adjacent"};
  CallClass c;
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char ch : n) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
  c.id = h;
  // MPI-IO's collective calls are not among them: a file opened on MPI_COMM_SELF, one per
  // rank, is common, and its calls are in no other rank's cycle. Level collective ends at one.
  c.in_cycle = std::find(kCollectives.begin(), kCollectives.end(), n) != kCollectives.end();
  return c;
}

Layout layout(std::span<const Post> posts, Kind kind, int size) {
  Layout l;
  const auto n = static_cast<std::size_t>(size < 0 ? 0 : size);
  l.counts.assign(n, 0);
  l.displs.assign(n, 0);
  const std::vector<std::uint64_t> ord = ordinals(posts);
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < posts.size(); ++i)
    if (posts[i].kind == kind) mine.push_back(i);
  std::vector<std::size_t> sorted = mine;
  std::stable_sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(posts[a].peer, posts[a].tag, ord[a]) <
           std::tie(posts[b].peer, posts[b].tag, ord[b]);
  });
  std::vector<std::uint64_t> off_of(posts.size(), 0), per_peer(n, 0);
  std::uint64_t total = 0;
  for (std::size_t i : sorted) {
    const auto peer = static_cast<std::size_t>(posts[i].peer);
    if (peer >= n) {
      l.fits = false;
      continue;
    }
    per_peer[peer] += posts[i].bytes;
  }
  std::vector<std::uint64_t> start(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    start[j] = total;
    total += per_peer[j];
    if (per_peer[j] > static_cast<std::uint64_t>(INT_MAX) ||
        start[j] > static_cast<std::uint64_t>(INT_MAX))
      l.fits = false;
    l.counts[j] = static_cast<int>(std::min<std::uint64_t>(per_peer[j], INT_MAX));
    l.displs[j] = static_cast<int>(std::min<std::uint64_t>(start[j], INT_MAX));
  }
  std::vector<std::uint64_t> cursor = start;
  for (std::size_t i : sorted) {
    const auto peer = static_cast<std::size_t>(posts[i].peer);
    if (peer >= n) continue;
    off_of[i] = cursor[peer];
    cursor[peer] += posts[i].bytes;
  }
  for (std::size_t i : mine) {
    l.offset.push_back(static_cast<std::size_t>(off_of[i]));
    l.index.push_back(i);
  }
  l.total = total;
  return l;
}

}  // namespace commsched::burst
