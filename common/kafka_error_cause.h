// The cause of a stall as librdkafka reports it, kept so that a summary does not
// hide it. Once every connection has failed, librdkafka repeats "all brokers are
// down" (_ALL_BROKERS_DOWN) about every second; that says less than the error
// that took the connections down (a refused connection, a request that timed out,
// a failed authentication), which an operator needs to act. Pure.
#ifndef COMMON_KAFKA_ERROR_CAUSE_H_
#define COMMON_KAFKA_ERROR_CAUSE_H_

#include <string>

#include "absl/time/time.h"

namespace common {

class KafkaErrorCause {
 public:
  // librdkafka reported `error` ("_TRANSPORT: Connect failed: ...") at `at`. A
  // `summary` replaces the kept error only when that is a summary too, or is not
  // newer than `stale_at` (it belongs to an earlier episode, such as a stall that
  // an acknowledgement ended).
  void Report(std::string error, absl::Time at, bool summary,
              absl::Time stale_at = absl::InfinitePast());

  const std::string& error() const { return error_; }  // "" = none yet.
  absl::Time at() const { return at_; }

 private:
  std::string error_;
  absl::Time at_ = absl::InfinitePast();
  bool summary_ = false;
};

}  // namespace common

#endif  // COMMON_KAFKA_ERROR_CAUSE_H_
