// ReadEnvelope: turns a Kafka record written by outbox-publisher back into the
// outbox.v1.Envelope it carries, whatever its --value-format (docs/design.md, "The
// Kafka record"). Pure.
//
//   content_type = kEnvelopeContentType       the value is the envelope (protobuf)
//   content_type = kJsonEnvelopeContentType   the value is the envelope (JSON)
//   otherwise, with an id header              the value is the payload alone (the
//       payload format, or Debezium's Outbox Event Router): the envelope is rebuilt
//       from the key, the value and the headers (outbox_* where present).
//
// The envelope must have an id: the id is what makes applying it idempotent.
// Anything else is kInvalidArgument, a permanent error: reading it again cannot
// make it an envelope, so the consumer sends it to the dead-letter topic instead
// of retrying.
#ifndef CONSUMER_ENVELOPE_READER_H_
#define CONSUMER_ENVELOPE_READER_H_

#include "absl/status/statusor.h"
#include "common/content_types.h"
#include "consumer/inbound_record.h"
#include "outbox/v1/envelope.pb.h"

namespace consumer {

inline constexpr char kContentTypeHeader[] = "content_type";
using common::kEnvelopeContentType;
using common::kJsonEnvelopeContentType;

[[nodiscard]] absl::StatusOr<outbox::v1::Envelope> ReadEnvelope(const InboundRecord& r);

}  // namespace consumer

#endif  // CONSUMER_ENVELOPE_READER_H_
