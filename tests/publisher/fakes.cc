#include "tests/publisher/fakes.h"

#include <algorithm>
#include <utility>

namespace publisher::fakes {

absl::StatusOr<std::optional<cdc::ServerMessage>> FakeWalStream::Read(
    absl::Time deadline) {
  ++reads_;
  if (!fail_.ok()) {
    absl::Status s = fail_;
    fail_ = absl::OkStatus();
    return s;
  }
  while (!steps_.empty()) {
    if (Step& front = steps_.front(); front.silence > absl::ZeroDuration()) {
      if (!front.silent_until) front.silent_until = clock_.Now() + front.silence;
      if (clock_.Now() < *front.silent_until) {
        clock_.AdvanceTo(std::min(deadline, *front.silent_until));
        return std::optional<cdc::ServerMessage>();
      }
      steps_.pop_front();
      continue;
    }
    Step step = std::move(steps_.front());
    steps_.pop_front();
    if (step.action) {
      step.action();
      continue;
    }
    current_ = std::move(*step.bytes);
    absl::StatusOr<cdc::ServerMessage> m = cdc::ParseServerMessage(current_);
    if (!m.ok()) return m.status();
    return std::optional<cdc::ServerMessage>(*m);
  }
  stop_ = true;
  clock_.AdvanceTo(deadline);
  return std::optional<cdc::ServerMessage>();
}

absl::Status FakeWalStream::SendStatus(cdc::Lsn flush, bool reply_requested) {
  if (!send_fail_.ok()) return std::exchange(send_fail_, absl::OkStatus());
  statuses_.push_back({flush, reply_requested});
  if (on_status) on_status(flush);
  return absl::OkStatus();
}

cdc::Lsn FakeWalStream::max_flush() const {
  cdc::Lsn m;
  for (const Status& s : statuses_) m = std::max(m, s.flush);
  return m;
}

absl::Status FakeSink::Produce(const OutboxRecord& record, const MessageToken& token,
                               RecordKind kind) {
  if (!reject_topic.empty() && record.topic == reject_topic) return reject_status;
  produced_.push_back({record, token, kind});
  return absl::OkStatus();
}

void FakeSink::Report(size_t i, absl::Status status) {
  reports_.push_back({i, std::move(status)});
}

void FakeSink::AckAll() {
  for (size_t i = 0; i < produced_.size(); ++i) {
    if (!produced_[i].reported) Ack(i);
  }
}

void FakeSink::Poll(absl::Duration timeout,
                    const std::function<void(Delivery)>& on_delivery) {
  if (on_poll) on_poll();
  if (auto_ack) AckAll();
  std::vector<std::pair<size_t, absl::Status>> reports;
  reports.swap(reports_);
  for (auto& [i, status] : reports) {
    Produced& p = produced_[i];
    if (p.reported) continue;
    p.reported = true;
    Delivery d{p.token, status, p.kind, {}};
    if (!status.ok()) d.record = p.record;
    on_delivery(std::move(d));
  }
  if (reports.empty()) clock_.Advance(timeout);
}

size_t FakeSink::outstanding() const {
  return std::count_if(produced_.begin(), produced_.end(),
                       [](const Produced& p) { return !p.reported; });
}

}  // namespace publisher::fakes
