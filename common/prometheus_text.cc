#include "common/prometheus_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace outbox {

void AppendMetricFamily(std::string* out, absl::string_view prefix, absl::string_view name,
                        absl::string_view type, absl::string_view help, double value) {
  absl::StrAppend(out, "# HELP ", prefix, name, " ", help, "\n# TYPE ", prefix, name, " ",
                  type, "\n", prefix, name, " ", absl::StrFormat("%.17g", value), "\n");
}

std::string EscapeLabelValue(absl::string_view value) {
  return absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

}  // namespace outbox
