#include "cdc/stream_errors.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace cdc {

bool IsTransientStreamError(absl::string_view sqlstate, absl::string_view message) {
  if (sqlstate.empty() || absl::StartsWith(sqlstate, "08") ||
      absl::StartsWith(sqlstate, "57") || absl::StartsWith(sqlstate, "53") ||
      sqlstate == kObjectInUse)
    return true;
  // object_not_in_prerequisite_state and invalid_parameter_value: the failover-slot
  // wait's codes, and many others'.
  return (sqlstate == "55000" || sqlstate == "22023") &&
         absl::StrContains(message, "synchronized_standby_slots");
}

namespace {

// Whether `name` stands in `text` as a whole name (not inside a longer one),
// whatever quotes the server's language puts around it.
bool NamesWhole(absl::string_view text, absl::string_view name) {
  auto part_of_name = [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  };
  for (size_t at = text.find(name); at != absl::string_view::npos;
       at = text.find(name, at + 1)) {
    size_t end = at + name.size();
    if ((at == 0 || !part_of_name(text[at - 1])) &&
        (end == text.size() || !part_of_name(text[end])))
      return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> SkippedPublication(
    absl::string_view severity, absl::string_view sqlstate, absl::string_view message,
    const std::vector<std::string>& publications) {
  bool english = absl::StrContains(message, "skipped loading publication");
  if (!english && (severity != "WARNING" || sqlstate != "55000" ||
                   absl::StrContains(message, "synchronized_standby_slots")))
    return std::nullopt;
  for (const std::string& p : publications)
    if (!p.empty() && NamesWhole(message, p)) return p;
  if (!english) return std::nullopt;
  // The English words with a name not asked for: the name as quoted.
  size_t open = message.find('"');
  size_t close = open == absl::string_view::npos ? open : message.find('"', open + 1);
  if (close == absl::string_view::npos) return std::string("?");
  return std::string(message.substr(open + 1, close - open - 1));
}

}  // namespace cdc
