// The fault suite's consumer: reads every partition of the topic while the run goes
// on and keeps each record's id, partition, offset and envelope source, for the
// verdicts of audit.h. After a broker outage it resumes with a new consumer from the
// next offset of each partition (a consumer connected through the outage can stall
// on mock-kafka for good).
#ifndef TOOLS_CHAOS_VERIFIER_H_
#define TOOLS_CHAOS_VERIFIER_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "tools/chaos/audit.h"
#include "tools/harness/processes.h"

namespace chaos {

class Verifier {
 public:
  Verifier(std::string brokers, std::string topic);

  // Starts a fresh consumer from the next offset of each partition.
  void Restart();
  // Pulls what the consumer has read since the last call.
  void Collect();
  // Collects; when `behind` (rows are known to be missing) and nothing arrived for
  // 3 s, restarts the consumer.
  void Tick(bool behind);

  int restarts() const { return restarts_; }
  size_t distinct() const { return first_seen_.size(); }
  uint64_t deliveries() const { return all_.size(); }
  const std::vector<Delivered>& all() const { return all_; }
  // When each id was first consumed (for the commit-to-delivery figure).
  const std::map<std::string, absl::Time>& first_seen() const { return first_seen_; }
  // Records whose value was not an outbox.v1.Envelope.
  uint64_t undecodable() const { return undecodable_; }

 private:
  std::string brokers_, topic_;
  std::unique_ptr<harness::Consumer> consumer_;
  size_t seen_ = 0;
  std::set<std::pair<int32_t, int64_t>> seen_offsets_;
  std::map<int32_t, int64_t> last_offset_;
  std::vector<Delivered> all_;
  std::map<std::string, absl::Time> first_seen_;
  uint64_t undecodable_ = 0;
  absl::Time last_progress_ = absl::Now();
  int restarts_ = 0;
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_VERIFIER_H_
