// DeadLetterPolicy: the dead letter of a row, or the status that halts.
#include "publisher/relay/dead_letter_policy.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace publisher {

absl::StatusOr<OutboxRecord> DeadLetterPolicy::Letter(const OutboxRecord& record,
                                                      const absl::Status& why,
                                                      absl::string_view stage) const {
  if (on_error_ == OnError::kHalt) {
    // The caller reports this status as the one line that says why the publisher
    // stopped.
    return absl::Status(
        why.code(),
        absl::StrCat("row ", record.id.empty() ? "?" : record.id,
                     record.topic.empty() ? "" : " for topic ", record.topic,
                     " cannot be published (", stage, "): ", why.message(),
                     "; halted by --on-error=halt with nothing after it confirmed: fix "
                     "the cause and restart, or run with --on-error=dead-letter"));
  }
  OutboxRecord letter = record;
  letter.topic = topic_;
  letter.headers.emplace_back("error", std::string(why.message()));
  letter.headers.emplace_back("error_stage", std::string(stage));
  letter.headers.emplace_back("original_topic", record.topic);
  if (absl::StrContains(why.message(), "MSG_SIZE_TOO_LARGE")) {
    // Too large for any topic: the dead letter names the row; the row itself stays
    // in the table (or the WAL) to be fetched by id.
    letter.value.clear();
    letter.headers.emplace_back("value_dropped", "true");
  }
  return letter;
}

absl::Status DeadLetterPolicy::Rejected(const std::string& id,
                                        const absl::Status& why) const {
  return absl::Status(
      why.code(),
      absl::StrCat("the dead-letter topic ", topic_, " rejected row ", id,
                   " too: ", why.message(),
                   "; halted with nothing after it confirmed: fix the dead-letter topic "
                   "(it must exist and accept writes) and restart"));
}

}  // namespace publisher
