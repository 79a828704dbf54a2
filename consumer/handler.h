// The user's side of the consumer kit: a Handler applies one event's business
// effect through the Transaction it is given. Pure interfaces.
//
// The kit calls the handler inside a PostgreSQL transaction that has already
// recorded the envelope's id as processed (processed_table.h), and commits both
// together: the effect happens once per id, however often Kafka delivers it. A
// handler must therefore do its work through `tx` only: anything it does outside
// (an HTTP call, another database) is not rolled back with it and may happen more
// than once.
//
// What the handler returns decides what happens next:
//   OK                      commit; the record's offset may be committed;
//   RetryableError(...)     roll back, and try the same record again after a
//                           backoff, holding back its partition meanwhile (also
//                           kUnavailable, kDeadlineExceeded, kAborted and
//                           kResourceExhausted from anywhere: a lost connection,
//                           a serialization failure);
//   PermanentError(...)     roll back, and send the record to the dead-letter
//                           topic with the error in its headers (also any other
//                           non-OK code).
// A retryable error that keeps failing past RetryOptions::max_attempts is
// dead-lettered too: no record blocks its partition forever.
#ifndef CONSUMER_HANDLER_H_
#define CONSUMER_HANDLER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "consumer/inbound_record.h"
#include "consumer/trace_context.h"
#include "outbox/v1/envelope.pb.h"

namespace consumer {

// Rows of text values; a NULL is nullopt (as cdc::SqlRows).
using Rows = std::vector<std::vector<std::optional<std::string>>>;

// SQL inside the open transaction.
class Transaction {
 public:
  virtual ~Transaction() = default;
  // Runs one statement; the rows it returned (none for a command).
  [[nodiscard]] virtual absl::StatusOr<Rows> Query(const std::string& sql) = 0;
  [[nodiscard]] absl::Status Command(const std::string& sql) {
    return Query(sql).status();
  }
  // `text` as a quoted SQL literal, for building statements safely.
  virtual std::string Literal(absl::string_view text) = 0;
};

// One event, valid for the duration of the handler call.
struct Event {
  const outbox::v1::Envelope& envelope;
  const InboundRecord& record;
  TraceContext trace = {};  // The writer's W3C trace context, if it sent one.
};

using Handler = std::function<absl::Status(const Event&, Transaction&)>;

// The two outcomes of a failed handler, by meaning.
absl::Status RetryableError(absl::string_view message);
absl::Status PermanentError(absl::string_view message);
bool IsRetryable(const absl::Status& status);

}  // namespace consumer

#endif  // CONSUMER_HANDLER_H_
