#pragma once
/// commsched-analyze's outputs besides the text summary: SVG pictures, a Chrome trace-event
/// timeline, CSV tables. Each writer returns false with a message when the file cannot be
/// written.
#include <string>
#include <vector>

#include "analyze/dataset.hpp"
#include "analyze/whatif.hpp"

namespace commsched::analyze {

/// When each transfer of a plan runs: the Gantt chart's bars.
struct Schedule {
  struct Bar {
    std::size_t phase;
    Rank from, to;
    Bytes bytes;
    double start, end;
  };
  std::vector<Bar> bars;
  double makespan = 0;
};
/// Loosely synchronous one-port schedule: a rank enters phase k + 1 when its phase-k messages
/// are done; a message starts when both ends are in its phase and both ports are free, and
/// takes model.pair_time. No link sharing (the cost model's prediction accounts for that).
Schedule schedule(const core::Plan& plan, const Model& model);

/// Heat map of the matrix: one row (`<g class="rank-row">`) per rank up to 256 ranks, blocks of
/// ranks above that.
bool write_matrix_svg(const std::string& path, const PatternData& p, std::string& error);
/// Gantt chart of one plan: ranks as rows, the messages each rank sends as bars coloured by
/// phase (like paper 003, Figs. 2-9).
bool write_gantt_svg(const std::string& path, const PatternData& p, const StrategyRow& row,
                     const Model& model, std::string& error);
/// Predicted time per strategy, best first, with the lower bound.
bool write_strategies_svg(const std::string& path, const PatternData& p, const WhatIf& w,
                          const Model& model, std::string& error);

/// Chrome trace-event JSON (Perfetto, chrome://tracing): one track per rank, one slice per
/// call or per compressed loop of calls.
bool write_chrome_trace(const std::string& path, const Dataset& ds, std::string& error);

/// PREFIX-matrix.csv (pattern, comm, src, dst, bytes) and PREFIX-calls.csv (one line per loop
/// body entry of every rank).
bool write_csv(const std::string& prefix, const Dataset& ds, std::string& error);

}  // namespace commsched::analyze
