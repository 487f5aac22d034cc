#pragma once
/// Every COMMSCHED_* setting, described once in a spec table (settings.cpp) from which the
/// variable names, the parser, the README table and the error messages are derived.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/log.hpp"
#include "plan/registry.hpp"

namespace commsched::settings {

/// COMMSCHED_BURSTS: how far Isend/Irecv bursts may be rescheduled.
enum class BurstLevel { off, local, collective };

/// COMMSCHED_NONBLOCKING: who runs MPI_Ialltoallv and MPI_Ialltoall.
enum class NonBlocking { native, eager, shift, automatic };

/// COMMSCHED_IN_STEP: whether the ranks enter each all-to-all together (learn/in_step.hpp).
enum class InStep { off, on, automatic, trial };

/// Where Linux keeps the node's TCP counters: COMMSCHED_IN_STEP_NETSTAT's default.
inline constexpr std::string_view kInStepNetstatDefault = "/proc/net/netstat";

struct Settings {
  bool enable = true;                 ///< COMMSCHED_ENABLE
  std::string strategy = "auto";      ///< COMMSCHED_STRATEGY: native, auto, or a strategy id
  int learn_calls = 3;                ///< COMMSCHED_LEARN_CALLS
  core::LogLevel log_level = core::LogLevel::warn;  ///< COMMSCHED_LOG_LEVEL
  std::string log_file;               ///< COMMSCHED_LOG_FILE (empty: stderr)
  std::string report_path;            ///< COMMSCHED_REPORT (empty: stderr summary only)
  std::string wisdom_path;            ///< COMMSCHED_WISDOM, resolved (empty: off)
  bool wisdom_default = false;        ///< ... is the user's cache location: create its directory
  plan::LambdaRule rsnh_lambda = plan::LambdaRule::incremental;  ///< COMMSCHED_RSNH_LAMBDA
  double rsnh_lambda_fixed = 0.875;   ///< set by COMMSCHED_RSNH_LAMBDA=<number>
  bool lp_barrier = false;            ///< COMMSCHED_LP_BARRIER
  std::uint64_t seed = 0x5eedc0ffeeULL;  ///< COMMSCHED_SEED
  std::string machine;                ///< COMMSCHED_MACHINE: preset name or TOML path (empty: built-in)
  bool trial = true;                  ///< COMMSCHED_TRIAL: auto measures its best candidates
  int trial_calls = 3;                ///< COMMSCHED_TRIAL_CALLS: least calls per candidate
  double trial_seconds = 0.1;         ///< COMMSCHED_TRIAL_SECONDS: short trials run more rounds
  double trial_budget = 0.02;         ///< COMMSCHED_TRIAL_BUDGET: auto's share of the job's time
  std::vector<std::string> candidates;  ///< COMMSCHED_CANDIDATES: restricts auto (empty: all)
  std::uint64_t max_staging = 256ull << 20;  ///< COMMSCHED_MAX_STAGING: bytes per rank
  std::string trace_dir;              ///< COMMSCHED_TRACE: directory for per-rank traces
  std::uint64_t trace_limit = 64ull << 20;  ///< COMMSCHED_TRACE_LIMIT: bytes per rank's trace
  bool trace_signal = false;          ///< COMMSCHED_TRACE_SIGNAL: SIGUSR1 flushes a report
  int fake_nodes = 0;                 ///< COMMSCHED_FAKE_NODES: 0 detects nodes from MPI
  std::string fault_site;             ///< COMMSCHED_FAULT: site to inject internal errors at
  double fault_probability = 0;       ///< ... with this probability per visit
  std::uint64_t fault_seed = 1;       ///< ... drawn from this seed (mixed with the rank)
  BurstLevel bursts = BurstLevel::local;  ///< COMMSCHED_BURSTS
  bool burst_hold_always = false;         ///< COMMSCHED_BURST_HOLD=always (tests)
  NonBlocking nonblocking = NonBlocking::native;  ///< COMMSCHED_NONBLOCKING
  int nonblocking_window = 1;             ///< COMMSCHED_NONBLOCKING_WINDOW: sends in flight
  InStep in_step = InStep::automatic;     ///< COMMSCHED_IN_STEP
  double in_step_epoch = 0.5;             ///< COMMSCHED_IN_STEP_EPOCH: seconds per trial epoch
  /// COMMSCHED_IN_STEP_NETSTAT: where `auto` reads the node's TCP retransmission timeouts.
  std::string in_step_netstat{kInStepNetstatDefault};
};

/// Sites COMMSCHED_FAULT can name.
inline constexpr std::string_view kFaultSites[] = {"plan", "gather", "staging", "send", "recv"};

/// One row of the spec table.
struct Spec {
  std::string_view key;          ///< without the COMMSCHED_ prefix
  std::string_view type;         ///< "bool", "int", "number", "path", "choice", "list", "size"
  std::string_view default_text;
  std::string_view description;
};

std::span<const Spec> specs();

/// Reads every setting through `getenv_fn` (name -> value or nullopt). Each bad value yields
/// one message in `warnings` naming the variable, the value and the valid choices, and keeps
/// the default. `environ_names` (all variable names of the environment) lets unknown
/// COMMSCHED_* names be reported.
Settings parse(const std::function<std::optional<std::string>(std::string_view)>& getenv_fn,
               std::span<const std::string> environ_names, std::vector<std::string>& warnings);

/// Reads the process environment.
Settings from_environment(std::vector<std::string>& warnings);

/// COMMSCHED_IN_STEP's spelling of `mode` ("off", "on", "auto"), from the table that parses it.
std::string_view in_step_name(InStep mode);

/// The spec table as a Markdown table (variable, type, default, description) for the README.
std::string settings_markdown_table();

}  // namespace commsched::settings
