// A hot-standby pair end to end: two publishers on one slot, every health endpoint
// of each checked before, during and after a takeover, on a server that speaks
// English and on one that speaks German (lc_messages): the standby is told by
// SQLSTATE and the slot's active_pid, never by the server's words, and standing
// by writes no ERROR into the server's log.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/publisher/publisher_fixture.h"
#include "tools/harness/http_get.h"
#include "tools/harness/metrics_text.h"

namespace publisher {
namespace {

using harness::HttpGet;
using ::testing::HasSubstr;

constexpr char kRow[] =
    "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) "
    "VALUES ('order', 'o-1', 'Created', '{}')";

// The server's lc_messages: C (English), or German from Debian's translations.
struct Language {
  const char* name;
  const char* lc_messages;
  const char* error;       // How the server's log tags an error.
  const char* connection;  // How it logs a replication connection (log_connections).
};

void PrintTo(const Language& l, std::ostream* os) { *os << l.name; }

// Makes `locale` (e.g. de_DE.UTF-8) known to the C library, as the server needs it
// for lc_messages. As root, like CI; a failure here fails the test.
bool EnsureLocale(const std::string& locale) {
  std::string language = locale.substr(0, locale.find('.'));
  std::string check = absl::StrCat("locale -a | grep -qix '", language, ".utf-\\?8'");
  if (std::system(check.c_str()) == 0) return true;
  std::string make =
      absl::StrCat("localedef -i ", language, " -f UTF-8 ", locale, " >/dev/null 2>&1");
  return std::system(make.c_str()) == 0 && std::system(check.c_str()) == 0;
}

class StandbyPairTest : public PublisherTest,
                        public ::testing::WithParamInterface<Language> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(EnsureLocale("de_DE.UTF-8")) << "cannot generate the German locale";
    PublisherTest::SetUp();
  }
  // Debian's 15, whose translations the German server needs; every connection is
  // logged, so the test can wait for the standby's looks.
  std::vector<std::string> ServerSettings() override {
    return {"TimeZone=UTC", absl::StrCat("lc_messages=", GetParam().lc_messages),
            "log_connections=on"};
  }
  int ServerVersion() override { return 15; }

  std::string ServerLog() {
    std::ifstream in(absl::StrCat(cluster_->dir(), "/server.log"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Lines of the server's log that contain `text`.
  int ServerLogLines(const std::string& text) {
    int n = 0;
    for (absl::string_view line : absl::StrSplit(ServerLog(), '\n'))
      n += absl::StrContains(line, text);
    return n;
  }

  // A publisher of the pair, serving its endpoints on `port`; it may stand by.
  std::unique_ptr<Process> StartMember(int port, const std::string& name) {
    std::vector<std::string> argv = PublisherArgv(
        {"--metrics-port", absl::StrCat(port), "--slot-check-interval", "500ms"});
    return ValueOrDie(
        Process::Start(argv, absl::StrCat(cluster_->dir(), "/", name, ".log")));
  }

  // The value of the sample `series` in `port`'s /metrics, or "" when absent.
  static std::string Sample(int port, const std::string& series) {
    return harness::SampleValue(HttpGet(port, "/metrics").second, series).value_or("");
  }

  // Each endpoint's status on `port`: livez, readyz, healthz.
  static std::vector<int> Statuses(int port) {
    return {HttpGet(port, "/livez").first, HttpGet(port, "/readyz").first,
            HttpGet(port, "/healthz").first};
  }

  // What an active member answers, and its gauges.
  static void ExpectActive(int port) {
    EXPECT_EQ(HttpGet(port, "/livez"), std::make_pair(200, std::string("ok\n")));
    EXPECT_EQ(HttpGet(port, "/readyz"), std::make_pair(200, std::string("ok\n")));
    EXPECT_EQ(HttpGet(port, "/healthz"), std::make_pair(200, std::string("ok\n")));
    EXPECT_EQ(Sample(port, Series("outbox_publisher_active")), "1");
    EXPECT_EQ(Sample(port, Series("outbox_publisher_standing_by")), "0");
    EXPECT_EQ(Sample(port, Series("outbox_publisher_ready")), "1");
  }

  // What a ready standby answers, and its gauges.
  static void ExpectReadyStandby(int port) {
    EXPECT_EQ(HttpGet(port, "/livez"), std::make_pair(200, std::string("ok\n")));
    EXPECT_EQ(HttpGet(port, "/readyz"),
              std::make_pair(200, std::string("standing by: another publisher holds the "
                                              "slot; ready to take over\n")));
    EXPECT_EQ(HttpGet(port, "/healthz"),
              std::make_pair(503, std::string("not streaming: standing by: another "
                                              "publisher holds the slot\n")));
    EXPECT_EQ(Sample(port, Series("outbox_publisher_active")), "0");
    EXPECT_EQ(Sample(port, Series("outbox_publisher_standing_by")), "1");
    EXPECT_EQ(Sample(port, Series("outbox_publisher_ready")), "1");
  }

  static bool IsReadyStandby(int port) {
    return absl::StrContains(HttpGet(port, "/readyz").second, "ready to take over");
  }
};

TEST_P(StandbyPairTest, EveryEndpointBeforeDuringAndAfterATakeover) {
  if (std::string(GetParam().name) == "German") {
    // The server really speaks German.
    auto s = cluster_->Exec("SELECT * FROM nowhere");
    ASSERT_FALSE(s.ok());
    ASSERT_THAT(std::string(s.status().message()), HasSubstr("existiert nicht"))
        << "the server does not speak German; the test would prove nothing";
  }
  int port_a = harness::FreeTcpPort(), port_b = harness::FreeTcpPort();
  auto a = StartMember(port_a, "a");
  ASSERT_TRUE(WaitFor([&] { return HttpGet(port_a, "/healthz").first == 200; },
                      absl::Seconds(60)))
      << a->Log();
  ExpectActive(port_a);

  // Before: B stands by, Ready, and says so in one line.
  int connections = ServerLogLines(GetParam().connection);
  int errors = ServerLogLines(GetParam().error);
  auto b = StartMember(port_b, "b");
  ASSERT_TRUE(WaitFor([&] { return IsReadyStandby(port_b); }, absl::Seconds(60)))
      << b->Log();
  ExpectReadyStandby(port_b);
  ExpectActive(port_a);
  // Several looks at the slot later (each a replication connection the server
  // logs) ...
  ASSERT_TRUE(WaitFor(
      [&] { return ServerLogLines(GetParam().connection) >= connections + 5; },
      absl::Seconds(60)))
      << ServerLog();
  // ... no error in the server's log, and one line in the standby's own.
  EXPECT_EQ(ServerLogLines(GetParam().error), errors) << ServerLog();
  EXPECT_THAT(b->Log(), HasSubstr("standing by to take over"));
  std::vector<std::string> lines = absl::StrSplit(b->Log(), '\n');
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& l) {
                            return absl::StrContains(l, "standing by");
                          }),
            1)
      << b->Log();
  EXPECT_TRUE(b->running());

  // During: A dies at once; B's /livez answers throughout, and B takes over.
  ASSERT_TRUE(sql_->Exec(kRow).ok());
  a->Signal(SIGKILL);
  a->Wait(absl::Seconds(10));
  std::vector<std::vector<int>> seen;
  ASSERT_TRUE(WaitFor(
      [&] {
        seen.push_back(Statuses(port_b));
        return seen.back() == std::vector<int>{200, 200, 200};
      },
      absl::Seconds(90)))
      << b->Log();
  for (const std::vector<int>& s : seen) EXPECT_EQ(s[0], 200) << "/livez during takeover";
  EXPECT_THAT(b->Log(), HasSubstr("this standby takes over"));
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60))) << b->Log();
  ExpectActive(port_b);

  // After: A comes back and stands by; both Ready, one active.
  auto a2 = StartMember(port_a, "a2");
  ASSERT_TRUE(WaitFor([&] { return IsReadyStandby(port_a); }, absl::Seconds(60)))
      << a2->Log();
  ExpectReadyStandby(port_a);
  ExpectActive(port_b);

  // A standby that cannot reach the brokers is not Ready, and says why.
  ASSERT_EQ(mock_->Command("down all"), "ok");
  std::pair<int, std::string> verdict;
  ASSERT_TRUE(WaitFor(
      [&] {
        verdict = HttpGet(port_a, "/readyz");
        return verdict.first == 503;
      },
      absl::Seconds(60)))
      << a2->Log();
  EXPECT_THAT(verdict.second, HasSubstr("the Kafka brokers do not answer"));
  ASSERT_EQ(mock_->Command("up all"), "ok");
  ASSERT_TRUE(WaitFor([&] { return IsReadyStandby(port_a); }, absl::Seconds(60)))
      << a2->Log();

  for (auto* p : {&a2, &b}) {
    (*p)->Signal(SIGTERM);
    EXPECT_EQ((*p)->Wait(absl::Seconds(60)), 0) << (*p)->Log();
  }
}

INSTANTIATE_TEST_SUITE_P(Languages, StandbyPairTest,
                         ::testing::Values(Language{"English", "C", "ERROR:",
                                                    "replication connection authorized"},
                                           Language{"German", "de_DE.UTF-8", "FEHLER:",
                                                    "Replikationsverbindung autorisiert"}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace publisher
