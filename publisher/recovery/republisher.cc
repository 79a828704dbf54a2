// Republisher: map, produce with a bounded number in flight, drain.
#include "publisher/recovery/republisher.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"

namespace publisher {
namespace {

constexpr absl::Duration kPollStep = absl::Milliseconds(100);

}  // namespace

void Republisher::Poll(absl::Duration timeout) {
  sink_.Poll(timeout, [this](Delivery d) {
    if (d.status.ok()) {
      acknowledged_ += d.messages;
      return;
    }
    if (failure_.ok()) {
      failure_ = absl::Status(
          d.status.code(),
          absl::StrCat("re-publishing row ", d.record.id, " failed: ", d.status.message()));
    }
  });
  if (failure_.ok()) {
    if (absl::Status f = sink_.failure(); !f.ok()) failure_ = f;
  }
}

absl::Status Republisher::Produce(const OutboxRecord& record) {
  MessageToken token{published_, record.value.size()};
  while (true) {
    absl::Status s = sink_.Produce(record, token, RecordKind::kEvent);
    if (s.ok()) break;
    if (!absl::IsResourceExhausted(s)) {
      return absl::Status(s.code(), absl::StrCat("re-publishing row ", record.id,
                                                 " failed: ", s.message()));
    }
    Poll(kPollStep);  // The producer's queue is full: let it drain.
    if (!failure_.ok()) return failure_;
  }
  ++published_;
  return absl::OkStatus();
}

absl::Status Republisher::Publish(RowBatches& rows, const BoundRelation& relation,
                                  const RowSource& source) {
  OutboxRecord record;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<cdc::pgoutput::Tuple> batch, rows.Next());
    if (batch.empty()) return failure_;
    for (const cdc::pgoutput::Tuple& row : batch) {
      absl::Status mapped = relation.MapInto(row, source, &record);
      if (!mapped.ok()) {
        return absl::Status(mapped.code(),
                            absl::StrCat("cannot re-publish a row of ", relation.schema(),
                                         ".", relation.table(), ": ", mapped.message(),
                                         " (", relation.RowAsJson(row), ")"));
      }
      RETURN_IF_ERROR(Produce(record));
      while (sink_.outstanding() >= limits_.max_in_flight && failure_.ok()) {
        Poll(kPollStep);
      }
      Poll(absl::ZeroDuration());
      if (!failure_.ok()) return failure_;
    }
    log_.Debug("re-published a batch", {{"published", published_},
                                         {"acknowledged", acknowledged_}});
  }
}

absl::Status Republisher::Drain() {
  absl::Time deadline = absl::Now() + limits_.drain_timeout;
  while (sink_.outstanding() > 0 && failure_.ok()) {
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(
          absl::StrCat("the broker acknowledged ", acknowledged_, " of ", published_,
                       " re-published rows within ",
                       absl::FormatDuration(limits_.drain_timeout)));
    }
    Poll(kPollStep);
  }
  return failure_;
}

}  // namespace publisher
