// librdkafka's implicit acknowledgement, reproduced against mock-kafka, and what
// KafkaSink makes of it (docs/implicit-ack.md).
//
// With several Produce requests of one partition in flight, an injected retriable
// error on request R1 while a later R2 succeeds makes librdkafka 2.0.2 report R1's
// messages delivered with offset -1001 (rd_kafka_dr_implicit_ack), although the
// mock, which checks no sequence numbers without a transactional.id, stored R2 and
// never R1. The test produces bursts under injected errors until that happens, then
// reads the partition back and requires:
//   - every delivery KafkaSink reported as OK is really in the log (before the fix,
//     the implicitly acknowledged messages were reported OK and were missing);
//   - the client really did this: some message was reported "without proof of
//     storage", and at least one such message is absent from the log.
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/kafka/kafka_sink.h"
#include "publisher/program/options.h"
#include "tests/test_util.h"
#include "tools/harness/processes.h"

namespace publisher {
namespace {

using harness::Consumer;
using harness::MockKafka;
using harness::WaitFor;
using test_util::ValueOrDie;

constexpr char kTopic[] = "implicit.ack";

TEST(ImplicitAckTest, SuccessWithoutAnOffsetIsReportedUnprovenAndWasIndeedNotStored) {
  auto mock = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock->Command(absl::StrCat("topic ", kTopic, " 1")), "ok");
  Config config;
  config.brokers = mock->bootstrap();
  // Many small requests in flight for one partition: the race needs R1 and R2.
  config.kafka_properties = {{"max.in.flight.requests.per.connection", "5"},
                             {"batch.num.messages", "4"},
                             {"linger.ms", "0"},
                             {"retry.backoff.ms", "10"}};
  common::Logger log(common::LogFormat::kJson, common::LogLevel::kError);
  auto sink = ValueOrDie(KafkaSink::Create(KafkaOptionsFrom(config), log));

  std::map<uint64_t, absl::Status> reports;  // Message number -> what the sink said.
  uint64_t next = 0;
  size_t unproven = 0;
  for (int burst = 0; burst < 200 && unproven == 0; ++burst) {
    ASSERT_EQ(mock->Command("errors Produce NOT_LEADER_FOR_PARTITION "
                            "NOT_LEADER_FOR_PARTITION NOT_LEADER_FOR_PARTITION "
                            "REQUEST_TIMED_OUT NOT_ENOUGH_REPLICAS"),
              "ok");
    for (int i = 0; i < 200; ++i, ++next) {
      OutboxRecord r;
      r.topic = kTopic;
      r.key = "k";
      r.value = absl::StrCat("m", next);
      r.id = r.value;
      ASSERT_TRUE(sink->Produce(r, MessageToken{next, 0}, RecordKind::kEvent).ok());
    }
    ASSERT_TRUE(WaitFor(
        [&] {
          sink->Poll(absl::Milliseconds(10), [&](Delivery d) {
            if (absl::IsUnavailable(d.status)) ++unproven;
            reports.emplace(d.token.transaction, d.status);
          });
          return reports.size() == next;
        },
        absl::Seconds(60)))
        << "deliveries missing after burst " << burst;
  }
  auto consumer = ValueOrDie(Consumer::Start(mock->bootstrap(), {kTopic}));
  std::set<std::string> stored;
  // Every message reported OK is in the log once it is read to its end.
  size_t ok_reports = 0;
  for (const auto& [n, status] : reports) ok_reports += status.ok();
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& r : consumer->Records()) stored.insert(r.value);
        size_t found = 0;
        for (const auto& [n, status] : reports)
          found += status.ok() && stored.count(absl::StrCat("m", n));
        return found == ok_reports;
      },
      absl::Seconds(15)))
      << "a delivery reported OK is not in the log";
  ASSERT_GT(unproven, 0u) << "200 bursts never produced an implicit ack";

  size_t missing_unproven = 0;
  for (const auto& [n, status] : reports) {
    if (!status.ok()) {
      EXPECT_THAT(std::string(status.message()),
                  ::testing::HasSubstr("without proof of storage"));
      missing_unproven += !stored.count(absl::StrCat("m", n));
    }
  }
  EXPECT_GT(missing_unproven, 0u)
      << "every unproven message was stored after all: the mock did not drop any";
  std::cout << "implicit ack: " << unproven << " of " << next << " reports unproven, "
            << missing_unproven << " never stored\n";
}

}  // namespace
}  // namespace publisher
