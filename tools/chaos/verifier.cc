// Verifier: the consumer side of the fault suite.
#include "tools/chaos/verifier.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "outbox/v1/envelope.pb.h"
#include "tools/harness/fatal.h"

namespace chaos {
namespace {

// No new record for this long while behind: the consumer is taken for stalled
// (mock-kafka can leave one stalled for good after an outage) and restarted. On a
// loaded 2-core machine a fresh consumer of a real 3-node cluster needs seconds to
// connect and fetch: restarting it sooner keeps it from ever delivering.
constexpr absl::Duration kStall = absl::Seconds(10);

}  // namespace

Verifier::Verifier(std::string brokers, std::string topic)
    : brokers_(std::move(brokers)), topic_(std::move(topic)) {
  Restart();
}

void Verifier::Restart() {
  Collect();
  consumer_.reset();
  seen_ = 0;  // The new consumer's records start from its first.
  harness::Consumer::Offsets next;
  for (const auto& [partition, offset] : last_offset_)
    next[{topic_, partition}] = offset + 1;
  // The brokers may still be coming back: retry for a while.
  auto consumer = harness::Consumer::Start(brokers_, {topic_}, next);
  for (absl::Time until = absl::Now() + absl::Seconds(60);
       !consumer.ok() && absl::Now() < until;) {
    absl::SleepFor(absl::Milliseconds(500));
    consumer = harness::Consumer::Start(brokers_, {topic_}, next);
  }
  consumer_ = harness::Must(std::move(consumer), "start consumer");
}

void Verifier::Collect() {
  if (!consumer_) return;
  std::vector<harness::ConsumedRecord> records = consumer_->Records();
  absl::Time now = absl::Now();
  for (size_t i = seen_; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!seen_offsets_.insert({r.partition, r.offset}).second) continue;
    last_offset_[r.partition] = std::max(last_offset_[r.partition], r.offset);
    outbox::v1::Envelope e;
    if (!e.ParseFromString(r.value)) {
      ++undecodable_;
      continue;
    }
    all_.push_back(
        {e.id(), r.partition, r.offset, e.source().commit_lsn(), e.source().lsn()});
    first_seen_.emplace(e.id(), now);
  }
  seen_ = records.size();
}

void Verifier::Tick(bool behind) {
  size_t before = all_.size();
  Collect();
  absl::Time now = absl::Now();
  if (all_.size() != before || !behind) {
    last_progress_ = now;
  } else if (now - last_progress_ > kStall) {
    ++restarts_;
    Restart();
    last_progress_ = now;
  }
}

}  // namespace chaos
