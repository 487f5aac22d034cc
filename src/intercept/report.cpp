#include "intercept/report.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <exception>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "core/log.hpp"

namespace commsched::intercept {
namespace {

std::vector<PatternRecord> merge(const std::vector<PatternRecord>& all) {
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, PatternRecord> by_key;
  for (const PatternRecord& r : all) {
    auto [it, fresh] = by_key.try_emplace({r.comm_root, r.comm_serial, r.pattern}, r);
    if (fresh) continue;
    PatternRecord& m = it->second;
    m.calls = std::max(m.calls, r.calls);
    m.calls_optimised = std::max(m.calls_optimised, r.calls_optimised);
    m.time_native_s = std::max(m.time_native_s, r.time_native_s);
    m.time_optimised_s = std::max(m.time_optimised_s, r.time_optimised_s);
    m.learning_s = std::max(m.learning_s, r.learning_s);
    m.trial_s = std::max(m.trial_s, r.trial_s);
    m.native_per_call_s = std::max(m.native_per_call_s, r.native_per_call_s);
  }
  std::vector<PatternRecord> out;
  for (auto& [key, r] : by_key) out.push_back(r);
  return out;
}

// The pattern's calls at native's time per call, less what they took: above 0 the library
// saved time on it, learning and trial included; 0 when native's time is unknown.
double net_gain(const PatternRecord& r) {
  if (r.native_per_call_s < 0) return 0;
  return r.native_per_call_s * static_cast<double>(r.calls) - r.time_native_s - r.time_optimised_s;
}

// Key order follows the schema (docs/report.schema.json) so the file reads top-down. Numbers
// that are not finite (a time never measured as NaN) come out as null, text that is not UTF-8
// with U+FFFD: the report stays valid JSON whatever the job fed in.
std::string to_json(const std::vector<PatternRecord>& recs, const ReportHeader& h) {
  using Json = nlohmann::ordered_json;
  Json patterns = Json::array();
  for (const PatternRecord& r : recs) {
    Json candidates = Json::array();
    for (std::int64_t c = 0; c < r.candidate_count && c < kMaxCandidateRecords; ++c) {
      const CandidateRecord& cr = r.candidates[c];
      candidates.push_back({{"strategy", cr.strategy},
                            {"predicted_s", cr.predicted_s},
                            {"measured_s", cr.measured_s},
                            {"rejected", cr.rejected}});
    }
    patterns.push_back({{"comm", std::to_string(r.comm_root) + "." + std::to_string(r.comm_serial)},
                        {"call", r.call},
                        {"pattern", r.pattern},
                        {"comm_size", r.comm_size},
                        {"calls", r.calls},
                        {"calls_optimised", r.calls_optimised},
                        {"nonzeros", r.nonzeros},
                        {"bytes", r.bytes},
                        {"strategy", r.strategy},
                        {"phases", r.phases},
                        {"time_native_s", r.time_native_s},
                        {"time_optimised_s", r.time_optimised_s},
                        {"lower_bound_s", r.lower_bound_s},
                        {"learning_s", r.learning_s},
                        {"trial_s", r.trial_s},
                        {"native_per_call_s", r.native_per_call_s},
                        {"net_gain_s", net_gain(r)},
                        {"from_wisdom", r.verdict == kVerdictFromWisdom},
                        {"model_scale", r.model_scale},
                        {"note", r.note},
                        {"phase_schedule", r.phase_schedule},
                        {"candidates", std::move(candidates)}});
  }
  Json bursts = Json::array();
  for (const BurstSummary& b : h.bursts)
    bursts.push_back({{"pattern", b.index},
                      {"level", h.burst_level},
                      {"ranks", b.ranks},
                      {"posts", b.posts},
                      {"bytes", b.bytes},
                      {"seen", b.seen},
                      {"substituted", b.substituted},
                      {"fallbacks", b.fallbacks},
                      {"collective", b.collective}});
  const Json report = {{"commsched_version", "0.1.0"},
                       {"ranks", h.ranks},
                       {"strategy_setting", h.strategy_setting},
                       {"unlearned_calls", h.unlearned_calls},
                       {"faults_injected", h.faults_injected},
                       {"fallbacks", h.fallbacks},
                       {"device_calls", h.device_calls},
                      {"paused_calls", h.paused_calls},
                       {"native_reason", h.native_reason},
                       {"thread_level", h.thread_level},
                       {"patterns", std::move(patterns)},
                       {"burst_level", h.burst_level},
                       {"burst_native_reason", h.burst_native_reason},
                       {"bursts", std::move(bursts)},
                       {"burst_posts_native", h.burst_posts_native},
                       {"in_step", {{"mode", h.in_step},
                                    {"synced", h.in_step_synced},
                                    {"unsynced", h.in_step_unsynced},
                                    {"short_calls", h.in_step_short},
                                    {"lossless", h.in_step_lossless},
                                    {"trial_ratio", h.in_step_ratio},
                                    {"phases_kept", h.phases_kept},
                                    {"phases_left", h.phases_left},
                                    {"phase_ratio", h.phase_ratio},
                                    {"phase_rounds", h.phase_rounds}}},
                       {"warnings", h.warnings}};
  return report.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string seconds_text(double s) {
  if (s < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

void print_summary(const std::vector<PatternRecord>& recs, const ReportHeader& h) {
  std::fprintf(stderr,
               "[commsched] report: %zu learned pattern(s), strategy setting '%s', %lld unlearned "
               "call(s)\n",
               recs.size(), h.strategy_setting.c_str(), static_cast<long long>(h.unlearned_calls));
  if (!h.native_reason.empty())
    std::fprintf(stderr, "[commsched]   %s: %lld MPI_Alltoallv call(s) on rank 0\n",
                 h.native_reason.c_str(), static_cast<long long>(h.unlearned_calls));
  if (!h.burst_native_reason.empty())
    std::fprintf(stderr, "[commsched]   %s\n", h.burst_native_reason.c_str());
  if (h.device_calls > 0)
    std::fprintf(stderr, "[commsched]   %lld call(s) on GPU memory ran natively (summed over ranks)\n",
                 static_cast<long long>(h.device_calls));
  if (h.paused_calls > 0)
    std::fprintf(stderr,
                 "[commsched]   %lld call(s) ran natively while MPI_Pcontrol(0) paused the "
                 "library (summed over ranks)\n",
                 static_cast<long long>(h.paused_calls));
  if (h.in_step != "off") {
    std::fprintf(stderr,
                 "[commsched]   in step (COMMSCHED_IN_STEP=%s): %lld communicator(s) synced, %lld "
                 "left native by the trial, %lld where a barrier costs too much, %lld where no "
                 "node saw a TCP retransmission timeout (summed over ranks)",
                 h.in_step.c_str(), static_cast<long long>(h.in_step_synced),
                 static_cast<long long>(h.in_step_unsynced),
                 static_cast<long long>(h.in_step_short),
                 static_cast<long long>(h.in_step_lossless));
    if (h.in_step_ratio >= 0)
      std::fprintf(stderr, "; trial: in step %.3g of native's time between calls",
                   h.in_step_ratio);
    if (h.phases_kept + h.phases_left > 0)
      std::fprintf(stderr,
                   "; phase trial: %lld communicator(s) phased, %lld left to their patterns' "
                   "trials",
                   static_cast<long long>(h.phases_kept), static_cast<long long>(h.phases_left));
    if (h.phase_ratio >= 0)
      std::fprintf(stderr, ", phased %.3g of native's time between calls after %d round(s)",
                   h.phase_ratio, h.phase_rounds);
    std::fprintf(stderr, "\n");
  }
  if (h.faults_injected > 0 || h.fallbacks > 0)
    std::fprintf(stderr, "[commsched]   %lld fault(s) injected, %lld fallback(s) to native\n",
                 static_cast<long long>(h.faults_injected), static_cast<long long>(h.fallbacks));
  if (h.burst_posts_native > 0)
    std::fprintf(stderr,
                 "[commsched]   %lld Isend/Irecv post(s) went straight to MPI, unwatched: their "
                 "bursts could not gain (summed over ranks)\n",
                 static_cast<long long>(h.burst_posts_native));
  for (const BurstSummary& b : h.bursts)
    std::fprintf(stderr,
                 "[commsched]   burst pattern %d (bursts=%s): %lld rank(s), up to %lld posts, %lld "
                 "bursts, %lld substituted (%lld as collective exchanges), %lld fell back\n",
                 b.index, h.burst_level.c_str(), static_cast<long long>(b.ranks),
                 static_cast<long long>(b.posts), static_cast<long long>(b.seen),
                 static_cast<long long>(b.substituted), static_cast<long long>(b.collective),
                 static_cast<long long>(b.fallbacks));
  for (const PatternRecord& r : recs) {
    std::fprintf(stderr,
                 "[commsched]   comm %lld.%lld pattern %lld (%s): %lld ranks, %lld non-zeros, %lld bytes;"
                 " strategy %s, %lld phases; %lld calls, %lld optimised;"
                 " native %.3g s/call, optimised %.3g s/call%s%s\n",
                 static_cast<long long>(r.comm_root), static_cast<long long>(r.comm_serial),
                 static_cast<long long>(r.pattern), r.call, static_cast<long long>(r.comm_size),
                 static_cast<long long>(r.nonzeros), static_cast<long long>(r.bytes), r.strategy,
                 static_cast<long long>(r.phases), static_cast<long long>(r.calls),
                 static_cast<long long>(r.calls_optimised),
                 r.calls > r.calls_optimised
                     ? r.time_native_s / static_cast<double>(r.calls - r.calls_optimised)
                     : 0.0,
                 r.calls_optimised ? r.time_optimised_s / static_cast<double>(r.calls_optimised) : 0.0,
                 r.note[0] ? "; " : "", r.note);
    if (r.phase_schedule[0])
      std::fprintf(stderr, "[commsched]     the phase trial ran %s against native\n",
                   r.phase_schedule);
    if (r.lower_bound_s >= 0)
      std::fprintf(stderr, "[commsched]     lower bound on this machine model: %s per call\n",
                   seconds_text(r.lower_bound_s).c_str());
    if (r.model_scale != 1)
      std::fprintf(stderr,
                   "[commsched]     no machine file: the built-in model scaled x%.3g to this "
                   "job's native calls\n",
                   r.model_scale);
    if (r.native_per_call_s >= 0)
      std::fprintf(stderr,
                   "[commsched]     time learning %s, in trial %s, running %s; net %s %s against "
                   "native\n",
                   seconds_text(r.learning_s).c_str(), seconds_text(r.trial_s).c_str(),
                   seconds_text(std::max(0.0, r.time_native_s + r.time_optimised_s -
                                                  r.learning_s - r.trial_s))
                       .c_str(),
                   net_gain(r) >= 0 ? "gain" : "loss", seconds_text(std::abs(net_gain(r))).c_str());
    for (std::int64_t c = 0; c < r.candidate_count && c < kMaxCandidateRecords; ++c) {
      const CandidateRecord& cr = r.candidates[c];
      if (cr.rejected[0]) {
        std::fprintf(stderr, "[commsched]     candidate %-12s not used: %s\n", cr.strategy,
                     cr.rejected);
      } else {
        std::fprintf(stderr,
                     "[commsched]     candidate %-12s predicted %s, measured %s to the next call\n",
                     cr.strategy, seconds_text(cr.predicted_s).c_str(),
                     seconds_text(cr.measured_s).c_str());
      }
    }
  }
}

}  // namespace

std::vector<PatternRecord> write_report(MPI_Comm world, const std::vector<PatternRecord>& mine,
                                        const ReportHeader& header, const std::string& json_path,
                                        bool print) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(world, &rank);
  PMPI_Comm_size(world, &size);
  const int my_bytes = static_cast<int>(mine.size() * sizeof(PatternRecord));
  std::vector<int> counts(rank == 0 ? static_cast<std::size_t>(size) : 0);
  PMPI_Gather(&my_bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world);
  std::vector<int> displs(counts.size());
  int total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = total;
    total += counts[i];
  }
  std::vector<PatternRecord> all(static_cast<std::size_t>(total) / sizeof(PatternRecord));
  PMPI_Gatherv(mine.data(), my_bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE,
               0, world);
  const std::int64_t mine_counts[10] = {header.faults_injected, header.fallbacks,
                                        header.device_calls,    header.paused_calls,
                                        header.in_step_synced,  header.in_step_unsynced,
                                        header.in_step_short,   header.in_step_lossless,
                                        header.phases_kept,     header.phases_left};
  std::int64_t sums[10] = {};
  PMPI_Reduce(mine_counts, sums, 10, MPI_INT64_T, MPI_SUM, 0, world);
  if (rank != 0) return {};
  ReportHeader h = header;
  h.faults_injected = sums[0];
  h.fallbacks = sums[1];
  h.device_calls = sums[2];
  h.paused_calls = sums[3];
  h.in_step_synced = sums[4];
  h.in_step_unsynced = sums[5];
  h.in_step_short = sums[6];
  h.in_step_lossless = sums[7];
  h.phases_kept = sums[8];
  h.phases_left = sums[9];
  std::vector<PatternRecord> recs = merge(all);
  if (print) print_summary(recs, h);
  if (json_path.empty()) return recs;
  // Written whole or not at all, and only onto a regular file or a new name: a device, FIFO or
  // symbolic link given as the report is refused rather than replaced (README "Report").
  std::string text;
  try {
    text = to_json(recs, h);
  } catch (const std::exception& e) {  // out of memory: the job goes on without the file
    core::log_warn(std::string("cannot build the COMMSCHED_REPORT JSON: ") + e.what());
    return recs;
  }
  if (std::string error; !core::replace_file(json_path, text, error))
    core::log_warn("cannot write COMMSCHED_REPORT: " + error + "; no JSON report written");
  return recs;
}

}  // namespace commsched::intercept
