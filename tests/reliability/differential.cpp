// differential: every registered planner against the in-process executor at volume (issue 9,
// part 3a). One case is (random matrix, random options, one strategy); the cases of one matrix
// run every planner of plan::strategies(), so strategies added later are covered without edits.
//
// Per case: plan -> same plan again on a copy of the matrix (every rank plans on its own, so a
// planner must be deterministic) -> core::validate -> exec::compile for every rank ->
// InProcessWorld::run -> every delivered byte compared with what its sender sent, and the
// staging each rank compiled compared with core::staging_bytes_per_rank.
//
//   differential [--cases N] [--seed S] [--replay MATRIX_SEED [--strategy ID]] [--verbose]
//
// --cases N (default 10000, or $COMMSCHED_DIFF_CASES): at least N cases, i.e.
// ceil(N / planners) matrices. Release soak: `differential --cases 100000`. A failure prints the
// matrix seed and strategy, and `--replay SEED --strategy ID` runs just that case again.
// Prints "differential: N cases (M matrices x S strategies), K mismatches, T seconds"; exits 1
// on any mismatch. No MPI: runs in one process.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "core/topology.hpp"
#include "exec/inprocess.hpp"
#include "exec/program.hpp"
#include "plan/registry.hpp"

namespace cs = commsched;
using cs::Bytes;
using cs::Rank;

namespace {

/// Everything one matrix seed determines: the matrix, the topology and the planner options.
struct Scenario {
  cs::core::CommMatrix matrix;
  cs::core::Topology topology;
  bool has_topology = false;
  cs::plan::Options options;
  std::string description;
};

// Only raw mt19937_64 output is used (its sequence is fixed by the standard), so a seed means
// the same case with every standard library.
class Gen {
 public:
  explicit Gen(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t below(std::uint64_t k) { return k == 0 ? 0 : rng_() % k; }
  bool chance(int percent) { return below(100) < static_cast<std::uint64_t>(percent); }
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 rng_;
};

Rank pick_size(Gen& g) {
  // Small communicators are where the corner cases are (1, 2, odd, non-powers of two); large
  // ones where the planners' bookkeeping is.
  switch (g.below(4)) {
    case 0: return static_cast<Rank>(1 + g.below(4));
    case 1: return static_cast<Rank>(1 + g.below(12));
    case 2: return static_cast<Rank>(1 + g.below(32));
    default: return static_cast<Rank>(1 + g.below(64));
  }
}

Bytes pick_bytes(Gen& g, int shape) {
  switch (shape) {
    case 0: return 1 + g.below(16);                                   // tiny
    case 1: return 1 + g.below(2048);                                 // uniform small
    case 2: return static_cast<Bytes>(std::exp2(g.unit() * 14.0));   // log-uniform to 16 KiB
    default: return g.chance(8) ? 8192 + g.below(24577) : 1 + g.below(64);  // heavy tail
  }
}

Scenario make_scenario(std::uint64_t seed) {
  Gen g(seed);
  Scenario s;
  const Rank n = pick_size(g);
  const auto un = static_cast<std::size_t>(n);
  std::vector<Bytes> dense(un * un, 0);
  double density = g.unit();
  if (g.chance(8)) density = 0.0;
  if (g.chance(8)) density = 1.0;
  const int shape = static_cast<int>(g.below(4));
  const bool equal = g.chance(15);
  const Bytes equal_size = pick_bytes(g, shape);
  for (Bytes& b : dense)
    if (g.unit() < density) b = equal ? equal_size : pick_bytes(g, shape);
  // Structure the random fill rarely produces on its own.
  const int extra = static_cast<int>(g.below(6));
  if (extra == 1) {  // some ranks send nothing, some receive nothing
    for (Rank k = 0; k < n; ++k)
      if (g.chance(30))
        for (Rank j = 0; j < n; ++j) dense[static_cast<std::size_t>(k) * un + static_cast<std::size_t>(j)] = 0;
    for (Rank k = 0; k < n; ++k)
      if (g.chance(30))
        for (Rank i = 0; i < n; ++i) dense[static_cast<std::size_t>(i) * un + static_cast<std::size_t>(k)] = 0;
  } else if (extra == 2) {  // self messages only
    for (Rank i = 0; i < n; ++i)
      for (Rank j = 0; j < n; ++j)
        if (i != j) dense[static_cast<std::size_t>(i) * un + static_cast<std::size_t>(j)] = 0;
  } else if (extra == 3) {  // one hot receiver
    const auto hot = static_cast<std::size_t>(g.below(un));
    for (std::size_t i = 0; i < un; ++i) dense[i * un + hot] = pick_bytes(g, 3) * 4;
  } else if (extra == 4) {  // no self messages
    for (std::size_t i = 0; i < un; ++i) dense[i * un + i] = 0;
  }
  s.matrix = cs::core::CommMatrix::from_dense(n, dense);

  // Topology: none (flat), consecutive blocks, or a scattered assignment; clusters likewise.
  const int topo = static_cast<int>(g.below(3));
  if (topo > 0) {
    s.has_topology = true;
    const auto nodes = static_cast<int>(1 + g.below(static_cast<std::uint64_t>(n)));
    s.topology.node_of.resize(un);
    for (Rank r = 0; r < n; ++r)
      s.topology.node_of[static_cast<std::size_t>(r)] =
          topo == 1 ? static_cast<int>(static_cast<long long>(r) * nodes / n)
                    : static_cast<int>(g.below(static_cast<std::uint64_t>(nodes)));
    // Node indices must be 0..nodes()-1 without holes: renumber by first appearance.
    std::vector<int> index(un, -1);
    int next = 0;
    for (int& id : s.topology.node_of) {
      int& k = index[static_cast<std::size_t>(id)];
      if (k < 0) k = next++;
      id = k;
    }
    if (g.chance(60)) {  // clusters group whole nodes
      const auto clusters = static_cast<int>(1 + g.below(static_cast<std::uint64_t>(next)));
      std::vector<int> cluster_of_node(static_cast<std::size_t>(next));
      for (int k = 0; k < next; ++k)
        cluster_of_node[static_cast<std::size_t>(k)] = static_cast<int>(static_cast<long long>(k) * clusters / next);
      for (Rank r = 0; r < n; ++r)
        s.topology.cluster_of.push_back(
            cluster_of_node[static_cast<std::size_t>(s.topology.node_of[static_cast<std::size_t>(r)])]);
    }
  }

  cs::plan::Options& o = s.options;
  o.seed = g.below(UINT64_MAX);
  o.lambda_rule = static_cast<cs::plan::LambdaRule>(g.below(4));
  o.lambda_fixed = 0.05 + 0.95 * g.unit();
  o.alpha_s = std::exp2(-22.0 + 8.0 * g.unit());
  o.beta_s_per_byte = std::exp2(-34.0 + 8.0 * g.unit());
  o.barrier_between_phases = g.chance(20);
  o.direct_threshold = g.chance(50) ? 0 : g.below(8192);
  if (g.chance(30)) {
    const double a = o.alpha_s, b = o.beta_s_per_byte;
    const bool topo_aware = s.has_topology;
    const cs::core::Topology topo_copy = s.topology;
    o.pair_time = [a, b, topo_aware, topo_copy](Rank i, Rank j, Bytes bytes) {
      double scale = 1.0;
      if (topo_aware && topo_copy.node(i) != topo_copy.node(j)) scale = 4.0;
      if (topo_aware && topo_copy.cluster(i) != topo_copy.cluster(j)) scale = 16.0;
      return scale * (a + b * static_cast<double>(bytes));
    };
  }
  s.description = "n=" + std::to_string(n) + " nonzeros=" + std::to_string(s.matrix.nonzeros()) +
                  " bytes=" + std::to_string(s.matrix.total_bytes()) +
                  " topology=" + (topo == 0 ? "flat" : topo == 1 ? "blocks" : "scattered") +
                  (s.topology.cluster_of.empty() ? "" : "+clusters") +
                  (o.pair_time ? " pair_time" : "") + " direct_threshold=" +
                  std::to_string(o.direct_threshold);
  return s;
}

/// Runs one (scenario, strategy) case; empty string when it passed, else what went wrong.
std::string run_case(const Scenario& s, const cs::plan::Strategy& st, std::uint64_t salt) {
  cs::plan::Options o = s.options;
  o.topology = s.has_topology ? &s.topology : nullptr;
  const cs::core::CommMatrix& m = s.matrix;
  cs::core::Plan plan;
  try {
    plan = st.plan(m, o);
  } catch (const std::exception& e) {
    return std::string("planner threw: ") + e.what();
  } catch (...) {
    return "planner threw";
  }
  if (plan.strategy != st.id) return "plan names strategy '" + plan.strategy + "'";
  if (plan.n != m.size()) return "plan.n " + std::to_string(plan.n);
  if (plan.permutation != st.permutation) return "permutation flag differs from the registry";
  {
    const cs::core::CommMatrix copy = m;  // fresh caches, as on another rank
    const cs::core::Plan again = st.plan(copy, o);
    if (again.strategy != plan.strategy || again.n != plan.n ||
        again.barrier_between_phases != plan.barrier_between_phases ||
        again.permutation != plan.permutation || again.phases != plan.phases)
      return "planner is not deterministic";
  }
  const cs::core::Validation v = cs::core::validate(plan, m);
  if (!v.ok) return "validate: " + v.error;
  const std::vector<Bytes> staging = cs::core::staging_bytes_per_rank(plan);
  std::vector<cs::exec::RankProgram> progs;
  progs.reserve(static_cast<std::size_t>(m.size()));
  for (Rank r = 0; r < m.size(); ++r) {
    progs.push_back(cs::exec::compile(plan, m, r));
    if (progs.back().staging_bytes != staging[static_cast<std::size_t>(r)])
      return "rank " + std::to_string(r) + ": compiled staging " +
             std::to_string(progs.back().staging_bytes) + " != planned " +
             std::to_string(staging[static_cast<std::size_t>(r)]);
    if (progs.back().barrier_between_steps != plan.barrier_between_phases)
      return "rank " + std::to_string(r) + ": barrier flag lost in compile";
  }
  cs::exec::InProcessWorld world(m, salt);
  std::string err;
  if (!world.run(progs, err)) return "executor: " + err;
  if (!world.delivered_exactly(err)) return "delivery: " + err;
  return {};
}

std::uint64_t parse_u64(const char* text, const char* what) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (end == text || *end != '\0') {
    std::fprintf(stderr, "differential: bad %s '%s'\n", what, text);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t cases = 10000;
  if (const char* env = std::getenv("COMMSCHED_DIFF_CASES"); env && *env)
    cases = parse_u64(env, "COMMSCHED_DIFF_CASES");
  std::uint64_t base_seed = 1;
  bool replay = false, verbose = false;
  std::uint64_t replay_seed = 0;
  std::string only_strategy;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](const char* what) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "differential: %s needs a value\n", what);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--cases") {
      cases = parse_u64(value("--cases"), "--cases");
    } else if (a == "--seed") {
      base_seed = parse_u64(value("--seed"), "--seed");
    } else if (a == "--replay") {
      replay = true;
      replay_seed = parse_u64(value("--replay"), "--replay");
    } else if (a == "--strategy") {
      only_strategy = value("--strategy");
    } else if (a == "--verbose") {
      verbose = true;
    } else {
      std::fprintf(stderr,
                   "usage: differential [--cases N] [--seed S] [--replay MATRIX_SEED "
                   "[--strategy ID]] [--verbose]\n");
      return 2;
    }
  }

  std::vector<const cs::plan::Strategy*> planners;
  for (const cs::plan::Strategy& st : cs::plan::strategies())
    if (st.plan != nullptr && (only_strategy.empty() || st.id == only_strategy))
      planners.push_back(&st);
  if (planners.empty()) {
    std::fprintf(stderr, "differential: no planner '%s' (known: %.*s)\n", only_strategy.c_str(),
                 static_cast<int>(cs::plan::strategy_id_list().size()),
                 cs::plan::strategy_id_list().data());
    return 2;
  }

  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t matrices =
      replay ? 1 : (cases + planners.size() - 1) / planners.size();
  std::uint64_t run = 0, mismatches = 0;
  for (std::uint64_t k = 0; k < matrices; ++k) {
    const std::uint64_t seed = replay ? replay_seed : base_seed + k;
    const Scenario s = make_scenario(seed);
    if (verbose) std::printf("differential: seed %llu: %s\n", static_cast<unsigned long long>(seed), s.description.c_str());
    for (const cs::plan::Strategy* st : planners) {
      ++run;
      const std::string err = run_case(s, *st, seed * 31 + 7);
      if (!err.empty()) {
        ++mismatches;
        if (mismatches <= 20)
          std::printf("differential: FAIL seed=%llu strategy=%.*s (%s): %s\n"
                      "  replay: differential --replay %llu --strategy %.*s --verbose\n",
                      static_cast<unsigned long long>(seed), static_cast<int>(st->id.size()),
                      st->id.data(), s.description.c_str(), err.c_str(),
                      static_cast<unsigned long long>(seed), static_cast<int>(st->id.size()),
                      st->id.data());
      } else if (verbose) {
        std::printf("differential: ok seed=%llu strategy=%.*s\n",
                    static_cast<unsigned long long>(seed), static_cast<int>(st->id.size()),
                    st->id.data());
      }
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("differential: %llu cases (%llu matrices x %zu strategies), %llu mismatches, "
              "%.1f s\n",
              static_cast<unsigned long long>(run), static_cast<unsigned long long>(matrices),
              planners.size(), static_cast<unsigned long long>(mismatches), secs);
  std::fflush(stdout);
  return mismatches == 0 ? 0 : 1;
}
