// MessageEvents: a message's JSON content laid out as an outbox row.
#include "publisher/message_events.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cdc/status_macros.h"

namespace publisher {
namespace {

namespace pg = cdc::pgoutput;

constexpr uint32_t kTextOid = 25;
constexpr uint32_t kJsonbOid = 3802;

// The message "table": the configured column names, in this order.
enum Field { kId, kAggregateType, kAggregateId, kEventType, kPayload, kHeaders, kFields };
constexpr const char* kJsonNames[kFields] = {
    "id", "aggregate_type", "aggregate_id", "event_type", "payload", "headers"};

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

absl::StatusOr<MessageEvents> MessageEvents::Bind(const ColumnMapping& c,
                                                  const std::string& topic_template) {
  pg::Relation r;
  r.oid = 0;
  r.replica_identity = 'd';
  r.columns = {{1, c.id, kTextOid, -1},       {0, c.aggregate_type, kTextOid, -1},
               {0, c.key, kTextOid, -1},      {0, c.type, kTextOid, -1},
               {0, c.payload, kJsonbOid, -1}, {0, c.headers, kJsonbOid, -1}};
  ColumnMapping columns = c;
  columns.timestamp = "";  // Messages carry none: the commit time is used.
  absl::StatusOr<BoundRelation> bound = BoundRelation::Bind(r, columns, topic_template);
  if (!bound.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--message-prefix: events without a table have the fields ", c.id,
                     ", ", c.aggregate_type, ", ", c.key, ", ", c.type, ", ", c.payload,
                     " and ", c.headers, " only: ", bound.status().message()));
  }
  return MessageEvents(std::move(*bound));
}

absl::StatusOr<OutboxRecord> MessageEvents::Map(absl::string_view content,
                                                const RowSource& source) const {
  OutboxRecord record;
  RETURN_IF_ERROR(MapInto(content, source, &record));
  return record;
}

absl::Status MessageEvents::MapInto(absl::string_view content, const RowSource& source,
                                    OutboxRecord* out) const {
  nlohmann::json j = nlohmann::json::parse(content, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(
        "the message content is not a JSON object (outbox_emit() writes one)");
  }
  pg::Tuple row(kFields);
  for (int f = 0; f < kFields; ++f) {
    auto it = j.find(kJsonNames[f]);
    if (it == j.end() || it->is_null()) {
      if (f == kHeaders) {
        row[f] = {pg::Value::Kind::kNull, ""};
        continue;
      }
      if (f == kPayload) {
        return absl::InvalidArgumentError("the message content has no \"payload\"");
      }
      return absl::InvalidArgumentError(
          absl::StrCat("the message content has no \"", kJsonNames[f], "\""));
    }
    if (f == kPayload) {
      row[f] = {pg::Value::Kind::kText, Dump(*it)};
    } else if (f == kHeaders) {
      if (!it->is_object()) {
        return absl::InvalidArgumentError(
            "the message content's \"headers\" must be a JSON object");
      }
      row[f] = {pg::Value::Kind::kText, Dump(*it)};
    } else {
      if (!it->is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the message content's \"", kJsonNames[f], "\" must be a string"));
      }
      row[f] = {pg::Value::Kind::kText, it->get<std::string>()};
    }
  }
  return bound_.MapInto(row, source, out);
}

std::string MessageEvents::ContentAsJson(absl::string_view content) {
  nlohmann::json j = nlohmann::json::parse(content, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) return Dump(j);
  return Dump(nlohmann::json(std::string(content)));
}

}  // namespace publisher
