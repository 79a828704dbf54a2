// Reading Prometheus' text format, as the publisher's /metrics serves it.
#ifndef TOOLS_HARNESS_METRICS_TEXT_H_
#define TOOLS_HARNESS_METRICS_TEXT_H_

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace harness {

// The sum of the samples of metric `name` (whatever their labels) whose line
// contains `label` ("" for all), or none when it has no sample.
inline std::optional<double> MetricSum(absl::string_view text, absl::string_view name,
                                       absl::string_view label = "") {
  std::optional<double> sum;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, name) || line.size() <= name.size()) continue;
    char next = line[name.size()];
    if (next != '{' && next != ' ') continue;
    if (!label.empty() && line.find(label) == absl::string_view::npos) continue;
    size_t space = line.rfind(' ');
    double v = 0;
    if (space == absl::string_view::npos || !absl::SimpleAtod(line.substr(space + 1), &v))
      continue;
    sum = sum.value_or(0) + v;
  }
  return sum;
}

// The value of the sample `series` ("name", or "name{labels}" exactly as the
// line writes them) as written, or none when no line has it.
inline std::optional<std::string> SampleValue(absl::string_view text,
                                              absl::string_view series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, series) && line.size() > series.size() &&
        line[series.size()] == ' ')
      return std::string(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

}  // namespace harness

#endif  // TOOLS_HARNESS_METRICS_TEXT_H_
