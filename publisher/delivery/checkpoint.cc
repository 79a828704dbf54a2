// Checkpoint encoding: outbox.v1.Checkpoint over the wire.
#include "publisher/delivery/checkpoint.h"

#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "outbox/v1/checkpoint.pb.h"

namespace publisher {
std::string EncodeCheckpoint(const Checkpoint& c, absl::string_view transactional_id,
                             absl::Time written_at) {
  outbox::v1::Checkpoint m;
  m.set_end_lsn(c.end_lsn.value());
  m.set_xid(c.xid);
  common::SetTimestamp(m.mutable_commit_time(), c.commit_time);
  common::SetTimestamp(m.mutable_written_at(), written_at);
  m.set_transactional_id(std::string(transactional_id));
  m.set_system_identifier(c.system_id);
  m.set_timeline(c.timeline);
  return m.SerializeAsString();
}

absl::StatusOr<Checkpoint> DecodeCheckpoint(absl::string_view value,
                                            absl::string_view transactional_id) {
  outbox::v1::Checkpoint m;
  if (!m.ParseFromArray(value.data(), static_cast<int>(value.size())) ||
      m.end_lsn() == 0) {
    return absl::DataLossError(
        absl::StrCat("the checkpoint record of ", transactional_id,
                     " is not an outbox.v1.Checkpoint: is another program writing to the "
                     "checkpoint topic?"));
  }
  if (m.transactional_id() != transactional_id) {
    return absl::DataLossError(
        absl::StrCat("the checkpoint record keyed ", transactional_id,
                     " names transactional id \"", m.transactional_id(), "\""));
  }
  return Checkpoint{cdc::Lsn(m.end_lsn()), m.xid(),
                    common::FromTimestamp(m.commit_time()), m.system_identifier(),
                    m.timeline()};
}

std::optional<Checkpoint> OnTimeline(const std::optional<Checkpoint>& latest,
                                     uint32_t timeline,
                                     const std::vector<cdc::TimelineSwitch>& history) {
  if (!latest || latest->timeline == 0 || timeline == 0 || latest->timeline == timeline)
    return latest;
  Checkpoint clamped = *latest;
  clamped.end_lsn = cdc::Lsn();
  for (const cdc::TimelineSwitch& s : history) {
    if (s.timeline == latest->timeline) {
      clamped.end_lsn = std::min(latest->end_lsn, s.end);
      break;
    }
  }
  return clamped;
}

absl::Status CheckSameCluster(const std::optional<Checkpoint>& latest,
                              absl::string_view system_id) {
  if (!latest || latest->system_id.empty() || latest->system_id == system_id)
    return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the latest checkpoint of this transactional id was written for another "
      "PostgreSQL cluster (system identifier ",
      latest->system_id, ", at LSN ", latest->end_lsn.ToString(),
      ") than this one (system identifier ", system_id,
      "); resuming after it would skip this cluster's transactions below that LSN. "
      "Give this publisher its own --transactional-id, or, if this database replaced "
      "that one and everything it must publish is still in the slot, delete the "
      "checkpoint (a tombstone keyed by the transactional id in --checkpoint-topic) "
      "to start over"));
}

absl::StatusOr<std::optional<Checkpoint>> LatestCheckpoint(
    const std::vector<CheckpointRecord>& records, absl::string_view transactional_id) {
  const CheckpointRecord* last = nullptr;
  for (const CheckpointRecord& r : records) {
    if (r.key != transactional_id) continue;
    if (last != nullptr && last->partition == r.partition && last->offset > r.offset)
      continue;
    last = &r;
  }
  if (last == nullptr || last->value.empty()) return std::optional<Checkpoint>();
  absl::StatusOr<Checkpoint> c = DecodeCheckpoint(last->value, transactional_id);
  if (!c.ok()) return c.status();
  return std::optional<Checkpoint>(*c);
}

}  // namespace publisher
