// The settings parser against a fake environment: every good value of every setting, a table of
// bad values (one warning each, documented fallback kept), unknown names and the README table.
#include "settings/settings.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>

namespace commsched::settings {
namespace {

using Env = std::map<std::string, std::string>;

struct Parsed {
  Settings settings;
  std::vector<std::string> warnings;
};

/// Parses `env` as the whole environment (its keys are also the environment's names).
Parsed parse_env(const Env& env) {
  std::vector<std::string> names;
  for (const auto& [name, value] : env) names.push_back(name);
  Parsed p;
  p.settings = parse(
      [&env](std::string_view name) -> std::optional<std::string> {
        const auto it = env.find(std::string(name));
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      names, p.warnings);
  return p;
}

bool same(const Settings& a, const Settings& b) {
  return a.enable == b.enable && a.strategy == b.strategy && a.learn_calls == b.learn_calls &&
         a.log_level == b.log_level && a.log_file == b.log_file &&
         a.report_path == b.report_path && a.wisdom_path == b.wisdom_path &&
         a.wisdom_default == b.wisdom_default && a.rsnh_lambda == b.rsnh_lambda &&
         a.rsnh_lambda_fixed == b.rsnh_lambda_fixed && a.lp_barrier == b.lp_barrier &&
         a.seed == b.seed && a.machine == b.machine && a.trial == b.trial &&
         a.trial_calls == b.trial_calls && a.trial_seconds == b.trial_seconds && a.trial_budget == b.trial_budget &&
         a.candidates == b.candidates &&
         a.max_staging == b.max_staging && a.trace_dir == b.trace_dir &&
         a.trace_limit == b.trace_limit && a.trace_signal == b.trace_signal &&
         a.bursts == b.bursts && a.burst_hold_always == b.burst_hold_always &&
         a.nonblocking == b.nonblocking && a.nonblocking_window == b.nonblocking_window &&
         a.in_step == b.in_step && a.in_step_epoch == b.in_step_epoch &&
         a.in_step_netstat == b.in_step_netstat &&
         a.fake_nodes == b.fake_nodes && a.fault_site == b.fault_site &&
         a.fault_probability == b.fault_probability && a.fault_seed == b.fault_seed;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

TEST(Settings, EmptyEnvironmentGivesDocumentedDefaults) {
  const Parsed p = parse_env({});
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(same(p.settings, Settings{}));
  EXPECT_TRUE(p.settings.enable);
  EXPECT_EQ(p.settings.strategy, "auto");
  EXPECT_EQ(p.settings.learn_calls, 3);
  EXPECT_EQ(p.settings.log_level, core::LogLevel::warn);
  EXPECT_EQ(p.settings.rsnh_lambda, plan::LambdaRule::incremental);
  EXPECT_FALSE(p.settings.lp_barrier);
  EXPECT_EQ(p.settings.seed, 0x5eedc0ffeeULL);
}

TEST(Settings, SpecTableDefaultsMatchTheStruct) {
  std::set<std::string_view> keys;
  const std::set<std::string_view> types{"bool", "int", "number", "path", "choice", "list",
                                          "size"};
  for (const Spec& spec : specs()) {
    EXPECT_TRUE(keys.insert(spec.key).second) << spec.key;
    EXPECT_EQ(upper(spec.key), spec.key);
    EXPECT_TRUE(types.count(spec.type)) << spec.key << ": " << spec.type;
    EXPECT_FALSE(spec.description.empty()) << spec.key;
    // Setting a variable to its documented default must change nothing.
    if (spec.default_text.empty()) continue;
    const Parsed p = parse_env({{"COMMSCHED_" + std::string(spec.key),
                                 std::string(spec.default_text)}});
    EXPECT_TRUE(p.warnings.empty()) << spec.key;
    EXPECT_TRUE(same(p.settings, Settings{})) << spec.key;
  }
  EXPECT_EQ(keys, (std::set<std::string_view>{"ENABLE", "STRATEGY", "LEARN_CALLS", "LOG_LEVEL",
                                              "LOG_FILE", "REPORT", "WISDOM", "RSNH_LAMBDA", "LP_BARRIER",
                                              "SEED", "MACHINE", "TRIAL", "TRIAL_CALLS", "TRIAL_SECONDS", "TRIAL_BUDGET",
                                              "CANDIDATES", "MAX_STAGING", "TRACE", "TRACE_LIMIT",
                                              "TRACE_SIGNAL", "FAKE_NODES", "FAULT",
                                              "BURSTS", "BURST_HOLD", "NONBLOCKING",
                                              "NONBLOCKING_WINDOW", "IN_STEP", "IN_STEP_EPOCH",
                                              "IN_STEP_NETSTAT"}));
}

TEST(Settings, BoolSpellings) {
  const std::vector<std::pair<std::string, bool>> good{
      {"1", true},     {"0", false},    {"true", true}, {"false", false}, {"yes", true},
      {"no", false},   {"on", true},    {"off", false}, {"TRUE", true},   {"False", false},
      {"YES", true},   {"No", false},   {"On", true},   {"OFF", false}};
  for (const auto& [text, value] : good) {
    const Parsed a = parse_env({{"COMMSCHED_ENABLE", text}});
    EXPECT_TRUE(a.warnings.empty()) << text;
    EXPECT_EQ(a.settings.enable, value) << text;
    const Parsed b = parse_env({{"COMMSCHED_LP_BARRIER", text}});
    EXPECT_TRUE(b.warnings.empty()) << text;
    EXPECT_EQ(b.settings.lp_barrier, value) << text;
  }
}

TEST(Settings, EveryStrategyIdParses) {
  std::vector<std::string> ids{"native", "auto"};
  for (const plan::Strategy& st : plan::strategies()) ids.emplace_back(st.id);
  for (const std::string& id : ids) {
    const Parsed p = parse_env({{"COMMSCHED_STRATEGY", id}});
    EXPECT_TRUE(p.warnings.empty()) << id;
    EXPECT_EQ(p.settings.strategy, id);
    // Case does not matter; the stored id is the canonical spelling.
    const Parsed q = parse_env({{"COMMSCHED_STRATEGY", upper(id)}});
    EXPECT_TRUE(q.warnings.empty()) << upper(id);
    EXPECT_EQ(q.settings.strategy, id);
  }
}

TEST(Settings, LearnCallsInRange) {
  const std::vector<std::pair<std::string, int>> good{
      {"1", 1}, {"2", 2}, {"3", 3}, {"007", 7}, {"1000", 1000}, {"1000000", 1000000}};
  for (const auto& [text, value] : good) {
    const Parsed p = parse_env({{"COMMSCHED_LEARN_CALLS", text}});
    EXPECT_TRUE(p.warnings.empty()) << text;
    EXPECT_EQ(p.settings.learn_calls, value) << text;
  }
}

TEST(Settings, LogLevels) {
  const std::vector<std::pair<std::string, core::LogLevel>> good{
      {"quiet", core::LogLevel::quiet}, {"warn", core::LogLevel::warn},
      {"info", core::LogLevel::info},   {"debug", core::LogLevel::debug},
      {"DEBUG", core::LogLevel::debug}, {"Quiet", core::LogLevel::quiet}};
  for (const auto& [text, value] : good) {
    const Parsed p = parse_env({{"COMMSCHED_LOG_LEVEL", text}});
    EXPECT_TRUE(p.warnings.empty()) << text;
    EXPECT_EQ(p.settings.log_level, value) << text;
  }
}

TEST(Settings, PathsAreTakenVerbatim) {
  for (const std::string path : {"/tmp/cs.log", "relative/dir with space/x.json", "\xff\xfe",
                                 "", " "}) {
    const Parsed p = parse_env({{"COMMSCHED_LOG_FILE", path}, {"COMMSCHED_REPORT", path}});
    EXPECT_TRUE(p.warnings.empty()) << path;
    EXPECT_EQ(p.settings.log_file, path);
    EXPECT_EQ(p.settings.report_path, path);
  }
}

TEST(Settings, WisdomPathOrTheCacheLocation) {
  struct Case {
    Env env;
    std::string path;
    bool is_default;
  };
  const std::vector<Case> cases{
      {{}, "", false},
      {{{"COMMSCHED_WISDOM", ""}}, "", false},
      {{{"COMMSCHED_WISDOM", "/work/job.wisdom"}, {"HOME", "/home/u"}}, "/work/job.wisdom", false},
      {{{"COMMSCHED_WISDOM", "./default"}}, "./default", false},
      {{{"COMMSCHED_WISDOM", "default"}, {"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}},
       "/xdg/commsched/wisdom", true},
      {{{"COMMSCHED_WISDOM", "default"}, {"XDG_CACHE_HOME", "/xdg/"}},
       "/xdg/commsched/wisdom", true},
      // A relative or empty XDG_CACHE_HOME is invalid by the XDG specification: ignored.
      {{{"COMMSCHED_WISDOM", "default"}, {"XDG_CACHE_HOME", "cache"}, {"HOME", "/home/u"}},
       "/home/u/.cache/commsched/wisdom", true},
      {{{"COMMSCHED_WISDOM", "default"}, {"XDG_CACHE_HOME", ""}, {"HOME", "/home/u/"}},
       "/home/u/.cache/commsched/wisdom", true},
  };
  for (const Case& c : cases) {
    const Parsed p = parse_env(c.env);
    const std::string what = c.env.count("COMMSCHED_WISDOM") ? c.env.at("COMMSCHED_WISDOM") : "";
    EXPECT_TRUE(p.warnings.empty()) << what;
    EXPECT_EQ(p.settings.wisdom_path, c.path) << what;
    EXPECT_EQ(p.settings.wisdom_default, c.is_default) << what;
  }
  // Nowhere to put the default: one warning, and no wisdom rather than a file in the cwd.
  const Parsed p = parse_env({{"COMMSCHED_WISDOM", "default"}, {"XDG_CACHE_HOME", "rel"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0].rfind("COMMSCHED_WISDOM='default' is not usable here", 0), 0u)
      << p.warnings[0];
  EXPECT_TRUE(same(p.settings, Settings{}));
}

TEST(Settings, LambdaRulesAndNumbers) {
  const std::vector<std::pair<std::string, plan::LambdaRule>> rules{
      {"incremental", plan::LambdaRule::incremental},
      {"proportional", plan::LambdaRule::proportional},
      {"one", plan::LambdaRule::one},
      {"fixed", plan::LambdaRule::fixed},
      {"Proportional", plan::LambdaRule::proportional}};
  for (const auto& [text, rule] : rules) {
    const Parsed p = parse_env({{"COMMSCHED_RSNH_LAMBDA", text}});
    EXPECT_TRUE(p.warnings.empty()) << text;
    EXPECT_EQ(p.settings.rsnh_lambda, rule) << text;
    EXPECT_EQ(p.settings.rsnh_lambda_fixed, 0.875) << text;
  }
  const std::vector<std::pair<std::string, double>> numbers{
      {"0.5", 0.5}, {"1", 1.0}, {"1.0", 1.0}, {".25", 0.25}, {"1e-3", 1e-3}, {"0.875", 0.875}};
  for (const auto& [text, lambda] : numbers) {
    const Parsed p = parse_env({{"COMMSCHED_RSNH_LAMBDA", text}});
    EXPECT_TRUE(p.warnings.empty()) << text;
    EXPECT_EQ(p.settings.rsnh_lambda, plan::LambdaRule::fixed) << text;
    EXPECT_DOUBLE_EQ(p.settings.rsnh_lambda_fixed, lambda) << text;
  }
}

TEST(Settings, SeedDecimalAndHex) {
  const std::vector<std::pair<std::string, std::uint64_t>> good{
      {"0", 0},
      {"42", 42},
      {"407715774446", 0x5eedc0ffeeULL},
      {"0x5eedc0ffee", 0x5eedc0ffeeULL},
      {"0X5EEDC0FFEE", 0x5eedc0ffeeULL},
      {"0x0", 0},
      {"18446744073709551615", 18446744073709551615ULL},
      {"0xffffffffffffffff", 18446744073709551615ULL}};
  for (const auto& [text, value] : good) {
    const Parsed p = parse_env({{"COMMSCHED_SEED", text}});
    EXPECT_TRUE(p.warnings.empty()) << text;
    EXPECT_EQ(p.settings.seed, value) << text;
  }
}

TEST(Settings, AllSettingsTogether) {
  const Parsed p = parse_env({{"COMMSCHED_ENABLE", "0"},
                              {"COMMSCHED_STRATEGY", "native"},
                              {"COMMSCHED_LEARN_CALLS", "5"},
                              {"COMMSCHED_LOG_LEVEL", "info"},
                              {"COMMSCHED_LOG_FILE", "/tmp/log"},
                              {"COMMSCHED_REPORT", "/tmp/report.json"},
                              {"COMMSCHED_RSNH_LAMBDA", "0.9"},
                              {"COMMSCHED_LP_BARRIER", "on"},
                              {"COMMSCHED_SEED", "0x10"},
                              {"PATH", "/usr/bin"},
                              {"HOME", "/root"}});
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_FALSE(p.settings.enable);
  EXPECT_EQ(p.settings.strategy, "native");
  EXPECT_EQ(p.settings.learn_calls, 5);
  EXPECT_EQ(p.settings.log_level, core::LogLevel::info);
  EXPECT_EQ(p.settings.log_file, "/tmp/log");
  EXPECT_EQ(p.settings.report_path, "/tmp/report.json");
  EXPECT_EQ(p.settings.rsnh_lambda, plan::LambdaRule::fixed);
  EXPECT_DOUBLE_EQ(p.settings.rsnh_lambda_fixed, 0.9);
  EXPECT_TRUE(p.settings.lp_barrier);
  EXPECT_EQ(p.settings.seed, 16u);
}

// ---- bad values ------------------------------------------------------------------------

struct BadValue {
  std::string key;  // without COMMSCHED_
  std::string value;
};

class BadValues : public ::testing::TestWithParam<BadValue> {};

TEST_P(BadValues, OneWarningNamingTheVariableAndTheFallbackKept) {
  const BadValue& bad = GetParam();
  const std::string name = "COMMSCHED_" + bad.key;
  const Parsed p = parse_env({{name, bad.value}});
  ASSERT_EQ(p.warnings.size(), 1u) << name << "='" << bad.value << "'";
  const std::string& w = p.warnings[0];
  EXPECT_EQ(w.rfind(name + "='", 0), 0u) << w;
  Settings expected;
  if (bad.key == "STRATEGY") {
    expected.strategy = "native";  // an unknown strategy runs native, not auto
    EXPECT_NE(w.find("(valid: native, auto"), std::string::npos) << w;
    EXPECT_NE(w.find("; running native"), std::string::npos) << w;
  } else {
    EXPECT_NE(w.find("; using the default "), std::string::npos) << w;
  }
  EXPECT_TRUE(same(p.settings, expected)) << w;
  // Messages carry no raw control or non-ASCII bytes.
  for (char c : w) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte >= 0x20 && byte < 0x7f) << w;
  }
}

const BadValue kBadValues[] = {
    // TRIAL / TRIAL_CALLS / TRACE_SIGNAL / CANDIDATES / sizes
    {"TRIAL", "perhaps"}, {"TRACE_SIGNAL", "2"}, {"TRIAL_CALLS", "0"}, {"TRIAL_CALLS", "1001"},
    {"TRIAL_CALLS", "x"}, {"TRIAL_SECONDS", "-1"}, {"TRIAL_SECONDS", "nan"},
    {"TRIAL_SECONDS", "3601"}, {"TRIAL_SECONDS", "0.1s"}, {"TRIAL_BUDGET", "0"},
    {"TRIAL_BUDGET", "1.5"}, {"TRIAL_BUDGET", "nan"}, {"CANDIDATES", "color,bogus"}, {"CANDIDATES", ""},
    {"CANDIDATES", "color,"}, {"MAX_STAGING", "12Q"}, {"MAX_STAGING", "-1"},
    {"MAX_STAGING", "99999999999999999999G"}, {"MAX_STAGING", "M"}, {"TRACE_LIMIT", "1.5M"},
    {"TRACE_LIMIT", ""}, {"FAKE_NODES", "-2"}, {"FAKE_NODES", "two"},
    {"FAULT", "plan"}, {"FAULT", "nowhere:0.5"}, {"FAULT", "send:1.5"}, {"FAULT", "recv:0.5:x"},
    // ENABLE / LP_BARRIER
    {"ENABLE", ""}, {"ENABLE", " "}, {"ENABLE", "2"}, {"ENABLE", "-1"}, {"ENABLE", "maybe"},
    {"ENABLE", "truee"}, {"ENABLE", "1 "}, {"ENABLE", " 1"}, {"ENABLE", "\xff\xfe"},
    {"ENABLE", "y"}, {"ENABLE", "enabled"}, {"LP_BARRIER", ""}, {"LP_BARRIER", "2"},
    {"LP_BARRIER", "nope"}, {"LP_BARRIER", "0.0"}, {"LP_BARRIER", "\t"},
    // STRATEGY
    {"STRATEGY", ""}, {"STRATEGY", "foo"}, {"STRATEGY", " auto"}, {"STRATEGY", "auto "},
    {"STRATEGY", "native,auto"}, {"STRATEGY", "\xff\xfe"}, {"STRATEGY", "AUTO!"},
    {"STRATEGY", "nat ive"}, {"STRATEGY", "default"},
    // LEARN_CALLS
    {"LEARN_CALLS", ""}, {"LEARN_CALLS", " "}, {"LEARN_CALLS", "abc"}, {"LEARN_CALLS", "0"},
    {"LEARN_CALLS", "-1"}, {"LEARN_CALLS", "3x"}, {"LEARN_CALLS", "x3"}, {"LEARN_CALLS", "3.0"},
    {"LEARN_CALLS", "1.5"}, {"LEARN_CALLS", "99999999999999999999"},
    {"LEARN_CALLS", "1000001"}, {"LEARN_CALLS", "2147483648"}, {"LEARN_CALLS", "+3"},
    {"LEARN_CALLS", "0x10"}, {"LEARN_CALLS", "1e3"}, {"LEARN_CALLS", " 3"},
    {"LEARN_CALLS", "3\n"}, {"LEARN_CALLS", "\xff\xfe"},
    // BURSTS
    {"BURSTS", ""}, {"BURSTS", "on"}, {"BURSTS", "global"}, {"BURSTS", "1"},
    {"BURST_HOLD", ""}, {"BURST_HOLD", "never"}, {"BURST_HOLD", "1"},
    {"NONBLOCKING", ""}, {"NONBLOCKING", "on"}, {"NONBLOCKING", "window"},
    {"NONBLOCKING_WINDOW", "0"}, {"NONBLOCKING_WINDOW", "-1"}, {"NONBLOCKING_WINDOW", "65537"},
    {"NONBLOCKING_WINDOW", "2x"},
    {"IN_STEP", "yes"}, {"IN_STEP", ""}, {"IN_STEP_EPOCH", "0"}, {"IN_STEP_EPOCH", "61"},
    {"IN_STEP_EPOCH", "0.5s"},
    // LOG_LEVEL
    {"LOG_LEVEL", ""}, {"LOG_LEVEL", "loud"}, {"LOG_LEVEL", "warning"}, {"LOG_LEVEL", "2"},
    {"LOG_LEVEL", "\xff\xfe"},
    // RSNH_LAMBDA
    {"RSNH_LAMBDA", ""}, {"RSNH_LAMBDA", "0"}, {"RSNH_LAMBDA", "0.0"}, {"RSNH_LAMBDA", "-0"},
    {"RSNH_LAMBDA", "1.5"}, {"RSNH_LAMBDA", "-0.1"}, {"RSNH_LAMBDA", "nan"},
    {"RSNH_LAMBDA", "inf"}, {"RSNH_LAMBDA", "0x0.8"}, {"RSNH_LAMBDA", "abc"},
    {"RSNH_LAMBDA", "0.5x"}, {"RSNH_LAMBDA", "1e400"}, {"RSNH_LAMBDA", "fixed(0.5)"},
    {"RSNH_LAMBDA", "incremental "}, {"RSNH_LAMBDA", "1.0000001"},
    // SEED
    {"SEED", ""}, {"SEED", "-1"}, {"SEED", "0x"}, {"SEED", "0X"}, {"SEED", "18446744073709551616"},
    {"SEED", "0x10000000000000000"}, {"SEED", "99999999999999999999"}, {"SEED", "12abc"},
    {"SEED", "0xg"}, {"SEED", "1.5"}, {"SEED", " 42"}, {"SEED", "+42"}, {"SEED", "0x-1"},
    {"SEED", "0x0x5"}, {"SEED", "\xff\xfe"},
};

INSTANTIATE_TEST_SUITE_P(Table, BadValues, ::testing::ValuesIn(kBadValues));

TEST(Settings, BadValueTableIsLargeAndCoversEveryCheckedSetting) {
  EXPECT_GE(std::size(kBadValues), 40u);
  std::set<std::string> covered;
  for (const BadValue& b : kBadValues) covered.insert(b.key);
  for (const Spec& spec : specs()) {
    if (spec.type == "path") continue;  // any value is a path
    EXPECT_TRUE(covered.count(std::string(spec.key))) << spec.key;
  }
}

TEST(Settings, ListsAndSizes) {
  Parsed p = parse_env({{"COMMSCHED_CANDIDATES", "color,RS_NH"}, {"COMMSCHED_MAX_STAGING", "3M"},
                        {"COMMSCHED_TRACE_LIMIT", "1024"}, {"COMMSCHED_TRIAL", "off"}});
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(p.settings.candidates, (std::vector<std::string>{"color", "rs_nh"}));
  EXPECT_EQ(p.settings.max_staging, 3u << 20);
  EXPECT_EQ(p.settings.trace_limit, 1024u);
  EXPECT_FALSE(p.settings.trial);
  EXPECT_TRUE(parse_env({{"COMMSCHED_BURST_HOLD", "Always"}}).settings.burst_hold_always);
  const Parsed nb = parse_env({{"COMMSCHED_NONBLOCKING", "Shift"},
                               {"COMMSCHED_NONBLOCKING_WINDOW", "8"}});
  EXPECT_TRUE(nb.warnings.empty());
  EXPECT_EQ(nb.settings.nonblocking, NonBlocking::shift);
  EXPECT_EQ(nb.settings.nonblocking_window, 8);
  EXPECT_EQ(parse_env({{"COMMSCHED_NONBLOCKING", "eager"}}).settings.nonblocking,
            NonBlocking::eager);
  EXPECT_EQ(parse_env({{"COMMSCHED_NONBLOCKING", "AUTO"}}).settings.nonblocking,
            NonBlocking::automatic);
  const Parsed step = parse_env({{"COMMSCHED_IN_STEP", "On"}, {"COMMSCHED_IN_STEP_EPOCH", "0.02"}});
  EXPECT_TRUE(step.warnings.empty());
  EXPECT_EQ(step.settings.in_step, commsched::settings::InStep::on);
  EXPECT_EQ(step.settings.in_step_epoch, 0.02);
  EXPECT_EQ(parse_env({{"COMMSCHED_IN_STEP", "off"}}).settings.in_step,
            commsched::settings::InStep::off);
  EXPECT_EQ(parse_env({{"COMMSCHED_IN_STEP", "trial"}}).settings.in_step,
            commsched::settings::InStep::trial);
  EXPECT_EQ(in_step_name(commsched::settings::InStep::trial), "trial");
  EXPECT_EQ(step.settings.in_step_netstat, "/proc/net/netstat");
  const Parsed netstat = parse_env({{"COMMSCHED_IN_STEP_NETSTAT", "/run/host/netstat"}});
  EXPECT_TRUE(netstat.warnings.empty());
  EXPECT_EQ(netstat.settings.in_step_netstat, "/run/host/netstat");
  EXPECT_EQ(parse_env({{"COMMSCHED_IN_STEP_NETSTAT", ""}}).settings.in_step_netstat,
            "/proc/net/netstat");
}

TEST(Settings, FaultSpec) {
  Parsed p = parse_env({{"COMMSCHED_FAULT", "staging:0.25:42"}});
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(p.settings.fault_site, "staging");
  EXPECT_DOUBLE_EQ(p.settings.fault_probability, 0.25);
  EXPECT_EQ(p.settings.fault_seed, 42u);
}

TEST(Settings, MessageWording) {
  Parsed p = parse_env({{"COMMSCHED_LEARN_CALLS", "abc"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0],
            "COMMSCHED_LEARN_CALLS='abc' is not a whole number from 1 to 1000000; using the "
            "default 3");

  p = parse_env({{"COMMSCHED_STRATEGY", "foo"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  std::string valid = "native, auto";
  for (const plan::Strategy& st : plan::strategies())
    if (st.id != "native") valid += ", " + std::string(st.id);
  EXPECT_EQ(p.warnings[0],
            "COMMSCHED_STRATEGY='foo' is not a known strategy (valid: " + valid +
                "); running native");

  p = parse_env({{"COMMSCHED_LOG_LEVEL", "loud"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("(valid: quiet, warn, info, debug)"), std::string::npos);

  p = parse_env({{"COMMSCHED_SEED", "\xff\xfe"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0].rfind("COMMSCHED_SEED='\\xff\\xfe' is not", 0), 0u) << p.warnings[0];

  p = parse_env({{"COMMSCHED_ENABLE", std::string(500, 'z')}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_LT(p.warnings[0].size(), 300u);  // very long values are cut short
}

TEST(Settings, EachBadValueWarnsOnceWhenSeveralAreBad) {
  const Parsed p = parse_env({{"COMMSCHED_ENABLE", "x"},
                              {"COMMSCHED_LEARN_CALLS", "x"},
                              {"COMMSCHED_SEED", "x"},
                              {"COMMSCHED_STRATEGY", "native"}});
  ASSERT_EQ(p.warnings.size(), 3u);
  EXPECT_EQ(p.warnings[0].rfind("COMMSCHED_ENABLE=", 0), 0u);
  EXPECT_EQ(p.warnings[1].rfind("COMMSCHED_LEARN_CALLS=", 0), 0u);
  EXPECT_EQ(p.warnings[2].rfind("COMMSCHED_SEED=", 0), 0u);
}

TEST(Settings, ExistingWarningsAreKept) {
  std::vector<std::string> warnings{"earlier"};
  const std::vector<std::string> names;
  parse([](std::string_view) -> std::optional<std::string> { return "bad"; }, names, warnings);
  ASSERT_GE(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], "earlier");
}

// ---- unknown names ---------------------------------------------------------------------

TEST(Settings, UnknownNameIsReportedWithTheKnownOnes) {
  const Parsed p = parse_env({{"COMMSCHED_FOO", "1"}, {"COMMSCHED_ENABLE", "1"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  const std::string& w = p.warnings[0];
  EXPECT_EQ(w.rfind("unknown setting COMMSCHED_FOO", 0), 0u) << w;
  EXPECT_EQ(w.find("did you mean"), std::string::npos) << w;
  for (const Spec& spec : specs())
    EXPECT_NE(w.find("COMMSCHED_" + std::string(spec.key)), std::string::npos) << spec.key;
}

TEST(Settings, NearMissGetsASuggestion) {
  const std::vector<std::pair<std::string, std::string>> near{
      {"COMMSCHED_STRATEG", "COMMSCHED_STRATEGY"},
      {"COMMSCHED_STRATEGIE", "COMMSCHED_STRATEGY"},
      {"COMMSCHED_LEARNCALLS", "COMMSCHED_LEARN_CALLS"},
      {"COMMSCHED_ENABLED", "COMMSCHED_ENABLE"},
      {"COMMSCHED_REPORTS", "COMMSCHED_REPORT"},
      {"commsched_strategy", "COMMSCHED_STRATEGY"},
      {"COMMSCHED_RSNH_LAMDA", "COMMSCHED_RSNH_LAMBDA"}};
  for (const auto& [typo, meant] : near) {
    const Parsed p = parse_env({{typo, "x"}});
    ASSERT_EQ(p.warnings.size(), 1u) << typo;
    EXPECT_EQ(p.warnings[0].rfind("unknown setting " + typo + "; did you mean " + meant + "?", 0),
              0u)
        << p.warnings[0];
    EXPECT_TRUE(same(p.settings, Settings{})) << typo;
  }
}

TEST(Settings, OtherVariablesAndDuplicateNamesAreQuiet) {
  std::vector<std::string> warnings;
  // COMMSCHED_ROOT and COMMSCHED_PRELOAD: set by the module file, not settings.
  const std::vector<std::string> names{"PATH", "HOME", "COMMSCHEDULER", "MY_COMMSCHED_X",
                                       "COMMSCHED_FOO", "COMMSCHED_FOO", "COMMSCHED_SEED",
                                       "COMMSCHED_ROOT", "COMMSCHED_PRELOAD"};
  parse([](std::string_view) -> std::optional<std::string> { return std::nullopt; }, names,
        warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("unknown setting COMMSCHED_FOO", 0), 0u);
}

// ---- robustness ------------------------------------------------------------------------

TEST(Settings, ThrowingLookupNeverEscapes) {
  std::vector<std::string> warnings;
  const std::vector<std::string> names{"COMMSCHED_ENABLE"};
  Settings s;
  EXPECT_NO_THROW(s = parse(
                      [](std::string_view name) -> std::optional<std::string> {
                        if (name == "COMMSCHED_STRATEGY") throw std::runtime_error("boom");
                        if (name == "COMMSCHED_LEARN_CALLS") return "9";
                        return std::nullopt;
                      },
                      names, warnings));
  EXPECT_EQ(s.learn_calls, 9);  // the others are still read
  EXPECT_EQ(s.strategy, "auto");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("COMMSCHED_STRATEGY"), std::string::npos);
}

TEST(Settings, FromEnvironment) {
  ASSERT_EQ(setenv("COMMSCHED_LEARN_CALLS", "7", 1), 0);
  ASSERT_EQ(setenv("COMMSCHED_STRATEG", "ac", 1), 0);
  std::vector<std::string> warnings;
  const Settings s = from_environment(warnings);
  unsetenv("COMMSCHED_LEARN_CALLS");
  unsetenv("COMMSCHED_STRATEG");
  EXPECT_EQ(s.learn_calls, 7);
  bool suggested = false;
  for (const std::string& w : warnings)
    suggested |= w.find("did you mean COMMSCHED_STRATEGY?") != std::string::npos;
  EXPECT_TRUE(suggested);
}

// ---- README table ----------------------------------------------------------------------

TEST(Settings, MarkdownTableMentionsEveryKey) {
  const std::string table = settings_markdown_table();
  EXPECT_EQ(table.rfind("| Variable | Type | Default | Description |\n", 0), 0u) << table;
  std::size_t rows = 0;
  for (char c : table) rows += c == '\n';
  EXPECT_EQ(rows, specs().size() + 2);
  for (const Spec& spec : specs()) {
    EXPECT_NE(table.find("`COMMSCHED_" + std::string(spec.key) + "`"), std::string::npos)
        << spec.key;
    EXPECT_NE(table.find(std::string(spec.description)), std::string::npos) << spec.key;
  }
  for (const plan::Strategy& st : plan::strategies())
    EXPECT_NE(table.find(std::string(st.id)), std::string::npos) << st.id;
}

}  // namespace
}  // namespace commsched::settings
