// Pieces of the Prometheus text exposition format (0.0.4) that both programs'
// /metrics pages are written with.
#ifndef COMMON_PROMETHEUS_TEXT_H_
#define COMMON_PROMETHEUS_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace outbox {

// Appends one metric family, `prefix` + `name`, with its HELP and TYPE lines and a
// single unlabelled sample.
void AppendMetricFamily(std::string* out, absl::string_view prefix, absl::string_view name,
                        absl::string_view type, absl::string_view help, double value);

// A label value with \, " and newlines escaped.
std::string EscapeLabelValue(absl::string_view value);

}  // namespace outbox

#endif  // COMMON_PROMETHEUS_TEXT_H_
