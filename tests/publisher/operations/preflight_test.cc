// --check's judgements: every check passes on a healthy set of facts, and each
// failing check says what is wrong and how to fix it.
#include "publisher/operations/preflight.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/program/options.h"
#include "tools/harness/schema_outbox_relation.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

class PreflightTest : public ::testing::Test {
 protected:
  PreflightTest() {
    cdc::ServerFacts s;
    s.version_num = 150004;
    s.version = "15.4";
    s.wal_level = "logical";
    s.max_replication_slots = 10;
    s.replication_slots_used = 1;
    s.max_wal_senders = 10;
    s.wal_senders_used = 1;
    s.role = "relay";
    s.role_replication = true;
    s.database = "app";
    pg_.server = s;
    cdc::TableFacts t;
    t.schema = "public";
    t.table = "outbox";
    t.exists = true;
    t.can_select = true;
    t.owned = false;
    t.shape = harness::SchemaOutboxRelation();
    pg_.tables = {t};
    pg_.publication =
        cdc::PublicationFacts{"outbox_publisher", true, true, {"public.outbox"}};
    pg_.slot = cdc::SlotFacts{
        "outbox_publisher", true, "logical",    "pgoutput", "app", "reserved", false,
        std::nullopt,       4096, std::nullopt, false};
    pg_.quoted_publication = "\"outbox_publisher\"";
    pg_.quoted_tables = {"\"public\".\"outbox\""};
    pg_.literal_slot = "'outbox_publisher'";
    kafka_.brokers = 3;
    kafka_.topics = {"outbox.event.order", "outbox.event.user", "other"};
  }

  std::vector<CheckLine> All() {
    std::vector<CheckLine> lines = JudgePostgres(PreflightOptionsFrom(config_), pg_);
    for (CheckLine& l : JudgeKafka(PreflightOptionsFrom(config_), pg_, kafka_))
      lines.push_back(l);
    return lines;
  }

  // The one line about `what`; fails the test unless there is exactly one.
  CheckLine Line(const std::string& what) {
    std::vector<CheckLine> found;
    for (const CheckLine& l : All()) {
      if (l.what == what) found.push_back(l);
    }
    EXPECT_EQ(found.size(), 1u) << what;
    return found.empty() ? CheckLine{} : found[0];
  }

  // `what` fails, naming `problem` and `fix`; every other check still passes.
  void ExpectOnlyFailure(const std::string& what, const std::string& problem,
                         const std::string& fix) {
    for (const CheckLine& l : All()) {
      if (l.what == what) {
        EXPECT_FALSE(l.ok) << FormatCheckLine(l);
        EXPECT_THAT(l.detail, HasSubstr(problem));
        EXPECT_THAT(l.detail, HasSubstr(fix));
      } else {
        EXPECT_TRUE(l.ok) << FormatCheckLine(l);
      }
    }
    EXPECT_EQ(Line(what).what, what);
  }

  Config config_;
  PgFindings pg_;
  KafkaFindings kafka_;
};

TEST_F(PreflightTest, HealthyFactsPassEveryCheck) {
  std::vector<CheckLine> lines = All();
  EXPECT_EQ(lines.size(), 14u);
  for (const CheckLine& l : lines) EXPECT_TRUE(l.ok) << FormatCheckLine(l);
  EXPECT_THAT(
      Line("topics of public.outbox").detail,
      HasSubstr("2 existing topic(s) match: outbox.event.order, outbox.event.user"));
  EXPECT_EQ(FormatCheckLine(Line("wal_level")), "ok    wal_level: logical");
}

TEST_F(PreflightTest, UnreachablePostgresIsOneLineWithTheFix) {
  pg_.connect =
      absl::UnavailableError("cannot connect to PostgreSQL (host=db password=********)");
  std::vector<CheckLine> lines = JudgePostgres(PreflightOptionsFrom(config_), pg_);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].ok);
  EXPECT_THAT(FormatCheckLine(lines[0]),
              HasSubstr("FAIL  PostgreSQL connection: cannot connect"));
  EXPECT_THAT(lines[0].detail, HasSubstr("check --pg"));
}

TEST_F(PreflightTest, OldServer) {
  pg_.server->version_num = 90624;
  pg_.server->version = "9.6.24";
  ExpectOnlyFailure("server version", "has no pgoutput", "upgrade to PostgreSQL 10");
}

TEST_F(PreflightTest, ServerOlderThanTheOldestSupported) {
  pg_.server->version_num = 130015;
  pg_.server->version = "13.15";
  ExpectOnlyFailure("server version", "is not supported (14 to 18 are)",
                    "upgrade to PostgreSQL 14");
}

TEST_F(PreflightTest, AStandbyBeforeSixteenCannotDecode) {
  pg_.server->in_recovery = true;
  ExpectOnlyFailure("standby", "a standby of PostgreSQL 15, which cannot decode",
                    "Point --pg at the primary");
}

TEST_F(PreflightTest, WalLevel) {
  pg_.server->wal_level = "replica";
  ExpectOnlyFailure("wal_level", "'replica'", "ALTER SYSTEM SET wal_level = logical");
}

TEST_F(PreflightTest, NoFreeReplicationSlot) {
  pg_.slot->exists = false;
  pg_.server->replication_slots_used = 10;
  ExpectOnlyFailure("replication slots", "10 of max_replication_slots 10 in use",
                    "raise max_replication_slots");
  // The publisher's own slot exists: nothing more is needed.
  pg_.slot->exists = true;
  EXPECT_TRUE(Line("replication slots").ok);
}

TEST_F(PreflightTest, NoFreeWalSender) {
  pg_.server->wal_senders_used = 10;
  ExpectOnlyFailure("WAL senders", "none is free", "raise max_wal_senders");
}

TEST_F(PreflightTest, RoleWithoutReplication) {
  pg_.server->role_replication = false;
  ExpectOnlyFailure("role", "lacks the REPLICATION attribute",
                    "ALTER ROLE relay REPLICATION");
}

TEST_F(PreflightTest, ReplicationConnectionRefused) {
  pg_.replication_connect = absl::FailedPreconditionError("no pg_hba.conf entry");
  ExpectOnlyFailure("replication connection", "no pg_hba.conf entry",
                    "pg_hba.conf must admit");
}

TEST_F(PreflightTest, MissingTable) {
  pg_.tables[0]->exists = false;
  // The columns and topics cannot be judged either.
  CheckLine table = Line("table public.outbox");
  EXPECT_FALSE(table.ok);
  EXPECT_THAT(table.detail, HasSubstr("does not exist: create it (scripts/schema.sql)"));
  EXPECT_FALSE(Line("topics of public.outbox").ok);
}

TEST_F(PreflightTest, TableWithoutSelectPrivilege) {
  pg_.tables[0]->can_select = false;
  ExpectOnlyFailure("table public.outbox", "may not SELECT",
                    "GRANT SELECT ON public.outbox TO relay");
}

TEST_F(PreflightTest, MissingOrMistypedColumn) {
  pg_.tables[0]->shape.columns.erase(pg_.tables[0]->shape.columns.begin() + 3);
  CheckLine columns = Line("columns of public.outbox");
  EXPECT_FALSE(columns.ok);
  EXPECT_THAT(columns.detail, HasSubstr("\"event_type\" (--type-column)"));
  pg_.tables[0]->shape = harness::SchemaOutboxRelation(/*payload_type=*/23);  // int4
  EXPECT_FALSE(Line("columns of public.outbox").ok);
}

TEST_F(PreflightTest, PublicationMissingWithoutCreate) {
  config_.create = false;
  pg_.publication->exists = false;
  ExpectOnlyFailure(
      "publication outbox_publisher", "does not exist",
      "CREATE PUBLICATION \"outbox_publisher\" FOR TABLE \"public\".\"outbox\"");
}

TEST_F(PreflightTest, PublicationMissingAndTheRoleCannotCreateIt) {
  pg_.publication->exists = false;
  ExpectOnlyFailure("publication outbox_publisher", "the role cannot create it",
                    "have the table owner run CREATE PUBLICATION");
  pg_.tables[0]->owned = true;
  EXPECT_TRUE(Line("publication outbox_publisher").ok);
}

TEST_F(PreflightTest, PublicationWithoutTheTableOrInserts) {
  pg_.publication->tables = {"public.other"};
  ExpectOnlyFailure(
      "publication outbox_publisher", "does not include table public.outbox",
      "ALTER PUBLICATION \"outbox_publisher\" ADD TABLE \"public\".\"outbox\"");
  pg_.publication->tables = {"public.outbox"};
  pg_.publication->publishes_insert = false;
  ExpectOnlyFailure("publication outbox_publisher", "does not publish INSERTs",
                    "SET (publish = 'insert')");
}

TEST_F(PreflightTest, SlotOfAnotherPluginOrDatabase) {
  pg_.slot->plugin = "wal2json";
  ExpectOnlyFailure("slot outbox_publisher", "uses plugin wal2json",
                    "pg_drop_replication_slot('outbox_publisher')");
  pg_.slot->plugin = "pgoutput";
  pg_.slot->database = "other";
  ExpectOnlyFailure("slot outbox_publisher", "belongs to database \"other\"",
                    "connect to that database");
}

TEST_F(PreflightTest, SlotMissingWithoutCreate) {
  config_.create = false;
  pg_.slot->exists = false;
  ExpectOnlyFailure("slot outbox_publisher", "does not exist",
                    "pg_create_logical_replication_slot('outbox_publisher', 'pgoutput')");
}

TEST_F(PreflightTest, SlotThatLostOrIsLosingWal) {
  pg_.slot->wal_status = "lost";
  ExpectOnlyFailure("slot outbox_publisher", "wal_status = lost", "drop and recreate");
  pg_.slot->wal_status = "unreserved";
  ExpectOnlyFailure("slot outbox_publisher", "wal_status = unreserved",
                    "raise max_slot_wal_keep_size");
}

TEST_F(PreflightTest, SlotRetainingTooMuchWal) {
  config_.max_retained_wal = 4095;
  ExpectOnlyFailure("slot outbox_publisher", "retains 4096 bytes of WAL",
                    "start the publisher so that it catches up");
}

TEST_F(PreflightTest, ActiveSlotPassesAndSaysWhoStreamsIt) {
  pg_.slot->active = true;
  pg_.slot->active_pid = 4242;
  CheckLine slot = Line("slot outbox_publisher");
  EXPECT_TRUE(slot.ok);
  EXPECT_THAT(slot.detail, HasSubstr("streamed now by PID 4242"));
}

TEST_F(PreflightTest, UnreachableBrokers) {
  kafka_.reachable = absl::UnavailableError("no Kafka broker answered within 10s");
  std::vector<CheckLine> kafka = JudgeKafka(PreflightOptionsFrom(config_), pg_, kafka_);
  ASSERT_EQ(kafka.size(), 1u);
  EXPECT_FALSE(kafka[0].ok);
  EXPECT_EQ(kafka[0].what, "Kafka brokers");
  EXPECT_THAT(kafka[0].detail, HasSubstr("check --brokers"));
}

TEST_F(PreflightTest, FixedTopicThatDoesNotExist) {
  config_.topic = "events.{table}";
  ExpectOnlyFailure("topics of public.outbox", "every row goes to events.outbox",
                    "create it");
  kafka_.topics.push_back("events.outbox");
  EXPECT_TRUE(Line("topics of public.outbox").ok);
}

TEST_F(PreflightTest, MissingDeadLetterTopic) {
  config_.on_error = OnError::kDeadLetter;
  ExpectOnlyFailure("dead-letter topic", "outbox.dead-letter does not exist",
                    "create it");
  kafka_.topics.push_back("outbox.dead-letter");
  EXPECT_TRUE(Line("dead-letter topic").ok);
}

TEST_F(PreflightTest, CheckpointTopicInExactlyOnceMode) {
  auto checkpoint_lines = [&] {
    std::vector<CheckLine> found;
    for (const CheckLine& l : JudgeKafka(PreflightOptionsFrom(config_), pg_, kafka_))
      if (l.what == "checkpoint topic") found.push_back(l);
    return found;
  };
  EXPECT_TRUE(checkpoint_lines().empty()) << "at-least-once: not checked";
  config_.delivery = DeliveryMode::kExactlyOnce;
  ASSERT_EQ(checkpoint_lines().size(), 1u);
  EXPECT_TRUE(checkpoint_lines()[0].ok) << "missing, but the publisher creates it";
  EXPECT_THAT(checkpoint_lines()[0].detail, HasSubstr("creates it"));
  config_.create = false;
  EXPECT_FALSE(checkpoint_lines()[0].ok);
  EXPECT_THAT(checkpoint_lines()[0].detail, HasSubstr("cleanup.policy=compact"));
  kafka_.topics.push_back("outbox.checkpoints");
  EXPECT_TRUE(checkpoint_lines()[0].ok);
  EXPECT_THAT(checkpoint_lines()[0].detail, HasSubstr("must be compacted"));
}

TEST_F(PreflightTest, EventsWithoutATable) {
  for (const CheckLine& l : All()) EXPECT_NE(l.what, "events without a table");
  config_.message_prefix = "outbox";
  EXPECT_TRUE(Line("events without a table").ok);
  EXPECT_THAT(Line("events without a table").detail, HasSubstr("prefix \"outbox\""));
  config_.topic = "events.{tenant}";  // Messages have no such field.
  config_.tables.clear();
  EXPECT_FALSE(Line("events without a table").ok);
  config_.topic = "outbox.event.{aggregate_type}";
  // A server without pgoutput's messages option (13) is unsupported as a whole
  // too; the line of events without a table says what it lacks.
  pg_.server->version_num = 130010;
  CheckLine messages = Line("events without a table");
  EXPECT_FALSE(messages.ok);
  EXPECT_THAT(messages.detail, HasSubstr("PostgreSQL 14 or later"));
  EXPECT_THAT(messages.detail, HasSubstr("upgrade"));
  EXPECT_FALSE(Line("server version").ok);
}

}  // namespace
}  // namespace publisher

namespace publisher {
namespace {

// PostgreSQL 17 with a failover slot, one streaming standby and, in a multi-host
// --pg, that standby's copy of the slot.
class FailoverPreflightTest : public PreflightTest {
 protected:
  void SetUp() override {
    PreflightTest::SetUp();
    pg_.server->version_num = 170004;
    pg_.server->version = "17.4";
    pg_.server->physical_standbys = 1;
    pg_.server->synchronized_standby_slots = "standby1";
    pg_.slot->failover = true;
    StandbyFindings standby;
    standby.server = "db2:5432";
    standby.in_recovery = true;
    cdc::SlotFacts copy = *pg_.slot;
    copy.synced = true;
    standby.slot = copy;
    pg_.others = {standby};
  }
};

TEST_F(FailoverPreflightTest, AFailoverSlotCarriedByItsStandbyPasses) {
  for (const CheckLine& l : All()) EXPECT_TRUE(l.ok) << FormatCheckLine(l);
  EXPECT_THAT(Line("failover slot").detail, HasSubstr("is a failover slot"));
  EXPECT_THAT(Line("standbys").detail, HasSubstr("standby1"));
  EXPECT_THAT(Line("standby db2:5432").detail, HasSubstr("synchronized copy"));
}

TEST_F(FailoverPreflightTest, StandbysWithoutSynchronizedStandbySlotsFail) {
  pg_.server->synchronized_standby_slots = "";
  ExpectOnlyFailure("standbys", "synchronized_standby_slots is empty",
                    "ALTER SYSTEM SET synchronized_standby_slots");
}

TEST_F(FailoverPreflightTest, AStandbyWithoutASynchronizedCopyFails) {
  pg_.others[0].slot->synced = false;
  ExpectOnlyFailure("standby db2:5432", "no synchronized copy",
                    "sync_replication_slots = on");
  pg_.others[0].slot->exists = false;
  ExpectOnlyFailure("standby db2:5432", "no synchronized copy", "primary_slot_name");
}

TEST_F(FailoverPreflightTest, ASlotThatIsNotAFailoverSlotIsMadeOneOrFails) {
  pg_.slot->failover = false;
  EXPECT_TRUE(Line("failover slot").ok);
  EXPECT_THAT(Line("failover slot").detail, HasSubstr("makes it one at start"));
  config_.failover_slot = false;
  EXPECT_FALSE(Line("failover slot").ok);
}

TEST_F(FailoverPreflightTest, BeforeSeventeenAStandbyMeansAGapNotAFailure) {
  pg_.server->version_num = 160004;
  pg_.server->version = "16.4";
  for (const CheckLine& l : All()) EXPECT_TRUE(l.ok) << FormatCheckLine(l);
  EXPECT_THAT(Line("standbys").detail, HasSubstr("--on-slot-gap=republish"));
}

}  // namespace
}  // namespace publisher

namespace publisher {
namespace {

// Publishing from a standby of PostgreSQL 16 with its settings right and
// --pg-primary given.
class StandbyPreflightTest : public PreflightTest {
 protected:
  void SetUp() override {
    PreflightTest::SetUp();
    pg_.server->version_num = 160004;
    pg_.server->version = "16.4";
    pg_.server->in_recovery = true;
    config_.pg_primary = "host=primary dbname=app";
    PublishingStandbyFindings standby;
    standby.hot_standby_feedback = true;
    standby.primary_slot_name = "standby1";
    standby.primary_wal_level = "logical";
    pg_.standby = standby;
  }

  std::vector<std::string> Warnings() {
    std::vector<std::string> what;
    for (const CheckLine& l : All()) {
      if (l.warning) what.push_back(l.what);
    }
    return what;
  }
};

TEST_F(StandbyPreflightTest, AStandbyWithItsSettingsRightPassesWithoutWarnings) {
  for (const CheckLine& l : All()) EXPECT_TRUE(l.ok) << FormatCheckLine(l);
  EXPECT_THAT(Warnings(), ::testing::IsEmpty());
  EXPECT_THAT(Line("standby").detail, HasSubstr("the primary decodes nothing"));
  EXPECT_EQ(FormatCheckLine(Line("primary wal_level")),
            "ok    primary wal_level: logical (through --pg-primary)");
  EXPECT_THAT(Line("failover slot").detail, HasSubstr("cannot be a failover slot"));
  // A primary's failover checks do not apply to a standby's slot.
  for (const CheckLine& l : All()) EXPECT_NE(l.what, "standbys");
}

TEST_F(StandbyPreflightTest, SettingsThatMakeInvalidationLikelyAreWarnings) {
  pg_.standby->hot_standby_feedback = false;
  pg_.standby->primary_slot_name = "";
  for (const CheckLine& l : All()) EXPECT_TRUE(l.ok) << FormatCheckLine(l);
  EXPECT_EQ(Warnings(),
            (std::vector<std::string>{"hot_standby_feedback", "primary_slot_name"}));
  EXPECT_THAT(FormatCheckLine(Line("hot_standby_feedback")),
              HasSubstr("warn  hot_standby_feedback: off"));
  EXPECT_THAT(Line("hot_standby_feedback").detail, HasSubstr("rows_removed"));
}

TEST_F(StandbyPreflightTest, ThePrimarysWalLevelMustBeLogical) {
  pg_.standby->primary_wal_level = "replica";
  ExpectOnlyFailure("primary wal_level", "'replica'", "wal_level = logical");
}

TEST_F(StandbyPreflightTest, WithoutThePrimaryWhatCannotBeCheckedOrKeptIsSaid) {
  config_.pg_primary = "";
  pg_.standby->primary_wal_level = absl::NotFoundError("no --pg-primary");
  EXPECT_EQ(Warnings(), (std::vector<std::string>{"primary wal_level", "state table"}));
  EXPECT_THAT(Line("state table").detail, HasSubstr("give --pg-primary"));
  config_.state_table = "";
  EXPECT_EQ(Warnings(), (std::vector<std::string>{"primary wal_level"}));
}

TEST_F(StandbyPreflightTest, AMissingPublicationIsMadeOnThePrimaryOrNamedForIt) {
  pg_.publication = cdc::PublicationFacts{"outbox_publisher", false, false, {}};
  EXPECT_TRUE(Line("publication outbox_publisher").ok);
  EXPECT_THAT(Line("publication outbox_publisher").detail,
              HasSubstr("creates it on the primary"));
  config_.pg_primary = "";
  ExpectOnlyFailure("publication outbox_publisher", "a standby cannot create one",
                    "run on the primary CREATE PUBLICATION");
}

TEST_F(StandbyPreflightTest, AnInvalidatedSlotFailsNamingItsCause) {
  pg_.slot->invalidation = "conflicting";
  ExpectOnlyFailure("slot outbox_publisher", "was invalidated (conflicting",
                    "hot_standby_feedback");
}

}  // namespace
}  // namespace publisher
