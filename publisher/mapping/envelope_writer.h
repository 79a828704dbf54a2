// EnvelopeWriter: an outbox.v1.Envelope (proto/outbox/v1/envelope.proto) written
// straight into its protobuf wire format, without building a message object. The
// mapper runs once per row, and a protobuf object per row (setters copying every
// string, then serializing) cost most of mapping's CPU. Pure.
//
// The bytes are what the protobuf library writes for the same message: fields in
// field-number order, proto3 defaults (empty strings, zero numbers) left out,
// created_at and source always present (the mapper always sets them), and each
// header a map entry with its key and value. Header entries keep the given order
// (protobuf leaves a map's order unspecified). envelope_writer_test parses the
// bytes back with the library.
#ifndef PUBLISHER_MAPPING_ENVELOPE_WRITER_H_
#define PUBLISHER_MAPPING_ENVELOPE_WRITER_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "outbox/v1/envelope.pb.h"

namespace publisher {

struct EnvelopeFields {
  absl::string_view id, aggregate_type, aggregate_id, event_type, payload, content_type;
  // The headers map's entries.
  absl::Span<const std::pair<std::string, std::string>> headers;
  absl::Time created_at;
  // Source.
  uint64_t lsn = 0, commit_lsn = 0;
  uint32_t xid = 0;
  absl::Time commit_time;
  absl::string_view database, schema, table;
};

// Replaces `out` with the envelope's bytes (its capacity is kept: pass the same
// string row after row).
void WriteEnvelope(const EnvelopeFields& fields, std::string* out);

// The same fields as a protobuf object, built with the library: for the JSON value
// format, and for tests to check WriteEnvelope's bytes against.
outbox::v1::Envelope ToEnvelope(const EnvelopeFields& fields);

}  // namespace publisher

#endif  // PUBLISHER_MAPPING_ENVELOPE_WRITER_H_
