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

namespace {

// `n` ASCII digits at text[at..] as a number, or -1.
int Digits(absl::string_view text, size_t at, size_t n) {
  if (at + n > text.size()) return -1;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year >= 0):
// whole 400-year eras of 146097 days, then the day within the era, counting years
// from March so that February's leap day comes last.
int64_t DaysSinceEpoch(int year, int month, int day) {
  int y = month <= 2 ? year - 1 : year;
  int era = y / 400;  // y >= -1 here; the era of year -1 is irrelevant (year >= 1).
  int year_of_era = y - era * 400;
  int month_from_march = month > 2 ? month - 3 : month + 9;
  int day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
  int day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return int64_t{era} * 146097 + day_of_era - 719468;  // 719468: 0000-03-01 to 1970.
}

// The common shape of an ISO DateStyle date and time without its offset,
// "YYYY-MM-DD HH:MM:SS[.f{1,6}]", as UTC, by arithmetic rather than a time zone
// library: this runs once per row. nullopt for anything else (years past 9999,
// BC, infinity, ...).
std::optional<absl::Time> ParseIsoDateTimeFast(absl::string_view text) {
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' ||
      text[13] != ':' || text[16] != ':')
    return std::nullopt;
  int year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  int hour = Digits(text, 11, 2), minute = Digits(text, 14, 2),
      second = Digits(text, 17, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 59)
    return std::nullopt;
  if (day > DaysInMonth(year, month)) return std::nullopt;  // 31 April: not ours.
  int64_t micros = 0;
  if (text.size() > 19) {
    size_t digits = text.size() - 20;
    if (text[19] != '.' || digits == 0 || digits > 6) return std::nullopt;
    int fraction = Digits(text, 20, digits);
    if (fraction < 0) return std::nullopt;
    micros = fraction;
    for (; digits < 6; ++digits) micros *= 10;
  }
  int64_t seconds =
      DaysSinceEpoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return absl::FromUnixMicros(seconds * 1000000 + micros);
}

// A UTC offset after its sign: "hh", "hh:mm" or "hh:mm:ss", in seconds; nullopt
// otherwise.
std::optional<int> ParseOffset(absl::string_view off) {
  if (off.size() != 2 && off.size() != 5 && off.size() != 8) return std::nullopt;
  int seconds = 0;
  for (size_t at = 0, unit = 3600; at < off.size(); at += 3, unit /= 60) {
    if (at > 0 && off[at - 1] != ':') return std::nullopt;
    int v = Digits(off, at, 2);
    if (v < 0) return std::nullopt;
    seconds += v * static_cast<int>(unit);
  }
  return seconds;
}

}  // namespace

absl::StatusOr<absl::Time> ParsePgTimestamp(absl::string_view text) {
  // Split off a trailing "+hh[:mm[:ss]]" or "-hh..." offset after the time part.
  absl::string_view body = text;
  int offset_seconds = 0;
  size_t time_start = text.find(' ');
  size_t sign = text.find_first_of(
      "+-", time_start == absl::string_view::npos ? text.size() : time_start);
  if (time_start != absl::string_view::npos && sign != absl::string_view::npos) {
    body = text.substr(0, sign);
    std::optional<int> offset = ParseOffset(text.substr(sign + 1));
    if (!offset) {
      return absl::InvalidArgumentError(
          absl::StrCat("unrecognised timestamp \"", text, "\""));
    }
    offset_seconds = *offset * (text[sign] == '-' ? -1 : 1);
  }
  absl::Time t;
  std::string err;
  if (std::optional<absl::Time> fast = ParseIsoDateTimeFast(body)) {
    t = *fast;
  } else if (!absl::ParseTime("%Y-%m-%d %H:%M:%E*S", std::string(body),
                              absl::UTCTimeZone(), &t, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("unrecognised timestamp \"", text,
                                                   "\": expected ISO DateStyle output"));
  }
  return t - absl::Seconds(offset_seconds);
}

absl::StatusOr<std::string> DecodeByteaHex(absl::string_view text) {
  if (!absl::ConsumePrefix(&text, "\\x") || text.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        "bytea value is not in hex format: set bytea_output = 'hex' on the server");
  }
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("bytea value has a non-hex digit");
    }
  }
  return absl::HexStringToBytes(text);
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
