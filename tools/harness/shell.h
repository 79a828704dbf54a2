// Running the harness's shell scripts from C++ tests.
#ifndef TOOLS_HARNESS_SHELL_H_
#define TOOLS_HARNESS_SHELL_H_

#include <string>

#include "absl/status/statusor.h"

namespace harness {

// Runs a shell command; returns its stdout, or an error with its exit status
// (its stderr goes to the test's).
absl::StatusOr<std::string> RunCommand(const std::string& command);

// Path of a file in the source tree's tools/harness directory.
std::string HarnessPath(const std::string& file);

// The value of `KEY=value` lines in a script's output, "" when absent.
std::string OutputValue(const std::string& output, const std::string& key);

}  // namespace harness

#endif  // TOOLS_HARNESS_SHELL_H_
