// ReadEnvelope: by content_type, the protobuf or JSON parse, or the envelope
// rebuilt from a payload record's key, value and headers.
#include "consumer/envelope_reader.h"

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/proto_time.h"
#include "google/protobuf/util/json_util.h"

namespace consumer {
namespace {

// PostgreSQL's X/X form of an LSN.
bool ParseLsn(absl::string_view text, uint64_t* lsn) {
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(text, '/');
  uint32_t high = 0, low = 0;
  if (!absl::SimpleHexAtoi(parts.first, &high) ||
      !absl::SimpleHexAtoi(parts.second, &low))
    return false;
  *lsn = (uint64_t{high} << 32) | low;
  return true;
}

absl::Status Malformed(absl::string_view header, absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("the record's ", header, " header \"", value, "\" is malformed"));
}

// A payload record: the value is the payload, the envelope's other fields are in
// the key and the headers.
absl::StatusOr<outbox::v1::Envelope> FromPayloadRecord(const InboundRecord& r) {
  outbox::v1::Envelope e;
  e.set_aggregate_id(r.key);
  e.set_payload(r.value);
  if (r.timestamp_ms) {
    common::SetTimestamp(e.mutable_created_at(), absl::FromUnixMillis(*r.timestamp_ms));
  }
  outbox::v1::Source* source = e.mutable_source();
  for (const auto& [name, value] : r.headers) {
    if (name == "id") {
      e.set_id(value);
    } else if (name == "event_type") {
      e.set_event_type(value);
    } else if (name == kContentTypeHeader) {
      e.set_content_type(value);
    } else if (name == "outbox_aggregate_type") {
      e.set_aggregate_type(value);
    } else if (name == "outbox_lsn" || name == "outbox_commit_lsn") {
      uint64_t lsn = 0;
      if (!ParseLsn(value, &lsn)) return Malformed(name, value);
      name == "outbox_lsn" ? source->set_lsn(lsn) : source->set_commit_lsn(lsn);
    } else if (name == "outbox_xid") {
      uint32_t xid = 0;
      if (!absl::SimpleAtoi(value, &xid)) return Malformed(name, value);
      source->set_xid(xid);
    } else if (name == "outbox_commit_time") {
      absl::Time t;
      if (!absl::ParseTime(absl::RFC3339_full, value, &t, nullptr))
        return Malformed(name, value);
      common::SetTimestamp(source->mutable_commit_time(), t);
    } else if (!absl::StartsWith(name, "outbox_")) {
      (*e.mutable_headers())[name] = value;  // The writer's, from the headers column.
    }
  }
  return e;
}

}  // namespace

absl::StatusOr<outbox::v1::Envelope> ReadEnvelope(const InboundRecord& r) {
  const std::string* type = r.Header(kContentTypeHeader);
  outbox::v1::Envelope envelope;
  if (type != nullptr && *type == kEnvelopeContentType) {
    if (!envelope.ParseFromString(r.value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the record's value (", r.value.size(),
                       " bytes) is not a valid outbox.v1.Envelope"));
    }
  } else if (type != nullptr && *type == kJsonEnvelopeContentType) {
    auto parsed = google::protobuf::util::JsonStringToMessage(r.value, &envelope);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the record's value is not an outbox.v1.Envelope in JSON: ",
                       std::string(parsed.message())));
    }
  } else if (r.Header("id") != nullptr) {
    absl::StatusOr<outbox::v1::Envelope> rebuilt = FromPayloadRecord(r);
    if (!rebuilt.ok()) return rebuilt.status();
    envelope = *std::move(rebuilt);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "the record has neither an outbox envelope's ", kContentTypeHeader,
        " nor an id header: not written by outbox-publisher",
        type == nullptr ? ""
                        : absl::StrCat(" (", kContentTypeHeader, " \"", *type, "\")")));
  }
  if (envelope.id().empty()) {
    return absl::InvalidArgumentError(
        "the envelope has no id, so applying it cannot be made idempotent");
  }
  return envelope;
}

}  // namespace consumer
