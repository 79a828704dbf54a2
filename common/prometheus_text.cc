#include "common/prometheus_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace common {

void AppendMetricFamily(std::string* out, absl::string_view prefix, absl::string_view name,
                        absl::string_view type, absl::string_view help, double value,
                        absl::string_view labels) {
  AppendMetricHeader(out, prefix, name, type, help);
  absl::StrAppend(out, Series(absl::StrCat(prefix, name), labels), " ",
                  absl::StrFormat("%.17g", value), "\n");
}

void AppendMetricHeader(std::string* out, absl::string_view prefix, absl::string_view name,
                        absl::string_view type, absl::string_view help) {
  absl::StrAppend(out, "# HELP ", prefix, name, " ", help, "\n# TYPE ", prefix, name, " ",
                  type, "\n");
}

std::string RenderLabels(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    absl::StrAppend(&out, out.empty() ? "" : ",", k, "=\"", EscapeLabelValue(v), "\"");
  }
  return out;
}

std::string Series(absl::string_view series, absl::string_view labels,
                   absl::string_view more) {
  if (labels.empty() && more.empty()) return std::string(series);
  return absl::StrCat(series, "{", labels, !labels.empty() && !more.empty() ? "," : "",
                      more, "}");
}

std::string EscapeLabelValue(absl::string_view value) {
  return absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

}  // namespace common
