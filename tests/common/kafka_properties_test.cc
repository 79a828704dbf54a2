#include "common/kafka_properties.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace common {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using KV = std::pair<std::string, std::string>;

TEST(KafkaPropertiesTest, EnvironmentNamesMapToPropertiesBothWays) {
  EXPECT_EQ(KafkaPropertyEnvName("sasl.password"), "OUTBOX_KAFKA_SASL_PASSWORD");
  EXPECT_EQ(KafkaPropertyOfEnvName("OUTBOX_KAFKA_SASL_PASSWORD"), "sasl.password");
  EXPECT_EQ(KafkaPropertyOfEnvName("OUTBOX_KAFKA_SSL_CA_LOCATION"), "ssl.ca.location");
  EXPECT_EQ(KafkaPropertyOfEnvName("OUTBOX_KAFKA_CONFIG"), std::nullopt);  // The file.
  EXPECT_EQ(KafkaPropertyOfEnvName("OUTBOX_KAFKA_"), std::nullopt);
  EXPECT_EQ(KafkaPropertyOfEnvName("OUTBOX_BROKERS"), std::nullopt);
  EXPECT_EQ(KafkaPropertyOfEnvName("KAFKA_SASL_PASSWORD"), std::nullopt);
}

TEST(KafkaPropertiesTest, EnvironmentPropertiesAreReadInNameOrder) {
  std::map<std::string, std::string> vars = {{"OUTBOX_KAFKA_LINGER_MS", "3"},
                                             {"OUTBOX_KAFKA_ACKS", "all"},
                                             {"OUTBOX_KAFKA_CONFIG", "/f"},
                                             {"HOME", "/root"}};
  std::vector<std::string> names = {"HOME", "OUTBOX_KAFKA_LINGER_MS", "OUTBOX_KAFKA_CONFIG",
                                    "OUTBOX_KAFKA_ACKS"};
  KafkaProperties p = KafkaPropertiesFromEnvironment(
      names, [&](const std::string& n) -> std::optional<std::string> {
        auto it = vars.find(n);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
      });
  EXPECT_THAT(p, ElementsAre(KV{"acks", "all"}, KV{"linger.ms", "3"}));
}

TEST(KafkaPropertiesTest, FileLinesCommentsAndErrors) {
  absl::StatusOr<KafkaProperties> p = ParseKafkaPropertiesFile(
      "  # comment\n! also a comment\n\nbootstrap.servers = k:9092 \r\n"
      "sasl.jaas.config=a=b c=\"d\"\nempty.value=\n",
      "f");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(*p, ElementsAre(KV{"bootstrap.servers", "k:9092"},
                              KV{"sasl.jaas.config", "a=b c=\"d\""}, KV{"empty.value", ""}));
  absl::StatusOr<KafkaProperties> bad = ParseKafkaPropertiesFile("a=1\n=2\n", "/etc/k");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("/etc/k:2:"));
}

TEST(KafkaPropertiesTest, LaterSourcesWinAndEachKeyAppearsOnce) {
  KafkaProperties merged = MergeKafkaProperties(
      {{{"a", "file"}, {"b", "file"}}, {{"b", "env"}, {"c", "env"}}, {{"a", "flag"}}});
  EXPECT_THAT(merged, ElementsAre(KV{"a", "flag"}, KV{"b", "env"}, KV{"c", "env"}));
}

TEST(KafkaPropertiesTest, GatherReadsTheFileThroughTheEnvironment) {
  Environment env;
  env.lookup = [](const std::string& n) -> std::optional<std::string> {
    if (n == "OUTBOX_KAFKA_SASL_PASSWORD") return "from-env";
    return std::nullopt;
  };
  env.names = {"OUTBOX_KAFKA_SASL_PASSWORD"};
  env.read_file = [](const std::string& path) -> absl::StatusOr<std::string> {
    if (path == "/k") return std::string("sasl.password=from-file\nsasl.username=u\n");
    return absl::NotFoundError("No such file or directory");
  };
  absl::StatusOr<KafkaProperties> p = GatherKafkaProperties("/k", env, {{"acks", "all"}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(*p, ElementsAre(KV{"sasl.password", "from-env"}, KV{"sasl.username", "u"},
                              KV{"acks", "all"}));
  absl::StatusOr<KafkaProperties> missing = GatherKafkaProperties("/nope", env, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("/nope: No such file"));
  EXPECT_TRUE(GatherKafkaProperties("", env, {}).ok());  // No file: none read.
}

TEST(KafkaPropertiesTest, BooleansReadAsLibrdkafkaReadsThem) {
  for (const char* yes : {"true", "TRUE", "t", "T", "1"})
    EXPECT_EQ(KafkaBoolean(yes), true);
  for (const char* no : {"false", "False", "f", "0"}) EXPECT_EQ(KafkaBoolean(no), false);
  for (const char* neither : {"yes", "no", "", "2"}) {
    EXPECT_EQ(KafkaBoolean(neither), std::nullopt) << neither;
  }
}

TEST(KafkaPropertiesTest, SecretsAreRecognisedAndHidden) {
  for (const char* secret : {"sasl.password", "ssl.key.password", "ssl.keystore.password",
                             "sasl.oauthbearer.client.secret", "ssl.key.pem",
                             "sasl.jaas.config", "sasl.oauthbearer.config"}) {
    EXPECT_TRUE(IsSecretProperty(secret)) << secret;
    EXPECT_EQ(ShownPropertyValue(secret, "x", /*known=*/true), "********");
  }
  for (const char* plain : {"sasl.username", "ssl.key.location", "linger.ms",
                            "bootstrap.servers", "security.protocol"}) {
    EXPECT_FALSE(IsSecretProperty(plain)) << plain;
    EXPECT_EQ(ShownPropertyValue(plain, "x", /*known=*/true), "x");
    EXPECT_EQ(ShownPropertyValue(plain, "x", /*known=*/false), "********")
        << "a name the client does not know may be a misspelled secret's";
  }
}

TEST(KafkaPropertiesTest, ARefusalNamesTheKeyAndTheReasonNeverTheValue) {
  EXPECT_EQ(RefusedPropertyMessage("sasl.pasword", "hunter3",
                                   "No such configuration property: \"sasl.pasword\""),
            "invalid librdkafka property sasl.pasword: No such configuration property: "
            "\"sasl.pasword\"");
  // librdkafka quotes a refused value in its reason.
  EXPECT_EQ(RefusedPropertyMessage("security.protocol", "hunter4",
                                   "Invalid value \"hunter4\" for configuration property "
                                   "\"security.protocol\""),
            "invalid librdkafka property security.protocol: Invalid value \"<value>\" for "
            "configuration property \"security.protocol\"");
  std::string jaas = RefusedPropertyMessage(
      "sasl.jaas.config", "x required username=\"u\" password=\"hunter2\";",
      "No such configuration property: \"sasl.jaas.config\"");
  EXPECT_EQ(jaas.find("hunter2"), std::string::npos) << jaas;
  EXPECT_NE(jaas.find("librdkafka takes sasl.mechanism, sasl.username and sasl.password"),
            std::string::npos)
      << jaas;
}

}  // namespace
}  // namespace common
