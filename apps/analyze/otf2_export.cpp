#include "analyze/otf2_export.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <vector>

namespace commsched::analyze {
namespace {

constexpr std::uint64_t kTicksPerSecond = 1000000000;  // nanoseconds

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

struct ArchiveCloser {
  void operator()(OTF2_Archive* a) const { OTF2_Archive_Close(a); }
};

// Strings, regions and communicators of the global definitions, numbered as they are made.
struct Definitions {
  std::vector<std::string> strings;
  std::uint32_t string(const std::string& s) {
    const auto it = std::find(strings.begin(), strings.end(), s);
    if (it != strings.end()) return static_cast<std::uint32_t>(it - strings.begin());
    strings.push_back(s);
    return static_cast<std::uint32_t>(strings.size() - 1);
  }
  struct Comm {
    std::string name;
    std::vector<std::uint64_t> world_ranks;  // comm rank -> world rank
  };
  std::vector<Comm> comms;
  std::map<trace::CommId, std::uint32_t> comm_of;
};

// The OTF2 communicator of `id`, made from a pattern of it whose every rank is known; none
// (OTF2_UNDEFINED_COMM) when no such pattern exists.
std::uint32_t comm_for(Definitions& d, const Dataset& ds, const trace::CommId& id) {
  if (auto it = d.comm_of.find(id); it != d.comm_of.end()) return it->second;
  std::uint32_t ref = OTF2_UNDEFINED_COMM;
  for (const PatternData& p : ds.patterns) {
    if (!(p.key.comm == id) || p.world_rank_of.empty() ||
        std::find(p.world_rank_of.begin(), p.world_rank_of.end(), -1) != p.world_rank_of.end())
      continue;
    Definitions::Comm c{"comm " + trace::to_string(id), {}};
    for (int w : p.world_rank_of) c.world_ranks.push_back(static_cast<std::uint64_t>(w));
    d.comms.push_back(std::move(c));
    ref = static_cast<std::uint32_t>(d.comms.size() - 1);
    break;
  }
  d.comm_of[id] = ref;
  return ref;
}

const PatternData* pattern_of(const Dataset& ds, const trace::Trace& t, std::int32_t index) {
  if (index < 0 || static_cast<std::size_t>(index) >= t.patterns.size()) return nullptr;
  const trace::PatternRow& pr = t.patterns[static_cast<std::size_t>(index)];
  for (const PatternData& pd : ds.patterns)
    if (pd.key.comm == t.comms[pr.comm] && pd.key.pattern == pr.pattern &&
        pd.key.hash == pr.matrix_hash)
      return &pd;
  return nullptr;
}

// Bytes this comm rank sends to and receives from other ranks in one call of `m`.
std::pair<std::uint64_t, std::uint64_t> own_bytes(const core::CommMatrix& m, Rank rank) {
  std::uint64_t sent = 0, received = 0;
  for (Rank i = 0; i < m.size(); ++i)
    for (const core::Entry& e : m.row(i)) {
      if (i == e.peer) continue;
      if (i == rank) sent += e.bytes;
      if (e.peer == rank) received += e.bytes;
    }
  return {sent, received};
}

}  // namespace

bool write_otf2(const std::string& dir, const Dataset& ds, const PlanOf& plan_of,
                Otf2Summary& summary, std::string& error) {
  summary = {};
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(dir) / "traces.otf2", ec)) {
    error = dir + "/traces.otf2 exists: give a new directory";
    return false;
  }
  std::unique_ptr<OTF2_Archive, ArchiveCloser> archive(
      OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!archive) {
    error = "cannot create an OTF2 archive in " + dir;
    return false;
  }
  OTF2_Archive* a = archive.get();
  if (OTF2_Archive_SetFlushCallbacks(a, &flush_callbacks, nullptr) != OTF2_SUCCESS ||
      OTF2_Archive_SetSerialCollectiveCallbacks(a) != OTF2_SUCCESS ||
      OTF2_Archive_OpenEvtFiles(a) != OTF2_SUCCESS) {
    error = "cannot open the OTF2 event files in " + dir;
    return false;
  }

  // Times: every rank's MPI_Wtime from the earliest call of any rank (as --chrome-trace).
  double t0 = std::numeric_limits<double>::infinity(), t1 = 0;
  for (const RankTrace& rt : ds.ranks)
    for (const trace::CallLoop& l : rt.trace.loops) {
      t0 = std::min(t0, l.t_first);
      t1 = std::max(t1, l.t_end);
    }
  if (!std::isfinite(t0)) t0 = t1 = 0;
  auto ticks = [t0](double t) {
    return static_cast<std::uint64_t>(std::llround(std::max(0.0, t - t0) * kTicksPerSecond));
  };

  Definitions d;
  enum Region : std::uint32_t { kAlltoallv, kBurst, kRegions };
  std::map<std::uint32_t, std::uint64_t> events_of;  // location -> events written
  for (const RankTrace& rt : ds.ranks) {
    const trace::Trace& t = rt.trace;
    const auto loc = static_cast<OTF2_LocationRef>(t.world_rank);
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, loc);
    if (!w) {
      error = "cannot write the OTF2 events of rank " + std::to_string(t.world_rank);
      return false;
    }
    std::uint64_t last = 0;  // events of one location must not go back in time
    auto at = [&](double seconds) { return last = std::max(last, ticks(seconds)); };
    for (const trace::CallLoop& l : t.loops) {
      const double stride = std::max(0.0, l.t_end - l.t_first) / static_cast<double>(l.iterations);
      for (std::uint64_t it = 0; it < l.iterations; ++it) {
        double start = l.t_first + stride * static_cast<double>(it);
        for (const trace::CallStats& c : l.body) {
          const double mean = c.sum_s / static_cast<double>(l.iterations);
          const double end = start + mean;
          const bool a2a = c.kind == trace::CallKind::alltoallv;
          const std::uint32_t region = a2a ? kAlltoallv : kBurst;
          OTF2_EvtWriter_Enter(w, nullptr, at(start), region);
          ++summary.calls;
          const PatternData* p = pattern_of(ds, t, c.pattern);
          const std::uint32_t comm =
              c.comm < t.comms.size() ? comm_for(d, ds, t.comms[c.comm]) : OTF2_UNDEFINED_COMM;
          const trace::PatternRow* row =
              p ? &t.patterns[static_cast<std::size_t>(c.pattern)] : nullptr;
          if (a2a && !c.optimised && comm != OTF2_UNDEFINED_COMM) {
            ++summary.native_calls;
            std::pair<std::uint64_t, std::uint64_t> sizes{0, 0};
            if (p && row) sizes = own_bytes(p->matrix, row->comm_rank);
            OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, at(start));
            OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, at(end), OTF2_COLLECTIVE_OP_ALLTOALLV,
                                            comm, OTF2_UNDEFINED_UINT32, sizes.first,
                                            sizes.second);
          }
          const core::Plan* plan = a2a && c.optimised && p && row && comm != OTF2_UNDEFINED_COMM
                                       ? plan_of(*p)
                                       : nullptr;
          if (a2a && c.optimised) ++summary.optimised_calls;
          if (plan && !plan->phases.empty()) {
            // Phase k runs in the k-th slice of the call: sends at its start, receives at its end.
            const double slice = mean / static_cast<double>(plan->phases.size());
            const Rank me = row->comm_rank;
            for (std::size_t k = 0; k < plan->phases.size(); ++k) {
              const double ps = start + slice * static_cast<double>(k);
              const auto tag = static_cast<std::uint32_t>(k);
              for (const core::Transfer& tr : plan->phases[k].transfers)
                if (tr.from == me && tr.to != me) {
                  OTF2_EvtWriter_MpiSend(w, nullptr, at(ps), static_cast<std::uint32_t>(tr.to),
                                         comm, tag, tr.bytes());
                  ++summary.messages;
                  summary.bytes += tr.bytes();
                }
              for (const core::Transfer& tr : plan->phases[k].transfers)
                if (tr.to == me && tr.from != me)
                  OTF2_EvtWriter_MpiRecv(w, nullptr, at(ps + slice),
                                         static_cast<std::uint32_t>(tr.from), comm, tag,
                                         tr.bytes());
            }
          }
          OTF2_EvtWriter_Leave(w, nullptr, at(end), region);
          start = std::max(start, end);
        }
      }
    }
    std::uint64_t n = 0;
    OTF2_EvtWriter_GetNumberOfEvents(w, &n);
    events_of[static_cast<std::uint32_t>(loc)] = n;
    OTF2_Archive_CloseEvtWriter(a, w);
  }
  OTF2_Archive_CloseEvtFiles(a);

  // Every location needs its (empty) local definitions file.
  OTF2_Archive_OpenDefFiles(a);
  for (const auto& [loc, n] : events_of)
    if (OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(a, loc)) OTF2_Archive_CloseDefWriter(a, dw);
  OTF2_Archive_CloseDefFiles(a);

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  if (!g) {
    error = "cannot write the OTF2 definitions in " + dir;
    return false;
  }
  const std::uint32_t empty = d.string(""), machine = d.string("machine"),
                      node = d.string("node"), a2a_name = d.string("MPI_Alltoallv"),
                      burst_name = d.string("MPI_Isend/MPI_Irecv burst"),
                      a2a_doc = d.string("MPI_Alltoallv as commsched ran it"),
                      burst_doc = d.string("Isend/Irecv posts completed by one wait"),
                      world_name = d.string("ranks"), comm_group = d.string("comm group");
  std::vector<std::uint32_t> rank_names, comm_names;
  for (const auto& [loc, n] : events_of) rank_names.push_back(d.string("rank " + std::to_string(loc)));
  for (const Definitions::Comm& c : d.comms) comm_names.push_back(d.string(c.name));
  for (std::size_t i = 0; i < d.strings.size(); ++i)
    OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), d.strings[i].c_str());
  OTF2_GlobalDefWriter_WriteClockProperties(g, kTicksPerSecond, 0, ticks(t1) + 1,
                                            OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteRegion(g, kAlltoallv, a2a_name, a2a_name, a2a_doc,
                                   OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI,
                                   OTF2_REGION_FLAG_NONE, empty, 0, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, kBurst, burst_name, burst_name, burst_doc,
                                   OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI,
                                   OTF2_REGION_FLAG_NONE, empty, 0, 0);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  std::vector<std::uint64_t> locations;
  std::size_t i = 0;
  for (const auto& [loc, n] : events_of) {
    OTF2_GlobalDefWriter_WriteLocationGroup(g, loc, rank_names[i], OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                            0, OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, loc, rank_names[i], OTF2_LOCATION_TYPE_CPU_THREAD, n,
                                       loc);
    locations.push_back(loc);
    ++i;
  }
  summary.locations = locations.size();
  // Group 0: the MPI locations (world rank = location); then one group and one communicator
  // per communicator that has messages or collectives, its members given as world ranks.
  OTF2_GlobalDefWriter_WriteGroup(g, 0, world_name, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                  OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  static_cast<std::uint32_t>(locations.size()), locations.data());
  for (std::size_t c = 0; c < d.comms.size(); ++c) {
    const auto group = static_cast<OTF2_GroupRef>(c + 1);
    OTF2_GlobalDefWriter_WriteGroup(g, group, comm_group, OTF2_GROUP_TYPE_COMM_GROUP,
                                    OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                    static_cast<std::uint32_t>(d.comms[c].world_ranks.size()),
                                    d.comms[c].world_ranks.data());
    OTF2_GlobalDefWriter_WriteComm(g, static_cast<OTF2_CommRef>(c), comm_names[c], group,
                                   OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  }
  OTF2_Archive_CloseGlobalDefWriter(a, g);
  if (OTF2_Archive_Close(archive.release()) != OTF2_SUCCESS) {
    error = "cannot finish the OTF2 archive in " + dir;
    return false;
  }
  return true;
}

}  // namespace commsched::analyze
