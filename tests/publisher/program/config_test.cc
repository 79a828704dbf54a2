#include "publisher/program/config.h"

#include <algorithm>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

// An environment of `vars` and of readable `files` (path -> text).
common::Environment Env(std::map<std::string, std::string> vars = {},
                        std::map<std::string, std::string> files = {}) {
  common::Environment env;
  env.lookup = [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  for (const auto& [name, value] : vars) env.names.push_back(name);
  env.read_file = [files](const std::string& path) -> absl::StatusOr<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return absl::NotFoundError("No such file or directory");
    return it->second;
  };
  return env;
}

absl::StatusOr<Config> Parse(std::vector<std::string> args,
                             std::map<std::string, std::string> env = {},
                             std::map<std::string, std::string> files = {}) {
  return ParseConfig(args, Env(env, files));
}

TEST(ConfigTest, DefaultsMatchTheSpec) {
  Config c = *Parse({});
  EXPECT_EQ(c.pg, "");
  EXPECT_EQ(c.slot, "outbox_publisher");
  EXPECT_EQ(c.publication, "outbox_publisher");
  ASSERT_EQ(c.tables.size(), 1u);
  EXPECT_EQ(c.tables[0], (TableName{"public", "outbox"}));
  EXPECT_TRUE(c.create);
  EXPECT_EQ(c.brokers, "localhost:9092");
  EXPECT_EQ(c.topic, "outbox.event.{aggregate_type}");
  EXPECT_EQ(c.columns.id, "id");
  EXPECT_EQ(c.columns.key, "aggregate_id");
  EXPECT_EQ(c.columns.aggregate_type, "aggregate_type");
  EXPECT_EQ(c.columns.type, "event_type");
  EXPECT_EQ(c.columns.payload, "payload");
  EXPECT_EQ(c.columns.headers, "headers");
  EXPECT_EQ(c.columns.timestamp, "created_at");
  EXPECT_EQ(c.max_in_flight, 20000);
  EXPECT_EQ(c.max_in_flight_bytes, 16777216);
  EXPECT_EQ(c.on_error, OnError::kHalt);
  EXPECT_EQ(c.dead_letter_topic, "outbox.dead-letter");
  EXPECT_EQ(c.status_interval, absl::Seconds(10));
  EXPECT_EQ(c.stats_interval, absl::Seconds(30));
  EXPECT_EQ(c.log_format, common::LogFormat::kJson);
  EXPECT_EQ(c.log_level, common::LogLevel::kInfo);
  EXPECT_FALSE(c.help);
  EXPECT_FALSE(c.check);
  EXPECT_EQ(c.metrics_port, 0);
  EXPECT_EQ(c.metrics_address, "127.0.0.1");
  EXPECT_EQ(c.max_retained_wal, int64_t{1} << 30);
  EXPECT_EQ(c.slot_check_interval, absl::Seconds(10));
  EXPECT_EQ(c.replication_timeout, absl::Seconds(60));
  EXPECT_EQ(c.delivery, DeliveryMode::kAtLeastOnce);
  EXPECT_EQ(TransactionalId(c), "outbox-publisher.outbox_publisher");
  EXPECT_EQ(c.checkpoint_topic, "outbox.checkpoints");
  EXPECT_EQ(c.transaction_interval, absl::Milliseconds(100));
}

TEST(ConfigTest, AShardHasItsOwnSlotPublicationAndTransactionalId) {
  absl::StatusOr<Config> c = Parse({"--shard", "2/4", "--slot", "orders"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->shard, (cdc::KeyShard{2, 4}));
  EXPECT_EQ(c->slot, "orders_2_of_4");
  EXPECT_EQ(c->publication, "outbox_publisher_2_of_4");
  EXPECT_EQ(c->shard_slot_base, "orders");
  EXPECT_EQ(c->shard_publication_base, "outbox_publisher");
  EXPECT_EQ(TransactionalId(*c), "outbox-publisher.orders_2_of_4");
  EXPECT_FALSE(Parse({}).value().shard.has_value());
  EXPECT_THAT(Parse({"--shard", "5/4"}).status().message(), HasSubstr("--shard"));
  absl::Status messages =
      Parse({"--shard", "1/2", "--message-prefix", "outbox"}).status();
  EXPECT_THAT(messages.message(), HasSubstr("every shard would publish each one"));
}

TEST(ConfigTest, ExactlyOnceFlags) {
  absl::StatusOr<Config> c =
      Parse({"--delivery=exactly-once", "--slot", "orders", "--checkpoint-topic", "cp",
             "--transaction-interval", "250ms"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->delivery, DeliveryMode::kExactlyOnce);
  EXPECT_EQ(TransactionalId(*c), "outbox-publisher.orders");  // Follows --slot.
  EXPECT_EQ(c->checkpoint_topic, "cp");
  EXPECT_EQ(c->transaction_interval, absl::Milliseconds(250));
  EXPECT_EQ(TransactionalId(*Parse({"--transactional-id", "eu-1"})), "eu-1");
  EXPECT_EQ(Parse({}, {{"OUTBOX_DELIVERY", "exactly-once"}})->delivery,
            DeliveryMode::kExactlyOnce);
  std::map<std::string, std::string> described;
  for (const auto& [k, v] : DescribeConfig(*c))
    if (const auto* s = std::get_if<std::string>(&v)) described[k] = *s;
  EXPECT_EQ(described["delivery"], "exactly-once");
  EXPECT_EQ(described["transactional-id"], "outbox-publisher.orders");
}

TEST(ConfigTest, BadExactlyOnceValuesNameTheFlag) {
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--delivery", "exactly_once"},
           {"--delivery", "at-most-once"},
           {"--transaction-interval", "0s"},
           {"--transaction-interval", "soon"},
           {"--transactional-id", ""},
           {"--checkpoint-topic", ""}}) {
    absl::StatusOr<Config> c = Parse({flag + "=" + value});
    ASSERT_FALSE(c.ok()) << flag << " " << value;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(c.status().message(), HasSubstr(flag)) << c.status();
  }
  // A transactional id through -X would make the at-least-once producer
  // transactional behind the publisher's back.
  absl::StatusOr<Config> x = Parse({"-X", "transactional.id=t"});
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(x.status().message(), HasSubstr("--transactional-id"));
}

TEST(ConfigTest, ValueFormat) {
  EXPECT_EQ(Parse({})->value_format, ValueFormat::kEnvelope);
  EXPECT_EQ(Parse({"--value-format", "payload"})->value_format, ValueFormat::kPayload);
  EXPECT_EQ(Parse({"--value-format=json"})->value_format, ValueFormat::kJson);
  EXPECT_EQ(Parse({}, {{"OUTBOX_VALUE_FORMAT", "payload"}})->value_format,
            ValueFormat::kPayload);
  absl::StatusOr<Config> bad = Parse({"--value-format", "avro"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("--value-format"));
  EXPECT_THAT(bad.status().message(), HasSubstr("envelope, payload or json"));
}

TEST(ConfigTest, OperationsFlags) {
  absl::StatusOr<Config> c =
      Parse({"--check", "--metrics-port", "9187", "--metrics-address=0.0.0.0",
             "--max-retained-wal", "512MB", "--slot-check-interval", "2s",
             "--replication-timeout", "15s"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->check);
  EXPECT_EQ(c->metrics_port, 9187);
  EXPECT_EQ(c->metrics_address, "0.0.0.0");
  EXPECT_EQ(c->max_retained_wal, int64_t{512} << 20);
  EXPECT_EQ(c->slot_check_interval, absl::Seconds(2));
  EXPECT_EQ(c->replication_timeout, absl::Seconds(15));
  EXPECT_EQ(Parse({}, {{"OUTBOX_METRICS_PORT", "9000"}})->metrics_port, 9000);
  EXPECT_EQ(Parse({}, {{"OUTBOX_REPLICATION_TIMEOUT", "2m"}})->replication_timeout,
            absl::Minutes(2));
}

TEST(ConfigTest, BadOperationsValuesNameTheFlag) {
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--metrics-port", "70000"},
           {"--metrics-port", "x"},
           {"--max-retained-wal", "1XB"},
           {"--max-retained-wal", "0"},
           {"--slot-check-interval", "0s"},
           {"--replication-timeout", "0s"},
           {"--replication-timeout", "soon"}}) {
    absl::StatusOr<Config> c = Parse({flag, value});
    ASSERT_FALSE(c.ok()) << flag << " " << value;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(c.status().message(), HasSubstr(flag)) << c.status();
  }
}

TEST(ConfigTest, EveryFlagInBothSpellings) {
  absl::StatusOr<Config> c = Parse({"--pg",
                                    "host=db dbname=app",
                                    "--slot=s1",
                                    "--publication",
                                    "p1",
                                    "--table",
                                    "outbox, audit.events",
                                    "--create=false",
                                    "--brokers",
                                    "k1:9092,k2:9092",
                                    "--topic",
                                    "events.{table}.{event_type}",
                                    "--id-column",
                                    "event_id",
                                    "--key-column",
                                    "k",
                                    "--aggregate-type-column",
                                    "at",
                                    "--type-column",
                                    "et",
                                    "--payload-column",
                                    "body",
                                    "--headers-column",
                                    "h",
                                    "--timestamp-column",
                                    "ts",
                                    "--max-in-flight",
                                    "10",
                                    "--max-in-flight-bytes",
                                    "4096",
                                    "--on-error",
                                    "dead-letter",
                                    "--dead-letter-topic",
                                    "dlq",
                                    "--status-interval",
                                    "500ms",
                                    "--log-stats-every",
                                    "1m",
                                    "--log-format",
                                    "text",
                                    "--log-level",
                                    "debug",
                                    "-X",
                                    "linger.ms=5",
                                    "-Xcompression.type=zstd"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pg, "host=db dbname=app");
  EXPECT_EQ(c->slot, "s1");
  EXPECT_EQ(c->publication, "p1");
  EXPECT_THAT(c->tables, ::testing::ElementsAre(TableName{"public", "outbox"},
                                                TableName{"audit", "events"}));
  EXPECT_FALSE(c->create);
  EXPECT_EQ(c->brokers, "k1:9092,k2:9092");
  EXPECT_EQ(c->topic, "events.{table}.{event_type}");
  EXPECT_EQ(c->columns.id, "event_id");
  EXPECT_EQ(c->columns.key, "k");
  EXPECT_EQ(c->columns.aggregate_type, "at");
  EXPECT_EQ(c->columns.type, "et");
  EXPECT_EQ(c->columns.payload, "body");
  EXPECT_EQ(c->columns.headers, "h");
  EXPECT_EQ(c->columns.timestamp, "ts");
  EXPECT_EQ(c->max_in_flight, 10);
  EXPECT_EQ(c->max_in_flight_bytes, 4096);
  EXPECT_EQ(c->on_error, OnError::kDeadLetter);
  EXPECT_EQ(c->dead_letter_topic, "dlq");
  EXPECT_EQ(c->status_interval, absl::Milliseconds(500));
  EXPECT_EQ(c->stats_interval, absl::Minutes(1));
  EXPECT_EQ(c->log_format, common::LogFormat::kText);
  EXPECT_EQ(c->log_level, common::LogLevel::kDebug);
  EXPECT_THAT(c->kafka_properties,
              ::testing::ElementsAre(
                  std::pair<std::string, std::string>{"linger.ms", "5"},
                  std::pair<std::string, std::string>{"compression.type", "zstd"}));
}

TEST(ConfigTest, EnvironmentFallbackAndFlagsWin) {
  Config c = *Parse({"--slot", "from_flag"}, {{"OUTBOX_SLOT", "from_env"},
                                              {"OUTBOX_BROKERS", "env:9092"},
                                              {"OUTBOX_MAX_IN_FLIGHT_BYTES", "2048"},
                                              {"OUTBOX_CREATE", "false"}});
  EXPECT_EQ(c.slot, "from_flag");
  EXPECT_EQ(c.brokers, "env:9092");
  EXPECT_EQ(c.max_in_flight_bytes, 2048);
  EXPECT_FALSE(c.create);
}

TEST(ConfigTest, BareBoolFlagMeansTrue) {
  EXPECT_TRUE(Parse({"--create"})->create);
  EXPECT_FALSE(Parse({"--create", "false"})->create);
  EXPECT_TRUE(Parse({"--create", "--slot", "x"})->create);
}

TEST(ConfigTest, HelpIsRecognised) {
  EXPECT_TRUE(Parse({"--help"})->help);
  EXPECT_TRUE(Parse({"-h"})->help);
  EXPECT_TRUE(Parse({"--version"})->version);
  EXPECT_FALSE(Parse({})->version);
  std::string usage = Usage();
  for (const char* flag : {"--pg", "--slot", "--table", "--max-in-flight-bytes",
                           "--on-error", "--log-level", "-X key=value", "OUTBOX_"}) {
    EXPECT_THAT(usage, HasSubstr(flag));
  }
  EXPECT_THAT(usage, HasSubstr("[outbox.event.{aggregate_type}]"));
}

TEST(ConfigTest, HelpGroupsTheFlagsAndShowsDefaultsInUnitsAPersonReads) {
  std::string usage = Usage();
  std::vector<size_t> at;
  for (const char* heading : {"\nPostgreSQL and the slot:\n", "\nKafka:\n",
                              "\nColumns of the outbox table:\n", "\nOperations:\n"}) {
    at.push_back(usage.find(heading));
    EXPECT_NE(at.back(), std::string::npos) << heading;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
  EXPECT_THAT(usage, HasSubstr("--max-retained-wal SIZE"));
  EXPECT_THAT(usage, HasSubstr("[1GiB]"));
  EXPECT_THAT(usage, HasSubstr("[16MiB]"));
  EXPECT_THAT(usage, HasSubstr("[true]"));
  EXPECT_THAT(usage, HasSubstr("[1m]"));  // --replication-timeout.
  EXPECT_THAT(usage, ::testing::Not(HasSubstr("1073741824")));
  // Every flag of the table is in its group's part, and each default shown
  // parses back to the default.
  Config shown = *Parse({"--max-retained-wal", "1GiB", "--max-in-flight-bytes", "16MiB"});
  EXPECT_EQ(shown.max_retained_wal, Config().max_retained_wal);
  EXPECT_EQ(shown.max_in_flight_bytes, Config().max_in_flight_bytes);
}

struct BadCase {
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string message;
};

TEST(ConfigTest, BadValuesNameTheValueAndWhatIsAccepted) {
  std::vector<BadCase> cases = {
      {{"--nope"}, {}, "unknown flag --nope"},
      {{"stray"}, {}, "unexpected argument \"stray\""},
      {{"--slot"}, {}, "flag --slot needs a value"},
      {{"--slot", ""}, {}, "--slot: must not be empty"},
      {{"--max-in-flight", "0"},
       {},
       "\"0\" for --max-in-flight: expected a positive integer"},
      {{"--max-in-flight", "ten"}, {}, "expected a positive integer"},
      {{"--max-in-flight-bytes", "100"}, {}, "expected at least 1024"},
      {{"--status-interval", "10"}, {}, "expected a positive duration"},
      {{"--log-stats-every", "-1s"}, {}, "expected a positive duration"},
      {{"--stats-interval", "0s"}, {}, "expected a positive duration"},
      {{"-F"}, {}, "expected -F FILE"},
      {{"-F", "/etc/missing.properties"},
       {},
       "cannot read the Kafka properties file /etc/missing.properties"},
      {{"--on-error", "ignore"}, {}, "expected halt or dead-letter"},
      {{"--log-format", "xml"}, {}, "expected json or text"},
      {{"--log-level", "loud"}, {}, "expected debug, info, warn or error"},
      {{"--create=maybe"}, {}, "expected true or false"},
      {{"--table", "a.b.c"}, {}, "as table or schema.table"},
      {{"--table", "outbox,"}, {}, "as table or schema.table"},
      {{"--topic", "t.{"}, {}, "must name a column"},
      {{"--topic", "t.{}"}, {}, "must name a column"},
      {{"--topic", "t.}x"}, {}, "unbalanced braces"},
      {{"-X", "nokey"}, {}, "expected -X key=value"},
      {{"-X"}, {}, "expected -X key=value"},
      {{"--pg", "host='unterminated"}, {}, "for --pg"},
      {{}, {{"OUTBOX_MAX_IN_FLIGHT", "x"}}, "(from OUTBOX_MAX_IN_FLIGHT)"},
  };
  for (const BadCase& bad : cases) {
    absl::StatusOr<Config> c = Parse(bad.args, bad.env);
    ASSERT_FALSE(c.ok()) << ::testing::PrintToString(bad.args);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(c.status().message(), HasSubstr(bad.message));
  }
}

TEST(ConfigTest, DescriptionRedactsSecrets) {
  Config c =
      *Parse({"--pg", "host=db password=hunter2 user=app", "-X", "sasl.password=s3cret",
              "-X", "ssl.key.password=k", "-X", "linger.ms=5"});
  std::string all;
  for (const auto& [k, v] : DescribeConfig(c)) {
    std::visit([&](const auto& x) { all += k + "=" + absl::StrCat(x) + ";"; }, v);
  }
  EXPECT_THAT(all, ::testing::Not(HasSubstr("hunter2")));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("s3cret")));
  EXPECT_THAT(all, HasSubstr("password=********"));
  EXPECT_THAT(all, HasSubstr("X.sasl.password=********"));
  EXPECT_THAT(all, HasSubstr("X.linger.ms=5"));
  EXPECT_THAT(all, HasSubstr("slot=outbox_publisher"));
}

TEST(ConfigTest, StatsIntervalIsADeprecatedAliasThatWarns) {
  Config c = *Parse({"--stats-interval", "2m"});
  EXPECT_EQ(c.stats_interval, absl::Minutes(2));
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_THAT(c.warnings[0], HasSubstr("--log-stats-every"));
  Config from_env = *Parse({}, {{"OUTBOX_STATS_INTERVAL", "3m"}});
  EXPECT_EQ(from_env.stats_interval, absl::Minutes(3));
  EXPECT_EQ(from_env.warnings.size(), 1u);
  Config current = *Parse({"--log-stats-every", "4m"}, {{"OUTBOX_LOG_STATS_EVERY", "5m"}});
  EXPECT_EQ(current.stats_interval, absl::Minutes(4));
  EXPECT_TRUE(current.warnings.empty());
  EXPECT_THAT(Usage(), HasSubstr("--log-stats-every"));
}

using Properties = std::vector<std::pair<std::string, std::string>>;

TEST(ConfigTest, KafkaPropertiesFromFileEnvironmentAndFlagsWithFlagsWinning) {
  std::map<std::string, std::string> files = {
      {"/run/kafka.properties",
       "# credentials\n"
       "security.protocol = SASL_PLAINTEXT\n"
       "sasl.mechanism=PLAIN\n"
       "sasl.username=from-file\n"
       "\n"
       "! another comment\n"
       "sasl.password=file=secret\n"
       "linger.ms=7\n"}};
  std::map<std::string, std::string> env = {{"OUTBOX_KAFKA_SASL_USERNAME", "from-env"},
                                            {"OUTBOX_KAFKA_LINGER_MS", "8"},
                                            {"OUTBOX_SLOT", "s"}};
  absl::StatusOr<Config> c =
      Parse({"-F", "/run/kafka.properties", "-X", "linger.ms=9"}, env, files);
  ASSERT_TRUE(c.ok()) << c.status();
  // Each key once, where it first appeared; the environment beats the file, -X both.
  EXPECT_THAT(c->kafka_properties,
              ::testing::ElementsAre(
                  std::pair<std::string, std::string>{"security.protocol", "SASL_PLAINTEXT"},
                  std::pair<std::string, std::string>{"sasl.mechanism", "PLAIN"},
                  std::pair<std::string, std::string>{"sasl.username", "from-env"},
                  std::pair<std::string, std::string>{"sasl.password", "file=secret"},
                  std::pair<std::string, std::string>{"linger.ms", "9"}));
  // The file also by --kafka-config and OUTBOX_KAFKA_CONFIG (which is no property).
  absl::StatusOr<Config> by_env =
      Parse({}, {{"OUTBOX_KAFKA_CONFIG", "/run/kafka.properties"}}, files);
  ASSERT_TRUE(by_env.ok()) << by_env.status();
  EXPECT_EQ(by_env->kafka_config, "/run/kafka.properties");
  EXPECT_EQ(by_env->kafka_properties.size(), 5u);
  EXPECT_EQ(Parse({"--kafka-config", "/run/kafka.properties"}, {}, files)
                ->kafka_properties.size(),
            5u);
  absl::StatusOr<Config> bad = Parse({"-F", "/bad"}, {}, {{"/bad", "a=1\nnovalue\n"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("/bad:2: expected key=value"));
}

TEST(ConfigTest, SettingsThatVoidAGuaranteeAreRefusedNamingIt) {
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    std::string guarantee;
  };
  std::vector<Case> cases = {
      {{"-X", "enable.idempotence=false", "-X", "acks=1"}, {}, "guarantee 4"},
      {{"-X", "enable.idempotence=false", "-X", "acks=1"}, {}, "guarantees 1 and 2"},
      {{"-X", "enable.idempotence=0"}, {}, "guarantee 4"},
      {{}, {{"OUTBOX_KAFKA_ENABLE_IDEMPOTENCE", "false"}}, "guarantee 4"},
      {{"-X", "acks=0"}, {}, "guarantees 1 and 2"},
      {{"-X", "request.required.acks=1"}, {}, "guarantees 1 and 2"},
      {{"-X", "max.in.flight.requests.per.connection=6"}, {}, "guarantee 4"},
      {{"-X", "max.in.flight=100"}, {}, "guarantee 4"},
      {{"-X", "retries=0"}, {}, "guarantee 4"},
      {{"-X", "queuing.strategy=lifo"}, {}, "guarantee 4"},
      {{"-X", "partitioner=random"}, {}, "guarantee 4"},
      {{"-X", "delivery.report.only.error=true"}, {}, "guarantees 2 and 7"},
      {{"-X", "transactional.id=x"}, {}, "--transactional-id"},
  };
  for (const Case& bad : cases) {
    absl::StatusOr<Config> c = Parse(bad.args, bad.env);
    ASSERT_FALSE(c.ok()) << ::testing::PrintToString(bad.args);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(c.status().message(), HasSubstr("Kafka property refused"));
    EXPECT_THAT(c.status().message(), HasSubstr(bad.guarantee))
        << ::testing::PrintToString(bad.args);
  }
  // What keeps the guarantees is accepted, including a -X that overrides an unsafe
  // value from the environment.
  for (const std::vector<std::string>& ok :
       std::vector<std::vector<std::string>>{{"-X", "acks=all"},
                                             {"-X", "acks=-1"},
                                             {"-X", "enable.idempotence=true"},
                                             {"-X", "max.in.flight.requests.per.connection=5"},
                                             {"-X", "partitioner=murmur2_random"},
                                             {"-X", "retries=10"}}) {
    EXPECT_TRUE(Parse(ok).ok()) << ::testing::PrintToString(ok);
  }
  EXPECT_TRUE(Parse({"-X", "acks=all"}, {{"OUTBOX_KAFKA_ACKS", "1"}}).ok());
}

TEST(ConfigTest, SecretsFromTheEnvironmentOrAFileAreRedacted) {
  absl::StatusOr<Config> c =
      Parse({"-F", "/k"}, {{"OUTBOX_KAFKA_SASL_PASSWORD", "env-s3cret"}},
            {{"/k", "ssl.key.password=pl41n\n"
                    "ssl.key.pem=PEMDATA\n"}});
  ASSERT_TRUE(c.ok()) << c.status();
  std::string all;
  for (const auto& [k, v] : DescribeConfig(*c)) {
    std::visit([&](const auto& x) { all += k + "=" + absl::StrCat(x) + ";"; }, v);
  }
  for (const char* secret : {"env-s3cret", "pl41n", "PEMDATA"}) {
    EXPECT_THAT(all, ::testing::Not(HasSubstr(secret)));
  }
  EXPECT_THAT(all, HasSubstr("X.sasl.password=********"));
  EXPECT_THAT(all, HasSubstr("kafka-config=/k"));
}

TEST(ConfigTest, APropertyLibrdkafkaRefusesIsRefusedBeforeAnythingIsShown) {
  // A Java client's JAAS line, and a misspelled secret: refused, named by key.
  absl::StatusOr<Config> c =
      Parse({"-X", "sasl.jaas.config=x required password=\"pl41n\";"});
  ASSERT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("sasl.jaas.config"));
  EXPECT_THAT(c.status().message(), ::testing::Not(HasSubstr("pl41n")));
  c = Parse({}, {{"OUTBOX_KAFKA_SASL_PASWORD", "hunter3"}});
  ASSERT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("sasl.pasword"));
  EXPECT_THAT(c.status().message(), ::testing::Not(HasSubstr("hunter3")));
}

}  // namespace
}  // namespace publisher
