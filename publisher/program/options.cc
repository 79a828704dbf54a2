// Config -> each component's options.
#include "publisher/program/options.h"

#include <utility>

namespace publisher {

RelayOptions RelayOptionsFrom(const Config& c, std::string database) {
  RelayOptions o;
  o.tables = c.tables;
  o.columns = c.columns;
  o.topic = c.topic;
  o.value_format = c.value_format;
  o.max_in_flight = c.max_in_flight;
  o.max_in_flight_bytes = c.max_in_flight_bytes;
  o.on_error = c.on_error;
  o.dead_letter_topic = c.dead_letter_topic;
  o.status_interval = c.status_interval;
  o.stats_interval = c.stats_interval;
  o.database = std::move(database);
  o.message_prefix = c.message_prefix;
  o.replication_timeout = c.replication_timeout;
  return o;
}

KafkaOptions KafkaOptionsFrom(const Config& c) {
  KafkaOptions o;
  o.brokers = c.brokers;
  o.properties = c.kafka_properties;
  o.max_in_flight = c.max_in_flight;
  o.max_in_flight_bytes = c.max_in_flight_bytes;
  return o;
}

ExactlyOnceOptions ExactlyOnceOptionsFrom(const Config& c) {
  ExactlyOnceOptions o;
  o.kafka = KafkaOptionsFrom(c);
  o.transactional_id = TransactionalId(c);
  o.checkpoint_topic = c.checkpoint_topic;
  o.create = c.create;
  o.transaction_interval = c.transaction_interval;
  return o;
}

namespace {

OutboxSource SourceFrom(const Config& c) {
  return OutboxSource{c.pg,     c.pg_primary, c.slot,       c.publication,
                      c.tables, c.shard,      c.columns.key};
}

}  // namespace

PgSessionOptions PgSessionOptionsFrom(const Config& c) {
  PgSessionOptions o;
  o.source = SourceFrom(c);
  o.create = c.create;
  o.failover_slot = c.failover_slot;
  o.state_table = StateTable(c);
  o.on_slot_gap = c.on_slot_gap;
  o.max_in_flight = static_cast<size_t>(c.max_in_flight);
  o.columns = c.columns;
  o.topic = c.topic;
  o.message_prefix = c.message_prefix;
  o.replication_timeout = c.replication_timeout;
  return o;
}

SlotWatcherOptions SlotWatcherOptionsFrom(const Config& c) {
  SlotWatcherOptions o;
  o.source = SourceFrom(c);
  o.state_table = StateTable(c);
  o.max_retained_wal = c.max_retained_wal;
  o.slot_check_interval = c.slot_check_interval;
  return o;
}

PreflightOptions PreflightOptionsFrom(const Config& c) {
  PreflightOptions o;
  o.slot = c.slot;
  o.publication = c.publication;
  o.shard = c.shard;
  o.shard_publication_base = c.shard_publication_base;
  o.shard_slot_base = c.shard_slot_base;
  o.tables = c.tables;
  o.create = c.create;
  o.failover_slot = c.failover_slot;
  o.state_table = !c.state_table.empty();
  o.pg_primary = c.pg_primary;
  o.brokers = c.brokers;
  o.topic = c.topic;
  o.columns = c.columns;
  o.on_error = c.on_error;
  o.dead_letter_topic = c.dead_letter_topic;
  o.max_retained_wal = c.max_retained_wal;
  o.exactly_once = c.delivery == DeliveryMode::kExactlyOnce;
  o.checkpoint_topic = c.checkpoint_topic;
  o.message_prefix = c.message_prefix;
  return o;
}

}  // namespace publisher
