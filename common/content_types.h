// The content_type header values that name an outbox.v1.Envelope value, in its two
// encodings: written by the publisher (--value-format), read by the consumer kit.
#ifndef COMMON_CONTENT_TYPES_H_
#define COMMON_CONTENT_TYPES_H_

namespace common {

inline constexpr char kEnvelopeContentType[] =
    "application/x-protobuf; messageType=outbox.v1.Envelope";
inline constexpr char kJsonEnvelopeContentType[] =
    "application/json; messageType=outbox.v1.Envelope";

}  // namespace common

#endif  // COMMON_CONTENT_TYPES_H_
