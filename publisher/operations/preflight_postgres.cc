// Preflight's PostgreSQL checks: the server, the tables, the publication, the
// shards, the slot and failover. Facts in, one line per check out.
#include "publisher/operations/preflight.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "publisher/mapping/mapper.h"
#include "publisher/mapping/message_events.h"

namespace publisher {
namespace {

// The oldest PostgreSQL release the publisher is tested and supported on.
constexpr int kOldestSupported = 140000;

void JudgeServer(const cdc::ServerFacts& s, bool slot_exists,
                 std::vector<CheckLine>* out) {
  if (s.version_num < 100000) {
    out->push_back(CheckLine::Fail(
        "server version",
        absl::StrCat("PostgreSQL ", s.version,
                     " has no pgoutput: upgrade to PostgreSQL 10 or later "
                     "(the publisher supports 14 to 18)")));
  } else if (s.version_num < kOldestSupported) {
    out->push_back(CheckLine::Fail(
        "server version", absl::StrCat("PostgreSQL ", s.version,
                                       " is not supported (14 to 18 are): upgrade to "
                                       "PostgreSQL 14 or later")));
  } else {
    out->push_back(
        CheckLine::Ok("server version", absl::StrCat("PostgreSQL ", s.version)));
  }
  if (!s.in_recovery) {
    out->push_back(CheckLine::Ok("primary", "the server is a primary (not in recovery)"));
  } else {
    out->push_back(CheckLine::From(
        "standby", cdc::CheckStandbyDecoding(s.version_num),
        "the server is a standby: the slot is created and decoded here, and the primary "
        "decodes nothing (publishing from a standby)"));
  }
  out->push_back(
      CheckLine::From("wal_level", cdc::CheckWalLevel(s.wal_level), "logical"));
  std::string slots = absl::StrCat(s.replication_slots_used, " of max_replication_slots ",
                                   s.max_replication_slots, " in use");
  if (slot_exists || s.replication_slots_used < s.max_replication_slots) {
    out->push_back(CheckLine::Ok(
        "replication slots",
        slot_exists ? absl::StrCat(slots, " (this publisher's among them)") : slots));
  } else {
    out->push_back(
        CheckLine::Fail("replication slots",
                        absl::StrCat(slots,
                                     ": none is free for this publisher's slot; "
                                     "raise max_replication_slots (needs a restart) or "
                                     "drop a slot nobody uses")));
  }
  std::string senders = absl::StrCat(s.wal_senders_used, " of max_wal_senders ",
                                     s.max_wal_senders, " in use");
  out->push_back(
      s.wal_senders_used < s.max_wal_senders
          ? CheckLine::Ok("WAL senders", senders)
          : CheckLine::Fail("WAL senders",
                            absl::StrCat(senders,
                                         ": none is free for this publisher; "
                                         "raise max_wal_senders (needs a restart)")));
  if (s.role_replication || s.role_superuser) {
    out->push_back(CheckLine::Ok(
        "role", absl::StrCat("role ", s.role, " has ",
                             s.role_superuser ? "SUPERUSER" : "REPLICATION")));
  } else {
    out->push_back(CheckLine::Fail(
        "role",
        absl::StrCat("role ", s.role, " lacks the REPLICATION attribute: ALTER ROLE ",
                     s.role, " REPLICATION")));
  }
}

void JudgeTable(const PreflightOptions& options, const TableName& name,
                const absl::StatusOr<cdc::TableFacts>& facts, const std::string& role,
                std::vector<CheckLine>* out) {
  std::string what = absl::StrCat("table ", name.qualified());
  if (!facts.ok()) {
    out->push_back(CheckLine::Fail(
        what, absl::StrCat("cannot read it: ", facts.status().message())));
    return;
  }
  if (!facts->exists) {
    out->push_back(CheckLine::Fail(
        what, absl::StrCat("does not exist: create it (scripts/schema.sql) "
                           "or fix --table")));
    return;
  }
  if (!facts->can_select) {
    out->push_back(CheckLine::Fail(what, absl::StrCat("role ", role,
                                                      " may not SELECT from it: GRANT "
                                                      "SELECT ON ",
                                                      name.qualified(), " TO ", role)));
  } else {
    out->push_back(CheckLine::Ok(what, "exists; the role may SELECT from it"));
  }
  absl::Status bound =
      BoundRelation::Bind(facts->shape, options.columns, options.topic).status();
  std::vector<std::string> columns;
  for (const auto& c :
       {options.columns.id, options.columns.key, options.columns.aggregate_type,
        options.columns.type, options.columns.payload}) {
    columns.push_back(c);
  }
  out->push_back(
      CheckLine::From(absl::StrCat("columns of ", name.qualified()), bound,
                      absl::StrCat(absl::StrJoin(columns, ", "),
                                   " and the optional ones map to the envelope")));
}

void JudgePublication(const PreflightOptions& options, const PgFindings& pg,
                      const std::vector<std::string>& tables,
                      std::vector<CheckLine>* out) {
  std::string what = absl::StrCat("publication ", options.publication);
  if (!pg.publication.ok()) {
    out->push_back(CheckLine::Fail(
        what, absl::StrCat("cannot read it: ", pg.publication.status().message())));
    return;
  }
  std::string filter =
      options.shard ? cdc::ShardRowFilter(pg.quoted_key_column, *options.shard) : "";
  absl::Status s = cdc::CheckPublication(*pg.publication, pg.quoted_publication, tables,
                                         pg.quoted_tables, options.create, filter);
  if (!s.ok()) {
    out->push_back(CheckLine::Fail(what, std::string(s.message())));
    return;
  }
  if (pg.publication->exists) {
    out->push_back(CheckLine::Ok(
        what, absl::StrCat("publishes INSERTs of ", absl::StrJoin(tables, ", "))));
    return;
  }
  if (pg.standby) {
    std::string sql =
        cdc::CreatePublicationSql(pg.quoted_publication, pg.quoted_tables, filter);
    out->push_back(
        options.create && !options.pg_primary.empty()
            ? CheckLine::Ok(what,
                            "does not exist yet; the publisher creates it on the "
                            "primary (--pg-primary) at start")
            : CheckLine::Fail(what, absl::StrCat("does not exist on this standby, and a "
                                                 "standby cannot create one: run on the "
                                                 "primary ",
                                                 sql, ", or give --pg-primary")));
    return;
  }
  // --create: the publisher creates it at start, which takes ownership of every table.
  bool owns_all = std::all_of(pg.tables.begin(), pg.tables.end(), [](const auto& t) {
    return t.ok() && t->exists && t->owned;
  });
  std::string sql =
      cdc::CreatePublicationSql(pg.quoted_publication, pg.quoted_tables, filter);
  out->push_back(
      owns_all
          ? CheckLine::Ok(what, "does not exist yet; the publisher creates it at start")
          : CheckLine::Fail(what,
                            absl::StrCat("does not exist, and the role cannot create it "
                                         "(it must own the outbox tables): have the "
                                         "table owner run ",
                                         sql)));
}

void JudgeShards(const PreflightOptions& options, const PgFindings& pg,
                 std::vector<CheckLine>* out) {
  if (!options.shard || !pg.shards) return;
  const ShardFindings& shards = *pg.shards;
  int count = options.shard->count;
  for (int i = 1; i <= count && i <= static_cast<int>(shards.publications.size()); ++i) {
    std::string name =
        cdc::ShardedName(options.shard_publication_base, cdc::KeyShard{i, count});
    std::string what = absl::StrCat("shard ", i, "/", count, " publication ", name);
    const auto& p = shards.publications[i - 1];
    if (!p.ok()) {
      out->push_back(
          CheckLine::Fail(what, absl::StrCat("cannot read it: ", p.status().message())));
    } else if (!p->exists) {
      out->push_back(CheckLine::Fail(
          what, absl::StrCat("does not exist: the keys of shard ", i, "/", count,
                             " are published by no one until its publisher starts "
                             "(with --create) or it is created")));
    } else {
      out->push_back(CheckLine::Ok(what, "exists"));
    }
    // This shard's own slot is judged with the others above.
    if (i == options.shard->index || i > static_cast<int>(shards.slots.size())) continue;
    std::string slot = cdc::ShardedName(options.shard_slot_base, cdc::KeyShard{i, count});
    std::string slot_what = absl::StrCat("shard ", i, "/", count, " slot ", slot);
    const auto& s = shards.slots[i - 1];
    if (!s.ok()) {
      out->push_back(CheckLine::Fail(
          slot_what, absl::StrCat("cannot read it: ", s.status().message())));
    } else if (!s->exists) {
      out->push_back(CheckLine::Fail(
          slot_what,
          absl::StrCat("does not exist: rows of shard ", i, "/", count,
                       "'s keys written before it does are published by no "
                       "one. Start that shard's publisher before the rows come")));
    } else {
      out->push_back(CheckLine::Ok(slot_what, "exists"));
    }
  }
  for (size_t t = 0; t < options.tables.size() && t < shards.coverage.size(); ++t) {
    std::string what = absl::StrCat("shards of ", options.tables[t].qualified(), " by ",
                                    options.columns.key);
    const auto& c = shards.coverage[t];
    if (!c.ok()) {
      out->push_back(CheckLine::Fail(
          what, absl::StrCat("cannot judge the row filters: ", c.status().message())));
      continue;
    }
    auto example = [](const std::optional<std::string>& k) {
      return k ? absl::StrCat(" (such as '", *k, "')") : std::string(" (the NULL key)");
    };
    if (c->unselected == 0 && c->repeated == 0) {
      out->push_back(CheckLine::Ok(
          what, absl::StrCat("the ", count, " shards' row filters select each of ",
                             c->samples, " sample keys exactly once")));
      continue;
    }
    std::string problem;
    if (c->unselected > 0) {
      absl::StrAppend(&problem, c->unselected, " of ", c->samples,
                      " sample keys are in no shard", example(c->unselected_example),
                      ": their rows would never be published");
    }
    if (c->repeated > 0) {
      absl::StrAppend(&problem, problem.empty() ? "" : "; ", c->repeated, " of ",
                      c->samples, " sample keys are in more than one shard",
                      example(c->repeated_example),
                      ": their rows would be published twice, out of order");
    }
    absl::StrAppend(&problem, ". Shard I/N's filter is ",
                    cdc::ShardRowFilter(pg.quoted_key_column, cdc::KeyShard{1, count}),
                    " (for shard 1; = I-1 for shard I, without the IS NULL)");
    out->push_back(CheckLine::Fail(what, problem));
  }
}

void JudgeSlot(const PreflightOptions& options, const PgFindings& pg,
               const std::string& database, std::vector<CheckLine>* out) {
  std::string what = absl::StrCat("slot ", options.slot);
  if (!pg.slot.ok()) {
    out->push_back(CheckLine::Fail(
        what, absl::StrCat("cannot read it: ", pg.slot.status().message())));
    return;
  }
  const cdc::SlotFacts& slot = *pg.slot;
  absl::Status s = cdc::CheckSlot(slot, pg.literal_slot, database, options.create);
  if (!s.ok()) {
    out->push_back(CheckLine::Fail(what, std::string(s.message())));
    return;
  }
  if (!slot.exists) {
    out->push_back(
        CheckLine::Ok(what, "does not exist yet; the publisher creates it at start"));
    return;
  }
  if (slot.wal_status == "unreserved") {
    out->push_back(CheckLine::Fail(what,
                                   "is about to lose WAL it still needs (wal_status = "
                                   "unreserved): start the publisher now, or raise "
                                   "max_slot_wal_keep_size"));
    return;
  }
  if (slot.retained_bytes && *slot.retained_bytes > options.max_retained_wal) {
    out->push_back(CheckLine::Fail(
        what, absl::StrCat("retains ", *slot.retained_bytes,
                           " bytes of WAL, more than --max-retained-wal (",
                           options.max_retained_wal,
                           "): start the publisher so that it catches up, or drop the "
                           "slot if nobody uses it (",
                           cdc::DropSlotSql(pg.literal_slot), ")")));
    return;
  }
  std::string detail = absl::StrCat(
      "pgoutput, wal_status ", slot.wal_status.empty() ? "unknown" : slot.wal_status,
      slot.retained_bytes
          ? absl::StrCat(", retains ", *slot.retained_bytes, " bytes of WAL")
          : "");
  if (slot.active) {
    absl::StrAppend(&detail, "; streamed now by PID ", slot.active_pid.value_or(0),
                    " (this publisher would stand by until it lets go)");
  }
  out->push_back(CheckLine::Ok(what, detail));
}

// One other host of a multi-host --pg: whether its promotion would keep the slot.
CheckLine JudgeOtherHost(const StandbyFindings& o, bool failover_slots,
                         const std::string& slot) {
  std::string what = absl::StrCat("standby ", o.server);
  if (!o.connect.ok()) {
    return CheckLine::Fail(what, absl::StrCat("cannot connect (", o.connect.message(),
                                              "): whether a promotion of it keeps the "
                                              "slot is unknown"));
  }
  if (!failover_slots) {
    return CheckLine::Ok(what, "a standby; it cannot carry the slot (see standbys)");
  }
  if (!o.slot.ok()) {
    return CheckLine::Fail(
        what, absl::StrCat("cannot read its slots: ", o.slot.status().message()));
  }
  if (!o.slot->exists || !o.slot->synced) {
    return CheckLine::Fail(
        what, absl::StrCat("has no synchronized copy of slot ", slot,
                           ": a promotion of it would be a gap; make the slot a failover "
                           "slot and set on this standby sync_replication_slots = on, "
                           "hot_standby_feedback = on, primary_slot_name, and a dbname "
                           "in primary_conninfo"));
  }
  return CheckLine::Ok(what, absl::StrCat("carries a synchronized copy of slot ", slot));
}

// Publishing from a standby: what keeps its slot valid (a recovery conflict or the
// primary's wal_level invalidates it), where the state table is written, and what
// a failover means for a slot that cannot be a failover slot.
void JudgeStandby(const PreflightOptions& options, const PublishingStandbyFindings& s,
                  std::vector<CheckLine>* out) {
  out->push_back(
      s.hot_standby_feedback
          ? CheckLine::Ok("hot_standby_feedback", "on")
          : CheckLine::Warn("hot_standby_feedback",
                            "off: the primary's VACUUM may remove catalog rows the slot "
                            "needs, which invalidates it (rows_removed, a gap): set "
                            "hot_standby_feedback = on on this standby"));
  out->push_back(
      !s.primary_slot_name.empty()
          ? CheckLine::Ok("primary_slot_name",
                          absl::StrCat(s.primary_slot_name,
                                       ": the primary keeps the standby's feedback while "
                                       "it is disconnected"))
          : CheckLine::Warn("primary_slot_name",
                            "none: while this standby is disconnected, its feedback no "
                            "longer holds back the primary's VACUUM and the slot can be "
                            "invalidated; stream through a physical slot "
                            "(primary_slot_name)"));
  if (!s.primary_wal_level.ok()) {
    out->push_back(CheckLine::Warn(
        "primary wal_level",
        options.pg_primary.empty()
            ? "not checked (no --pg-primary): it must stay logical, or every logical "
              "slot of its standbys is invalidated (wal_level_insufficient)"
            : absl::StrCat("cannot read it through --pg-primary: ",
                           s.primary_wal_level.status().message())));
  } else {
    out->push_back(
        CheckLine::From("primary wal_level", cdc::CheckWalLevel(*s.primary_wal_level),
                        absl::StrCat(*s.primary_wal_level, " (through --pg-primary)")));
  }
  if (options.state_table && options.pg_primary.empty()) {
    out->push_back(
        CheckLine::Warn("state table",
                        "a standby cannot write it and there is no --pg-primary: a lost "
                        "standby (and its slot) would go unnoticed; give --pg-primary"));
  }
  out->push_back(CheckLine::Ok(
      "failover slot",
      "a standby's slot cannot be a failover slot: a promotion of this standby keeps "
      "it; a primary failover keeps it when this standby follows the new primary; "
      "losing this standby loses it (a gap: --on-slot-gap)"));
}

// What a promotion of a standby would do to the slot: on 17+, whether the slot is a
// failover slot, whether the primary waits for its standbys before sending changes,
// and whether each standby of a multi-host --pg carries a synchronized copy.
void JudgeFailover(const PreflightOptions& options, const PgFindings& pg,
                   std::vector<CheckLine>* out) {
  const cdc::ServerFacts& server = *pg.server;
  bool failover_slots = server.version_num >= cdc::kFailoverSlotsVersion;
  const std::string& slot = options.slot;
  if (failover_slots && pg.slot.ok()) {
    const char* what = "failover slot";
    if (pg.slot->exists && pg.slot->failover.value_or(false)) {
      out->push_back(
          CheckLine::Ok(what, absl::StrCat("slot ", slot,
                                           " is a failover slot: a standby with "
                                           "sync_replication_slots carries it")));
    } else if (options.failover_slot) {
      out->push_back(CheckLine::Ok(
          what, absl::StrCat("slot ", slot,
                             pg.slot->exists ? " is not a failover slot yet; the "
                                               "publisher makes it one at start"
                                             : " will be created as a failover slot")));
    } else {
      out->push_back(CheckLine::Fail(
          what,
          absl::StrCat("slot ", slot,
                       " is not a failover slot (--failover-slot=false): a promoted "
                       "standby will not have it, and the publisher stops there on a "
                       "gap; drop --failover-slot=false")));
    }
  }
  if (server.physical_standbys > 0) {
    std::string n = absl::StrCat(server.physical_standbys, " physical standby(s) stream");
    if (!failover_slots) {
      out->push_back(CheckLine::Ok(
          "standbys",
          absl::StrCat(n, "; PostgreSQL ", server.version,
                       " cannot carry a logical slot to them: a failover is a gap, which "
                       "stops the publisher (exit 2) unless --on-slot-gap=republish "
                       "re-publishes it from the outbox table (PostgreSQL 17 carries "
                       "the slot)")));
    } else if (server.synchronized_standby_slots.empty()) {
      out->push_back(CheckLine::Fail(
          "standbys",
          absl::StrCat(
              n,
              " but synchronized_standby_slots is empty: the publisher may be "
              "sent changes that a promoted standby never received; set it to "
              "the standbys' physical slots (ALTER SYSTEM SET "
              "synchronized_standby_slots = '<slot>'; SELECT pg_reload_conf())")));
    } else {
      out->push_back(CheckLine::Ok(
          "standbys", absl::StrCat(n,
                                   "; changes reach the publisher only once "
                                   "synchronized_standby_slots (",
                                   server.synchronized_standby_slots, ") have them")));
    }
  }
  for (const StandbyFindings& o : pg.others) {
    out->push_back(JudgeOtherHost(o, failover_slots, slot));
  }
}

// --message-prefix: the server streams messages (PostgreSQL 14+), and the topic
// template fits events without a table.
void JudgeMessages(const PreflightOptions& options, int version_num,
                   std::vector<CheckLine>* out) {
  const char* what = "events without a table";
  if (version_num < 140000) {
    out->push_back(
        CheckLine::Fail(what,
                        "--message-prefix needs PostgreSQL 14 or later (pgoutput's "
                        "messages option): upgrade, or use the outbox table"));
    return;
  }
  absl::Status bound = MessageEvents::Bind(options.columns, options.topic).status();
  out->push_back(
      bound.ok()
          ? CheckLine::Ok(what, absl::StrCat("transactional messages with prefix \"",
                                             options.message_prefix,
                                             "\" are published (outbox_emit())"))
          : CheckLine::Fail(what, std::string(bound.message())));
}

}  // namespace

std::vector<CheckLine> JudgePostgres(const PreflightOptions& options,
                                     const PgFindings& pg) {
  std::vector<CheckLine> out;
  if (!pg.connect.ok()) {
    out.push_back(
        CheckLine::Fail("PostgreSQL connection",
                        absl::StrCat(pg.connect.message(),
                                     ": check --pg, that the server runs, and that "
                                     "pg_hba.conf admits this host and role")));
    return out;
  }
  out.push_back(CheckLine::Ok("PostgreSQL connection", "connected"));
  if (!pg.server.ok()) {
    out.push_back(
        CheckLine::Fail("server", absl::StrCat("cannot read the server's settings: ",
                                               pg.server.status().message())));
    return out;
  }
  bool slot_exists = pg.slot.ok() && pg.slot->exists;
  JudgeServer(*pg.server, slot_exists, &out);
  out.push_back(CheckLine::From(
      "replication connection",
      pg.replication_connect.ok()
          ? absl::OkStatus()
          : absl::FailedPreconditionError(absl::StrCat(
                pg.replication_connect.message(),
                ": the role needs REPLICATION, and pg_hba.conf must admit a replication "
                "connection to this database for it")),
      "a replication=database connection is accepted"));
  std::vector<std::string> tables;
  for (size_t i = 0; i < options.tables.size(); ++i) {
    tables.push_back(options.tables[i].qualified());
    JudgeTable(options, options.tables[i],
               i < pg.tables.size()
                   ? pg.tables[i]
                   : absl::StatusOr<cdc::TableFacts>(absl::UnknownError("not read")),
               pg.server->role, &out);
  }
  if (!options.message_prefix.empty())
    JudgeMessages(options, pg.server->version_num, &out);
  JudgePublication(options, pg, tables, &out);
  JudgeShards(options, pg, &out);
  JudgeSlot(options, pg, pg.server->database, &out);
  if (pg.standby) {
    JudgeStandby(options, *pg.standby, &out);
  } else {
    JudgeFailover(options, pg, &out);
  }
  return out;
}

}  // namespace publisher
