// Supervisor: which failures are retried, how, and which end the run.
#include "publisher/relay/supervisor.h"

#include <cstdio>
#include <cstdlib>
#include <deque>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "cdc/catalog_facts.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/operations/metrics.h"
#include "publisher/program/options.h"
#include "tests/publisher/fakes.h"

namespace publisher {
namespace {

using fakes::FakeClock;
using fakes::FakeSink;
using fakes::FakeWalStream;
using ::testing::ElementsAre;

// Each Open returns the next scripted result.
class FakeSessions : public SessionSource {
 public:
  std::deque<std::function<absl::StatusOr<Session>()>> script;
  int opens = 0;
  absl::StatusOr<Session> Open() override {
    ++opens;
    if (script.empty()) return absl::FailedPreconditionError("script ended");
    auto next = std::move(script.front());
    script.pop_front();
    return next();
  }
};

class FakeSinks : public SinkFactory {
 public:
  explicit FakeSinks(FakeClock& clock) : clock_(clock) {}
  std::vector<bool> created;  // `first` of each call
  std::vector<FakeSink*> sinks;
  absl::Status fail_first;
  std::deque<absl::Status> fail_later;  // Results of the next re-creations.
  bool defer_first = false;             // Create(true) returns null.
  const FakeSessions* sessions = nullptr;
  std::vector<int> created_at_open;  // sessions->opens at each Create.
  std::deque<absl::Status> probes;  // Results of the next ProbeBrokers calls.
  int released = 0;                 // ReleaseProbe calls.
  absl::Status ProbeBrokers() override {
    if (probes.empty()) return absl::OkStatus();
    absl::Status s = probes.front();
    probes.pop_front();
    return s;
  }
  void ReleaseProbe() override { ++released; }
  absl::StatusOr<std::unique_ptr<Sink>> Create(bool first) override {
    created.push_back(first);
    created_at_open.push_back(sessions == nullptr ? -1 : sessions->opens);
    if (first && defer_first) return std::unique_ptr<Sink>();
    if (first && !fail_first.ok()) return fail_first;
    if (!first && !fail_later.empty()) {
      absl::Status s = fail_later.front();
      fail_later.pop_front();
      if (!s.ok()) return s;
    }
    auto sink = std::make_unique<FakeSink>(clock_);
    sink->auto_ack = true;
    sinks.push_back(sink.get());
    return std::unique_ptr<Sink>(std::move(sink));
  }

 private:
  FakeClock& clock_;
};

class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorTest()
      : sinks_(clock_), relay_(Options(), log_, [this] { return clock_.Now(); }) {
    sinks_.sessions = &sessions_;
  }

  static RelayOptions Options() {
    RelayOptions o = RelayOptionsFrom(Config{}, "");
    o.drain_timeout = absl::Seconds(1);
    return o;
  }

  // A session whose stream plays nothing and then, if `fail` is set, fails its
  // next read with it; otherwise it ends by setting stop.
  std::function<absl::StatusOr<Session>()> SessionThat(absl::Status fail) {
    return [this, fail]() -> absl::StatusOr<Session> {
      auto stream = std::make_unique<FakeWalStream>(clock_, fail.ok() ? stop_ : scratch_);
      if (!fail.ok()) stream->FailNextRead(fail);
      return Session{std::move(stream), "db"};
    };
  }

  // `log`: where the supervisor writes (the fixture's quiet one by default).
  // Each sleep advances the fake clock by its duration.
  SupervisorResult Run(common::Logger* log = nullptr) {
    SupervisorOptions options;
    options.now = [this] { return clock_.Now(); };
    Supervisor supervisor(options, sessions_, sinks_, relay_, log ? *log : log_,
                          [this](absl::Duration d, const std::atomic<bool>&) {
                            sleeps_.push_back(d);
                            reasons_.push_back(metrics_.Health(clock_.Now()).reason);
                            readiness_.push_back(metrics_.Readiness(clock_.Now()));
                            clock_.Advance(d);
                          });
    supervisor.set_monitor(&metrics_);
    return supervisor.Run(stop_);
  }

  FakeClock clock_;
  std::atomic<bool> stop_{false}, scratch_{false};
  common::Logger log_{common::LogFormat::kJson, common::LogLevel::kError};
  FakeSessions sessions_;
  FakeSinks sinks_;
  Relay relay_;
  std::vector<absl::Duration> sleeps_;
  Metrics metrics_;
  std::vector<std::string> reasons_;  // /healthz's reason during each sleep.
  std::vector<HealthVerdict> readiness_;  // /readyz's verdict during each sleep.
};

// A logger whose lines are kept in memory.
class CapturedLog {
 public:
  CapturedLog() : file_(open_memstream(&buffer_, &size_)), log_(common::LogFormat::kJson,
                                                               common::LogLevel::kInfo,
                                                               file_) {}
  ~CapturedLog() {
    std::fclose(file_);
    std::free(buffer_);
  }
  common::Logger* logger() { return &log_; }
  // The lines logged so far that contain `text`.
  int Count(absl::string_view text) {
    std::fflush(file_);
    int n = 0;
    for (absl::string_view line : absl::StrSplit(absl::string_view(buffer_, size_), '\n'))
      n += absl::StrContains(line, text);
    return n;
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
  common::Logger log_;
};

TEST_F(SupervisorTest, UnreachableAtStartIsNotRetried) {
  sessions_.script.push_back([] { return absl::UnavailableError("connection refused"); });
  SupervisorResult r = Run();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(sessions_.opens, 1);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(SupervisorTest, UnreachableBrokersAtStartAreNotRetried) {
  sinks_.fail_first = absl::UnavailableError("no broker");
  SupervisorResult r = Run();
  EXPECT_FALSE(r.status.ok());
  EXPECT_FALSE(r.started);
  EXPECT_EQ(sessions_.opens, 0) << "PostgreSQL touched before Kafka answered";
}

// What the session source says when another connection streams the slot.
std::function<absl::StatusOr<Session>()> SlotInUse() {
  return [] {
    return cdc::SlotInUseError("replication slot \"s\" is streamed by another connection");
  };
}

TEST_F(SupervisorTest, HeldSlotIsAHotStandbyThatTakesOver) {
  for (int i = 0; i < 3; ++i) sessions_.script.push_back(SlotInUse());
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  SupervisorResult r = Run();
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.started);
  EXPECT_EQ(sessions_.opens, 4);
  EXPECT_THAT(sleeps_, ElementsAre(absl::Seconds(2), absl::Seconds(2), absl::Seconds(2)));
  EXPECT_EQ(reasons_[0], "not streaming: standing by: another publisher holds the slot");
}

TEST_F(SupervisorTest, StandingByIsSaidOnceThenRemindedEveryFiveMinutes) {
  // 2 s a look: 200 looks are 400 s, one reminder at 300 s.
  for (int i = 0; i < 200; ++i) sessions_.script.push_back(SlotInUse());
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  CapturedLog log;
  SupervisorResult r = Run(log.logger());
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(log.Count("standing by to take over"), 1);
  EXPECT_EQ(log.Count("still standing by"), 1);
  EXPECT_EQ(log.Count("\"standing_by_s\":300"), 1);
  EXPECT_EQ(log.Count("this standby takes over"), 1);
  EXPECT_EQ(log.Count("\"level\":\"warn\""), 0) << "standing by is a normal state";
  EXPECT_EQ(sinks_.released, 1) << "the broker probe is let go on taking over";
  for (const HealthVerdict& v : readiness_) {
    EXPECT_TRUE(v.ok) << v.reason;
    EXPECT_EQ(v.reason, "standing by: another publisher holds the slot; ready to take over");
  }
}

TEST_F(SupervisorTest, AStandbyIsReadyOnlyWhileTheBrokersAnswer) {
  for (int i = 0; i < 3; ++i) sessions_.script.push_back(SlotInUse());
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  sinks_.probes = {absl::OkStatus(), absl::UnavailableError("no broker answered"),
                   absl::OkStatus()};
  CapturedLog log;
  SupervisorResult r = Run(log.logger());
  EXPECT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(readiness_.size(), 3u);
  EXPECT_TRUE(readiness_[0].ok);
  EXPECT_FALSE(readiness_[1].ok);
  EXPECT_EQ(readiness_[1].reason,
            "standing by, but could not take over: the Kafka brokers do not answer: no "
            "broker answered");
  EXPECT_TRUE(readiness_[2].ok);
  EXPECT_EQ(log.Count("\"level\":\"warn\""), 1) << "said once, when it changed";
  EXPECT_EQ(log.Count("the Kafka brokers answer again"), 1);
  // /healthz says the same of a ready and of an unready standby: not active.
  for (const std::string& reason : reasons_) {
    EXPECT_EQ(reason, "not streaming: standing by: another publisher holds the slot");
  }
}

TEST_F(SupervisorTest, AStandbyThatLosesPostgresKeepsTryingAndIsNotReady) {
  // Standing by proved the environment: losing PostgreSQL then is a wait, not an
  // exit (an orchestrator would otherwise restart the standby in a loop).
  sessions_.script.push_back(SlotInUse());
  sessions_.script.push_back([] { return absl::UnavailableError("connection refused"); });
  sessions_.script.push_back(SlotInUse());
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  SupervisorResult r = Run();
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.started);
  ASSERT_EQ(readiness_.size(), 3u);
  EXPECT_TRUE(readiness_[0].ok);
  EXPECT_FALSE(readiness_[1].ok);
  EXPECT_EQ(readiness_[1].reason,
            "not streaming: cannot reach PostgreSQL: connection refused");
  EXPECT_TRUE(readiness_[2].ok);
}

TEST_F(SupervisorTest, ASlotInUseIsToldByItsCodeNotItsWords) {
  // Before the first session, an unreachable server is the operator's to fix;
  // English words about the slot do not make it a standby ...
  sessions_.script.push_back([] {
    return absl::UnavailableError("replication slot \"s\" is active for PID 42");
  });
  EXPECT_EQ(Run().status.code(), absl::StatusCode::kUnavailable);
  // ... and a server speaking German is a standby all the same.
  sessions_.opens = 0;
  sessions_.script.push_back([] {
    return cdc::SlotInUseError(
        "START_REPLICATION failed: Replikations-Slot »s« ist aktiv für PID 42");
  });
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  SupervisorResult r = Run();
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(sessions_.opens, 2);
}

TEST_F(SupervisorTest, LostConnectionReconnectsWithGrowingBackoff) {
  sessions_.script.push_back(SessionThat(absl::UnavailableError("server closed")));
  sessions_.script.push_back(
      [] { return absl::UnavailableError("the system is starting up"); });
  sessions_.script.push_back(
      [] { return absl::UnavailableError("the system is starting up"); });
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  SupervisorResult r = Run();
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(sessions_.opens, 4);
  ASSERT_EQ(sleeps_.size(), 3u);
  EXPECT_LE(sleeps_[0], absl::Milliseconds(200));
  EXPECT_GE(sleeps_[2], absl::Milliseconds(400)) << "backoff did not grow";
  EXPECT_EQ(sinks_.created.size(), 1u)
      << "a PostgreSQL problem must not recreate the producer";
  EXPECT_THAT(metrics_.RenderPrometheus(clock_.Now()),
              ::testing::HasSubstr("outbox_publisher_reconnects_total 1\n"));
  EXPECT_EQ(reasons_[0],
            "not streaming: replication connection lost; reconnecting: server closed");
  EXPECT_EQ(reasons_[1],
            "not streaming: cannot reach PostgreSQL: the system is starting up");
}

TEST_F(SupervisorTest, FatalProducerIsRecreatedAndTheSessionRewound) {
  sessions_.script.push_back(SessionThat(absl::AbortedError("idempotence state lost")));
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  SupervisorResult r = Run();
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(sinks_.created, ElementsAre(true, false));
  EXPECT_EQ(sessions_.opens, 2);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(SupervisorTest, ARewindWaitsForTheBrokersToRecreateTheProducer) {
  // An exactly-once producer must reach the brokers to be made (it reads the
  // checkpoint back): while they are away, the session is dropped and retried.
  sessions_.script.push_back(SessionThat(absl::AbortedError("transaction failed")));
  for (int i = 0; i < 3; ++i) sessions_.script.push_back(SessionThat(absl::OkStatus()));
  sinks_.fail_later = {absl::UnavailableError("no broker"),
                       absl::UnavailableError("no broker")};
  SupervisorResult r = Run();
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(sinks_.created, ElementsAre(true, false, false, false));
  ASSERT_EQ(sleeps_.size(), 2u);
  EXPECT_LE(sleeps_[0], absl::Milliseconds(200));
  EXPECT_EQ(sessions_.opens, 4);
}

TEST_F(SupervisorTest, AProducerLeftForLaterIsMadeOnlyOnceTheSlotIsHeld) {
  // A standby must not make a transactional producer: that fences the active one.
  sinks_.defer_first = true;
  sessions_.script.push_back(SlotInUse());
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  SupervisorResult r = Run();
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(sinks_.created, ElementsAre(true, false));
  EXPECT_EQ(sinks_.created_at_open, (std::vector<int>{0, 2})) << "made while standing by";
}

TEST_F(SupervisorTest, AFencedProducerEndsTheRun) {
  sessions_.script.push_back(SessionThat(absl::AbortedError("transaction failed")));
  sessions_.script.push_back(SessionThat(absl::OkStatus()));
  sinks_.fail_later = {absl::FailedPreconditionError("fenced")};
  SupervisorResult r = Run();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(sessions_.opens, 2);
}

TEST_F(SupervisorTest, LastingProblemsEndTheRun) {
  sessions_.script.push_back(SessionThat(absl::UnavailableError("terminated")));
  sessions_.script.push_back([] {
    return absl::FailedPreconditionError("table \"public\".\"outbox\" does not exist");
  });
  SupervisorResult r = Run();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(r.started) << "after streaming once, errors are runtime errors (exit 1)";
}

}  // namespace
}  // namespace publisher
