// SVG pictures, Chrome trace-event JSON (nlohmann/json) and CSV for commsched-analyze. The SVG
// is written by hand (no dependency): plain rects, lines and text, each rank's row a
// <g class="rank-row">.
#include "analyze/render.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/files.hpp"

namespace commsched::analyze {
namespace {

std::string esc(std::string_view s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default:
        // XML 1.0 forbids most control characters; drop them.
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n') o += ch;
    }
  }
  return o;
}

std::string fmt(double v, int prec = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", prec, v);
  return buf;
}

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return fmt(b, 3) + " " + unit[u];
}

std::string human_time(double s) {
  if (!std::isfinite(s)) return "-";
  if (s >= 1) return fmt(s, 4) + " s";
  if (s >= 1e-3) return fmt(s * 1e3, 4) + " ms";
  return fmt(s * 1e6, 4) + " \u00b5s";
}

// Tableau 10: distinct colours for phases, cycled.
constexpr std::array<const char*, 10> kPhaseColours = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                       "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                       "#9c755f", "#bab0ac"};

// Light yellow to dark red, for the heat map; x in [0, 1].
std::string heat(double x) {
  static constexpr std::array<std::array<double, 3>, 5> stops = {{{255, 255, 204},
                                                                  {254, 217, 118},
                                                                  {253, 141, 60},
                                                                  {227, 26, 28},
                                                                  {128, 0, 38}}};
  x = std::clamp(x, 0.0, 1.0) * 4.0;
  const auto i = std::min<std::size_t>(3, static_cast<std::size_t>(x));
  const double f = x - static_cast<double>(i);
  char buf[16];
  int c[3];
  for (std::size_t k = 0; k < 3; ++k)
    c[k] = static_cast<int>(std::lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k])));
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

// Outputs are built in memory and written whole (core::replace_file): never through a symbolic
// link or onto a FIFO or device, and a failed write leaves the old file as it was.
bool finish(const std::string& path, const std::ostringstream& out, std::string& error) {
  return core::replace_file(path, out.str(), error);
}

void svg_begin(std::ostream& o, double w, double h, const std::string& title) {
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fmt(w, 6) << "\" height=\""
    << fmt(h, 6) << "\" viewBox=\"0 0 " << fmt(w, 6) << ' ' << fmt(h, 6)
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<title>" << esc(title) << "</title>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">" << esc(title)
    << "</text>\n";
}

// "nice" tick step for an axis spanning `range`.
double tick_step(double range, int ticks) {
  if (range <= 0) return 1;
  const double raw = range / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

std::string pattern_title(const PatternData& p) {
  return "pattern " + p.label + " (comm " + trace::to_string(p.key.comm) + "): " +
         std::to_string(p.comm_size) + " ranks, " + std::to_string(p.matrix.nonzeros()) +
         " messages, " + human_bytes(static_cast<double>(p.matrix.total_bytes()));
}

}  // namespace

Schedule schedule(const core::Plan& plan, const Model& model) {
  Schedule s;
  const auto n = static_cast<std::size_t>(std::max<Rank>(plan.n, 0));
  std::vector<double> enter(n, 0), send_free(n, 0), recv_free(n, 0);
  for (std::size_t k = 0; k < plan.phases.size(); ++k) {
    for (const core::Transfer& t : plan.phases[k].transfers) {
      const auto f = static_cast<std::size_t>(t.from), d = static_cast<std::size_t>(t.to);
      if (f >= n || d >= n) continue;
      const double start = std::max({enter[f], enter[d], send_free[f], recv_free[d]});
      const double end = start + model.pair_time(t.from, t.to, t.bytes());
      send_free[f] = end;
      recv_free[d] = end;
      s.bars.push_back({k, t.from, t.to, t.bytes(), start, end});
    }
    double all = 0;
    for (std::size_t r = 0; r < n; ++r) {
      enter[r] = std::max({enter[r], send_free[r], recv_free[r]});
      all = std::max(all, enter[r]);
    }
    if (plan.barrier_between_phases) std::fill(enter.begin(), enter.end(), all);
  }
  for (double e : enter) s.makespan = std::max(s.makespan, e);
  return s;
}

bool write_matrix_svg(const std::string& path, const PatternData& p, std::string& error) {
  const core::CommMatrix& m = p.matrix;
  const Rank n = std::max<Rank>(m.size(), 1);
  const Rank block = (n + 255) / 256;  // ranks per cell
  const Rank cells = (n + block - 1) / block;
  const double cell = std::max(2.0, std::min(24.0, 640.0 / cells));
  const double left = 60, top = 60, side = cell * cells;
  const double width = std::max(left + side + 120, 680.0), height = top + side + 50;
  // Cell sums and the largest, for the colour scale (log).
  std::vector<std::vector<std::pair<Rank, Bytes>>> rows(static_cast<std::size_t>(cells));
  Bytes max_cell = 0, min_cell = std::numeric_limits<Bytes>::max();
  for (Rank i = 0; i < m.size(); ++i) {
    auto& row = rows[static_cast<std::size_t>(i / block)];
    for (const core::Entry& e : m.row(i)) {
      const Rank c = e.peer / block;
      auto it = std::find_if(row.begin(), row.end(), [c](const auto& x) { return x.first == c; });
      if (it == row.end()) row.push_back({c, e.bytes});
      else it->second += e.bytes;
    }
  }
  for (const auto& row : rows)
    for (const auto& [c, b] : row) {
      max_cell = std::max(max_cell, b);
      min_cell = std::min(min_cell, b);
    }
  if (max_cell == 0) min_cell = 0;
  const double lo = std::log(static_cast<double>(std::max<Bytes>(min_cell, 1)));
  const double hi = std::log(static_cast<double>(std::max<Bytes>(max_cell, 1)));
  auto scale = [&](Bytes b) {
    return hi > lo ? (std::log(static_cast<double>(b)) - lo) / (hi - lo) : 1.0;
  };

  std::ostringstream o;
  svg_begin(o, width, height, "Communication matrix, " + pattern_title(p));
  o << "<text x=\"" << fmt(left + side / 2, 6) << "\" y=\"" << fmt(top - 8, 6)
    << "\" text-anchor=\"middle\">destination rank" << (block > 1 ? "s (blocks of " + std::to_string(block) + ")" : "")
    << "</text>\n";
  o << "<text transform=\"translate(14," << fmt(top + side / 2, 6)
    << ") rotate(-90)\" text-anchor=\"middle\">source rank</text>\n";
  o << "<rect x=\"" << fmt(left, 6) << "\" y=\"" << fmt(top, 6) << "\" width=\"" << fmt(side, 6)
    << "\" height=\"" << fmt(side, 6) << "\" fill=\"#f4f4f4\" stroke=\"#999\"/>\n";
  const Rank label_every = std::max<Rank>(1, static_cast<Rank>(std::ceil(14.0 / cell)));
  for (Rank i = 0; i < cells; ++i) {
    const double y = top + cell * i;
    o << "<g class=\"rank-row\" data-rank=\"" << i * block << "\">";
    if (i % label_every == 0)
      o << "<text x=\"" << fmt(left - 4, 6) << "\" y=\"" << fmt(y + cell / 2 + 4, 6)
        << "\" text-anchor=\"end\" font-size=\"9\">" << i * block << "</text>";
    for (const auto& [c, b] : rows[static_cast<std::size_t>(i)])
      o << "<rect x=\"" << fmt(left + cell * c, 6) << "\" y=\"" << fmt(y, 6) << "\" width=\""
        << fmt(cell, 6) << "\" height=\"" << fmt(cell, 6) << "\" fill=\"" << heat(scale(b))
        << "\"><title>" << i * block << " -> " << c * block << ": " << b << " bytes</title></rect>";
    o << "</g>\n";
  }
  for (Rank c = 0; c < cells; c += label_every)
    o << "<text x=\"" << fmt(left + cell * c + cell / 2, 6) << "\" y=\"" << fmt(top + side + 12, 6)
      << "\" text-anchor=\"middle\" font-size=\"9\">" << c * block << "</text>\n";
  // Colour bar.
  const double bx = left + side + 30, bh = std::min(200.0, side);
  for (int k = 0; k < 20; ++k)
    o << "<rect x=\"" << fmt(bx, 6) << "\" y=\"" << fmt(top + bh * (19 - k) / 20, 6)
      << "\" width=\"14\" height=\"" << fmt(bh / 20 + 0.5, 6) << "\" fill=\"" << heat(k / 19.0)
      << "\"/>\n";
  o << "<text x=\"" << fmt(bx + 18, 6) << "\" y=\"" << fmt(top + 9, 6) << "\" font-size=\"9\">"
    << esc(human_bytes(static_cast<double>(max_cell))) << "</text>\n"
    << "<text x=\"" << fmt(bx + 18, 6) << "\" y=\"" << fmt(top + bh, 6) << "\" font-size=\"9\">"
    << esc(human_bytes(static_cast<double>(min_cell))) << "</text>\n"
    << "<text x=\"" << fmt(bx, 6) << "\" y=\"" << fmt(top + bh + 16, 6)
    << "\" font-size=\"9\">bytes (log)</text>\n";
  o << "</svg>\n";
  return finish(path, o, error);
}

bool write_gantt_svg(const std::string& path, const PatternData& p, const StrategyRow& row,
                     const Model& model, std::string& error) {
  const Schedule s = schedule(row.plan, model);
  const Rank n = std::max<Rank>(p.matrix.size(), 1);
  const double row_h = std::max(3.0, std::min(18.0, 720.0 / n));
  const double left = 60, top = 88, plot_w = 900, height = top + row_h * n + 50;
  const double span = s.makespan > 0 ? s.makespan : 1;
  const double xs = plot_w / span;
  std::ostringstream o;
  svg_begin(o, left + plot_w + 40, height,
            "Schedule of " + row.id + ", " + pattern_title(p));
  o << "<text x=\"10\" y=\"36\">" << row.phases << " phases, " << row.transfers
    << " messages; bars: the messages each rank sends, coloured by phase; one-port schedule on "
    << esc(model.machine_name()) << ", makespan " << esc(human_time(s.makespan));
  if (std::isfinite(row.predicted_s)) o << " (cost model: " << esc(human_time(row.predicted_s)) << ")";
  o << "</text>\n";
  // The phase colours' key (they repeat after kPhaseColours.size() phases).
  const std::size_t keyed = std::min<std::size_t>(row.plan.phases.size(), kPhaseColours.size());
  for (std::size_t k = 0; k < keyed; ++k) {
    const double x = 10 + 74 * static_cast<double>(k);
    o << "<rect x=\"" << fmt(x, 6) << "\" y=\"46\" width=\"10\" height=\"10\" fill=\""
      << kPhaseColours[k] << "\"/><text x=\"" << fmt(x + 14, 6) << "\" y=\"55\">phase " << k
      << "</text>\n";
  }
  if (row.plan.phases.size() > keyed)
    o << "<text x=\"" << fmt(10 + 74 * static_cast<double>(keyed), 6)
      << "\" y=\"55\">(colours repeat)</text>\n";
  const double step = tick_step(span, 8);
  for (double t = 0; t <= span * 1.0001; t += step) {
    const double x = left + t * xs;
    o << "<line x1=\"" << fmt(x, 6) << "\" y1=\"" << fmt(top - 4, 6) << "\" x2=\"" << fmt(x, 6)
      << "\" y2=\"" << fmt(top + row_h * n, 6) << "\" stroke=\"#ddd\"/>"
      << "<text x=\"" << fmt(x, 6) << "\" y=\"" << fmt(top - 8, 6)
      << "\" text-anchor=\"middle\" font-size=\"9\">" << esc(human_time(t)) << "</text>\n";
  }
  std::vector<std::vector<const Schedule::Bar*>> by_rank(static_cast<std::size_t>(n));
  for (const Schedule::Bar& b : s.bars)
    if (b.from >= 0 && b.from < n) by_rank[static_cast<std::size_t>(b.from)].push_back(&b);
  const Rank label_every = std::max<Rank>(1, static_cast<Rank>(std::ceil(12.0 / row_h)));
  for (Rank r = 0; r < n; ++r) {
    const double y = top + row_h * r;
    o << "<g class=\"rank-row\" data-rank=\"" << r << "\">";
    if (r % label_every == 0)
      o << "<text x=\"" << fmt(left - 4, 6) << "\" y=\"" << fmt(y + row_h / 2 + 3, 6)
        << "\" text-anchor=\"end\" font-size=\"9\">" << r << "</text>";
    for (const Schedule::Bar* b : by_rank[static_cast<std::size_t>(r)])
      o << "<rect x=\"" << fmt(left + b->start * xs, 6) << "\" y=\"" << fmt(y + 0.5, 6)
        << "\" width=\"" << fmt(std::max(0.5, (b->end - b->start) * xs), 6) << "\" height=\""
        << fmt(std::max(1.0, row_h - 1), 6) << "\" fill=\""
        << kPhaseColours[b->phase % kPhaseColours.size()] << "\" stroke=\"white\" stroke-width=\"0.3\"><title>phase "
        << b->phase << ": " << b->from << " -> " << b->to << ", " << b->bytes << " bytes, "
        << esc(human_time(b->start)) << " to " << esc(human_time(b->end)) << "</title></rect>";
    o << "</g>\n";
  }
  o << "<text x=\"" << fmt(left + plot_w / 2, 6) << "\" y=\"" << fmt(height - 20, 6)
    << "\" text-anchor=\"middle\">time since the call started</text>\n"
    << "<text transform=\"translate(14," << fmt(top + row_h * n / 2, 6)
    << ") rotate(-90)\" text-anchor=\"middle\">rank</text>\n</svg>\n";
  return finish(path, o, error);
}

bool write_strategies_svg(const std::string& path, const PatternData& p, const WhatIf& w,
                          const Model& model, std::string& error) {
  // Without the cost model, bars show the one-port schedule's makespan instead.
  const bool predicted = Model::have_cost();
  struct Bar {
    std::string id;
    double t;
  };
  std::vector<Bar> bars;
  for (const StrategyRow& r : w.rows)
    if (r.ok) bars.push_back({r.id, predicted ? r.predicted_s : schedule(r.plan, model).makespan});
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.t < b.t; });
  double tmax = 0;
  for (const Bar& b : bars)
    if (std::isfinite(b.t)) tmax = std::max(tmax, b.t);
  if (std::isfinite(w.lower_bound_s)) tmax = std::max(tmax, w.lower_bound_s);
  if (tmax <= 0) tmax = 1;
  const double left = 130, top = 60, bar_h = 18, plot_w = 560;
  const double height = top + bar_h * static_cast<double>(bars.size()) + 60;
  std::ostringstream o;
  svg_begin(o, left + plot_w + 110, height, "Strategies for " + pattern_title(p));
  o << "<text x=\"10\" y=\"36\">"
    << (predicted ? "cost model prediction on " + esc(model.machine_name())
                  : std::string("one-port schedule makespan (cost model not built)"))
    << " per call, best first; green: the best, grey: native"
    << (std::isfinite(w.lower_bound_s)
            ? "; dashed red: the lower bound, " + esc(human_time(w.lower_bound_s))
            : std::string())
    << "</text>\n";
  const double xs = plot_w / tmax;
  // A time axis under the bars, ticks labelled with their unit.
  const double axis_y = top + bar_h * static_cast<double>(bars.size()) + 4;
  const double step = tick_step(tmax, 6);
  o << "<line x1=\"" << fmt(left, 6) << "\" y1=\"" << fmt(axis_y, 6) << "\" x2=\""
    << fmt(left + plot_w, 6) << "\" y2=\"" << fmt(axis_y, 6) << "\" stroke=\"#999\"/>\n";
  for (double t = 0; t <= tmax * 1.0001; t += step)
    o << "<line x1=\"" << fmt(left + t * xs, 6) << "\" y1=\"" << fmt(axis_y, 6) << "\" x2=\""
      << fmt(left + t * xs, 6) << "\" y2=\"" << fmt(axis_y + 4, 6) << "\" stroke=\"#999\"/><text x=\""
      << fmt(left + t * xs, 6) << "\" y=\"" << fmt(axis_y + 15, 6)
      << "\" text-anchor=\"middle\" font-size=\"9\">" << esc(human_time(t)) << "</text>\n";
  o << "<text x=\"" << fmt(left + plot_w / 2, 6) << "\" y=\"" << fmt(axis_y + 32, 6)
    << "\" text-anchor=\"middle\">"
    << (predicted ? "predicted time per call" : "one-port schedule makespan") << "</text>\n";
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = top + bar_h * static_cast<double>(i);
    const bool native = bars[i].id == "native";
    o << "<g class=\"strategy\" data-id=\"" << esc(bars[i].id) << "\"><text x=\"" << fmt(left - 6, 6)
      << "\" y=\"" << fmt(y + bar_h * 0.7, 6) << "\" text-anchor=\"end\">" << esc(bars[i].id)
      << "</text>";
    if (std::isfinite(bars[i].t))
      o << "<rect x=\"" << fmt(left, 6) << "\" y=\"" << fmt(y + 2, 6) << "\" width=\""
        << fmt(std::max(0.5, bars[i].t * xs), 6) << "\" height=\"" << fmt(bar_h - 4, 6)
        << "\" fill=\"" << (native ? "#bab0ac" : i == 0 ? "#59a14f" : "#4e79a7") << "\"/>"
        << "<text x=\"" << fmt(left + bars[i].t * xs + 4, 6) << "\" y=\"" << fmt(y + bar_h * 0.7, 6)
        << "\" font-size=\"9\">" << esc(human_time(bars[i].t)) << "</text>";
    o << "</g>\n";
  }
  if (std::isfinite(w.lower_bound_s)) {
    const double x = left + w.lower_bound_s * xs;
    o << "<line x1=\"" << fmt(x, 6) << "\" y1=\"" << fmt(top - 4, 6) << "\" x2=\"" << fmt(x, 6)
      << "\" y2=\"" << fmt(top + bar_h * static_cast<double>(bars.size()), 6)
      << "\" stroke=\"#e15759\" stroke-dasharray=\"4 3\"/>\n";
  }
  o << "</svg>\n";
  return finish(path, o, error);
}

bool write_chrome_trace(const std::string& path, const Dataset& ds, std::string& error) {
  using Json = nlohmann::ordered_json;
  // MPI_Wtime is per rank (not synchronised unless MPI_WTIME_IS_GLOBAL): times are shown from
  // the earliest call of any rank.
  double t0 = std::numeric_limits<double>::infinity();
  for (const RankTrace& rt : ds.ranks)
    for (const trace::CallLoop& l : rt.trace.loops) t0 = std::min(t0, l.t_first);
  if (!std::isfinite(t0)) t0 = 0;
  Json events = Json::array();
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "MPI job"}}}});
  for (const RankTrace& rt : ds.ranks) {
    const trace::Trace& t = rt.trace;
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", t.world_rank},
                      {"args", {{"name", "rank " + std::to_string(t.world_rank)}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", t.world_rank},
                      {"args", {{"sort_index", t.world_rank}}}});
    for (const trace::CallLoop& l : t.loops) {
      std::string name;
      Json args = {{"calls", l.calls()}, {"iterations", l.iterations}};
      for (std::size_t i = 0; i < l.body.size(); ++i) {
        const trace::CallStats& c = l.body[i];
        std::string pat = "-";
        if (c.pattern >= 0) {
          const trace::PatternRow& pr = t.patterns[static_cast<std::size_t>(c.pattern)];
          for (const PatternData& pd : ds.patterns)
            if (pd.key.comm == t.comms[pr.comm] && pd.key.pattern == pr.pattern &&
                pd.key.hash == pr.matrix_hash)
              pat = pd.label;
        }
        const std::string what = std::string(trace::call_kind_name(c.kind)) + " " + pat + " " +
                                 t.strategies[c.strategy];
        name += (i ? " + " : "") + what;
        args[std::to_string(i)] = {
            {"call", what},
            {"comm", trace::to_string(t.comms[c.comm])},
            {"optimised", c.optimised},
            {"phases", c.phases},
            {"min_us", c.min_s * 1e6},
            {"mean_us", c.sum_s / static_cast<double>(l.iterations) * 1e6},
            {"max_us", c.max_s * 1e6}};
      }
      if (l.iterations > 1) name = "(" + name + ") x" + std::to_string(l.iterations);
      events.push_back({{"name", name},
                        {"cat", "mpi"},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", t.world_rank},
                        {"ts", (l.t_first - t0) * 1e6},
                        {"dur", std::max(0.0, l.t_end - l.t_first) * 1e6},
                        {"args", std::move(args)}});
    }
  }
  const Json doc = {{"displayTimeUnit", "ms"},
                    {"otherData", {{"source", ds.source}}},
                    {"traceEvents", std::move(events)}};
  // Names and paths from the trace need not be UTF-8: replaced, never an exception.
  return core::replace_file(path, doc.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n",
                            error);
}

bool write_csv(const std::string& prefix, const Dataset& ds, std::string& error) {
  const std::string mpath = prefix + "-matrix.csv", cpath = prefix + "-calls.csv";
  std::ostringstream m;
  m << "pattern,comm,comm_size,src,dst,bytes\n";
  for (const PatternData& p : ds.patterns)
    for (Rank i = 0; i < p.matrix.size(); ++i)
      for (const core::Entry& e : p.matrix.row(i))
        m << p.label << ',' << trace::to_string(p.key.comm) << ',' << p.comm_size << ',' << i
          << ',' << e.peer << ',' << e.bytes << '\n';
  if (!finish(mpath, m, error)) return false;
  std::ostringstream c;
  c << "rank,loop,iterations,body_index,kind,comm,pattern,strategy,optimised,phases,"
       "first_start_s,end_s,calls,min_s,mean_s,max_s,sum_s\n";
  for (const RankTrace& rt : ds.ranks) {
    const trace::Trace& t = rt.trace;
    for (std::size_t li = 0; li < t.loops.size(); ++li) {
      const trace::CallLoop& l = t.loops[li];
      for (std::size_t i = 0; i < l.body.size(); ++i) {
        const trace::CallStats& s = l.body[i];
        std::string pat;
        if (s.pattern >= 0) {
          const trace::PatternRow& pr = t.patterns[static_cast<std::size_t>(s.pattern)];
          for (const PatternData& pd : ds.patterns)
            if (pd.key.comm == t.comms[pr.comm] && pd.key.pattern == pr.pattern &&
                pd.key.hash == pr.matrix_hash)
              pat = pd.label;
        }
        c << t.world_rank << ',' << li << ',' << l.iterations << ',' << i << ','
          << trace::call_kind_name(s.kind) << ',' << trace::to_string(t.comms[s.comm]) << ','
          << pat << ',' << t.strategies[s.strategy] << ',' << (s.optimised ? 1 : 0) << ','
          << s.phases << ',' << fmt(l.t_first, 17) << ',' << fmt(l.t_end, 17) << ','
          << l.iterations << ',' << fmt(s.min_s, 9) << ','
          << fmt(s.sum_s / static_cast<double>(l.iterations), 9) << ',' << fmt(s.max_s, 9)
          << ',' << fmt(s.sum_s, 9) << '\n';
      }
    }
  }
  return finish(cpath, c, error);
}

}  // namespace commsched::analyze
