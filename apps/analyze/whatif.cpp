#include "analyze/whatif.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "plan/registry.hpp"

#if COMMSCHED_HAVE_COST
#include "cost/machine.hpp"
#include "cost/simulate.hpp"
#endif

namespace commsched::analyze {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

#if COMMSCHED_HAVE_COST
struct Model::Impl {
  cost::Machine machine;
};
bool Model::have_cost() { return true; }
#else
struct Model::Impl {};
bool Model::have_cost() { return false; }
#endif

Model::Model() : impl_(std::make_unique<Impl>()) {
  pair_time_ = [](Rank a, Rank b, Bytes bytes) {
    return a == b ? 0.0 : 5e-6 + 1e-9 * static_cast<double>(bytes);
  };
}
Model::~Model() = default;

bool Model::load(const std::string& machine, std::vector<int> node_of,
                 const std::vector<std::string>& hosts, std::string& error) {
#if COMMSCHED_HAVE_COST
  cost::Machine m;
  if (!cost::load_machine(machine, m, error)) return false;
  impl_->machine = m;
  name_ = m.name.empty() ? (machine.empty() ? "default" : machine) : m.name;
  topo_ = node_of.empty() ? core::Topology{} : cost::make_topology(m, std::move(node_of), hosts);
  pair_time_ = cost::pair_time(m, topo_);
  return true;
#else
  (void)hosts;
  (void)error;
  name_ = machine.empty() ? "none" : machine + " (not read: cost model not built)";
  topo_ = core::Topology{};
  topo_.node_of = std::move(node_of);
  return true;
#endif
}

double Model::pair_time(Rank a, Rank b, Bytes bytes) const { return pair_time_(a, b, bytes); }

double Model::predict(const core::Plan& plan, const core::CommMatrix& m) const {
#if COMMSCHED_HAVE_COST
  return cost::predict(plan, m, impl_->machine, topo_);
#else
  (void)plan;
  (void)m;
  return kNaN;
#endif
}

double Model::predict_native(const core::CommMatrix& m) const {
#if COMMSCHED_HAVE_COST
  return cost::predict_native(m, impl_->machine, topo_);
#else
  (void)m;
  return kNaN;
#endif
}

double Model::predict_call(const core::Plan* plan, const core::CommMatrix& m) const {
#if COMMSCHED_HAVE_COST
  return cost::predict_call(plan, m, impl_->machine, topo_);
#else
  (void)plan;
  (void)m;
  return kNaN;
#endif
}

double Model::lower_bound(const core::CommMatrix& m) const {
#if COMMSCHED_HAVE_COST
  return cost::lower_bound(m, impl_->machine, topo_);
#else
  (void)m;
  return kNaN;
#endif
}

StrategyRow plan_one(const std::string& id, const core::CommMatrix& m, const Model& model) {
  StrategyRow row;
  row.id = id;
  row.predicted_s = kNaN;
  const plan::Strategy* s = plan::find_strategy(id);
  if (!s) {
    row.note = "unknown strategy (valid: " + std::string(plan::strategy_id_list()) + ")";
    return row;
  }
  if (!s->plan) {  // native: the MPI library's own algorithm, modelled as everything at once
    row.ok = true;
    row.phases = 1;
    row.transfers = m.nonzeros();
    for (Rank i = 0; i < m.size(); ++i)
      for (const core::Entry& e : m.row(i))
        if (e.peer != i) row.wire_bytes += e.bytes;
    row.predicted_s = model.predict_native(m);
    row.per_call_s = model.predict_call(nullptr, m);
    const plan::Strategy* ac = plan::find_strategy("ac");
    if (ac && ac->plan) row.plan = ac->plan(m, plan::Options{});
    return row;
  }
  plan::Options o;
  o.topology = &model.topology();
  o.pair_time = [&model](Rank a, Rank b, Bytes bytes) { return model.pair_time(a, b, bytes); };
  try {
    const auto t0 = std::chrono::steady_clock::now();
    row.plan = s->plan(m, o);
    row.plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } catch (const std::exception& e) {
    row.note = std::string("planner failed: ") + e.what();
    return row;
  }
  const core::Validation v = core::validate(row.plan, m);
  if (!v.ok) {
    row.note = "invalid plan: " + v.error;
    return row;
  }
  row.ok = true;
  row.phases = row.plan.phases.size();
  row.transfers = row.plan.transfer_count();
  row.wire_bytes = row.plan.wire_bytes();
  for (Bytes b : core::staging_bytes_per_rank(row.plan)) row.staging_max = std::max(row.staging_max, b);
  row.predicted_s = model.predict(row.plan, m);
  row.per_call_s = model.predict_call(&row.plan, m);
  return row;
}

WhatIf what_if(const core::CommMatrix& m, const Model& model,
               const std::vector<std::string>& only) {
  WhatIf w;
  w.lower_bound_s = model.lower_bound(m);
  for (const plan::Strategy& s : plan::strategies()) {
    const bool named = std::find(only.begin(), only.end(), s.id) != only.end();
    if (!only.empty() && s.id != "native" && !named) continue;
    w.rows.push_back(plan_one(std::string(s.id), m, model));
  }
  if (Model::have_cost())
    std::stable_sort(w.rows.begin(), w.rows.end(), [](const StrategyRow& a, const StrategyRow& b) {
      if (a.ok != b.ok) return a.ok;
      return a.predicted_s < b.predicted_s;
    });
  return w;
}

}  // namespace commsched::analyze
