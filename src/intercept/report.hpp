#pragma once
/// What the library tells the user at MPI_Finalize: one record per learned pattern, merged over
/// all ranks on world rank 0 (calls from any rank, times as the maximum over ranks).
#include <mpi.h>

#include "intercept/p2p.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace commsched::intercept {

/// One strategy `auto` considered for a pattern: its prediction and, when tried, its
/// measurement (median over ranks' maximum, seconds per call).
struct CandidateRecord {
  char strategy[24] = {};
  double predicted_s = -1;
  double measured_s = -1;
  char rejected[64] = {};  ///< why it was not used, empty when it was a candidate
};

constexpr int kMaxCandidateRecords = 8;

/// How a pattern's strategy was settled (PatternRecord::verdict).
constexpr std::int64_t kVerdictNone = 0;         ///< forced, untried, or still undecided
constexpr std::int64_t kVerdictMeasured = 1;     ///< auto's trial decided in this run
constexpr std::int64_t kVerdictFromWisdom = 2;   ///< taken from COMMSCHED_WISDOM, no trial

/// Plain bytes so records travel in one PMPI_Gatherv.
struct PatternRecord {
  std::int64_t comm_root = 0;     ///< world rank of the communicator's rank 0
  std::int64_t comm_serial = 0;   ///< that rank's count of communicators it saw
  char call[32] = {};             ///< the entry point: "MPI_Alltoallv", "MPI_Neighbor_alltoall", ...
  std::int64_t pattern = 0;       ///< index of the pattern within its communicator
  std::int64_t comm_size = 0;
  std::int64_t calls = 0;
  std::int64_t calls_optimised = 0;
  std::int64_t nonzeros = 0;
  std::int64_t bytes = 0;
  std::int64_t phases = 0;
  double time_native_s = 0;
  double time_optimised_s = 0;
  double lower_bound_s = -1;      ///< the cost model's bound for one call on this machine
  double learning_s = 0;          ///< calls before the pattern was learned (native)
  double trial_s = 0;             ///< calls while auto's trial was undecided
  double native_per_call_s = -1;  ///< native's time per call (the trial's, else the native calls')
  std::uint64_t matrix_hash = 0;  ///< the pattern's key in COMMSCHED_WISDOM, with ...
  std::uint64_t layout_hash = 0;  ///< ... the node layout's
  std::int64_t verdict = kVerdictNone;
  double model_scale = 1;         ///< no machine file: the model scaled to this job's native calls
  char strategy[32] = {};
  char note[96] = {};             ///< why a pattern stayed native, when it did
  char phase_schedule[32] = {};   ///< the schedule the phase trial ran, empty when none
  std::int64_t candidate_count = 0;
  CandidateRecord candidates[kMaxCandidateRecords];
};

struct ReportHeader {
  int ranks = 0;
  std::string strategy_setting;
  std::vector<std::string> warnings;
  std::int64_t unlearned_calls = 0;  ///< native calls that never became part of a pattern
  std::int64_t faults_injected = 0;  ///< this rank's; summed over ranks in the report
  std::int64_t fallbacks = 0;        ///< this rank's; summed over ranks in the report
  std::int64_t device_calls = 0;     ///< calls on GPU memory run natively; summed over ranks
  std::int64_t paused_calls = 0;     ///< calls MPI_Pcontrol(0) sent native; summed over ranks
  std::string burst_level = "off";   ///< COMMSCHED_BURSTS as applied
  std::string native_reason;         ///< why every call ran natively, when one did
  std::string thread_level = "single";  ///< what MPI_Init_thread provided
  std::string burst_native_reason;   ///< why Isend/Irecv bursts ran natively, when set to watch
  std::vector<BurstSummary> bursts;  ///< Isend/Irecv burst patterns, already summed over ranks
  std::int64_t burst_posts_native = 0;  ///< posts passed to MPI unwatched; summed over ranks
  std::string in_step = "off";       ///< COMMSCHED_IN_STEP as applied
  std::int64_t in_step_synced = 0;   ///< communicators run in step; summed over ranks
  std::int64_t in_step_unsynced = 0;  ///< communicators its trial left native; summed
  std::int64_t in_step_short = 0;    ///< communicators where a barrier costs too much; summed
  std::int64_t in_step_lossless = 0;  ///< communicators whose nodes saw no TCP timeout; summed
  double in_step_ratio = -1;         ///< rank 0's trial: in step's time per call over native's
  std::int64_t phases_kept = 0;      ///< communicators the phase trial gave a schedule; summed
  std::int64_t phases_left = 0;      ///< communicators it left to their patterns' trials; summed
  double phase_ratio = -1;           ///< rank 0's phase trial: phased time over native's
  int phase_rounds = 0;              ///< the rounds of six epochs that ratio took (0: none)
};

/// Collective over `world`: gathers every rank's records to rank 0, which prints the summary
/// to stderr and, when `json_path` is not empty, writes the JSON report there. Returns the
/// merged records on rank 0 (empty elsewhere).
std::vector<PatternRecord> write_report(MPI_Comm world, const std::vector<PatternRecord>& mine,
                                        const ReportHeader& header, const std::string& json_path,
                                        bool print_summary);

}  // namespace commsched::intercept
