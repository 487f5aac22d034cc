#include "mesh/halo.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "program_util.hpp"

namespace commsched::mesh {

HaloExchange::HaloExchange(const Subdomain& sub, int components, int tag, MPI_Comm comm)
    : sub_(sub), components_(components), tag_(tag), comm_(comm) {
  std::size_t sent = 0;
  for (const auto& peer : sub_.peers()) sent += peer.send.size();
  send_buf_.resize(sent * static_cast<std::size_t>(components_));
  requests_.resize(2 * sub_.peers().size());
}

void HaloExchange::run(std::vector<double>& values) {
  const auto& peers = sub_.peers();
  if (peers.empty()) return;
  const std::size_t c = static_cast<std::size_t>(components_);
  for (std::size_t k = 0; k < peers.size(); ++k) {
    const auto& peer = peers[k];
    MPI_Irecv(values.data() + static_cast<std::size_t>(peer.recv_begin) * c,
              peer.recv_count * components_, MPI_DOUBLE, peer.rank, tag_, comm_, &requests_[k]);
  }
  double* out = send_buf_.data();
  for (std::size_t k = 0; k < peers.size(); ++k) {
    const auto& peer = peers[k];
    double* begin = out;
    for (int v : peer.send) {
      std::copy_n(values.data() + static_cast<std::size_t>(v) * c, c, out);
      out += c;
    }
    MPI_Isend(begin, static_cast<int>(out - begin), MPI_DOUBLE, peer.rank, tag_, comm_,
              &requests_[peers.size() + k]);
  }
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

HaloExchange::Totals HaloExchange::totals() const {
  long long mine[2] = {static_cast<long long>(sub_.peers().size()),
                       static_cast<long long>(send_buf_.size() * sizeof(double))};
  long long sum[2] = {0, 0};
  MPI_Reduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, 0, comm_);
  const int peers = static_cast<int>(sub_.peers().size());
  Totals t{sum[0], sum[1], 0, 0};
  MPI_Reduce(&peers, &t.max_peers, 1, MPI_INT, MPI_MAX, 0, comm_);
  MPI_Reduce(&mine[1], &t.max_rank_bytes, 1, MPI_LONG_LONG, MPI_MAX, 0, comm_);
  return t;
}

int set_up(int argc, char** argv, Options& o, bool with_components, const char* program,
           const char* usage, Setup& s) {
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  // argv is the same on every rank, so every rank takes the same branch.
  if (std::string err = parse_options(argc, argv, o, with_components); !err.empty()) {
    if (s.rank == 0)
      std::fprintf(stderr, "%s: %s\n%s%s", program, err.c_str(), usage, kCommonUsage);
    return 2;
  }
  if (o.help) {
    if (s.rank == 0) std::printf("%s%s", usage, kCommonUsage);
    return 0;
  }
  s.mesh = make_mesh(o.vertices, o.seed);
  s.graph = adjacency(s.mesh);
  s.part.resize(static_cast<std::size_t>(s.mesh.vertices()));
  int ok = 1;
  if (s.rank == 0) {
    std::string error;
    s.part = partition(s.graph, s.size, error);
    ok = s.part.empty() ? 0 : 1;
    if (!ok) std::fprintf(stderr, "%s: %s\n", program, error.c_str());
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) return 2;
  MPI_Bcast(s.part.data(), s.mesh.vertices(), MPI_INT, 0, MPI_COMM_WORLD);
  return -1;
}

int finish(const char* program, const std::string& verdict, const std::vector<double>& times) {
  if (!verdict.empty()) std::printf("%s: check=%s\n", program, verdict.c_str());
  app_util::print_times(times);
  std::fflush(stdout);
  return verdict.empty() || verdict.starts_with("ok") ? 0 : 1;
}

double PhaseTimer::now() const {
  return monotonic_ ? app_util::monotonic_now() : MPI_Wtime();
}

std::vector<double> PhaseTimer::per_iteration(MPI_Comm comm) const {
  const std::size_t n = std::min(starts_.size(), ends_.size());
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Wtime: the slowest rank's interval. Monotonic: max(end) + max(-start), one reduction.
  std::vector<double> mine;
  for (std::size_t i = 0; i < n; ++i) mine.push_back(monotonic_ ? ends_[i] : ends_[i] - starts_[i]);
  if (monotonic_)
    for (std::size_t i = 0; i < n; ++i) mine.push_back(-starts_[i]);
  std::vector<double> max(mine.size());
  MPI_Reduce(mine.data(), max.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank != 0) return {};
  if (monotonic_)
    for (std::size_t i = 0; i < n; ++i) max[i] += max[n + i];
  max.resize(n);
  return max;
}

std::vector<double> gather_global(const std::vector<double>& values, int owned, int components,
                                  const std::vector<int>& part, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<std::vector<int>> owned_by(static_cast<std::size_t>(size));  // ascending, as owned
  for (int v = 0; v < static_cast<int>(part.size()); ++v) owned_by[part[v]].push_back(v);
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = static_cast<int>(owned_by[r].size()) * components;
    displs[r] = total;
    total += counts[r];
  }
  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(total) : 0);
  MPI_Gatherv(values.data(), owned * components, MPI_DOUBLE, all.data(), counts.data(),
              displs.data(), MPI_DOUBLE, 0, comm);
  if (rank != 0) return {};
  std::vector<double> global(all.size());
  const std::size_t c = static_cast<std::size_t>(components);
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < owned_by[r].size(); ++k)
      std::copy_n(all.data() + static_cast<std::size_t>(displs[r]) + k * c, c,
                  global.data() + static_cast<std::size_t>(owned_by[r][k]) * c);
  return global;
}

}  // namespace commsched::mesh
