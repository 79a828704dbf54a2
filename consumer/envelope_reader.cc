// ReadEnvelope: content_type check, then the protobuf parse.
#include "consumer/envelope_reader.h"

#include "absl/strings/str_cat.h"

namespace consumer {

absl::StatusOr<outbox::v1::Envelope> ReadEnvelope(const InboundRecord& r) {
  const std::string* type = r.Header(kContentTypeHeader);
  if (type == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("the record has no ", kContentTypeHeader,
                     " header: not written by outbox-publisher"));
  }
  if (*type != kEnvelopeContentType) {
    return absl::InvalidArgumentError(absl::StrCat("the record's ", kContentTypeHeader,
                                                   " is \"", *type, "\", not \"",
                                                   kEnvelopeContentType, "\""));
  }
  outbox::v1::Envelope envelope;
  if (!envelope.ParseFromString(r.value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the record's value (", r.value.size(),
                     " bytes) is not a valid outbox.v1.Envelope"));
  }
  if (envelope.id().empty()) {
    return absl::InvalidArgumentError(
        "the envelope has no id, so applying it cannot be made idempotent");
  }
  return envelope;
}

}  // namespace consumer
