#include "consumer/unsafe_properties.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace consumer {
namespace {

std::string RefusedBecause(const std::string& key, const std::string& v) {
  if (key == "enable.auto.offset.store" && common::KafkaBoolean(v) == true) {
    return "the group would commit a record's offset before its effect committed, so "
           "a crash skips the effect";
  }
  if (key == "isolation.level" && v != "read_committed") {
    return "records of aborted Kafka transactions (the publisher's exactly-once "
           "retries) would be applied";
  }
  if (key == "group.id") return "set --group instead";
  return "";
}

}  // namespace

absl::Status RefuseUnsafeProperties(const common::KafkaProperties& p) {
  std::vector<std::string> refused;
  for (const auto& [key, value] : p) {
    if (std::string why = RefusedBecause(key, value); !why.empty()) {
      // The key and the reason, never the value (it may be a misplaced secret).
      refused.push_back(absl::StrCat(key, ": ", why));
    }
  }
  if (refused.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Kafka property refused: ", absl::StrJoin(refused, "; ")));
}

}  // namespace consumer
