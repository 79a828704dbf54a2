// Kafka client properties from the three places a user can put them, for the
// publisher and the consumer kit alike (docs/configuration.md, "Kafka client properties"):
//
//   1. a properties file (-F FILE, as kcat reads one): key=value lines;
//   2. the environment: OUTBOX_KAFKA_<NAME>, the property's name in upper case
//      with '.' as '_' (OUTBOX_KAFKA_SASL_PASSWORD sets sasl.password);
//   3. -X key=value on the command line.
//
// A later place wins over an earlier one. Secrets belong in 1 or 2: argv is
// visible in ps, /proc and a pod's spec. Pure: callers read files and the
// environment.
#ifndef COMMON_KAFKA_PROPERTIES_H_
#define COMMON_KAFKA_PROPERTIES_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace common {

using KafkaProperties = std::vector<std::pair<std::string, std::string>>;

// The variable that names a properties file, which is not a property itself.
inline constexpr char kKafkaConfigEnv[] = "OUTBOX_KAFKA_CONFIG";

// The variable that sets `property`: sasl.password -> OUTBOX_KAFKA_SASL_PASSWORD.
std::string KafkaPropertyEnvName(absl::string_view property);

// The property a variable sets, or nullopt when `name` is not OUTBOX_KAFKA_<NAME>
// (or is kKafkaConfigEnv).
std::optional<std::string> KafkaPropertyOfEnvName(absl::string_view name);

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// What a program reads besides argv: the environment and files
// (common/process_environment.h has the real one; tests make their own).
struct Environment {
  EnvLookup lookup;                // One variable, by name.
  std::vector<std::string> names;  // Every variable's name (for OUTBOX_KAFKA_*).
  std::function<absl::StatusOr<std::string>(const std::string& path)> read_file;
};

// Every OUTBOX_KAFKA_<NAME> among `names`, read through `lookup`, ordered by name.
KafkaProperties KafkaPropertiesFromEnvironment(std::vector<std::string> names,
                                               const EnvLookup& lookup);

// A properties file's text: one key=value per line (the value may hold '='); blank
// lines and lines starting with '#' or '!' are skipped; spaces around the key and
// the value are trimmed. kInvalidArgument naming `origin` and the line otherwise.
[[nodiscard]] absl::StatusOr<KafkaProperties> ParseKafkaPropertiesFile(
    absl::string_view text, absl::string_view origin);

// The sources, lowest precedence first, as one list: each key once, where it
// first appeared, with the value of the last source that set it.
KafkaProperties MergeKafkaProperties(const std::vector<KafkaProperties>& lowest_first);

// The three sources merged, lowest first: the properties file `file` ("" = none;
// kInvalidArgument when it cannot be read or parsed), OUTBOX_KAFKA_* in `env`, and
// `command_line` (-X, in order).
[[nodiscard]] absl::StatusOr<KafkaProperties> GatherKafkaProperties(
    const std::string& file, const Environment& env, const KafkaProperties& command_line);

// A boolean property's value as librdkafka reads it (true/t/1, false/f/0, case
// aside); nullopt for anything else, which librdkafka refuses.
std::optional<bool> KafkaBoolean(absl::string_view value);

// Whether a property holds a secret: its name says password, secret or key (but
// not a key's location), or it carries credentials (sasl.jaas.config,
// sasl.oauthbearer.config).
bool IsSecretProperty(absl::string_view key);

// `value`, or "********" when `key` holds a secret or is not a property the
// client knows (`known`: a misspelled secret's name, sasl.pasword, says nothing
// of what it holds): what logs may show.
std::string ShownPropertyValue(absl::string_view key, absl::string_view value,
                               bool known);

// librdkafka's refusal `error` of `key`=`value`, with the value cut out wherever
// the refusal quotes it, and for a Java client's property the one to use instead:
// a refused property is named with the reason, never with its value.
std::string RefusedPropertyMessage(absl::string_view key, absl::string_view value,
                                   absl::string_view error);

}  // namespace common

#endif  // COMMON_KAFKA_PROPERTIES_H_
