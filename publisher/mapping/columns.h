// What the publisher reads of the outbox table: the table's name and which column
// holds each part of an event (--table, --id-column, ...; the defaults are in
// docs/configuration.md).
#ifndef PUBLISHER_MAPPING_COLUMNS_H_
#define PUBLISHER_MAPPING_COLUMNS_H_

#include <string>

namespace publisher {

// A table as "schema.table".
struct TableName {
  std::string schema;
  std::string table;
  bool operator==(const TableName&) const = default;
  std::string qualified() const { return schema + "." + table; }  // "schema.table"
};

struct ColumnMapping {
  std::string id = "id";
  std::string key = "aggregate_id";
  std::string aggregate_type = "aggregate_type";
  std::string type = "event_type";
  std::string payload = "payload";
  std::string headers = "headers";       // Optional column.
  std::string timestamp = "created_at";  // Optional column.
};

}  // namespace publisher

#endif  // PUBLISHER_MAPPING_COLUMNS_H_
