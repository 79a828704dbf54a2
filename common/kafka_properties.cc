#include "common/kafka_properties.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace common {
namespace {

constexpr absl::string_view kPrefix = "OUTBOX_KAFKA_";

}  // namespace

std::string KafkaPropertyEnvName(absl::string_view property) {
  return absl::StrCat(kPrefix,
                      absl::AsciiStrToUpper(absl::StrReplaceAll(property, {{".", "_"}})));
}

std::optional<std::string> KafkaPropertyOfEnvName(absl::string_view name) {
  if (name == kKafkaConfigEnv || !absl::ConsumePrefix(&name, kPrefix) || name.empty()) {
    return std::nullopt;
  }
  return absl::AsciiStrToLower(absl::StrReplaceAll(name, {{"_", "."}}));
}

KafkaProperties KafkaPropertiesFromEnvironment(std::vector<std::string> names,
                                               const EnvLookup& lookup) {
  std::sort(names.begin(), names.end());
  KafkaProperties out;
  for (const std::string& name : names) {
    std::optional<std::string> property = KafkaPropertyOfEnvName(name);
    if (!property) continue;
    if (std::optional<std::string> value = lookup(name)) {
      out.emplace_back(std::move(*property), std::move(*value));
    }
  }
  return out;
}

absl::StatusOr<KafkaProperties> ParseKafkaPropertiesFile(absl::string_view text,
                                                         absl::string_view origin) {
  KafkaProperties out;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#' || line.front() == '!') continue;
    size_t eq = line.find('=');
    absl::string_view key =
        eq == absl::string_view::npos ? "" : absl::StripAsciiWhitespace(line.substr(0, eq));
    if (key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ":", number, ": expected key=value (a librdkafka property)"));
    }
    out.emplace_back(std::string(key),
                     std::string(absl::StripAsciiWhitespace(line.substr(eq + 1))));
  }
  return out;
}

KafkaProperties MergeKafkaProperties(const std::vector<KafkaProperties>& lowest_first) {
  KafkaProperties out;
  for (const KafkaProperties& source : lowest_first) {
    for (const auto& [key, value] : source) {
      auto same = std::find_if(out.begin(), out.end(),
                               [&key = key](const auto& p) { return p.first == key; });
      if (same == out.end()) {
        out.emplace_back(key, value);
      } else {
        same->second = value;
      }
    }
  }
  return out;
}

absl::StatusOr<KafkaProperties> GatherKafkaProperties(
    const std::string& file, const Environment& env, const KafkaProperties& command_line) {
  KafkaProperties from_file;
  if (!file.empty()) {
    absl::StatusOr<std::string> text = env.read_file(file);
    if (!text.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot read the Kafka properties file ", file, ": ", text.status().message()));
    }
    absl::StatusOr<KafkaProperties> parsed = ParseKafkaPropertiesFile(*text, file);
    if (!parsed.ok()) return parsed.status();
    from_file = *std::move(parsed);
  }
  return MergeKafkaProperties(
      {from_file, KafkaPropertiesFromEnvironment(env.names, env.lookup), command_line});
}

std::optional<bool> KafkaBoolean(absl::string_view value) {
  if (absl::EqualsIgnoreCase(value, "true") || absl::EqualsIgnoreCase(value, "t") ||
      value == "1") {
    return true;
  }
  if (absl::EqualsIgnoreCase(value, "false") || absl::EqualsIgnoreCase(value, "f") ||
      value == "0") {
    return false;
  }
  return std::nullopt;
}

bool IsSecretProperty(absl::string_view key) {
  std::string k = absl::AsciiStrToLower(key);
  return absl::StrContains(k, "password") || absl::StrContains(k, "secret") ||
         (absl::StrContains(k, "key") && !absl::StrContains(k, "location")) ||
         k == "sasl.jaas.config" || k == "sasl.oauthbearer.config";
}

std::string ShownPropertyValue(absl::string_view key, absl::string_view value,
                               bool known) {
  return !known || IsSecretProperty(key) ? std::string("********") : std::string(value);
}

std::string RefusedPropertyMessage(absl::string_view key, absl::string_view value,
                                   absl::string_view error) {
  std::string reason(error);
  if (!value.empty()) absl::StrReplaceAll({{value, "<value>"}}, &reason);
  std::string out = absl::StrCat("invalid librdkafka property ", key, ": ", reason);
  if (absl::AsciiStrToLower(key) == "sasl.jaas.config") {
    absl::StrAppend(&out,
                    " (a Java client's property: librdkafka takes sasl.mechanism, "
                    "sasl.username and sasl.password)");
  }
  return out;
}

}  // namespace common
