// MessageEvents: outbox events without a table (--message-prefix). Pure.
//
// Applications call outbox_emit() (scripts/schema.sql), which emits a transactional
// logical decoding message, pg_logical_emit_message(true, prefix, content), in
// their own transaction. The content is a JSON object:
//   {"id": ..., "aggregate_type": ..., "aggregate_id": ..., "event_type": ...,
//    "payload": <any JSON>, "headers": {<optional object>}}
// It becomes the same Envelope and Kafka record as a table row, through the same
// mapper: the fields are laid out as a row of a table whose columns carry the
// configured names (--id-column, --key-column, ...), so topic templates, keys,
// headers and dead letters behave alike. source.schema and source.table are empty.
// The content is scanned, not parsed into a document (json_scan.h): the payload
// and headers go on verbatim, jsonb's text form as a table row's column has it.
#ifndef PUBLISHER_MAPPING_MESSAGE_EVENTS_H_
#define PUBLISHER_MAPPING_MESSAGE_EVENTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "publisher/mapping/columns.h"
#include "publisher/mapping/mapper.h"

namespace publisher {

class MessageEvents {
 public:
  // kFailedPrecondition when the topic template names a column messages lack.
  [[nodiscard]] static absl::StatusOr<MessageEvents> Bind(
      const ColumnMapping& columns, const std::string& topic_template,
      ValueFormat value_format = ValueFormat::kEnvelope);

  // kInvalidArgument naming what is wrong with `content` (not a JSON object, a
  // required field missing or not a string, headers not an object, ...).
  [[nodiscard]] absl::StatusOr<OutboxRecord> Map(absl::string_view content,
                                                 const RowSource& source) const;
  // The same into `out`, reusing its capacity (BoundRelation::MapInto).
  [[nodiscard]] absl::Status MapInto(absl::string_view content, const RowSource& source,
                                     OutboxRecord* out) const;

  // What a dead letter of an unmappable message holds: its content when that is
  // JSON, else the content as a JSON string.
  static std::string ContentAsJson(absl::string_view content);

 private:
  explicit MessageEvents(BoundRelation bound) : bound_(std::move(bound)) {}
  BoundRelation bound_;
  // The message laid out as a row; reused, so mapping allocates nothing once warm
  // (not thread-safe, as the relay's one thread needs none).
  mutable cdc::pgoutput::Tuple row_;
};

}  // namespace publisher

#endif  // PUBLISHER_MAPPING_MESSAGE_EVENTS_H_
