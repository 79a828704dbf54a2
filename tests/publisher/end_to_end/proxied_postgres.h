// A publisher that reaches PostgreSQL through a fault-proxy, for the tests of
// what a misbehaving network path does to it: silent (silent_connection_test.cc),
// slow, narrow or broken (network_fault_test.cc).
#ifndef TESTS_PUBLISHER_END_TO_END_PROXIED_POSTGRES_H_
#define TESTS_PUBLISHER_END_TO_END_PROXIED_POSTGRES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {

using harness::FaultProxy;

class ProxiedPostgresTest : public PublisherTest {
 protected:
  void SetUp() override {
    PublisherTest::SetUp();
    // The old walsender lets go of the slot 5 s after our last status update.
    ASSERT_TRUE(sql_->Exec("ALTER SYSTEM SET wal_sender_timeout = '5s'").ok());
    ASSERT_TRUE(sql_->Exec("SELECT pg_reload_conf()").ok());
    proxy_ = ValueOrDie(FaultProxy::Start(absl::StrCat("127.0.0.1:", cluster_->port())));
  }

  // The publisher's flags with --pg through the proxy.
  std::vector<std::string> ThroughProxy(std::vector<std::string> extra) {
    std::vector<std::string> argv = PublisherArgv(extra);
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--pg") {
        argv[i + 1] = absl::StrCat("host=127.0.0.1 port=", proxy_->port(),
                                   " user=postgres dbname=postgres");
      }
    }
    return argv;
  }

  // Starts the publisher through the proxy with `extra` flags, and a consumer; 20
  // rows are then published and confirmed. Null (with a failure) otherwise.
  std::unique_ptr<Consumer> StartThroughProxy(std::vector<std::string> extra) {
    publisher_ = ValueOrDie(Process::Start(ThroughProxy(std::move(extra)), log_path_));
    if (!WaitFor([&] { return absl::StrContains(publisher_->Log(), "\"streaming\""); },
                 absl::Seconds(60))) {
      ADD_FAILURE() << "the publisher did not stream\n" << publisher_->Log();
      return nullptr;
    }
    auto consumer = StartConsumer();
    Write(20);
    if (!WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60))) {
      ADD_FAILURE() << "the first rows were not confirmed\n" << publisher_->Log();
      return nullptr;
    }
    return consumer;
  }

  // `rows` rows in one transaction, each payload padded with `pad` bytes.
  void Write(int rows, int pad = 0) {
    std::string payload =
        pad == 0 ? "'{}'"
                 : absl::StrCat("jsonb_build_object('pad', repeat('x', ", pad, "))");
    ASSERT_TRUE(
        sql_->Exec(absl::StrCat("INSERT INTO outbox (aggregate_type, aggregate_id, "
                                "event_type, payload) SELECT 'order', 'o-' || i, "
                                "'E', ",
                                payload, " FROM generate_series(1, ", rows, ") i"))
            .ok());
  }

  std::unique_ptr<FaultProxy> proxy_;
};

}  // namespace publisher

#endif  // TESTS_PUBLISHER_END_TO_END_PROXIED_POSTGRES_H_
