// RunCommand: popen, read everything, pclose.
#include "tools/harness/shell.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace harness {

absl::StatusOr<std::string> RunCommand(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return absl::InternalError("popen failed: " + command);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("command failed (", rc, "): ", command, "\n", out));
  }
  return out;
}

std::string HarnessPath(const std::string& file) {
  return absl::StrCat(OUTBOX_HARNESS_DIR, "/", file);
}

std::string OutputValue(const std::string& output, const std::string& key) {
  std::string prefix = key + "=";
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::ConsumePrefix(&line, prefix)) return std::string(line);
  }
  return "";
}

}  // namespace harness
