#pragma once
/// commsched-analyze --otf2 DIR: a job's traces as an OTF2 archive (the format Score-P writes,
/// read by Vampir, Scalasca and Vite). One location per world rank; every recorded call is a
/// region (MPI_Alltoallv, or an Isend/Irecv burst); a call that ran natively carries an
/// MPI_Alltoallv collective event, and a substituted call carries its schedule's messages as MPI
/// point-to-point send and receive events (tag = phase). The commsched trace keeps loops of
/// calls with their duration statistics, not each call's times: the calls of a loop are laid
/// out evenly from its first start to its last end, each as long as its mean.
/// Built only where libotf2 is found (COMMSCHED_OTF2).
#include <functional>
#include <string>

#include "analyze/dataset.hpp"
#include "core/plan.hpp"

namespace commsched::analyze {

/// What an export wrote.
struct Otf2Summary {
  std::uint64_t locations = 0, calls = 0, messages = 0, bytes = 0;
  std::uint64_t native_calls = 0, optimised_calls = 0;
};

/// The plan a substituted call of pattern `p` ran (its strategy replanned on its matrix), or
/// nullptr when none can be given: the call then has its region but no messages.
using PlanOf = std::function<const core::Plan*(const PatternData& p)>;

/// Writes `dir`/traces.otf2 (and its `traces/` directory of event and definition files).
/// Returns false with a message when the archive cannot be written (e.g. `dir` already holds
/// one).
bool write_otf2(const std::string& dir, const Dataset& ds, const PlanOf& plan_of,
                Otf2Summary& summary, std::string& error);

}  // namespace commsched::analyze
