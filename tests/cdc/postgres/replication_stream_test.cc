// Integration tests of the cdc layer against a throwaway PostgreSQL 15: the libpq
// shell (connect, checks, slot and publication, start, read, status, stop) and the
// decoded stream of a script of transactions, compared exactly.
#include "cdc/postgres/replication_stream.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cdc/catalog_facts.h"
#include "cdc/postgres/catalog.h"
#include "cdc/relation_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cdc/catch_up.h"
#include "tests/test_util.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"

namespace cdc {
namespace {

using harness::PgCluster;
using harness::PgSession;
using harness::WaitFor;
using test_util::ValueOrDie;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr char kOutboxTable[] = R"sql(
  CREATE TABLE outbox (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    aggregate_type text        NOT NULL,
    aggregate_id   text        NOT NULL,
    event_type     text        NOT NULL,
    payload        jsonb       NOT NULL,
    headers        jsonb,
    created_at     timestamptz NOT NULL DEFAULT now(),
    blob           bytea
  );
  CREATE TABLE other (id int PRIMARY KEY, v text);
)sql";

#define ASSERT_OK(expr)                          \
  do {                                           \
    absl::Status _s = (expr);                    \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s; \
  } while (0)

class ReplicationStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = ValueOrDie(PgCluster::Start({"TimeZone=UTC"}));
    session_ = ValueOrDie(cluster_->Connect());
    ASSERT_OK(session_->Exec(kOutboxTable).status());
  }

  std::unique_ptr<ReplicationStream> Connect() {
    return ValueOrDie(ReplicationStream::Connect(cluster_->conninfo()));
  }

  // A stream on a fresh slot "s" and publication "pub" (created by the stream).
  std::unique_ptr<ReplicationStream> StartStream(const StartOptions& extra = {}) {
    auto stream = Connect();
    EXPECT_TRUE(
        cdc::EnsurePublication(stream->sql(), "pub", {"public.outbox"}, true).ok());
    EXPECT_TRUE(cdc::EnsureSlot(stream->sql(), "s", true).ok());
    StartOptions options = extra;
    options.slot = "s";
    options.publications = {"pub"};
    absl::Status s = stream->Start(options);
    EXPECT_TRUE(s.ok()) << s;
    return stream;
  }

  Lsn CurrentLsn() {
    return ValueOrDie(
        Lsn::Parse(ValueOrDie(session_->Value("SELECT pg_current_wal_insert_lsn()"))));
  }

  std::string SlotValue(const std::string& column) {
    return ValueOrDie(session_->Value(
        "SELECT " + column + "::text FROM pg_replication_slots WHERE slot_name = 's'"));
  }

  std::unique_ptr<PgCluster> cluster_;
  std::unique_ptr<PgSession> session_;
};

TEST_F(ReplicationStreamTest, ConnectsWithConninfoOrUriAndIdentifiesTheSystem) {
  for (const std::string& conninfo : {cluster_->conninfo(), cluster_->uri()}) {
    auto stream = ValueOrDie(ReplicationStream::Connect(conninfo));
    SystemIdentity id = ValueOrDie(stream->IdentifySystem());
    EXPECT_EQ(id.database, "postgres");
    EXPECT_EQ(id.timeline, 1u);
    EXPECT_TRUE(id.xlog_pos.is_valid());
    EXPECT_FALSE(id.system_id.empty());
    EXPECT_GE(stream->server_version(), 140000);  // The oldest supported release.
    ASSERT_OK(cdc::EnsureWalLevel(stream->sql()));
  }
}

TEST_F(ReplicationStreamTest, UnreachableServerIsUnavailable) {
  auto stream = ReplicationStream::Connect(
      "host=127.0.0.1 port=1 connect_timeout=5 password=hunter2");
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(stream.status().message(), HasSubstr("cannot connect to PostgreSQL"));
  EXPECT_THAT(stream.status().message(), ::testing::Not(HasSubstr("hunter2")));
  auto bad = ReplicationStream::Connect("host=127.0.0.1 port=");
  EXPECT_FALSE(bad.ok());
  auto garbage = ReplicationStream::Connect("this is not a conninfo");
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ReplicationStreamTest, UnknownDatabaseIsFailedPrecondition) {
  auto stream = ReplicationStream::Connect(cluster_->conninfo("no_such_db"));
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stream.status().message(), HasSubstr("no_such_db"));
}

TEST(ReplicationStreamWalLevelTest, WalLevelReplicaIsFailedPrecondition) {
  auto cluster = ValueOrDie(PgCluster::Start({"wal_level=replica"}));
  auto stream = ValueOrDie(ReplicationStream::Connect(cluster->conninfo()));
  absl::Status s = cdc::EnsureWalLevel(stream->sql());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("wal_level is 'replica'"));
  EXPECT_THAT(s.message(), HasSubstr("wal_level = logical"));
}

TEST_F(ReplicationStreamTest, PublicationAndSlotAreCreatedOnlyWhenAllowed) {
  auto stream = Connect();
  absl::Status s = cdc::EnsurePublication(stream->sql(), "pub", {"public.outbox"}, false);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(),
              HasSubstr("CREATE PUBLICATION \"pub\" FOR TABLE \"public\".\"outbox\""));
  s = cdc::EnsureSlot(stream->sql(), "s", false);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("does not exist"));
  EXPECT_EQ(ValueOrDie(session_->Exec("SELECT 1 FROM pg_replication_slots")).size(), 0u);

  ASSERT_OK(cdc::EnsurePublication(stream->sql(), "pub", {"public.outbox"}, true));
  ASSERT_OK(cdc::EnsureSlot(stream->sql(), "s", true));
  // Idempotent: both exist now.
  ASSERT_OK(cdc::EnsurePublication(stream->sql(), "pub", {"public.outbox"}, false));
  ASSERT_OK(cdc::EnsureSlot(stream->sql(), "s", false));
  EXPECT_EQ(ValueOrDie(session_->Value(
                "SELECT pubinsert::text || pubupdate::text || pubdelete::text || "
                "pubtruncate::text FROM pg_publication WHERE pubname = 'pub'")),
            "truefalsefalsefalse");
  EXPECT_EQ(ValueOrDie(session_->Value(
                "SELECT string_agg(schemaname || '.' || tablename, ',') FROM "
                "pg_publication_tables WHERE pubname = 'pub'")),
            "public.outbox");
  EXPECT_EQ(SlotValue("plugin"), "pgoutput");
  EXPECT_EQ(SlotValue("slot_type"), "logical");
}

TEST_F(ReplicationStreamTest, MissingTableAndBadNamesAreClearErrors) {
  auto stream = Connect();
  absl::Status s =
      cdc::EnsurePublication(stream->sql(), "pub", {"public.no_such_table"}, true);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("no_such_table"));
  EXPECT_THAT(s.message(), HasSubstr("create the outbox table first"));
  EXPECT_EQ(cdc::EnsureSlot(stream->sql(), "Bad-Name", true).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ReplicationStreamTest, SlotOfAnotherPluginIsFailedPrecondition) {
  ASSERT_OK(
      session_->Exec("SELECT pg_create_logical_replication_slot('s', 'test_decoding')")
          .status());
  absl::Status s = cdc::EnsureSlot(Connect()->sql(), "s", true);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("uses plugin test_decoding, not pgoutput"));
  EXPECT_THAT(s.message(), HasSubstr("pg_drop_replication_slot('s')"));
}

TEST_F(ReplicationStreamTest, ReadReturnsEmptyAtTheDeadline) {
  auto stream = StartStream();
  // Drain whatever the server sends at start, then expect silence.
  while (ValueOrDie(stream->Read(absl::Now() + absl::Milliseconds(300))).has_value()) {
  }
  absl::Time before = absl::Now();
  auto m = ValueOrDie(stream->Read(before + absl::Milliseconds(300)));
  absl::Duration took = absl::Now() - before;
  EXPECT_FALSE(m.has_value());
  EXPECT_GE(took, absl::Milliseconds(290));
  EXPECT_LT(took, absl::Seconds(5));  // Generous: only "does not block forever".
  // A deadline in the past still returns at once.
  before = absl::Now();
  EXPECT_FALSE(ValueOrDie(stream->Read(before - absl::Seconds(1))).has_value());
  EXPECT_LT(absl::Now() - before, absl::Seconds(5));
}

TEST_F(ReplicationStreamTest, AnswersKeepalivesSoWalSenderTimeoutNeverFires) {
  ASSERT_OK(session_->Exec("ALTER SYSTEM SET wal_sender_timeout = '2s'").status());
  ASSERT_OK(session_->Exec("SELECT pg_reload_conf()").status());
  auto stream = StartStream();
  // Read only, never send status ourselves, for 4x the timeout: the server asks
  // for replies at half the timeout, and the stream must answer them.
  int replies_requested = 0;
  absl::Time until = absl::Now() + absl::Seconds(8);
  while (absl::Now() < until) {
    auto m = stream->Read(until);
    ASSERT_TRUE(m.ok()) << m.status();
    if (m->has_value()) {
      if (auto* k = std::get_if<Keepalive>(&**m); k && k->reply_requested)
        ++replies_requested;
    }
  }
  EXPECT_GE(replies_requested, 2);
  // Still alive: a new row arrives.
  ASSERT_OK(session_
                ->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                       "payload) VALUES ('a', 'b', 'c', '{}')")
                .status());
  int inserts = 0;
  ASSERT_OK(CatchUp(*stream, CurrentLsn(), absl::Now() + absl::Seconds(30),
                    [&](const XLogData&, const pgoutput::PgOutputMessage& m) {
                      inserts += std::holds_alternative<pgoutput::Insert>(m);
                    }));
  EXPECT_EQ(inserts, 1);
}

TEST_F(ReplicationStreamTest, StatusUpdatesMoveTheSlotAndStopIsClean) {
  auto stream = StartStream();
  ASSERT_OK(session_
                ->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                       "payload) VALUES ('a', 'b', 'c', '{}')")
                .status());
  Lsn end;
  ASSERT_OK(CatchUp(
      *stream, CurrentLsn(), absl::Now() + absl::Seconds(30),
      [&](const XLogData&, const pgoutput::PgOutputMessage& m) {
        if (auto* c = std::get_if<pgoutput::Commit>(&m)) end = c->end_lsn;
      },
      /*confirm=*/false));
  ASSERT_TRUE(end.is_valid());
  Lsn before = ValueOrDie(Lsn::Parse(SlotValue("confirmed_flush_lsn")));
  EXPECT_LT(before, end) << "nothing confirmed yet";

  ASSERT_OK(stream->SendStatus(end, false));
  EXPECT_TRUE(WaitFor([&] { return SlotValue("confirmed_flush_lsn") == end.ToString(); },
                      absl::Seconds(30)));
  // A smaller LSN never moves it back.
  ASSERT_OK(stream->SendStatus(Lsn(end.value() - 1), true));
  EXPECT_EQ(stream->confirmed_flush(), end);

  EXPECT_EQ(SlotValue("active"), "true");
  ASSERT_OK(stream->Stop(absl::Now() + absl::Seconds(30)));
  EXPECT_TRUE(WaitFor([&] { return SlotValue("active") == "false"; }, absl::Seconds(30)));
  EXPECT_EQ(SlotValue("confirmed_flush_lsn"), end.ToString());
  // The connection accepts commands again.
  ASSERT_OK(stream->IdentifySystem().status());
}

TEST_F(ReplicationStreamTest, SecondStreamOnAnActiveSlotIsRefused) {
  auto first = StartStream();
  auto second = Connect();
  StartOptions options;
  options.slot = "s";
  options.publications = {"pub"};
  absl::Status s = second->Start(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable)
      << "a hot standby waits and retries";
  EXPECT_TRUE(IsSlotInUse(s)) << "told by SQLSTATE 55006: " << s;
  EXPECT_THAT(s.message(), HasSubstr("is active for PID"));
}

TEST_F(ReplicationStreamTest, TerminatedWalsenderIsUnavailable) {
  auto stream = StartStream();
  ASSERT_TRUE(WaitFor([&] { return SlotValue("active") == "true"; }, absl::Seconds(30)));
  ASSERT_OK(
      session_
          ->Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                 "WHERE slot_name = 's'")
          .status());
  absl::StatusOr<std::optional<ServerMessage>> m;
  do {
    m = stream->Read(absl::Now() + absl::Seconds(30));
  } while (m.ok() && m->has_value());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnavailable) << m.status();
}

TEST_F(ReplicationStreamTest, DroppedPublicationEndsTheStreamAsFailedPrecondition) {
  auto stream = StartStream();
  ASSERT_OK(session_->Exec("DROP PUBLICATION pub").status());
  ASSERT_OK(session_
                ->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                       "payload) VALUES ('a', 'b', 'c', '{}')")
                .status());
  absl::StatusOr<std::optional<ServerMessage>> m;
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  do {
    m = stream->Read(deadline);
  } while (m.ok() && absl::Now() < deadline);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr("publication \"pub\" does not exist"));
}

}  // namespace
}  // namespace cdc
