// ValueFormat: what a Kafka record's value holds (--value-format), and the
// publisher's own headers that go with it. Pure.
//
//   envelope  outbox.v1.Envelope in protobuf's binary format (the default);
//   payload   the payload column alone, as Debezium's Outbox Event Router writes it
//             at its defaults (json, jsonb and text columns as their text, bytea as
//             its bytes), with what the envelope would carry in headers;
//   json      outbox.v1.Envelope in protobuf's canonical JSON mapping.
//
// The record's own headers come first, then the headers column's entries, which
// may not use a reserved name (IsReservedHeader): a consumer that reads the last
// header of a name would read the writer's instead of ours.
#ifndef PUBLISHER_MAPPING_VALUE_FORMAT_H_
#define PUBLISHER_MAPPING_VALUE_FORMAT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/content_types.h"
#include "publisher/mapping/envelope_writer.h"

namespace publisher {

enum class ValueFormat { kEnvelope, kPayload, kJson };

// "envelope", "payload" or "json".
absl::StatusOr<ValueFormat> ParseValueFormat(absl::string_view name);
const char* ValueFormatName(ValueFormat format);

// The content_type header of an envelope's value, in each encoding.
using common::kEnvelopeContentType;
using common::kJsonEnvelopeContentType;

// Whether `name` is one of the publisher's own headers: id, event_type,
// content_type, or any name starting with "outbox_".
bool IsReservedHeader(absl::string_view name);

using Headers = std::vector<std::pair<std::string, std::string>>;

// Replaces `headers` with the record's own headers for `format`, assigning in place
// so that the strings keep their capacity; returns how many there are.
//   every format   id, event_type, content_type (the value's: for payload, the
//                  payload's own content type)
//   payload        also outbox_aggregate_type, outbox_lsn and outbox_commit_lsn
//                  (PostgreSQL's X/X form), outbox_xid, outbox_commit_time (RFC 3339,
//                  UTC, microseconds)
size_t SetOwnHeaders(ValueFormat format, const EnvelopeFields& fields, Headers* headers);

// Replaces `out` with the value for `format`.
void WriteValue(ValueFormat format, const EnvelopeFields& fields, std::string* out);

}  // namespace publisher

#endif  // PUBLISHER_MAPPING_VALUE_FORMAT_H_
