// ValueFormat: the three encodings of a record's value and their own headers.
#include "publisher/mapping/value_format.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "outbox/v1/envelope.pb.h"

namespace publisher {
namespace {

constexpr char kReservedPrefix[] = "outbox_";

void Assign(std::pair<std::string, std::string>& header, absl::string_view name,
            absl::string_view value) {
  header.first.assign(name.data(), name.size());
  header.second.assign(value.data(), value.size());
}

std::string LsnText(uint64_t lsn) {
  return absl::StrFormat("%X/%X", lsn >> 32, lsn & 0xFFFFFFFF);
}

}  // namespace

absl::StatusOr<ValueFormat> ParseValueFormat(absl::string_view name) {
  if (name == "envelope") return ValueFormat::kEnvelope;
  if (name == "payload") return ValueFormat::kPayload;
  if (name == "json") return ValueFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("--value-format takes envelope, payload or json, not \"", name, "\""));
}

const char* ValueFormatName(ValueFormat format) {
  switch (format) {
    case ValueFormat::kEnvelope:
      return "envelope";
    case ValueFormat::kPayload:
      return "payload";
    case ValueFormat::kJson:
      return "json";
  }
  return "?";
}

bool IsReservedHeader(absl::string_view name) {
  return name == "id" || name == "event_type" || name == "content_type" ||
         absl::StartsWith(name, kReservedPrefix);
}

size_t SetOwnHeaders(ValueFormat format, const EnvelopeFields& f, Headers* headers) {
  absl::string_view content_type;
  switch (format) {
    case ValueFormat::kEnvelope:
      content_type = kEnvelopeContentType;
      break;
    case ValueFormat::kPayload:
      content_type = f.content_type;
      break;
    case ValueFormat::kJson:
      content_type = kJsonEnvelopeContentType;
      break;
  }
  size_t own = format == ValueFormat::kPayload ? 8 : 3;
  headers->resize(own);
  Headers& h = *headers;
  Assign(h[0], "id", f.id);
  Assign(h[1], "event_type", f.event_type);
  Assign(h[2], "content_type", content_type);
  if (format == ValueFormat::kPayload) {
    Assign(h[3], "outbox_aggregate_type", f.aggregate_type);
    Assign(h[4], "outbox_lsn", LsnText(f.lsn));
    Assign(h[5], "outbox_commit_lsn", LsnText(f.commit_lsn));
    Assign(h[6], "outbox_xid", absl::StrCat(f.xid));
    Assign(h[7], "outbox_commit_time",
           absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", f.commit_time, absl::UTCTimeZone()));
  }
  return own;
}

void WriteValue(ValueFormat format, const EnvelopeFields& fields, std::string* out) {
  switch (format) {
    case ValueFormat::kEnvelope:
      WriteEnvelope(fields, out);
      return;
    case ValueFormat::kPayload:
      out->assign(fields.payload.data(), fields.payload.size());
      return;
    case ValueFormat::kJson:
      out->clear();
      // Cannot fail: every field of an Envelope has a JSON mapping.
      (void)google::protobuf::util::MessageToJsonString(ToEnvelope(fields), out);
      return;
  }
}

}  // namespace publisher
