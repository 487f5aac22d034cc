#include "settings/settings.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <set>

#include "core/parse.hpp"

// Declared by <unistd.h> under _GNU_SOURCE; declared here so this file needs no POSIX header.
extern "C" {
extern char** environ;
}

namespace commsched::settings {
namespace {

constexpr std::string_view kPrefix = "COMMSCHED_";
constexpr int kLearnCallsMax = 1000000;

// The spec table. Everything users see (variable names, README table, messages) comes from
// here; the parsers below are matched to it by key (checked at compile time).
constexpr std::array kSpecs{
    Spec{"ENABLE", "bool", "1",
         "`0` turns commsched into a pure pass-through: every call goes straight to `PMPI_*`."},
    Spec{"STRATEGY", "choice", "auto",
         "`native` (always the MPI library's own call), `auto` (a documented rule picks per learned pattern; see the README), "
         "or one strategy id. An unknown name gives one warning and runs `native`."},
    Spec{"LEARN_CALLS", "int", "3",
         "Identical calls (same communicator and counts) before a pattern counts as learned and "
         "gets a plan; 1 to 1000000."},
    Spec{"BURSTS", "choice", "local",
         "Isend/Irecv bursts: `off` (never touched), `local` (a learned burst's sends are released "
         "in shift order; no agreement needed) or `collective` (opt-in: a burst every rank votes "
         "for runs as one collective exchange through the Alltoallv path, so every strategy and "
         "`auto` apply; bursts on `MPI_COMM_WORLD` or on a communicator made by a call of all its "
         "ranks, such as each rank's part of a split)."},
    Spec{"BURST_HOLD", "choice", "auto",
         "Which learned bursts level `local` holds and reorders: `auto` (only where the shift "
         "order changes the order of sends to at least 3 peers and a trial against native shows "
         "it faster; every other burst goes straight to MPI) or `always` (every learned burst; "
         "for tests)."},
    Spec{"NONBLOCKING", "choice", "native",
         "`MPI_Ialltoallv`, `MPI_Ialltoall`, `MPI_Ialltoallw`, `MPI_Ineighbor_alltoallv`, "
         "`MPI_Ineighbor_alltoall`, `MPI_Ineighbor_alltoallw` and the persistent forms (`MPI_Alltoallv_init` and the like): `native` (passed to MPI), "
         "`eager` (the library's engine posts every message at the call, sends in shift order), "
         "`shift` (receives posted at the call, sends released in shift order with at most "
         "`COMMSCHED_NONBLOCKING_WINDOW` in flight, progressed inside the completion calls and all "
         "released before any other MPI call that may block) or `auto` (a trial of the three per "
         "communicator made by a call of every rank of `MPI_COMM_WORLD`, agreed inside the "
         "application's blocking collectives on communicators congruent to it; persistent forms "
         "and other communicators stay MPI's own). On `MPI_COMM_WORLD` and on communicators "
         "made by the communicator and topology constructors (README, \"What happens inside "
         "your job\"), from C or Fortran; in-place calls, multigraph neighbourhoods and the "
         "others pass to MPI."},
    Spec{"NONBLOCKING_WINDOW", "int", "1",
         "Sends of one `shift` exchange in flight at once; 1 to 65536."},
    Spec{"IN_STEP", "choice", "auto",
         "Whether the ranks enter each blocking all-to-all together, after a barrier: `auto` "
         "(with `STRATEGY=auto`: on a communicator whose calls come 20 ms or more apart, where "
         "a barrier costs at most 5 % of that, once the job's nodes have seen TCP "
         "retransmission timeouts, a job-wide trial of epochs run in step and not, after which "
         "the barrier stays unless in step measured more than 8 % slower, then, where a "
         "pattern has a schedule to try, a job-wide phase trial of epochs four times as "
         "long, every such pattern phased or all native, after which each keeps its schedule "
         "where phased measured at least 3 % faster (faster at all once another communicator "
         "of the job kept its own), over up to three rounds of six epochs "
         "where one cannot tell; see the README), "
         "`trial` (that trial without waiting for timeouts: the barrier stays where in step "
         "measured at least 3 % faster), `on` (every call on every communicator) or `off`."},
    Spec{"IN_STEP_EPOCH", "number", "0.5",
         "Seconds per epoch of the in-step trial, on the job's clock from `MPI_Init` (the "
         "phase trial's are four times as long); a communicator decides after six whole "
         "epochs; 0.001 to 60."},
    Spec{"IN_STEP_NETSTAT", "path", "/proc/net/netstat",
         "Where `IN_STEP=auto` reads the node's count of TCP retransmission timeouts "
         "(`TCPTimeouts` on a `TcpExt:` line): at `MPI_Init`, then at most every 0.1 s while a "
         "communicator gauges, waits for word of one or runs the trial. Another path serves a "
         "container whose `/proc` hides the host's count, or a test that writes the count "
         "itself. A file that cannot be read (64 KiB at most) or has no such count makes the "
         "count unknown: the trial then runs without waiting, as under `trial`."},
    Spec{"LOG_LEVEL", "choice", "warn", "`quiet`, `warn`, `info` (rank 0) or `debug`."},
    Spec{"LOG_FILE", "path", "",
         "Write log lines to `PATH.rN` (one file per rank) instead of stderr. Only a regular "
         "file (created if absent): a FIFO, device or symbolic link there gets one warning and "
         "logging stays on stderr; if the file stops taking lines (a full disk), one warning on "
         "stderr and logging continues there."},
    Spec{"REPORT", "path", "",
         "Rank 0 writes a JSON report of patterns, plans and timings here at `MPI_Finalize`: "
         "to a new temporary file next to it, renamed onto it, so it is whole or untouched. "
         "Only onto a regular file or a new name: a symbolic link, FIFO, device (`/dev/null` "
         "too: leave the variable unset for no report) or directory gets one warning and "
         "nothing is written."},
    Spec{"WISDOM", "path", "",
         "File of `auto`'s trial verdicts (and `COMMSCHED_NONBLOCKING=auto`'s), keyed by pattern, "
         "communicator size, node layout, machine model and commsched version: a rerun of the same "
         "job skips the trial (rank 0 reads it at `MPI_Init` and writes it at `MPI_Finalize`). "
         "`default`: `$XDG_CACHE_HOME/commsched/wisdom`, else `~/.cache/commsched/wisdom`. Unset: "
         "off, so no run depends on what an earlier one left. A stale, corrupt or foreign file is "
         "ignored with one message."},
    Spec{"RSNH_LAMBDA", "choice", "incremental",
         "How `rs_nh` picks its split threshold λ: `incremental`, `proportional`, `one` (never "
         "split), `fixed` (λ = 0.875), or a number in (0, 1] meaning `fixed` with that λ."},
    Spec{"LP_BARRIER", "bool", "0",
         "`1` synchronises all ranks between the phases of `lp_xor` and `lp_shift`."},
    Spec{"SEED", "int", "0x5eedc0ffee",
         "Seed of the randomised planners, an unsigned 64-bit integer in decimal or `0x` hex "
         "(default 407715774446). Every rank must use the same value."},
    Spec{"MACHINE", "path", "",
         "Machine cost model: a preset name from `config/machines/` (e.g. `cm5`, `lemieux`) or "
         "the path of a TOML machine file. Unset: the built-in default. A malformed file gives "
         "one error naming file, line and key, and the job runs native (limits: \"Machine "
         "files\" below). Not read at all when `COMMSCHED_ENABLE=0`."},
    Spec{"TRIAL", "bool", "1",
         "`auto` measures its best predicted candidates in pairs against native, within 2 % of "
         "the job's time so far in all-to-all calls, and keeps a candidate only when a signed-rank test "
         "over its pairs finds it faster by 3 %; `0` trusts the prediction."},
    Spec{"TRIAL_CALLS", "int", "3",
         "Pairs (a candidate's call next to a native call) per candidate before the trial's "
         "first checkpoint; the checkpoints follow at twice as many, up to 16 × this; 1 to 1000."},
    Spec{"TRIAL_SECONDS", "number", "0.1",
         "`auto` tries up to 8 planned candidates instead of 3 where the cost model predicts a "
         "round of them and native, `TRIAL_CALLS` + 1 times, in less than this many seconds; 0 to "
         "3600, `0`: always 3."},
    Spec{"TRIAL_BUDGET", "number", "0.02",
         "The most of the job's time so far in all-to-all calls (every communicator) that "
         "`auto` spends on learning a pattern, probing and its trial (each paid only once this share covers "
         "it); 0.001 to 1, `1`: learn and try at once."},
    Spec{"CANDIDATES", "list", "",
         "Comma-separated strategy ids `auto` may choose from (native is always a candidate). "
         "Unset: every strategy."},
    Spec{"MAX_STAGING", "size", "256M",
         "Most staging memory per rank an indirect plan may use, in bytes with an optional K, M "
         "or G suffix (powers of 1024); a plan that needs more is not chosen."},
    Spec{"TRACE", "path", "",
         "Directory where every rank writes its trace file (created if missing). A FIFO, "
         "device or symbolic link at a rank's trace name (`rank<R>.cstrace` or its `.part`) is "
         "not opened or replaced: that rank writes no trace, one warning."},
    Spec{"TRACE_LIMIT", "size", "64M",
         "Largest trace file per rank, in bytes with an optional K, M or G suffix."},
    Spec{"TRACE_SIGNAL", "bool", "0", "`1`: `SIGUSR1` makes every rank flush its trace mid-run."},
    Spec{"FAKE_NODES", "int", "0",
         "For tests and what-if runs: pretend each communicator's ranks sit on this many nodes "
         "(consecutive blocks of ranks); `0` detects nodes from MPI (ranks with the same "
         "processor name, i.e. host, share a node)."},
    Spec{"FAULT", "choice", "",
         "Testing only: `SITE:PROBABILITY[:SEED]` injects internal errors at `plan`, `gather`, "
         "`staging`, `send` or `recv`; the library must fall back to native consistently."},
};

// ---- value helpers ----------------------------------------------------------------------

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

/// The value as it goes into a message: printable ASCII kept, other bytes as \xNN (the value
/// may hold anything, and the terminal should not receive it raw), long values cut short.
std::string quoted(std::string_view value) {
  constexpr std::size_t kMaxShown = 64;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < value.size() && i < kMaxShown; ++i) {
    const auto byte = static_cast<unsigned char>(value[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += value[i];
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  if (value.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

std::string var_name(std::string_view key) {
  std::string name(kPrefix);
  name += key;
  return name;
}

using core::parse_whole;

/// Whole-string finite decimal number; nullopt on empty input, junk, nan or inf.
std::optional<double> parse_number(std::string_view text) {
  const auto value = parse_whole<double>(text);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(std::string_view text) {
  for (std::string_view yes : {"1", "true", "yes", "on"})
    if (iequals(text, yes)) return true;
  for (std::string_view no : {"0", "false", "no", "off"})
    if (iequals(text, no)) return false;
  return std::nullopt;
}

// ---- per-setting parsers ----------------------------------------------------------------

/// Collects the one message a bad value produces.
class Reporter {
 public:
  explicit Reporter(std::vector<std::string>& warnings) : warnings_(warnings) {}
  /// "COMMSCHED_KEY='value' is not <what>; <fallback>"
  void bad_value(std::string_view key, std::string_view value, std::string_view what,
                 std::string_view fallback) {
    std::string msg = var_name(key);
    msg += '=';
    msg += quoted(value);
    msg += " is not ";
    msg += what;
    msg += "; ";
    msg += fallback;
    warnings_.push_back(std::move(msg));
  }
  void bad_value_keep_default(const Spec& spec, std::string_view value, std::string_view what) {
    std::string fallback = "using the default ";
    fallback += spec.default_text;
    bad_value(spec.key, value, what, fallback);
  }
  std::vector<std::string>& warnings() { return warnings_; }

 private:
  std::vector<std::string>& warnings_;
};

using Apply = void (*)(const Spec&, std::string_view, Settings&, Reporter&);

void apply_bool(const Spec& spec, std::string_view value, bool& field, Reporter& r) {
  if (const auto b = parse_bool(value))
    field = *b;
  else
    r.bad_value_keep_default(spec, value,
                             "a boolean (valid: 0, 1, true, false, yes, no, on, off)");
}

void apply_enable(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  apply_bool(spec, value, s.enable, r);
}

void apply_lp_barrier(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  apply_bool(spec, value, s.lp_barrier, r);
}

/// "native, auto, <every other registry id>", the order users see everywhere.
std::string strategy_choices() {
  std::string list = "native, auto";
  for (const plan::Strategy& st : plan::strategies()) {
    if (st.id == "native" || st.id == "auto") continue;
    list += ", ";
    list += st.id;
  }
  return list;
}

void apply_strategy(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  // Case does not matter; what is stored is the id as the registry spells it.
  for (std::string_view builtin : {"native", "auto"}) {
    if (iequals(value, builtin)) {
      s.strategy = builtin;
      return;
    }
  }
  for (const plan::Strategy& st : plan::strategies()) {
    if (iequals(value, st.id)) {
      s.strategy = st.id;
      return;
    }
  }
  // An unknown name must not silently become `auto`: whoever asked for a specific strategy
  // gets the one behaviour that is certainly correct.
  s.strategy = "native";
  r.bad_value(spec.key, value, "a known strategy (valid: " + strategy_choices() + ")",
              "running native");
}

void apply_learn_calls(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  const auto n = parse_whole<int>(value, 10);
  if (n && *n >= 1 && *n <= kLearnCallsMax)
    s.learn_calls = *n;
  else
    r.bad_value_keep_default(spec, value,
                             "a whole number from 1 to " + std::to_string(kLearnCallsMax));
}

// A choice among named values: the first name `value` equals (ignoring case), else one warning
// naming them all.
template <typename T, std::size_t N>
void apply_named(const Spec& spec, std::string_view value,
                 const std::array<std::pair<std::string_view, T>, N>& names, T& out, Reporter& r,
                 std::string_view what) {
  for (const auto& [name, v] : names) {
    if (iequals(value, name)) {
      out = v;
      return;
    }
  }
  std::string valid;
  for (const auto& [name, v] : names) valid += (valid.empty() ? "" : ", ") + std::string(name);
  r.bad_value_keep_default(spec, value, std::string(what) + " (valid: " + valid + ")");
}

void apply_bursts(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  static constexpr std::array<std::pair<std::string_view, BurstLevel>, 3> kLevels{{
      {"off", BurstLevel::off},
      {"local", BurstLevel::local},
      {"collective", BurstLevel::collective},
  }};
  apply_named(spec, value, kLevels, s.bursts, r, "a burst level");
}

void apply_burst_hold(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  if (iequals(value, "auto") || iequals(value, "always")) {
    s.burst_hold_always = iequals(value, "always");
    return;
  }
  r.bad_value_keep_default(spec, value, "auto or always");
}

void apply_nonblocking(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  static constexpr std::array<std::pair<std::string_view, NonBlocking>, 4> kModes{{
      {"native", NonBlocking::native},
      {"eager", NonBlocking::eager},
      {"shift", NonBlocking::shift},
      {"auto", NonBlocking::automatic},
  }};
  apply_named(spec, value, kModes, s.nonblocking, r, "a mode");
}

constexpr std::array<std::pair<std::string_view, InStep>, 4> kInStepModes{{
    {"off", InStep::off},
    {"on", InStep::on},
    {"auto", InStep::automatic},
    {"trial", InStep::trial},
}};

void apply_in_step(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  apply_named(spec, value, kInStepModes, s.in_step, r, "a mode");
}

void apply_in_step_epoch(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  const auto seconds = parse_number(value);
  if (seconds && *seconds >= 0.001 && *seconds <= 60.0)
    s.in_step_epoch = *seconds;
  else
    r.bad_value_keep_default(spec, value, "a number of seconds from 0.001 to 60");
}

void apply_in_step_netstat(const Spec&, std::string_view value, Settings& s, Reporter&) {
  if (!value.empty()) s.in_step_netstat = value;  // read as the job starts: unreadable is unknown
}

void apply_nonblocking_window(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  constexpr int kMax = 65536;
  const auto n = parse_whole<int>(value, 10);
  if (n && *n >= 1 && *n <= kMax)
    s.nonblocking_window = *n;
  else
    r.bad_value_keep_default(spec, value, "a whole number from 1 to " + std::to_string(kMax));
}

void apply_log_level(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  static constexpr std::array<std::pair<std::string_view, core::LogLevel>, 4> kLevels{{
      {"quiet", core::LogLevel::quiet},
      {"warn", core::LogLevel::warn},
      {"info", core::LogLevel::info},
      {"debug", core::LogLevel::debug},
  }};
  apply_named(spec, value, kLevels, s.log_level, r, "a log level");
}

void apply_log_file(const Spec&, std::string_view value, Settings& s, Reporter&) {
  s.log_file = value;  // any byte string is a path; empty means stderr, the default
}

void apply_report(const Spec&, std::string_view value, Settings& s, Reporter&) {
  s.report_path = value;
}

void apply_wisdom(const Spec&, std::string_view value, Settings& s, Reporter&) {
  // `default` is resolved once the whole environment is at hand (parse, below).
  s.wisdom_default = value == "default";
  s.wisdom_path = value;
}

/// COMMSCHED_WISDOM=default: the XDG cache directory (an unset, empty or relative
/// XDG_CACHE_HOME is ignored, as the XDG Base Directory specification says), else ~/.cache.
void resolve_default_wisdom(
    const std::function<std::optional<std::string>(std::string_view)>& getenv_fn, Settings& s,
    Reporter& r) {
  std::string base;
  if (auto xdg = getenv_fn("XDG_CACHE_HOME"); xdg && !xdg->empty() && xdg->front() == '/') {
    base = std::move(*xdg);
  } else if (auto home = getenv_fn("HOME"); home && !home->empty()) {
    base = std::move(*home);
    if (base.back() != '/') base += '/';
    base += ".cache";
  }
  if (base.empty()) {
    s.wisdom_path.clear();
    s.wisdom_default = false;
    r.bad_value("WISDOM", "default", "usable here (neither XDG_CACHE_HOME nor HOME is set)",
                "no wisdom kept");
    return;
  }
  if (base.back() != '/') base += '/';
  s.wisdom_path = base + "commsched/wisdom";
}

void apply_rsnh_lambda(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  static constexpr std::array<std::pair<std::string_view, plan::LambdaRule>, 4> kRules{{
      {"incremental", plan::LambdaRule::incremental},
      {"proportional", plan::LambdaRule::proportional},
      {"one", plan::LambdaRule::one},
      {"fixed", plan::LambdaRule::fixed},
  }};
  for (const auto& [name, rule] : kRules) {
    if (iequals(value, name)) {
      s.rsnh_lambda = rule;
      return;
    }
  }
  if (const auto lambda = parse_number(value); lambda && *lambda > 0.0 && *lambda <= 1.0) {
    s.rsnh_lambda = plan::LambdaRule::fixed;
    s.rsnh_lambda_fixed = *lambda;
    return;
  }
  r.bad_value_keep_default(
      spec, value,
      "a lambda rule (valid: incremental, proportional, one, fixed, or a number in (0, 1])");
}

void apply_seed(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  std::optional<std::uint64_t> seed;
  if (istarts_with(value, "0x"))
    seed = parse_whole<std::uint64_t>(value.substr(2), 16);
  else
    seed = parse_whole<std::uint64_t>(value, 10);
  if (seed)
    s.seed = *seed;
  else
    r.bad_value_keep_default(spec, value,
                             "an unsigned 64-bit integer (decimal, or hex starting with 0x)");
}

void apply_machine(const Spec&, std::string_view value, Settings& s, Reporter&) {
  s.machine = value;  // checked when the machine file is loaded, where line and key are known
}

void apply_trial(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  apply_bool(spec, value, s.trial, r);
}

void apply_trial_calls(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  const auto n = parse_whole<int>(value, 10);
  if (n && *n >= 1 && *n <= 1000)
    s.trial_calls = *n;
  else
    r.bad_value_keep_default(spec, value, "a whole number from 1 to 1000");
}

void apply_trial_seconds(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  const auto seconds = parse_number(value);
  if (seconds && *seconds >= 0.0 && *seconds <= 3600.0)
    s.trial_seconds = *seconds;
  else
    r.bad_value_keep_default(spec, value, "a number of seconds from 0 to 3600");
}

void apply_trial_budget(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  const auto share = parse_number(value);
  if (share && *share >= 0.001 && *share <= 1.0)
    s.trial_budget = *share;
  else
    r.bad_value_keep_default(spec, value, "a share from 0.001 to 1");
}

void apply_candidates(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  if (auto ids = plan::parse_strategy_list(value)) {
    s.candidates = std::move(*ids);
    return;
  }
  r.bad_value(spec.key, value,
              "a comma-separated list of strategies (valid: " + strategy_choices() + ")",
              "using the default (every strategy)");
}

/// Bytes with an optional K, M or G suffix (powers of 1024).
std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t scale = 1;
  if (!text.empty()) {
    switch (ascii_upper(text.back())) {
      case 'K': scale = 1ull << 10; break;
      case 'M': scale = 1ull << 20; break;
      case 'G': scale = 1ull << 30; break;
      default: break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  const auto n = parse_whole<std::uint64_t>(text, 10);
  if (!n || *n > UINT64_MAX / scale) return std::nullopt;
  return *n * scale;
}

void apply_size(const Spec& spec, std::string_view value, std::uint64_t& field, Reporter& r) {
  if (const auto n = parse_size(value))
    field = *n;
  else
    r.bad_value_keep_default(spec, value, "a size in bytes with an optional K, M or G suffix");
}

void apply_max_staging(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  apply_size(spec, value, s.max_staging, r);
}

void apply_trace(const Spec&, std::string_view value, Settings& s, Reporter&) {
  s.trace_dir = value;  // checked when the trace is opened: one warning, then no trace
}

void apply_trace_limit(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  apply_size(spec, value, s.trace_limit, r);
}

void apply_trace_signal(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  apply_bool(spec, value, s.trace_signal, r);
}

void apply_fake_nodes(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  const auto n = parse_whole<int>(value, 10);
  if (n && *n >= 0 && *n <= 1000000)
    s.fake_nodes = *n;
  else
    r.bad_value_keep_default(spec, value, "a whole number from 0 to 1000000");
}

void apply_fault(const Spec& spec, std::string_view value, Settings& s, Reporter& r) {
  const std::string what =
      "SITE:PROBABILITY[:SEED] with SITE one of plan, gather, staging, send, recv and "
      "PROBABILITY in [0, 1]";
  const std::size_t c1 = value.find(':');
  if (c1 == std::string_view::npos) return r.bad_value(spec.key, value, what, "using the default (no faults injected)");
  const std::string_view site = value.substr(0, c1);
  std::string_view rest = value.substr(c1 + 1);
  std::string_view seed_text;
  if (const std::size_t c2 = rest.find(':'); c2 != std::string_view::npos) {
    seed_text = rest.substr(c2 + 1);
    rest = rest.substr(0, c2);
  }
  const auto p = parse_number(rest);
  const bool p_ok = p && *p >= 0 && *p <= 1;
  const auto seed = seed_text.empty() ? std::optional<std::uint64_t>(1)
                                      : parse_whole<std::uint64_t>(seed_text, 10);
  const bool site_ok = std::find(std::begin(kFaultSites), std::end(kFaultSites), site) !=
                       std::end(kFaultSites);
  if (!site_ok || !p_ok || !seed) return r.bad_value(spec.key, value, what, "using the default (no faults injected)");
  s.fault_site = site;
  s.fault_probability = *p;
  s.fault_seed = *seed;
}

struct Rule {
  std::string_view key;
  Apply apply;
};

constexpr std::array<Rule, kSpecs.size()> kRules{{
    {"ENABLE", apply_enable},
    {"STRATEGY", apply_strategy},
    {"LEARN_CALLS", apply_learn_calls},
    {"BURSTS", apply_bursts},
    {"BURST_HOLD", apply_burst_hold},
    {"NONBLOCKING", apply_nonblocking},
    {"NONBLOCKING_WINDOW", apply_nonblocking_window},
    {"IN_STEP", apply_in_step},
    {"IN_STEP_EPOCH", apply_in_step_epoch},
    {"IN_STEP_NETSTAT", apply_in_step_netstat},
    {"LOG_LEVEL", apply_log_level},
    {"LOG_FILE", apply_log_file},
    {"REPORT", apply_report},
    {"WISDOM", apply_wisdom},
    {"RSNH_LAMBDA", apply_rsnh_lambda},
    {"LP_BARRIER", apply_lp_barrier},
    {"SEED", apply_seed},
    {"MACHINE", apply_machine},
    {"TRIAL", apply_trial},
    {"TRIAL_CALLS", apply_trial_calls},
    {"TRIAL_SECONDS", apply_trial_seconds},
    {"TRIAL_BUDGET", apply_trial_budget},
    {"CANDIDATES", apply_candidates},
    {"MAX_STAGING", apply_max_staging},
    {"TRACE", apply_trace},
    {"TRACE_LIMIT", apply_trace_limit},
    {"TRACE_SIGNAL", apply_trace_signal},
    {"FAKE_NODES", apply_fake_nodes},
    {"FAULT", apply_fault},
}};

constexpr bool rules_match_specs() {
  for (std::size_t i = 0; i < kSpecs.size(); ++i)
    if (kSpecs[i].key != kRules[i].key) return false;
  return true;
}
static_assert(rules_match_specs(), "kRules must list the keys of kSpecs in the same order");

// ---- unknown names ----------------------------------------------------------------------

/// Levenshtein distance, ignoring ASCII case.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t cost = ascii_upper(a[i - 1]) == ascii_upper(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string known_names() {
  std::string list;
  for (const Spec& spec : kSpecs) {
    if (!list.empty()) list += ", ";
    list += var_name(spec.key);
  }
  return list;
}

// Not settings but where the installation is: the module file and Spack set them (README
// "Install with Spack"), so a job run after `module load commsched` carries them.
constexpr std::array<std::string_view, 2> kInstallNames = {"COMMSCHED_ROOT", "COMMSCHED_PRELOAD"};

void report_unknown_names(std::span<const std::string> environ_names, Reporter& r) {
  std::set<std::string, std::less<>> reported;
  for (const std::string& name : environ_names) {
    // Matched without case so that commsched_strategy is caught as a near miss too.
    if (!istarts_with(name, kPrefix)) continue;
    if (std::find(kInstallNames.begin(), kInstallNames.end(), name) != kInstallNames.end())
      continue;
    const bool known = std::any_of(kSpecs.begin(), kSpecs.end(), [&](const Spec& spec) {
      return name.size() == kPrefix.size() + spec.key.size() &&
             name.compare(0, kPrefix.size(), kPrefix) == 0 &&
             std::string_view(name).substr(kPrefix.size()) == spec.key;
    });
    if (known || !reported.insert(name).second) continue;

    std::string msg = "unknown setting " + quoted(name).substr(1);
    msg.pop_back();  // the name without quotes, still escaped
    std::size_t best = 3;
    std::string suggestion;
    for (const Spec& spec : kSpecs) {
      const std::string candidate = var_name(spec.key);
      const std::size_t d = edit_distance(name, candidate);
      if (d < best) {
        best = d;
        suggestion = candidate;
      }
    }
    if (!suggestion.empty()) msg += "; did you mean " + suggestion + "?";
    msg += " (known: " + known_names() + ")";
    r.warnings().push_back(std::move(msg));
  }
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::span<const Spec> specs() { return kSpecs; }

Settings parse(const std::function<std::optional<std::string>(std::string_view)>& getenv_fn,
               std::span<const std::string> environ_names, std::vector<std::string>& warnings) {
  Settings s;
  Reporter reporter(warnings);
  // We run inside someone else's job: whatever fails here costs a warning, never the job.
  for (std::size_t i = 0; i < kSpecs.size(); ++i) {
    const std::string name = var_name(kSpecs[i].key);
    try {
      const std::optional<std::string> value = getenv_fn(name);
      if (value) kRules[i].apply(kSpecs[i], *value, s, reporter);
    } catch (...) {
      try {
        warnings.push_back("could not read " + name + "; using the default");
      } catch (...) {
      }
    }
  }
  try {
    if (s.wisdom_default) resolve_default_wisdom(getenv_fn, s, reporter);
  } catch (...) {
    s.wisdom_path.clear();
    s.wisdom_default = false;
  }
  try {
    report_unknown_names(environ_names, reporter);
  } catch (...) {
  }
  return s;
}

Settings from_environment(std::vector<std::string>& warnings) {
  std::vector<std::string> names;
  try {
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
      const std::string_view text(*entry);
      const std::string_view name = text.substr(0, text.find('='));
      if (istarts_with(name, kPrefix)) names.emplace_back(name);
    }
  } catch (...) {
  }
  return parse(
      [](std::string_view name) -> std::optional<std::string> {
        // Copied at once: the string getenv returns belongs to the environment.
        const char* value = std::getenv(std::string(name).c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
      },
      names, warnings);
}

std::string_view in_step_name(InStep mode) {
  for (const auto& [name, m] : kInStepModes)
    if (m == mode) return name;
  return "off";
}

std::string settings_markdown_table() {
  // Built by appending only: GCC 12 at -O2 gives a false -Wrestrict on "lit" + std::string.
  std::string out = "| Variable | Type | Default | Description |\n|---|---|---|---|\n";
  for (const Spec& spec : kSpecs) {
    std::string description(spec.description);
    if (spec.key == "STRATEGY") {
      description += " Valid: ";
      description += strategy_choices();
      description += '.';
    }
    out += "| `";
    out += var_name(spec.key);
    out += "` | ";
    out += spec.type;
    out += " | ";
    if (spec.default_text.empty()) {
      out += "(unset)";
    } else {
      out += '`';
      out += spec.default_text;
      out += '`';
    }
    out += " | ";
    out += markdown_cell(description);
    out += " |\n";
  }
  return out;
}

}  // namespace commsched::settings
