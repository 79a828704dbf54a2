// DeadLetterPolicy: --on-error, what becomes of a row that cannot be published
// (it cannot be mapped, or the broker refused it for good). Pure: the relay logs
// and produces what it decides.
//   halt         the run ends with a status naming the row; nothing after it is
//                confirmed
//   dead-letter  the row goes to --dead-letter-topic instead, the error in its
//                headers; its acknowledgement stands in for the row's
// A dead letter refused too always halts.
#ifndef PUBLISHER_RELAY_DEAD_LETTER_POLICY_H_
#define PUBLISHER_RELAY_DEAD_LETTER_POLICY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "publisher/mapping/mapper.h"
#include "publisher/relay/relay_options.h"

namespace publisher {

class DeadLetterPolicy {
 public:
  DeadLetterPolicy(OnError on_error, std::string topic)
      : on_error_(on_error), topic_(std::move(topic)) {}

  // `record` failed with `why` at `stage` (mapping, produce, delivery): the dead
  // letter to produce instead, or (halt) the status that ends the run.
  [[nodiscard]] absl::StatusOr<OutboxRecord> Letter(const OutboxRecord& record,
                                                    const absl::Status& why,
                                                    absl::string_view stage) const;

  // The dead letter of row `id` was refused too (`why`): the status that halts.
  [[nodiscard]] absl::Status Rejected(const std::string& id,
                                      const absl::Status& why) const;

 private:
  OnError on_error_;
  std::string topic_;
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_DEAD_LETTER_POLICY_H_
