#include "common/process_environment.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace common {

Environment ProcessEnvironment() {
  Environment env;
  env.lookup = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env.names.emplace_back(*e, eq - *e);
  }
  env.read_file = [](const std::string& path) -> absl::StatusOr<std::string> {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return absl::DataLossError(absl::StrCat("read failed: ", path));
    return text.str();
  };
  return env;
}

}  // namespace common
