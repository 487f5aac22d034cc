// commsched-analyze: reads the per-rank traces a job wrote with COMMSCHED_TRACE=DIR (or one
// matrix from a text file) and prints what the job did and what every strategy would have done,
// with pictures. Links no MPI: run it anywhere, on a laptop after the job.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/dataset.hpp"
#include "analyze/matrix_text.hpp"
#if COMMSCHED_HAVE_OTF2
#include "analyze/otf2_export.hpp"
#endif
#include "analyze/render.hpp"
#include "analyze/whatif.hpp"
#include "core/files.hpp"
#include "plan/registry.hpp"

using namespace commsched;
using namespace commsched::analyze;

namespace {

constexpr const char* kUsage =
    "usage: commsched-analyze DIR [options]          traces of a job (COMMSCHED_TRACE=DIR)\n"
    "       commsched-analyze --matrix FILE [options]  one matrix from a text file\n"
    "Prints a summary per learned pattern: ranks, messages, bytes, fan-out f, fan-in g,\n"
    "traffic bounds r, c, t (paper 001 §2), Δ, message sizes, calls and time per call.\n"
    "  --machine FILE|PRESET  what-if table: every strategy's predicted time on that machine,\n"
    "                         phases, bytes moved and staging memory against the lower bound\n"
    "  --ranks-per-node K     rank placement for the what-if (default: the traces' host\n"
    "                         names, else one rank per node)\n"
    "  --hosts FILE           host name of every world rank, one per line: places the ranks\n"
    "                         on nodes and lets the machine file's [[cluster]] host\n"
    "                         patterns apply (traces carry their own host names)\n"
    "  --strategies LIST      the what-if for native and these strategies only (comma-\n"
    "                         separated ids; default every strategy)\n"
    "  --pattern P            only pattern P (P0, P1, ... as the summary names them)\n"
    "  --plan ID              strategy drawn in the Gantt chart (default: the one the job used,\n"
    "                         else the best predicted)\n"
    "  --svg OUT              writes OUT-matrix.svg, OUT-gantt.svg and OUT-strategies.svg\n"
    "  --chrome-trace FILE    the measured calls as Chrome trace-event JSON (Perfetto)\n"
    "  --otf2 DIR             the calls as an OTF2 archive DIR/traces.otf2 (Vampir, Scalasca,\n"
    "                         Vite): a region per call, a substituted call's schedule as MPI\n"
    "                         sends and receives (replanned on its matrix; --machine and\n"
    "                         --ranks-per-node place the ranks as for the what-if)\n"
    "  --csv PREFIX           writes PREFIX-matrix.csv and PREFIX-calls.csv; with --machine\n"
    "                         also PREFIX-whatif.csv (every strategy's predicted time, and\n"
    "                         per_call_s: with the library's per-call agreement, what auto\n"
    "                         ranks by)\n"
    "  --write-matrix FILE    writes the pattern's matrix in the --matrix text format\n"
    "  --partial              also read partial traces (.part: crashed or running jobs)\n"
    "Matrix text format: '#' comments; first line 'n N'; then lines 'src dst bytes'.\n"
    "Exit status: 0 ok, 1 unreadable input or output, 2 bad arguments.\n";

struct Args {
  std::string dir, matrix, machine, pattern, plan, svg, chrome, csv, write_matrix, hosts, otf2;
  bool machine_given = false, partial = false, help = false;
  int ranks_per_node = 0;
  std::vector<std::string> strategies;  ///< empty: every strategy
};

std::optional<std::string> parse_args(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view f = argv[i];
    if (f == "-h" || f == "--help") {
      a.help = true;
      continue;
    }
    if (f == "--partial") {
      a.partial = true;
      continue;
    }
    if (!f.starts_with("--")) {
      if (!a.dir.empty()) return "more than one trace directory given";
      a.dir = f;
      continue;
    }
    if (i + 1 >= argc) return "missing value after " + std::string(f);
    const std::string v = argv[++i];
    if (f == "--matrix") a.matrix = v;
    else if (f == "--machine") {
      a.machine = v;
      a.machine_given = true;
    } else if (f == "--pattern") a.pattern = v;
    else if (f == "--plan") a.plan = v;
    else if (f == "--svg") a.svg = v;
    else if (f == "--chrome-trace") a.chrome = v;
    else if (f == "--otf2") a.otf2 = v;
    else if (f == "--csv") a.csv = v;
    else if (f == "--write-matrix") a.write_matrix = v;
    else if (f == "--hosts") a.hosts = v;
    else if (f == "--strategies") {
      auto ids = plan::parse_strategy_list(v);
      if (!ids)
        return "--strategies '" + v + "': not a comma-separated list of strategies (valid: " +
               std::string(plan::strategy_id_list()) + ")";
      a.strategies = std::move(*ids);
    } else if (f == "--ranks-per-node") {
      char* end = nullptr;
      const long k = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || k < 1 || k > (1 << 20)) return "--ranks-per-node needs an integer >= 1";
      a.ranks_per_node = static_cast<int>(k);
    } else {
      return "unknown option " + std::string(f);
    }
  }
  if (a.help) return std::nullopt;
  if (a.dir.empty() == a.matrix.empty()) return "give either a trace directory or --matrix FILE";
  if (!a.matrix.empty() && a.partial) return "--partial applies to trace directories only";
  return std::nullopt;
}

std::string bytes_str(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3g %s", b, unit[u]);
  return buf;
}

std::string time_str(double s) {
  if (!std::isfinite(s)) return "-";
  char buf[32];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.3g s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  return buf;
}

void print_summary(const Dataset& ds, const std::vector<const PatternData*>& shown) {
  std::uint64_t files = ds.ranks.size();
  if (ds.ranks.empty())
    std::printf("%s: a %d-rank matrix\n", ds.source.c_str(), ds.world_size);
  else
    std::printf("%s: %llu trace files of a %d-rank job, %zu patterns, %llu calls outside "
                "patterns (learning or unlearned; %s)\n",
                ds.source.c_str(), static_cast<unsigned long long>(files), ds.world_size,
                ds.patterns.size(), static_cast<unsigned long long>(ds.unlearned_calls),
                time_str(ds.unlearned_time_s).c_str());
  for (const PatternData* p : shown) {
    const MatrixStats s = matrix_stats(p->matrix);
    std::printf("\n%s  comm %s, %d ranks, %zu messages, %s, matrix %s\n", p->label.c_str(),
                trace::to_string(p->key.comm).c_str(), p->comm_size, s.nonzeros,
                bytes_str(static_cast<double>(s.total_bytes)).c_str(),
                p->verified   ? "complete (hash checked)"
                : p->complete ? "complete (does not match its hash!)"
                              : ("partial: " + std::to_string(p->rows_present) + " of " +
                                 std::to_string(p->comm_size) + " rows")
                                    .c_str());
    std::printf("    fan-out f=%zu  fan-in g=%zu  h=%zu  traffic r=%s  c=%s  t=%s  delta=%zu\n",
                s.f, s.g, s.h, bytes_str(static_cast<double>(s.r)).c_str(),
                bytes_str(static_cast<double>(s.c)).c_str(),
                bytes_str(static_cast<double>(s.t)).c_str(), s.delta);
    if (s.nonzeros)
      std::printf("    message size min %s, mean %s, max %s, std dev %s (variance %.4g B^2, "
                  "cv %.2f)\n",
                  bytes_str(static_cast<double>(s.min_size)).c_str(),
                  bytes_str(s.mean_size).c_str(), bytes_str(static_cast<double>(s.max_size)).c_str(),
                  bytes_str(s.stddev_size).c_str(), s.stddev_size * s.stddev_size,
                  s.mean_size > 0 ? s.stddev_size / s.mean_size : 0.0);
    if (!ds.ranks.empty()) {
      std::printf("    strategy %s (%u phases): %llu calls, %llu optimised", p->strategy.c_str(),
                  p->phases, static_cast<unsigned long long>(p->calls),
                  static_cast<unsigned long long>(p->calls_optimised));
      const double nat = p->native_calls ? p->time_native_s / static_cast<double>(p->native_calls) : NAN;
      const double opt =
          p->calls_optimised ? p->time_optimised_s / static_cast<double>(p->calls_optimised) : NAN;
      std::printf("; per call: native %s, optimised %s", time_str(nat).c_str(),
                  time_str(opt).c_str());
      if (std::isfinite(nat) && std::isfinite(opt) && opt > 0)
        std::printf(" (%.2fx)", nat / opt);
      std::printf("\n");
      if (p->strategies_used.size() > 1) {
        std::printf("    calls by strategy:");
        for (const auto& [id, n] : p->strategies_used)
          std::printf(" %s %llu", id.c_str(), static_cast<unsigned long long>(n));
        std::printf("\n");
      }
    }
  }
}

// Node of every rank of `p`'s communicator; `node_hosts` gets each node's host name (empty
// where none is known).
std::vector<int> placement(const Dataset& ds, const PatternData& p, int ranks_per_node,
                           std::vector<std::string>& node_hosts) {
  node_hosts.clear();
  std::vector<int> node(static_cast<std::size_t>(p.comm_size));
  std::map<std::string, int> host_index;
  std::vector<int> node_of_world;
  if (ranks_per_node == 0 && !ds.hosts.empty()) {
    for (const std::string& h : ds.hosts) {
      const auto it = host_index.emplace(h, static_cast<int>(host_index.size())).first;
      node_of_world.push_back(it->second);
    }
  }
  if (ranks_per_node == 0 && node_of_world.empty()) return {};  // one rank per node
  int extra = static_cast<int>(host_index.size());
  for (std::size_t k = 0; k < node.size(); ++k) {
    const int w = p.world_rank_of[k];
    if (ranks_per_node > 0) node[k] = (w >= 0 ? w : static_cast<int>(k)) / ranks_per_node;
    else if (w >= 0 && static_cast<std::size_t>(w) < node_of_world.size() && !ds.hosts[static_cast<std::size_t>(w)].empty())
      node[k] = node_of_world[static_cast<std::size_t>(w)];
    else node[k] = extra++;  // no host known: a node of its own
  }
  // Renumber 0..nodes-1 in order of first appearance, as Topology expects.
  std::map<int, int> renum;
  std::vector<std::string> name_of(host_index.size());
  for (const auto& [h, i] : host_index) name_of[static_cast<std::size_t>(i)] = h;
  for (int& x : node) {
    const auto [it, fresh] = renum.emplace(x, static_cast<int>(renum.size()));
    if (fresh)
      node_hosts.push_back(static_cast<std::size_t>(x) < name_of.size()
                               ? name_of[static_cast<std::size_t>(x)]
                               : std::string());
    x = it->second;
  }
  return node;
}

// Rows of PREFIX-whatif.csv: one per pattern and strategy.
void add_what_if_csv(std::string& out, const PatternData& p, const WhatIf& w) {
  char line[512];
  for (const StrategyRow& r : w.rows) {
    std::snprintf(line, sizeof line, "%s,%d,%s,%d,%.9g,%.9g,%.9g,%zu,%zu,%llu,%llu\n",
                  p.label.c_str(), p.comm_size, r.id.c_str(), r.ok ? 1 : 0, r.predicted_s,
                  r.per_call_s, w.lower_bound_s, r.phases, r.transfers,
                  static_cast<unsigned long long>(r.wire_bytes),
                  static_cast<unsigned long long>(r.staging_max));
    out += line;
  }
}

void print_what_if(const PatternData& p, const WhatIf& w, const Model& model, int nodes) {
  std::printf("\nwhat-if for %s (%d ranks on %d nodes) on machine '%s':\n", p.label.c_str(),
              p.comm_size, nodes, model.machine_name().c_str());
  if (!Model::have_cost())
    std::printf("  predicted times: not built yet (this commsched-analyze was built without the "
                "cost model, src/cost)\n");
  std::printf("  %-16s %11s %9s %7s %9s %11s %13s %10s\n", "strategy", "predicted", "vs bound",
              "phases", "messages", "wire bytes", "staging/rank", "plan time");
  for (const StrategyRow& r : w.rows) {
    if (!r.ok) {
      std::printf("  %-16s %s\n", r.id.c_str(), r.note.c_str());
      continue;
    }
    char ratio[32] = "-";
    if (std::isfinite(r.predicted_s) && std::isfinite(w.lower_bound_s) && w.lower_bound_s > 0)
      std::snprintf(ratio, sizeof ratio, "%.2fx", r.predicted_s / w.lower_bound_s);
    std::printf("  %-16s %11s %9s %7zu %9zu %11s %13s %10s\n", r.id.c_str(),
                time_str(r.predicted_s).c_str(), ratio, r.phases, r.transfers,
                bytes_str(static_cast<double>(r.wire_bytes)).c_str(),
                bytes_str(static_cast<double>(r.staging_max)).c_str(),
                r.id == "native" ? "-" : time_str(r.plan_s).c_str());
  }
  std::printf("  %-16s %11s\n", "lower bound", time_str(w.lower_bound_s).c_str());
}

// --otf2: each substituted pattern's plan is its strategy replanned on its matrix, on the
// machine and placement the what-if would use.
template <typename Fail>
void write_otf2_archive(const Args& a, const Dataset& ds, Fail& fail) {
#if COMMSCHED_HAVE_OTF2
  std::map<std::string, StrategyRow> plans;  // pattern label -> its strategy's plan
  auto plan_of = [&](const PatternData& p) -> const core::Plan* {
    auto it = plans.find(p.label);
    if (it == plans.end()) {
      StrategyRow row;
      Model model;
      std::vector<std::string> node_hosts;
      std::string error;
      if (p.complete &&
          model.load(a.machine, placement(ds, p, a.ranks_per_node, node_hosts), node_hosts, error))
        row = plan_one(p.strategy, p.matrix, model);
      if (row.ok && row.plan.phases.size() != p.phases)
        std::fprintf(stderr,
                     "commsched-analyze: warning: %s: %s replanned has %zu phases, the job's had "
                     "%u; the OTF2 messages show the replanned schedule\n",
                     p.label.c_str(), p.strategy.c_str(), row.plan.phases.size(), p.phases);
      it = plans.emplace(p.label, std::move(row)).first;
    }
    return it->second.ok && it->second.id != "native" ? &it->second.plan : nullptr;
  };
  Otf2Summary sum;
  std::string error;
  if (!write_otf2(a.otf2, ds, plan_of, sum, error)) {
    fail(error);
    return;
  }
  std::printf("\nwrote %s/traces.otf2: %llu locations, %llu calls (%llu native, %llu "
              "substituted), %llu messages, %llu bytes\n",
              a.otf2.c_str(), static_cast<unsigned long long>(sum.locations),
              static_cast<unsigned long long>(sum.calls),
              static_cast<unsigned long long>(sum.native_calls),
              static_cast<unsigned long long>(sum.optimised_calls),
              static_cast<unsigned long long>(sum.messages),
              static_cast<unsigned long long>(sum.bytes));
#else
  (void)ds;
  fail("--otf2 " + a.otf2 + ": this build has no OTF2 support (libotf2 was not found; Debian: "
       "libotf2-trace-dev, then reconfigure)");
#endif
}

int run(int argc, char** argv) {
  Args a;
  if (auto err = parse_args(argc, argv, a)) {
    std::fprintf(stderr, "commsched-analyze: %s\n%s", err->c_str(), kUsage);
    return 2;
  }
  if (a.help) {
    std::printf("%s", kUsage);
    return 0;
  }
  Dataset ds;
  std::string error;
  if (!a.matrix.empty()) {
    core::CommMatrix m;
    if (!read_matrix_text(a.matrix, m, error)) {
      std::fprintf(stderr, "commsched-analyze: %s\n", error.c_str());
      return 1;
    }
    ds = from_matrix(std::move(m), a.matrix);
  } else if (!load_trace_dir(a.dir, a.partial, ds, error)) {
    std::fprintf(stderr, "commsched-analyze: %s\n", error.c_str());
    return 1;
  }
  for (const std::string& w : ds.warnings) std::fprintf(stderr, "commsched-analyze: warning: %s\n", w.c_str());
  if (!a.hosts.empty()) {
    std::string text;
    if (!core::read_regular_file(a.hosts, core::kMaxDataFileBytes, text, error)) {
      std::fprintf(stderr, "commsched-analyze: %s\n", error.c_str());
      return 1;
    }
    std::istringstream in(std::move(text));
    std::vector<std::string> hosts;
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) hosts.push_back(line);
    if (hosts.size() != static_cast<std::size_t>(ds.world_size)) {
      std::fprintf(stderr, "commsched-analyze: %s: %zu host names for %d ranks\n",
                   a.hosts.c_str(), hosts.size(), static_cast<int>(ds.world_size));
      return 2;
    }
    ds.hosts = std::move(hosts);
  }

  std::vector<const PatternData*> shown;
  for (const PatternData& p : ds.patterns)
    if (a.pattern.empty() || p.label == a.pattern) shown.push_back(&p);
  if (!a.pattern.empty() && shown.empty()) {
    std::fprintf(stderr, "commsched-analyze: no pattern %s (there are %zu: P0..P%zu)\n",
                 a.pattern.c_str(), ds.patterns.size(),
                 ds.patterns.empty() ? 0 : ds.patterns.size() - 1);
    return 2;
  }
  print_summary(ds, shown);

  int rc = 0;
  auto fail = [&rc](const std::string& e) {
    std::fprintf(stderr, "commsched-analyze: %s\n", e.c_str());
    rc = 1;
  };
  if (!a.chrome.empty()) {
    if (ds.ranks.empty()) fail("--chrome-trace needs traces (a matrix file holds no calls)");
    else if (write_chrome_trace(a.chrome, ds, error)) std::printf("\nwrote %s\n", a.chrome.c_str());
    else fail(error);
  }
  if (!a.otf2.empty()) {
    if (ds.ranks.empty()) fail("--otf2 needs traces (a matrix file holds no calls)");
    else write_otf2_archive(a, ds, fail);
  }
  if (!a.csv.empty()) {
    if (write_csv(a.csv, ds, error))
      std::printf("wrote %s-matrix.csv and %s-calls.csv\n", a.csv.c_str(), a.csv.c_str());
    else fail(error);
  }

  // The pattern the pictures and the matrix file show: --pattern, else the most bytes moved.
  const PatternData* focus = nullptr;
  for (const PatternData* p : shown)
    if (!focus || p->matrix.total_bytes() * std::max<std::uint64_t>(p->calls, 1) >
                      focus->matrix.total_bytes() * std::max<std::uint64_t>(focus->calls, 1))
      focus = p;
  if (!a.write_matrix.empty()) {
    std::ostringstream out;
    if (focus) write_matrix_text(out, focus->matrix);
    if (!focus) fail("--write-matrix: no pattern to write");
    else if (!core::replace_file(a.write_matrix, out.str(), error)) fail(error);
    else std::printf("wrote %s (%s)\n", a.write_matrix.c_str(), focus->label.c_str());
  }

  std::string whatif_csv;  // rows of PREFIX-whatif.csv
  if (a.machine_given || !a.svg.empty()) {
    for (const PatternData* p : shown) {
      if (!a.machine_given && p != focus) continue;
      if (!p->complete) {
        std::printf("\nwhat-if for %s skipped: its matrix is partial\n", p->label.c_str());
        continue;
      }
      Model model;
      std::vector<std::string> node_hosts;
      const std::vector<int> nodes = placement(ds, *p, a.ranks_per_node, node_hosts);
      const int node_count = nodes.empty() ? p->comm_size
                                           : 1 + *std::max_element(nodes.begin(), nodes.end());
      if (!model.load(a.machine, nodes, node_hosts, error)) {
        fail(error);
        return rc;
      }
      std::vector<std::string> only = a.strategies;
      if (!only.empty() && !a.plan.empty()) only.push_back(a.plan);
      const WhatIf w = what_if(p->matrix, model, only);
      if (a.machine_given) print_what_if(*p, w, model, node_count);
      if (a.machine_given && !a.csv.empty()) add_what_if_csv(whatif_csv, *p, w);
      if (!a.svg.empty() && p == focus) {
        std::string id = a.plan;
        if (id.empty()) id = p->strategy;
        const StrategyRow* chosen = nullptr;
        for (const StrategyRow& r : w.rows)
          if (r.id == id && r.ok) chosen = &r;
        if (!a.plan.empty() && !chosen) {
          fail("--plan " + a.plan + ": no valid plan of that strategy (valid: " +
               std::string(plan::strategy_id_list()) + ")");
          return rc;
        }
        if (!chosen || chosen->id == "native") {  // the best plan that is not native
          chosen = nullptr;
          double best = INFINITY;
          for (const StrategyRow& r : w.rows) {
            if (!r.ok || r.id == "native") continue;
            const double t = Model::have_cost() ? r.predicted_s : schedule(r.plan, model).makespan;
            if (!chosen || t < best) {
              chosen = &r;
              best = t;
            }
          }
        }
        const std::string m = a.svg + "-matrix.svg", g = a.svg + "-gantt.svg",
                          s = a.svg + "-strategies.svg";
        if (!write_matrix_svg(m, *p, error)) fail(error);
        else if (!chosen) fail("no valid plan to draw");
        else if (!write_gantt_svg(g, *p, *chosen, model, error)) fail(error);
        else if (!write_strategies_svg(s, *p, w, model, error)) fail(error);
        else
          std::printf("\nwrote %s, %s (%s) and %s for %s\n", m.c_str(), g.c_str(),
                      chosen->id.c_str(), s.c_str(), p->label.c_str());
      }
    }
  }
  if (a.machine_given && !a.csv.empty()) {
    const std::string path = a.csv + "-whatif.csv";
    const std::string text =
        "pattern,comm_size,strategy,ok,predicted_s,per_call_s,lower_bound_s,phases,messages,"
        "wire_bytes,staging_max\n" + whatif_csv;
    if (!core::replace_file(path, text, error)) fail(error);
    else std::printf("wrote %s\n", path.c_str());
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commsched-analyze: internal error: %s\n", e.what());
    return 1;
  }
}
