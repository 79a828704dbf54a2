// Mapper: column binding, value conversion and envelope construction.
#include "publisher/mapping/mapper.h"

#include <functional>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "cdc/relation_cache.h"
#include "common/status_macros.h"
#include "publisher/mapping/envelope_writer.h"
#include "publisher/mapping/pg_text.h"

namespace publisher {
namespace {

// Built-in type OIDs (pg_type.dat) of the column types the mapping cares about.
constexpr uint32_t kByteaOid = 17;
constexpr uint32_t kTextOid = 25;
constexpr uint32_t kJsonOid = 114;
constexpr uint32_t kBpcharOid = 1042;
constexpr uint32_t kVarcharOid = 1043;
constexpr uint32_t kTimestampOid = 1114;
constexpr uint32_t kTimestamptzOid = 1184;
constexpr uint32_t kJsonbOid = 3802;

using cdc::pgoutput::Relation;
using cdc::pgoutput::Tuple;
using cdc::pgoutput::Value;

absl::StatusOr<size_t> RequiredColumn(const Relation& r, const std::string& name,
                                      absl::string_view flag) {
  std::optional<size_t> i = cdc::RelationCache::ColumnIndex(r, name);
  if (!i) {
    return absl::FailedPreconditionError(
        absl::StrCat("table ", r.schema, ".", r.name, " has no column \"", name, "\" (--",
                     flag, "): add the column or point --", flag, " at an existing one"));
  }
  return *i;
}

// A JSON value as a header value: strings as they are, everything else as JSON text.
std::string HeaderValue(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

bool IsValidTopicName(absl::string_view topic) {
  if (topic.empty() || topic.size() > 249 || topic == "." || topic == "..") return false;
  for (char c : topic) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

absl::StatusOr<BoundRelation> BoundRelation::Bind(const Relation& r,
                                                  const ColumnMapping& c,
                                                  const std::string& topic_template,
                                                  ValueFormat value_format) {
  BoundRelation b;
  b.value_format_ = value_format;
  b.schema_ = r.schema;
  b.table_ = r.name;
  for (const auto& col : r.columns) b.column_names_.push_back(col.name);
  ASSIGN_OR_RETURN(b.id_, RequiredColumn(r, c.id, "id-column"));
  ASSIGN_OR_RETURN(b.key_, RequiredColumn(r, c.key, "key-column"));
  ASSIGN_OR_RETURN(b.aggregate_type_,
                   RequiredColumn(r, c.aggregate_type, "aggregate-type-column"));
  ASSIGN_OR_RETURN(b.type_, RequiredColumn(r, c.type, "type-column"));
  ASSIGN_OR_RETURN(b.payload_, RequiredColumn(r, c.payload, "payload-column"));
  b.headers_ = cdc::RelationCache::ColumnIndex(r, c.headers);
  b.timestamp_ = cdc::RelationCache::ColumnIndex(r, c.timestamp);

  switch (r.columns[b.payload_].type_oid) {
    case kJsonOid:
    case kJsonbOid:
      b.payload_type_ = PayloadType::kJson;
      break;
    case kTextOid:
    case kVarcharOid:
    case kBpcharOid:
      b.payload_type_ = PayloadType::kText;
      break;
    case kByteaOid:
      b.payload_type_ = PayloadType::kBytea;
      break;
    default:
      return absl::FailedPreconditionError(absl::StrCat(
          "column ", r.schema, ".", r.name, ".", c.payload,
          " (--payload-column) has type OID ", r.columns[b.payload_].type_oid,
          ": use json, jsonb, text or bytea"));
  }
  if (b.headers_ && r.columns[*b.headers_].type_oid != kJsonbOid &&
      r.columns[*b.headers_].type_oid != kJsonOid) {
    return absl::FailedPreconditionError(
        absl::StrCat("column ", r.schema, ".", r.name, ".", c.headers,
                     " (--headers-column) must be jsonb"));
  }
  if (b.timestamp_ && r.columns[*b.timestamp_].type_oid != kTimestamptzOid &&
      r.columns[*b.timestamp_].type_oid != kTimestampOid) {
    return absl::FailedPreconditionError(
        absl::StrCat("column ", r.schema, ".", r.name, ".", c.timestamp,
                     " (--timestamp-column) must be timestamptz or timestamp"));
  }

  // Topic template: literal text and {placeholders}, checked by ParseConfig.
  absl::string_view rest = topic_template;
  while (!rest.empty()) {
    size_t open = rest.find('{');
    if (open == absl::string_view::npos) {
      b.topic_.push_back({std::string(rest), std::nullopt});
      break;
    }
    if (open > 0) b.topic_.push_back({std::string(rest.substr(0, open)), std::nullopt});
    size_t close = rest.find('}', open);
    std::string name(rest.substr(open + 1, close - open - 1));
    if (name == "schema") {
      b.topic_.push_back({r.schema, std::nullopt});
    } else if (name == "table") {
      b.topic_.push_back({r.name, std::nullopt});
    } else {
      ASSIGN_OR_RETURN(size_t i, RequiredColumn(r, name, "topic"));
      b.topic_.push_back({"", i});
    }
    rest.remove_prefix(close + 1);
  }
  return b;
}

std::optional<std::string> BoundRelation::fixed_topic() const {
  std::string topic;
  for (const TopicPart& p : topic_) {
    if (p.column) return std::nullopt;
    topic += p.literal;
  }
  return topic;
}

bool BoundRelation::CouldRouteTo(absl::string_view topic) const {
  // Glob matching: literal parts in order, each column part one or more characters.
  std::function<bool(size_t, absl::string_view)> match = [&](size_t part,
                                                             absl::string_view rest) {
    if (part == topic_.size()) return rest.empty();
    const TopicPart& p = topic_[part];
    if (!p.column) {
      return absl::StartsWith(rest, p.literal) &&
             match(part + 1, rest.substr(p.literal.size()));
    }
    for (size_t n = 1; n <= rest.size(); ++n) {
      if (match(part + 1, rest.substr(n))) return true;
    }
    return false;
  };
  return match(0, topic);
}

absl::StatusOr<OutboxRecord> BoundRelation::Map(const Tuple& tuple,
                                                const RowSource& src) const {
  OutboxRecord record;
  RETURN_IF_ERROR(MapInto(tuple, src, &record));
  return record;
}

absl::StatusOr<BoundRelation::Text> BoundRelation::ColumnText(const Tuple& tuple,
                                                              size_t column) const {
  const Value& v = tuple[column];
  if (v.kind == Value::Kind::kNull) return Text();
  if (v.kind != Value::Kind::kText) {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", column_names_[column], " did not arrive as text"));
  }
  return Text(v.data);
}

absl::StatusOr<absl::string_view> BoundRelation::RequiredText(const Tuple& tuple,
                                                              size_t column) const {
  ASSIGN_OR_RETURN(Text v, ColumnText(tuple, column));
  if (!v) {
    return absl::InvalidArgumentError(absl::StrCat(
        "column ", column_names_[column], " of ", schema_, ".", table_, " is NULL"));
  }
  return *v;
}

absl::StatusOr<BoundRelation::PayloadView> BoundRelation::Payload(
    const Tuple& tuple, std::string* bytes) const {
  ASSIGN_OR_RETURN(Text payload, ColumnText(tuple, payload_));
  switch (payload_type_) {
    case PayloadType::kJson:
      return PayloadView{payload.value_or(""), "application/json", !payload};
    case PayloadType::kText:
      return PayloadView{payload.value_or(""), "text/plain", !payload};
    case PayloadType::kBytea:
      break;
  }
  if (!payload) return PayloadView{"", "application/octet-stream", true};
  absl::StatusOr<std::string> raw = DecodeByteaHex(*payload);
  if (!raw.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", column_names_[payload_], ": ", raw.status().message()));
  }
  *bytes = *std::move(raw);
  return PayloadView{*bytes, "application/octet-stream"};
}

absl::Status BoundRelation::AppendColumnHeaders(const Tuple& tuple,
                                                Headers* headers) const {
  if (!headers_) return absl::OkStatus();
  ASSIGN_OR_RETURN(Text h, ColumnText(tuple, *headers_));
  if (!h || *h == "{}") return absl::OkStatus();
  nlohmann::json j = nlohmann::json::parse(*h, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", column_names_[*headers_],
                     " must hold a JSON object of header values"));
  }
  for (const auto& [name, value] : j.items()) {
    if (IsReservedHeader(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "column ", column_names_[*headers_], " names header \"", name,
          "\", which is the publisher's own (id, event_type, content_type, outbox_*): "
          "rename it"));
    }
    if (value.is_null()) continue;
    headers->emplace_back(name, HeaderValue(value));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Time> BoundRelation::CreatedAt(const Tuple& tuple,
                                                    absl::Time commit_time) const {
  if (!timestamp_) return commit_time;
  ASSIGN_OR_RETURN(Text ts, ColumnText(tuple, *timestamp_));
  if (!ts) return commit_time;
  absl::StatusOr<absl::Time> t = ParsePgTimestamp(*ts);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", column_names_[*timestamp_], ": ", t.status().message()));
  }
  return *t;
}

absl::Status BoundRelation::FillTopic(const Tuple& tuple, std::string* topic) const {
  topic->clear();
  for (const TopicPart& part : topic_) {
    if (!part.column) {
      *topic += part.literal;
      continue;
    }
    ASSIGN_OR_RETURN(Text v, ColumnText(tuple, *part.column));
    if (!v) {
      return absl::InvalidArgumentError(absl::StrCat(
          "column ", column_names_[*part.column], " is NULL but names the topic"));
    }
    topic->append(v->data(), v->size());
  }
  if (!IsValidTopicName(*topic)) {
    return absl::InvalidArgumentError(
        absl::StrCat("topic \"", *topic,
                     "\" is not a valid Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)"));
  }
  return absl::OkStatus();
}

absl::Status BoundRelation::MapInto(const Tuple& tuple, const RowSource& src,
                                    OutboxRecord* out) const {
  OutboxRecord& record = *out;
  if (tuple.size() != column_names_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("row has ", tuple.size(), " columns, table ", schema_, ".", table_,
                     " has ", column_names_.size()));
  }
  ASSIGN_OR_RETURN(absl::string_view id, RequiredText(tuple, id_));
  ASSIGN_OR_RETURN(absl::string_view key, RequiredText(tuple, key_));
  record.id.assign(id.data(), id.size());
  record.key.assign(key.data(), key.size());
  ASSIGN_OR_RETURN(Text aggregate_type, ColumnText(tuple, aggregate_type_));
  ASSIGN_OR_RETURN(Text event_type, ColumnText(tuple, type_));
  std::string bytea;  // A bytea payload's bytes.
  ASSIGN_OR_RETURN(PayloadView payload, Payload(tuple, &bytea));
  ASSIGN_OR_RETURN(absl::Time created, CreatedAt(tuple, src.commit_time));
  RETURN_IF_ERROR(FillTopic(tuple, &record.topic));

  EnvelopeFields e;
  e.id = record.id;
  e.aggregate_id = record.key;
  e.aggregate_type = aggregate_type.value_or("");
  e.event_type = event_type.value_or("");
  e.payload = payload.bytes;
  e.content_type = payload.content_type;
  e.created_at = created;
  e.lsn = src.lsn.value();
  e.commit_lsn = src.commit_lsn.value();
  e.xid = src.xid;
  e.commit_time = src.commit_time;
  e.database = src.database;
  e.schema = schema_;
  e.table = table_;
  // The record's own headers, then the headers column's entries, which are also
  // the envelope's headers map.
  size_t own = SetOwnHeaders(value_format_, e, &record.headers);
  RETURN_IF_ERROR(AppendColumnHeaders(tuple, &record.headers));
  e.headers = absl::MakeConstSpan(record.headers).subspan(own);
  record.timestamp_ms = absl::ToUnixMillis(created);
  WriteValue(value_format_, e, &record.value);
  record.value_null = value_format_ == ValueFormat::kPayload && payload.null;
  return absl::OkStatus();
}

std::string BoundRelation::RowAsJson(const Tuple& tuple) const {
  nlohmann::ordered_json row = nlohmann::ordered_json::object();
  for (size_t i = 0; i < tuple.size() && i < column_names_.size(); ++i) {
    if (tuple[i].kind == Value::Kind::kNull) {
      row[column_names_[i]] = nullptr;
    } else {
      row[column_names_[i]] = tuple[i].data;
    }
  }
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace publisher
