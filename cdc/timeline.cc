// ParseTimelineHistory: one "timeline TAB lsn TAB reason" line per earlier timeline.
#include "cdc/timeline.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cdc {

absl::StatusOr<std::vector<TimelineSwitch>> ParseTimelineHistory(
    absl::string_view content) {
  std::vector<TimelineSwitch> out;
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    TimelineSwitch s;
    absl::StatusOr<Lsn> end =
        fields.size() >= 2 ? Lsn::Parse(fields[1]) : absl::DataLossError("");
    if (fields.size() < 2 || !absl::SimpleAtoi(fields[0], &s.timeline) || !end.ok()) {
      return absl::DataLossError(
          absl::StrCat("malformed timeline history line: \"", line, "\""));
    }
    s.end = *end;
    out.push_back(s);
  }
  return out;
}

}  // namespace cdc
