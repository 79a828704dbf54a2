// ParseToolFlags: dashes to underscores in flag names, then absl::ParseCommandLine.
#include "tools/harness/tool_flags.h"

#include <algorithm>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"

namespace harness {

std::string UnderscoredFlag(absl::string_view arg) {
  std::string out(arg);
  if (!absl::StartsWith(arg, "-") || arg == "--") return out;
  size_t dashes = absl::StartsWith(arg, "--") ? 2 : 1;
  size_t end = std::min(out.find('='), out.size());
  std::replace(out.begin() + dashes, out.begin() + end, '-', '_');
  return out;
}

ToolArgs ParseToolFlags(int argc, char** argv, absl::string_view usage) {
  absl::SetProgramUsageMessage(usage);
  // --help lists the flags this repository's tests define (not absl's own).
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "tests/");
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);

  ToolArgs out;
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && absl::string_view(argv[i]) == "--") {
      out.passed_on.assign(argv + i + 1, argv + argc);
      break;
    }
    args.push_back(i == 0 ? std::string(argv[i]) : UnderscoredFlag(argv[i]));
  }
  std::vector<char*> pointers;
  for (std::string& a : args) pointers.push_back(a.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(pointers.size()), pointers.data());
  out.positional.assign(positional.begin() + 1, positional.end());  // [0]: the program.
  return out;
}

}  // namespace harness
