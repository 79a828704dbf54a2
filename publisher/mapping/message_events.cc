// MessageEvents: a message's JSON content laid out as an outbox row.
#include "publisher/mapping/message_events.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "publisher/mapping/json_scan.h"

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
                                                  const std::string& topic_template,
                                                  ValueFormat value_format) {
  pg::Relation r;
  r.oid = 0;
  r.replica_identity = 'd';
  r.columns = {{1, c.id, kTextOid, -1},       {0, c.aggregate_type, kTextOid, -1},
               {0, c.key, kTextOid, -1},      {0, c.type, kTextOid, -1},
               {0, c.payload, kJsonbOid, -1}, {0, c.headers, kJsonbOid, -1}};
  ColumnMapping columns = c;
  columns.timestamp = "";  // Messages carry none: the commit time is used.
  absl::StatusOr<BoundRelation> bound =
      BoundRelation::Bind(r, columns, topic_template, value_format);
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
  // Raw spans, not a document: the payload and headers go on as written, which for
  // outbox_emit() is jsonb's text form, as a table row's jsonb column has it.
  JsonMember found[kFields];
  std::string unescaped;
  absl::Status scanned = ScanJsonObject(content, [&](const JsonMember& m) {
    absl::string_view key = m.key;
    if (m.key_escaped) {
      unescaped.clear();
      JsonDecodeString(m.key, &unescaped);
      key = unescaped;
    }
    for (int f = 0; f < kFields; ++f) {
      if (key == kJsonNames[f])
        found[f] = m;  // The last of duplicates wins, as in jsonb.
    }
  });
  if (!scanned.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the message content is not a JSON object (outbox_emit() writes one): ",
        scanned.message()));
  }
  row_.resize(kFields);
  for (int f = 0; f < kFields; ++f) {
    const JsonMember& m = found[f];
    pg::Value& v = row_[f];
    v.data.clear();
    if (m.raw.empty() || m.kind == JsonKind::kNull) {
      if (f != kHeaders) {
        return absl::InvalidArgumentError(
            absl::StrCat("the message content has no \"", kJsonNames[f], "\""));
      }
      v.kind = pg::Value::Kind::kNull;
      continue;
    }
    v.kind = pg::Value::Kind::kText;
    if (f == kPayload) {
      v.data.assign(m.raw.data(), m.raw.size());
    } else if (f == kHeaders) {
      if (m.kind != JsonKind::kObject) {
        return absl::InvalidArgumentError(
            "the message content's \"headers\" must be a JSON object");
      }
      v.data.assign(m.raw.data(), m.raw.size());
    } else {
      if (m.kind != JsonKind::kString) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the message content's \"", kJsonNames[f], "\" must be a string"));
      }
      JsonDecodeString(m.raw.substr(1, m.raw.size() - 2), &v.data);
    }
  }
  return bound_.MapInto(row_, source, out);
}

std::string MessageEvents::ContentAsJson(absl::string_view content) {
  nlohmann::json j = nlohmann::json::parse(content, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) return Dump(j);
  return Dump(nlohmann::json(std::string(content)));
}

}  // namespace publisher
