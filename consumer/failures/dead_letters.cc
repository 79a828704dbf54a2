// DeadLetterHeaders: the record's headers plus why it was given up.
#include "consumer/failures/dead_letters.h"

#include "absl/strings/str_cat.h"

namespace consumer {

std::vector<std::pair<std::string, std::string>> DeadLetterHeaders(const DeadLetter& d) {
  std::vector<std::pair<std::string, std::string>> h = d.record.headers;
  h.emplace_back("dlq.reason", d.reason);
  h.emplace_back("dlq.error", std::string(d.error.message()));
  h.emplace_back("dlq.error.code", absl::StatusCodeToString(d.error.code()));
  h.emplace_back("dlq.attempts", absl::StrCat(d.attempts));
  h.emplace_back("dlq.source.topic", d.record.source.topic);
  h.emplace_back("dlq.source.partition", absl::StrCat(d.record.source.partition));
  h.emplace_back("dlq.source.offset", absl::StrCat(d.record.offset));
  h.emplace_back("dlq.consumer.group", d.group);
  return h;
}

}  // namespace consumer
