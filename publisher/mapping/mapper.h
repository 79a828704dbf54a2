// Mapper: one outbox INSERT -> one Kafka record carrying an outbox.v1.Envelope,
// exactly as docs/design.md ("The envelope", "The Kafka record") defines them.
// Pure: no I/O.
//
// Binding happens once per Relation message (and again after each schema change):
// it resolves the configured columns and the topic template against the table's
// shape, so a missing column is reported once, as an environment problem
// (kFailedPrecondition). Mapping a row can then only fail on its values (a NULL id
// or key, headers that are not a JSON object, ...): kInvalidArgument, a permanent
// error for that one message.
#ifndef PUBLISHER_MAPPING_MAPPER_H_
#define PUBLISHER_MAPPING_MAPPER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cdc/lsn.h"
#include "cdc/pgoutput.h"
#include "outbox/v1/envelope.pb.h"
#include "publisher/delivery/outbox_record.h"
#include "publisher/mapping/columns.h"
#include "publisher/mapping/value_format.h"

namespace publisher {

// Where a row came from, as the stream tells it.
struct RowSource {
  cdc::Lsn lsn;         // The change (XLogData dataStart of the Insert).
  cdc::Lsn commit_lsn;  // Begin.final_lsn.
  uint32_t xid = 0;
  absl::Time commit_time;
  std::string database;
};

// A relation's columns resolved against the configuration.
class BoundRelation {
 public:
  // kFailedPrecondition naming the missing column or unsupported type, and the fix.
  [[nodiscard]] static absl::StatusOr<BoundRelation> Bind(
      const cdc::pgoutput::Relation& relation, const ColumnMapping& columns,
      const std::string& topic_template,
      ValueFormat value_format = ValueFormat::kEnvelope);

  // Maps one INSERT tuple. kInvalidArgument for values that cannot make a message.
  [[nodiscard]] absl::StatusOr<OutboxRecord> Map(const cdc::pgoutput::Tuple& tuple,
                                                 const RowSource& source) const;
  // The same into `out`, whose strings keep their capacity: the relay passes one
  // record row after row, so mapping allocates nothing once warm. `out` is
  // unspecified after an error.
  [[nodiscard]] absl::Status MapInto(const cdc::pgoutput::Tuple& tuple,
                                     const RowSource& source, OutboxRecord* out) const;

  // The row as a JSON object of text values, for dead letters of unmappable rows.
  std::string RowAsJson(const cdc::pgoutput::Tuple& tuple) const;

  // The topic of every row when the topic template names no column; else nullopt.
  std::optional<std::string> fixed_topic() const;
  // Whether the template can yield `topic` (each column part standing for one or
  // more characters): for --check to find the existing topics it routes to.
  bool CouldRouteTo(absl::string_view topic) const;

  const std::string& schema() const { return schema_; }
  const std::string& table() const { return table_; }

 private:
  // A piece of the topic template: literal text, or a column's value.
  struct TopicPart {
    std::string literal;
    std::optional<size_t> column;
  };
  enum class PayloadType { kJson, kText, kBytea };
  // A column's text, a view into the tuple; nullopt for NULL.
  using Text = std::optional<absl::string_view>;
  // The payload as the envelope carries it, and its content type.
  struct PayloadView {
    absl::string_view bytes, content_type;
    bool null = false;  // The column is NULL (bytes is then empty).
  };

  // MapInto's steps. Each fails with kInvalidArgument naming the column.
  absl::StatusOr<Text> ColumnText(const cdc::pgoutput::Tuple& tuple, size_t column) const;
  absl::StatusOr<absl::string_view> RequiredText(const cdc::pgoutput::Tuple& tuple,
                                                 size_t column) const;
  // A bytea payload is decoded into `*bytes`, which the view then points into.
  absl::StatusOr<PayloadView> Payload(const cdc::pgoutput::Tuple& tuple,
                                      std::string* bytes) const;
  // The headers column's entries, after the record's own (SetOwnHeaders).
  absl::Status AppendColumnHeaders(const cdc::pgoutput::Tuple& tuple,
                                   Headers* headers) const;
  // The timestamp column's time, else the commit time.
  absl::StatusOr<absl::Time> CreatedAt(const cdc::pgoutput::Tuple& tuple,
                                       absl::Time commit_time) const;
  absl::Status FillTopic(const cdc::pgoutput::Tuple& tuple, std::string* topic) const;

  std::string schema_, table_;
  std::vector<std::string> column_names_;
  size_t id_ = 0, key_ = 0, aggregate_type_ = 0, type_ = 0, payload_ = 0;
  std::optional<size_t> headers_, timestamp_;
  PayloadType payload_type_ = PayloadType::kJson;
  ValueFormat value_format_ = ValueFormat::kEnvelope;
  std::vector<TopicPart> topic_;
};

// Kafka's rule for topic names: 1-249 of [a-zA-Z0-9._-].
bool IsValidTopicName(absl::string_view topic);

}  // namespace publisher

#endif  // PUBLISHER_MAPPING_MAPPER_H_
