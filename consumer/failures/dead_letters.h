// Dead letters: a record the consumer gives up on goes to the dead-letter topic,
// as it was (key, value, headers), with what went wrong in extra headers:
//
//   dlq.reason            "permanent error", "retries exhausted" or
//                         "not an outbox envelope"
//   dlq.error             the last error's message
//   dlq.error.code        its status code (e.g. INVALID_ARGUMENT)
//   dlq.attempts          handler calls made (0: the record never reached it)
//   dlq.source.topic, dlq.source.partition, dlq.source.offset
//   dlq.consumer.group
//
// The record's offset is committed only after the broker stored its dead letter:
// a dead letter is never lost, and may be sent twice (a crash between the two).
// Dead-lettered ids are not recorded as processed, so an event re-driven from the
// dead-letter topic after a fix is applied then.
#ifndef CONSUMER_FAILURES_DEAD_LETTERS_H_
#define CONSUMER_FAILURES_DEAD_LETTERS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "consumer/inbound_record.h"

namespace consumer {

struct DeadLetter {
  const InboundRecord& record;
  std::string reason;
  absl::Status error;
  int attempts = 0;
  std::string group;
};

// The dead letter's headers: the record's own, then the dlq.* ones. Pure.
std::vector<std::pair<std::string, std::string>> DeadLetterHeaders(const DeadLetter& d);

class DeadLetterSink {
 public:
  virtual ~DeadLetterSink() = default;
  // Returns once the broker stored the dead letter (OK), or failed to.
  [[nodiscard]] virtual absl::Status Send(const DeadLetter& d) = 0;
};

}  // namespace consumer

#endif  // CONSUMER_FAILURES_DEAD_LETTERS_H_
