// CommittedView: what an isolation.level=read_committed consumer receives from a
// broker that writes transaction markers, rebuilt from what librdkafka's mock
// cluster (which writes none: tests/publisher/mock_transactions_test.cc) shows.
//
// In --delivery=exactly-once every record of a Kafka transaction carries the
// header `kafka_transaction`, and the checkpoint record the transaction commits
// with names it too. A transaction counts as committed when its checkpoint is in
// the checkpoint topic, and a record as received when its transaction committed.
// On a real broker that is exactly read_committed. On the mock, a transaction
// whose commit failed after its checkpoint was stored counts as committed here,
// as it does for the publisher, which reads the same checkpoint back and so does
// not publish its rows again.
#ifndef TESTS_CHAOS_COMMITTED_VIEW_H_
#define TESTS_CHAOS_COMMITTED_VIEW_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace chaos {

class CommittedView {
 public:
  // A record value read from the checkpoint topic. False if it is not a
  // checkpoint naming its Kafka transaction.
  bool AddCheckpoint(absl::string_view value);

  // Whether a record with these headers belongs to a committed Kafka transaction.
  bool Received(const std::vector<std::pair<std::string, std::string>>& headers) const;
  // Whether the Kafka transaction named `kafka_transaction` committed.
  bool Committed(absl::string_view kafka_transaction) const {
    return committed_.count(kafka_transaction) > 0;
  }

  size_t transactions() const { return committed_.size(); }

 private:
  std::set<std::string, std::less<>> committed_;
};

}  // namespace chaos

#endif  // TESTS_CHAOS_COMMITTED_VIEW_H_
