// The consumer kit's fakes.
#include "tests/consumer/fakes.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "consumer/envelope_reader.h"
#include "outbox/v1/envelope.pb.h"

namespace consumer {

InboundRecord EnvelopeRecord(const std::string& topic, int32_t partition, int64_t offset,
                             const std::string& id) {
  outbox::v1::Envelope e;
  e.set_id(id);
  e.set_event_type("OrderPaid");
  e.set_payload("{}");
  InboundRecord r;
  r.source = {topic, partition};
  r.offset = offset;
  r.key = id;
  r.value = e.SerializeAsString();
  r.headers = {{"id", id}, {kContentTypeHeader, kEnvelopeContentType}};
  return r;
}

absl::StatusOr<std::optional<InboundRecord>> FakeSource::Poll(absl::Duration timeout) {
  std::vector<Key> keys;
  for (const auto& [k, log] : logs_) keys.push_back(k);
  for (size_t i = 0; i < keys.size(); ++i) {
    const Key& k = keys[(turn_ + i) % keys.size()];
    if (revoked_.count(k)) continue;
    size_t& pos = position_[k];
    if (pos >= logs_[k].size()) continue;
    auto paused = paused_.find(k);
    if (paused != paused_.end()) {
      if (paused->second == 0) continue;
      --paused->second;
    }
    turn_ = (turn_ + i + 1) % keys.size();
    return logs_[k][pos++];
  }
  clock_.now += timeout;  // Nothing to serve: the wait passes.
  return std::nullopt;
}

absl::Status FakeSource::Pause(const TopicPartition& tp) {
  ++pauses;
  paused_[KeyOf(tp)] = prefetched_after_pause;
  return absl::OkStatus();
}

absl::Status FakeSource::ResumeFrom(const TopicPartition& tp, int64_t offset) {
  resumed.emplace_back(tp, offset);
  paused_.erase(KeyOf(tp));
  position_[KeyOf(tp)] = static_cast<size_t>(offset);  // Offsets start at 0.
  return absl::OkStatus();
}

absl::Status FakeSource::Done(const TopicPartition& tp, int64_t offset) {
  if (revoked_.count(KeyOf(tp))) {
    return absl::FailedPreconditionError("the partition is not assigned");
  }
  done.push_back({tp, offset, db_commits == nullptr ? 0 : *db_commits});
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<TopicPartition, int64_t>>> FakeSource::Committed() {
  std::vector<std::pair<TopicPartition, int64_t>> out;
  for (const auto& [k, offset] : committed) out.push_back({{k.first, k.second}, offset});
  return out;
}

void FakeSource::Revoke(const TopicPartition& tp) {
  if (on_revoke_) on_revoke_({tp});
  revoked_.insert(KeyOf(tp));
}

absl::Status FakeDatabase::Lost() {
  lost_ = true;
  in_transaction_ = false;
  pending_ids_.clear();
  pending_effects_.clear();
  return absl::UnavailableError("the connection to the server was lost");
}

absl::Status FakeDatabase::Begin() {
  if (down > 0) {
    --down;
    return Lost();
  }
  lost_ = false;
  in_transaction_ = true;
  return absl::OkStatus();
}

absl::Status FakeDatabase::Commit() {
  if (lose_commits > 0) {
    --lose_commits;
    return Lost();
  }
  ids.insert(pending_ids_.begin(), pending_ids_.end());
  effects.insert(effects.end(), pending_effects_.begin(), pending_effects_.end());
  ++commits;
  pending_ids_.clear();
  pending_effects_.clear();
  in_transaction_ = false;
  if (ambiguous_commits > 0) {
    --ambiguous_commits;
    return Lost();
  }
  return absl::OkStatus();
}

void FakeDatabase::Rollback() {
  in_transaction_ = false;
  pending_ids_.clear();
  pending_effects_.clear();
}

absl::StatusOr<Rows> FakeDatabase::Query(const std::string& sql) {
  if (down > 0) {
    --down;
    return Lost();
  }
  if (absl::StartsWith(sql, "INSERT INTO \"processed_messages\"")) {
    // ... VALUES ('<id>', ...
    size_t from = sql.find("VALUES ('") + 9;
    std::string id = sql.substr(from, sql.find('\'', from) - from);
    if (ids.count(id) || pending_ids_.count(id)) return Rows{};
    if (in_transaction_) {
      pending_ids_.insert(id);
    } else {
      ids.insert(id);
    }
    return Rows{{std::string("1")}};
  }
  if (absl::StartsWith(sql, "EFFECT ")) {
    (in_transaction_ ? pending_effects_ : effects).push_back(sql.substr(7));
    return Rows{};
  }
  if (absl::StrContains(sql, "DELETE FROM")) {
    prunes.push_back(sql);
    return Rows{{std::string("0")}};
  }
  return absl::FailedPreconditionError(absl::StrCat("the fake cannot run: ", sql));
}

std::string FakeDatabase::Literal(absl::string_view text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "''"}}), "'");
}

std::string FakeDatabase::Identifier(absl::string_view identifier) {
  return absl::StrCat("\"", identifier, "\"");
}

absl::Status FakeDeadLetters::Send(const DeadLetter& d) {
  if (failures > 0) {
    --failures;
    return absl::UnavailableError("the broker did not store the dead letter");
  }
  sent.push_back({d.record, DeadLetterHeaders(d)});
  return absl::OkStatus();
}

}  // namespace consumer
