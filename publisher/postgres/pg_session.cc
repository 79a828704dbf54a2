// PgSessionSource: connect, check, prepare and start one replication session.
#include "publisher/postgres/pg_session.h"

#include "absl/strings/str_cat.h"
#include "cdc/postgres/catalog.h"
#include "cdc/postgres/replication_stream.h"
#include "cdc/timeline.h"
#include "common/status_macros.h"
#include "publisher/mapping/mapper.h"
#include "publisher/mapping/message_events.h"
#include "publisher/postgres/slot_setup.h"
#include "publisher/postgres/standby.h"

namespace publisher {
namespace {

// Connecting and preparing a session must not wait forever on a connection that
// went silent: the same bound as silence while streaming.
absl::Duration SetupTimeout(const PgSessionOptions& c) {
  return c.replication_timeout > absl::ZeroDuration() ? c.replication_timeout
                                                      : absl::InfiniteDuration();
}

}  // namespace

absl::StatusOr<Session> PgSessionSource::Open() {
  ASSIGN_OR_RETURN(
      std::unique_ptr<cdc::ReplicationStream> stream,
      cdc::ReplicationStream::Connect(options_.source.pg, SetupTimeout(options_)));
  stream->OnServerNotice(
      [&log = log_](const std::string& severity, const std::string& text) {
        log.Log(severity == "WARNING" ? common::LogLevel::kWarn : common::LogLevel::kInfo,
                "server notice", {{"severity", severity}, {"notice", text}});
      });
  ASSIGN_OR_RETURN(cdc::SystemIdentity id, stream->IdentifySystem());
  // Where this server's WAL branched from earlier timelines (promotions): an
  // exactly-once checkpoint of an earlier timeline is read through it.
  std::vector<cdc::TimelineSwitch> history;
  if (id.timeline > 1) {
    ASSIGN_OR_RETURN(std::string content, stream->TimelineHistory(id.timeline));
    ASSIGN_OR_RETURN(history, cdc::ParseTimelineHistory(content));
  }
  RETURN_IF_ERROR(cdc::EnsureWalLevel(stream->sql()));
  std::vector<std::string> tables;
  for (const TableName& t : options_.source.tables) {
    ASSIGN_OR_RETURN(cdc::pgoutput::Relation shape,
                     cdc::DescribeTable(stream->sql(), t.schema, t.table));
    RETURN_IF_ERROR(
        BoundRelation::Bind(shape, options_.columns, options_.topic).status());
    tables.push_back(t.qualified());
  }
  if (options_.source.shard && stream->server_version() < 150000) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--shard needs PostgreSQL 15 or later (publication row filters); this server "
        "is ",
        stream->server_version()));
  }
  // A standby (PostgreSQL 16+) decodes its own copy of the WAL; what it cannot
  // write (the publication, the state table) is written on its primary.
  SlotServers servers;
  ASSIGN_OR_RETURN(servers.standby, InRecovery(stream->sql()));
  std::unique_ptr<common::SqlConnection> primary;
  if (servers.standby) {
    RETURN_IF_ERROR(cdc::CheckStandbyDecoding(stream->server_version()));
    if (!options_.source.pg_primary.empty()) {
      ASSIGN_OR_RETURN(primary, ConnectPrimary(options_.source.pg_primary, id.system_id,
                                               SetupTimeout(options_)));
      servers.primary = primary.get();
    }
    RETURN_IF_ERROR(EnsurePublicationOnStandby(
        stream->sql(), servers.primary, options_.source.publication, tables,
        options_.create, options_.source.shard, options_.source.key_column,
        SetupTimeout(options_)));
  } else {
    RETURN_IF_ERROR(cdc::EnsurePublication(stream->sql(), options_.source.publication,
                                           tables, options_.create, options_.source.shard,
                                           options_.source.key_column));
  }
  RETURN_IF_ERROR(
      PrepareSlot(*stream, options_, id.database, log_, republish_sinks_, servers));

  if (!options_.message_prefix.empty()) {
    RETURN_IF_ERROR(MessageEvents::Bind(options_.columns, options_.topic).status());
    if (stream->server_version() < 140000) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--message-prefix needs PostgreSQL 14 or later (pgoutput's messages option); "
          "this server is ",
          stream->server_version()));
    }
  }
  cdc::StartOptions start;
  start.slot = options_.source.slot;
  start.publications = {options_.source.publication};
  start.proto_version = 1;
  start.messages = !options_.message_prefix.empty();
  RETURN_IF_ERROR(stream->Start(start));
  log_.Info("streaming", {{"slot", options_.source.slot},
                          {"database", id.database},
                          {"server_version", int64_t{stream->server_version()}},
                          {"standby", servers.standby}});
  Session session{std::move(stream), id.database, id.system_id, id.timeline};
  session.history = std::move(history);
  return session;
}

}  // namespace publisher
