#include "analyze/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <system_error>

namespace commsched::analyze {
namespace {

constexpr int kMaxRanks = 1 << 22;  // larger communicators are refused, not allocated

// Parses "rank<R>.cstrace" or "rank<R>.cstrace.part"; -1 for any other name.
int rank_of_file(const std::string& name, bool& partial) {
  const std::string final_suffix = ".cstrace", part_suffix = ".cstrace.part";
  std::string stem;
  partial = false;
  if (name.size() > part_suffix.size() && name.ends_with(part_suffix)) {
    partial = true;
    stem = name.substr(0, name.size() - part_suffix.size());
  } else if (name.size() > final_suffix.size() && name.ends_with(final_suffix)) {
    stem = name.substr(0, name.size() - final_suffix.size());
  } else {
    return -1;
  }
  if (!stem.starts_with("rank") || stem.size() == 4 || stem.size() > 14) return -1;
  long long r = 0;
  for (std::size_t i = 4; i < stem.size(); ++i) {
    if (stem[i] < '0' || stem[i] > '9') return -1;
    r = r * 10 + (stem[i] - '0');
  }
  return r > 0x7fffffff ? -1 : static_cast<int>(r);
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size() && i < 12; ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 12) s += ", ... (" + std::to_string(ranks.size()) + " in all)";
  return s;
}

}  // namespace

bool load_trace_dir(const std::string& dir, bool accept_partial, Dataset& out, std::string& error) {
  namespace fs = std::filesystem;
  out = Dataset{};
  out.source = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    error = dir + ": not a directory (expected the COMMSCHED_TRACE directory of a job)";
    return false;
  }
  std::map<int, std::string> whole, partial;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    bool is_part = false;
    const int r = rank_of_file(it->path().filename().string(), is_part);
    if (r < 0) continue;
    (is_part ? partial : whole)[r] = it->path().string();
  }
  if (ec) {
    error = dir + ": cannot list the directory: " + ec.message();
    return false;
  }
  std::map<int, std::string> files = whole;
  std::vector<int> only_partial;
  for (const auto& [r, p] : partial)
    if (!whole.count(r)) {
      only_partial.push_back(r);
      if (accept_partial) files[r] = p;
    }
  if (!only_partial.empty() && !accept_partial) {
    error = dir + ": ranks " + rank_list(only_partial) +
            " left only partial traces (.part: the job crashed or is still running); " +
            "--partial reads what they hold";
    return false;
  }
  if (files.empty()) {
    error = dir + ": no trace files (rank<R>.cstrace) here";
    return false;
  }
  trace::ReadOptions opts;
  opts.accept_partial = accept_partial;
  std::string errors;
  for (const auto& [r, path] : files) {
    RankTrace rt;
    rt.path = path;
    std::string e;
    if (!trace::read_file(path, rt.trace, e, opts)) {
      errors += (errors.empty() ? "" : "\n") + e;
      continue;
    }
    if (rt.trace.world_rank != r) {
      errors += (errors.empty() ? "" : "\n") + path + ": holds the trace of rank " +
                std::to_string(rt.trace.world_rank) + " (renamed?)";
      continue;
    }
    for (const std::string& w : rt.trace.warnings) out.warnings.push_back(path + ": " + w);
    if (rt.trace.truncated)
      out.warnings.push_back(path + ": COMMSCHED_TRACE_LIMIT reached; " +
                             std::to_string(rt.trace.calls_dropped) + " later calls not recorded");
    out.ranks.push_back(std::move(rt));
  }
  if (!errors.empty()) {
    error = errors;
    return false;
  }
  out.world_size = out.ranks.front().trace.world_size;
  for (const RankTrace& rt : out.ranks)
    if (rt.trace.world_size != out.world_size) {
      error = rt.path + ": from a job of " + std::to_string(rt.trace.world_size) +
              " ranks, but " + out.ranks.front().path + " from one of " +
              std::to_string(out.world_size) + " (traces of two jobs in one directory?)";
      return false;
    }
  std::vector<int> missing;
  {
    std::set<int> have;
    for (const RankTrace& rt : out.ranks) have.insert(rt.trace.world_rank);
    for (int r = 0; r < std::min(out.world_size, kMaxRanks) && missing.size() <= 12; ++r)
      if (!have.count(r)) missing.push_back(r);
    if (!missing.empty())
      out.warnings.push_back("no trace from ranks " + rank_list(missing) + " of " +
                             std::to_string(out.world_size));
  }
  bool any_host = false;
  for (const RankTrace& rt : out.ranks)
    for (const auto& [k, v] : rt.trace.meta)
      if (k == "host") any_host = true;
  if (any_host) {
    out.hosts.assign(static_cast<std::size_t>(std::min(out.world_size, kMaxRanks)), "");
    for (const RankTrace& rt : out.ranks)
      for (const auto& [k, v] : rt.trace.meta)
        if (k == "host" && static_cast<std::size_t>(rt.trace.world_rank) < out.hosts.size())
          out.hosts[static_cast<std::size_t>(rt.trace.world_rank)] = v;
  }

  // Patterns: one per (communicator, index, matrix hash), rows from every rank that has it.
  std::map<PatternKey, std::size_t> index;
  std::vector<std::vector<std::vector<core::Entry>>> rows;
  for (const RankTrace& rt : out.ranks) {
    const trace::Trace& t = rt.trace;
    for (const trace::PatternRow& p : t.patterns) {
      const PatternKey key{t.comms[p.comm], p.pattern, p.matrix_hash};
      if (p.comm_size > kMaxRanks) {
        out.warnings.push_back(rt.path + ": a pattern of " + std::to_string(p.comm_size) +
                               " ranks is beyond this analyzer; ignored");
        continue;
      }
      auto [it, fresh] = index.emplace(key, out.patterns.size());
      if (fresh) {
        PatternData d;
        d.key = key;
        d.label = "P" + std::to_string(out.patterns.size());
        d.comm_size = p.comm_size;
        d.strategy = t.strategies[p.strategy];
        d.phases = p.phases;
        d.nonzeros = p.nonzeros;
        d.total_bytes = p.total_bytes;
        d.world_rank_of.assign(static_cast<std::size_t>(p.comm_size), -1);
        out.patterns.push_back(std::move(d));
        rows.emplace_back(static_cast<std::size_t>(p.comm_size));
      }
      PatternData& d = out.patterns[it->second];
      if (p.comm_size != d.comm_size) {
        out.warnings.push_back(rt.path + ": pattern " + d.label + " recorded with " +
                               std::to_string(p.comm_size) + " ranks, elsewhere " +
                               std::to_string(d.comm_size) + "; row ignored");
        continue;
      }
      auto& slot = d.world_rank_of[static_cast<std::size_t>(p.comm_rank)];
      if (slot >= 0) continue;  // the same row twice (two files of one rank): keep the first
      slot = t.world_rank;
      rows[it->second][static_cast<std::size_t>(p.comm_rank)] = p.row;
      ++d.rows_present;
    }
  }
  for (std::size_t i = 0; i < out.patterns.size(); ++i) {
    PatternData& d = out.patterns[i];
    d.matrix = core::CommMatrix(d.comm_size);
    for (std::size_t r = 0; r < rows[i].size(); ++r)
      d.matrix.set_row(static_cast<Rank>(r), std::move(rows[i][r]));
    d.complete = d.rows_present == d.comm_size;
    d.verified = d.complete && d.matrix.nonzeros() == d.nonzeros &&
                 d.matrix.total_bytes() == d.total_bytes && d.matrix.hash() == d.key.hash;
    if (!d.complete)
      out.warnings.push_back("pattern " + d.label + " on communicator " +
                             trace::to_string(d.key.comm) + ": rows of " +
                             std::to_string(d.comm_size - d.rows_present) + " of " +
                             std::to_string(d.comm_size) +
                             " ranks are missing; its matrix is partial");
    else if (!d.verified)
      out.warnings.push_back("pattern " + d.label +
                             ": the assembled matrix does not match the recorded size or hash");
  }

  // Calls: per rank totals per pattern, then the maximum over ranks.
  for (const RankTrace& rt : out.ranks) {
    const trace::Trace& t = rt.trace;
    struct Acc {
      std::uint64_t calls = 0, optimised = 0, native = 0;
      double native_s = 0, optimised_s = 0;
      std::map<std::string, std::uint64_t> used;
    };
    std::vector<Acc> acc(out.patterns.size());
    Acc none;
    for (const trace::CallLoop& l : t.loops)
      for (const trace::CallStats& c : l.body) {
        Acc* a = &none;
        if (c.pattern >= 0) {
          const trace::PatternRow& p = t.patterns[static_cast<std::size_t>(c.pattern)];
          const auto it = index.find(PatternKey{t.comms[p.comm], p.pattern, p.matrix_hash});
          if (it != index.end()) a = &acc[it->second];
        }
        a->calls += l.iterations;
        (c.optimised ? a->optimised : a->native) += l.iterations;
        (c.optimised ? a->optimised_s : a->native_s) += c.sum_s;
        a->used[t.strategies[c.strategy]] += l.iterations;
      }
    for (std::size_t i = 0; i < acc.size(); ++i) {
      PatternData& d = out.patterns[i];
      d.calls = std::max(d.calls, acc[i].calls);
      d.calls_optimised = std::max(d.calls_optimised, acc[i].optimised);
      d.native_calls = std::max(d.native_calls, acc[i].native);
      d.time_native_s = std::max(d.time_native_s, acc[i].native_s);
      d.time_optimised_s = std::max(d.time_optimised_s, acc[i].optimised_s);
      for (const auto& [s, n] : acc[i].used) d.strategies_used[s] = std::max(d.strategies_used[s], n);
    }
    out.unlearned_calls = std::max(out.unlearned_calls, none.calls);
    out.unlearned_time_s = std::max(out.unlearned_time_s, none.native_s + none.optimised_s);
  }
  return true;
}

Dataset from_matrix(core::CommMatrix m, const std::string& source) {
  Dataset ds;
  ds.source = source;
  ds.world_size = m.size();
  PatternData d;
  d.label = "P0";
  d.comm_size = m.size();
  d.nonzeros = m.nonzeros();
  d.total_bytes = m.total_bytes();
  d.key.hash = m.hash();
  d.strategy.assign(1, '-');  // not = "-": GCC 12 false -Wrestrict at -O3 (PR105651)
  d.world_rank_of.resize(static_cast<std::size_t>(m.size()));
  for (Rank r = 0; r < m.size(); ++r) d.world_rank_of[static_cast<std::size_t>(r)] = r;
  d.rows_present = m.size();
  d.complete = d.verified = true;
  d.matrix = std::move(m);
  ds.patterns.push_back(std::move(d));
  return ds;
}

MatrixStats matrix_stats(const core::CommMatrix& m) {
  MatrixStats s;
  s.n = m.size();
  s.nonzeros = m.nonzeros();
  s.total_bytes = m.total_bytes();
  s.delta = m.max_degree();
  double sum = 0, sum_sq = 0;
  bool first = true;
  for (Rank i = 0; i < m.size(); ++i) {
    Bytes out_bytes = 0, in_bytes = 0;
    for (const core::Entry& e : m.row(i)) {
      out_bytes += e.bytes;
      const double b = static_cast<double>(e.bytes);
      sum += b;
      sum_sq += b * b;
      s.min_size = first ? e.bytes : std::min(s.min_size, e.bytes);
      s.max_size = std::max(s.max_size, e.bytes);
      first = false;
    }
    for (const core::Entry& e : m.column(i)) in_bytes += e.bytes;
    s.f = std::max(s.f, m.row(i).size());
    s.g = std::max(s.g, m.column(i).size());
    s.r = std::max(s.r, out_bytes);
    s.c = std::max(s.c, in_bytes);
  }
  s.h = std::max(s.f, s.g);
  s.t = std::max(s.r, s.c);
  if (s.nonzeros) {
    const double k = static_cast<double>(s.nonzeros);
    s.mean_size = sum / k;
    s.stddev_size = std::sqrt(std::max(0.0, sum_sq / k - s.mean_size * s.mean_size));
  }
  return s;
}

}  // namespace commsched::analyze
