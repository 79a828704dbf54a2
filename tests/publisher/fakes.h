// Test doubles for the relay: a scripted replication stream and a sink whose
// deliveries the test controls, both on a fake clock.
#ifndef TESTS_PUBLISHER_FAKES_H_
#define TESTS_PUBLISHER_FAKES_H_

#include <atomic>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cdc/framing.h"
#include "cdc/wal_stream.h"
#include "publisher/delivery/sink.h"

namespace publisher::fakes {

class FakeClock {
 public:
  absl::Time Now() const { return now_; }
  void AdvanceTo(absl::Time t) { now_ = std::max(now_, t); }
  void Advance(absl::Duration d) { now_ += d; }

 private:
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
};

// Plays a script: each step either yields one server message (CopyData bytes) or
// runs an action (ack a message, ...). When the script ends, it sets `stop`.
class FakeWalStream : public cdc::WalStream {
 public:
  FakeWalStream(FakeClock& clock, std::atomic<bool>& stop) : clock_(clock), stop_(stop) {}

  void Message(std::string bytes) {
    steps_.push_back({std::move(bytes), nullptr, absl::ZeroDuration(), std::nullopt});
  }
  void Action(std::function<void()> f) {
    steps_.push_back({std::nullopt, std::move(f), absl::ZeroDuration(), std::nullopt});
  }
  // The server says nothing for `d`: reads wait out their deadlines meanwhile.
  void Silence(absl::Duration d) {
    steps_.push_back({std::nullopt, nullptr, d, std::nullopt});
  }

  absl::StatusOr<std::optional<cdc::ServerMessage>> Read(absl::Time deadline) override;
  absl::Status SendStatus(cdc::Lsn flush, bool reply_requested) override;
  absl::Status Stop(absl::Time) override {
    stopped_ = true;
    return absl::OkStatus();
  }

  struct Status {
    cdc::Lsn flush;
    bool reply_requested;
  };
  const std::vector<Status>& statuses() const { return statuses_; }
  cdc::Lsn max_flush() const;
  size_t reads() const { return reads_; }
  bool stopped() const { return stopped_; }
  // Fails the next Read with `status`.
  void FailNextRead(absl::Status status) { fail_ = status; }
  // Fails the next SendStatus with `status` (the update is not sent).
  void FailNextSendStatus(absl::Status status) { send_fail_ = status; }
  // Calls `check` with every flush LSN sent, when it is sent.
  std::function<void(cdc::Lsn)> on_status;

 private:
  struct Step {
    std::optional<std::string> bytes;
    std::function<void()> action;
    absl::Duration silence = absl::ZeroDuration();
    std::optional<absl::Time> silent_until;  // Set when the silence begins.
  };
  FakeClock& clock_;
  std::atomic<bool>& stop_;
  std::deque<Step> steps_;
  std::string current_;  // Backs the last XLogData's payload.
  std::vector<Status> statuses_;
  size_t reads_ = 0;
  bool stopped_ = false;
  absl::Status fail_;
  absl::Status send_fail_;
};

// Keeps produced records; deliveries happen when the test says so.
class FakeSink : public Sink {
 public:
  explicit FakeSink(FakeClock& clock) : clock_(clock) {}

  struct Produced {
    OutboxRecord record;
    MessageToken token;
    RecordKind kind;
    bool reported = false;
  };

  absl::Status Produce(const OutboxRecord& record, const MessageToken& token,
                       RecordKind kind) override;
  void Poll(absl::Duration timeout,
            const std::function<void(Delivery)>& on_delivery) override;
  size_t outstanding() const override;

  // Schedules a delivery report for produced record `i` (served by the next Poll).
  void Ack(size_t i) { Report(i, absl::OkStatus()); }
  void AckAll();
  void Fail(size_t i, absl::Status status) { Report(i, std::move(status)); }
  // Acknowledge everything at every Poll.
  bool auto_ack = false;
  // Called at the start of every Poll.
  std::function<void()> on_poll;
  // Fail Produce of records for this topic with this status.
  std::string reject_topic;
  absl::Status reject_status;
  // Exactly-once: what committed_checkpoint() says, and every TransactionCommitted.
  std::optional<Checkpoint> checkpoint;
  std::vector<Checkpoint> boundaries;
  std::optional<Checkpoint> committed_checkpoint() const override { return checkpoint; }
  void TransactionCommitted(const Checkpoint& c) override { boundaries.push_back(c); }

  const std::vector<Produced>& produced() const { return produced_; }

 private:
  void Report(size_t i, absl::Status status);
  FakeClock& clock_;
  std::vector<Produced> produced_;
  std::vector<std::pair<size_t, absl::Status>> reports_;
};

}  // namespace publisher::fakes

#endif  // TESTS_PUBLISHER_FAKES_H_
