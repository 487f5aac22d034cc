// commsched-info: what the library understands, without MPI. Prints the settings (every
// COMMSCHED_* variable) and the strategies, as Markdown tables, or checks the current
// environment's settings and prints the warnings the library would give.
//   commsched-info [--settings | --strategies | --check]
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "plan/registry.hpp"
#include "settings/settings.hpp"

namespace {

void print_strategies() {
  std::printf("| Strategy | What it does | Paper |\n|---|---|---|\n");
  std::printf("| `auto` | picks one of the below for each learned pattern (see README) | |\n");
  for (const auto& s : commsched::plan::strategies())
    std::printf("| `%.*s` | %.*s | %.*s |\n", static_cast<int>(s.id.size()), s.id.data(),
                static_cast<int>(s.description.size()), s.description.data(),
                static_cast<int>(s.reference.size()), s.reference.data());
}

int check() {
  std::vector<std::string> warnings;
  const auto cfg = commsched::settings::from_environment(warnings);
  for (const auto& w : warnings) std::printf("warning: %s\n", w.c_str());
  std::printf("enable=%d strategy=%s learn_calls=%d\n", cfg.enable ? 1 : 0, cfg.strategy.c_str(),
              cfg.learn_calls);
  return warnings.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view what = argc > 1 ? argv[1] : "--all";
  if (what == "--settings") {
    std::printf("%s", commsched::settings::settings_markdown_table().c_str());
  } else if (what == "--strategies") {
    print_strategies();
  } else if (what == "--check") {
    return check();
  } else if (what == "--all") {
    std::printf("%s\n", commsched::settings::settings_markdown_table().c_str());
    print_strategies();
  } else {
    std::fprintf(stderr, "usage: commsched-info [--settings | --strategies | --check]\n");
    return 2;
  }
  return 0;
}
