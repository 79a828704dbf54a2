// CommittedView: checkpoints name the committed Kafka transactions.
#include "tests/chaos/committed_view.h"

#include "outbox/v1/checkpoint.pb.h"

namespace chaos {

bool CommittedView::AddCheckpoint(absl::string_view value) {
  outbox::v1::Checkpoint c;
  if (!c.ParseFromArray(value.data(), static_cast<int>(value.size())) ||
      c.kafka_transaction().empty()) {
    return false;
  }
  committed_.insert(c.kafka_transaction());
  return true;
}

bool CommittedView::Received(
    const std::vector<std::pair<std::string, std::string>>& headers) const {
  for (const auto& [name, value] : headers) {
    if (name == "kafka_transaction") return Committed(value);
  }
  return false;
}

}  // namespace chaos
