#pragma once
/// What every registered strategy would do with one matrix on one machine: its plan, phases,
/// bytes on the wire, staging memory, and (with src/cost built in) its predicted time against
/// the lower bound.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/comm_matrix.hpp"
#include "core/plan.hpp"
#include "core/topology.hpp"

namespace commsched::analyze {

/// The machine a what-if question is asked about, with the ranks' placement on it.
class Model {
 public:
  Model();
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  /// Whether this build has the cost model (src/cost); without it times are not predicted.
  static bool have_cost();
  /// `machine`: preset name or TOML path ("" = built-in default). `node_of`: node index of each
  /// rank of the communicator (empty: one rank per node); `hosts`: host name of each node.
  bool load(const std::string& machine, std::vector<int> node_of,
            const std::vector<std::string>& hosts, std::string& error);
  const std::string& machine_name() const { return name_; }
  const core::Topology& topology() const { return topo_; }
  /// α + β·bytes between two ranks (defaults α = 5 µs, β = 1 ns/B without the cost model).
  double pair_time(Rank a, Rank b, Bytes bytes) const;
  /// NaN without the cost model.
  double predict(const core::Plan& plan, const core::CommMatrix& m) const;
  double predict_native(const core::CommMatrix& m) const;
  /// Time per call as the library would run it (the per-call agreement included; plan null:
  /// native), which is what `auto` ranks the strategies by. NaN without the cost model.
  double predict_call(const core::Plan* plan, const core::CommMatrix& m) const;
  double lower_bound(const core::CommMatrix& m) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string name_ = "none";
  core::Topology topo_;
  std::function<double(Rank, Rank, Bytes)> pair_time_;
};

struct StrategyRow {
  std::string id;
  bool ok = false;                 ///< a valid plan (native: always)
  std::string note;                ///< why not, when not ok
  double predicted_s = 0;          ///< NaN without the cost model
  double per_call_s = 0;           ///< predicted_s with the library's agreement (NaN likewise)
  std::size_t phases = 0, transfers = 0;
  Bytes wire_bytes = 0;            ///< bytes sent between distinct ranks, forwarding included
  Bytes staging_max = 0;           ///< largest staging buffer of any rank
  double plan_s = 0;               ///< time this machine took to compute the plan
  core::Plan plan;
};

struct WhatIf {
  std::vector<StrategyRow> rows;   ///< best predicted first (registry order without the model)
  double lower_bound_s = 0;        ///< NaN without the cost model
};

/// Plans `m` with every registered strategy (and native) on `model`; with `only` not empty,
/// with native and the strategies it names (planning all of them on a dense 1024-rank matrix
/// takes minutes).
WhatIf what_if(const core::CommMatrix& m, const Model& model,
               const std::vector<std::string>& only = {});

/// One strategy's plan (nullopt-like: ok=false with a note on an unknown id or invalid plan).
StrategyRow plan_one(const std::string& id, const core::CommMatrix& m, const Model& model);

}  // namespace commsched::analyze
