// ParseToolFlags: the test and benchmark programs' flags, parsed by absl::flags.
//
// On the command line their flags are spelled with dashes, as the publisher's
// are (--max-tx-rows); absl::flags names them with underscores (max_tx_rows). So
// before parsing, each dash in a flag's name (not in its value, and nothing after
// a bare "--") becomes an underscore. --help lists the flags with underscores;
// both spellings work.
#ifndef TOOLS_HARNESS_TOOL_FLAGS_H_
#define TOOLS_HARNESS_TOOL_FLAGS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace harness {

// What is left of the command line once the flags are parsed.
struct ToolArgs {
  std::vector<std::string> positional;  // Before a bare "--", flags removed.
  std::vector<std::string> passed_on;   // After a bare "--", untouched.
};

// Parses argv, up to a bare "--", into the program's ABSL_FLAGs (exiting with a
// message on a bad or unknown flag).
ToolArgs ParseToolFlags(int argc, char** argv, absl::string_view usage);

// A flag's name as absl::flags spells it: "--max-tx-rows=5" -> "--max_tx_rows=5".
std::string UnderscoredFlag(absl::string_view arg);

}  // namespace harness

#endif  // TOOLS_HARNESS_TOOL_FLAGS_H_
