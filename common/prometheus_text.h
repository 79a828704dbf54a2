// Pieces of the Prometheus text exposition format (0.0.4) that both programs'
// /metrics pages are written with.
#ifndef COMMON_PROMETHEUS_TEXT_H_
#define COMMON_PROMETHEUS_TEXT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace common {

// Appends one metric family, `prefix` + `name`, with its HELP and TYPE lines and a
// single sample, labelled with `labels` (rendered: slot="a",shard="1/2"; "" = none).
void AppendMetricFamily(std::string* out, absl::string_view prefix, absl::string_view name,
                        absl::string_view type, absl::string_view help, double value,
                        absl::string_view labels = "");

// Appends the HELP and TYPE lines of the family `prefix` + `name`, for a family
// whose samples the caller appends.
void AppendMetricHeader(std::string* out, absl::string_view prefix, absl::string_view name,
                        absl::string_view type, absl::string_view help);

// Labels rendered for a sample: name="escaped value",... in the order given.
std::string RenderLabels(const std::vector<std::pair<std::string, std::string>>& labels);

// `series` with `labels` (rendered) and then `more` (rendered) in its braces,
// no braces when both are empty: outbox_x{slot="a",kind="b"}.
std::string Series(absl::string_view series, absl::string_view labels,
                   absl::string_view more = "");

// A label value with \, " and newlines escaped.
std::string EscapeLabelValue(absl::string_view value);

}  // namespace common

#endif  // COMMON_PROMETHEUS_TEXT_H_
