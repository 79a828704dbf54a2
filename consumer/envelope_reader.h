// ReadEnvelope: turns a Kafka record written by outbox-publisher back into the
// outbox.v1.Envelope it carries (SPEC "Kafka record"). Pure.
//
// A record is accepted only when its content_type header names the Envelope
// (kEnvelopeContentType), its value parses, and the envelope has an id: the id is
// what makes applying it idempotent. Anything else is kInvalidArgument, a
// permanent error: reading it again cannot make it an envelope, so the consumer
// sends it to the dead-letter topic instead of retrying.
#ifndef CONSUMER_ENVELOPE_READER_H_
#define CONSUMER_ENVELOPE_READER_H_

#include "absl/status/statusor.h"
#include "consumer/inbound_record.h"
#include "outbox/v1/envelope.pb.h"

namespace consumer {

inline constexpr char kContentTypeHeader[] = "content_type";
inline constexpr char kEnvelopeContentType[] =
    "application/x-protobuf; messageType=outbox.v1.Envelope";

[[nodiscard]] absl::StatusOr<outbox::v1::Envelope> ReadEnvelope(const InboundRecord& r);

}  // namespace consumer

#endif  // CONSUMER_ENVELOPE_READER_H_
