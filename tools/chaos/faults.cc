#include "tools/chaos/faults.h"

#include <signal.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/chaos/network.h"
#include "tools/harness/fatal.h"

namespace chaos {

using harness::Die;

std::vector<std::string> FaultKinds(const Options& o, const ChaosBroker& broker) {
  std::vector<std::string> kinds = {"kill-9", "sigterm", "terminate-walsender",
                                    "second-publisher", "blackhole"};
  for (const std::string& k : broker.fault_kinds()) kinds.push_back(k);
  if (o.pg_restarts) kinds.push_back("pg-restart");
  // First and again halfway through the first round: a run fails over twice at
  // least, the second time to the rebuilt old primary.
  // The publishing standby's own faults early, so that a short run has them.
  if (o.publishing_standby) {
    kinds.insert(kinds.begin(), {"standby-restart", "standby-loss"});
  }
  if (o.failover || o.publishing_standby) {
    kinds.insert(kinds.begin(), "failover");
    kinds.insert(kinds.begin() + static_cast<long>(kinds.size() / 2), "failover");
  }
  return kinds;
}

FaultInjector::Done FaultInjector::Inject(const std::string& kind, int shard,
                                          std::mt19937_64& rng, const Wait& wait) {
  Done done;
  done.kind = kind;
  if (kind == "kill-9") {
    publishers_.KillPrimary(SIGKILL, shard);
    done.killed = true;
  } else if (kind == "sigterm") {
    publishers_.KillPrimary(SIGTERM, shard);
  } else if (kind == "pg-restart") {
    if (!servers_.primary().Restart("fast").ok()) Die("PostgreSQL did not restart");
  } else if (kind == "failover") {
    absl::Time start = absl::Now();
    absl::Status s = servers_.FailOver();
    if (!s.ok()) Die(absl::StrCat("failover: ", s.ToString()));
    done.detail =
        absl::StrCat("promoted, and the old primary rebuilt as the standby, in ",
                     absl::FormatDuration(absl::Now() - start));
  } else if (kind == "standby-restart") {
    if (!servers_.RestartPublishingStandby().ok()) Die("the standby did not restart");
  } else if (kind == "standby-loss") {
    // Its slot goes with it: a gap that the publishers close from the table.
    absl::Time start = absl::Now();
    absl::Status s = servers_.LosePublishingStandby();
    if (!s.ok()) Die(absl::StrCat("standby loss: ", s.ToString()));
    done.detail = absl::StrCat("a new standby cloned and cascaded in ",
                               absl::FormatDuration(absl::Now() - start));
  } else if (kind == "blackhole") {
    // Every open publisher connection goes silent, nothing closes: the publisher
    // must notice (--replication-timeout) and reconnect around it.
    InjectPathFault("blackhole", servers_.proxies(), rng, wait);
  } else if (absl::StartsWith(kind, "pg-")) {
    // An outage of PostgreSQL: the publishers cannot stream; /healthz says so.
    done.detail =
        InjectPathFault(kind.substr(3), servers_.proxies(), rng, wait, absl::Seconds(12));
  } else if (absl::StartsWith(kind, "kafka-")) {
    if (broker_.paths().empty())
      Die(absl::StrCat(kind, " needs a broker with proxied paths"));
    // Longer than the 30 s without an acknowledgement that turns /healthz 503.
    done.detail =
        InjectPathFault(kind.substr(6), broker_.paths(), rng, wait, absl::Seconds(35));
  } else if (kind == "consumer-kill-9" || kind == "consumer-sigterm") {
    if (consumers_ == nullptr) Die(absl::StrCat(kind, " needs the consumer group"));
    done.detail = consumers_->KillOne(kind == "consumer-kill-9" ? SIGKILL : SIGTERM, rng);
  } else if (kind == "terminate-walsender") {
    (void)servers_.slot_server().Exec(
        "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE "
        "slot_type = 'logical'");
  } else if (kind == "second-publisher") {
    publishers_.StartStandby(shard);
    wait(absl::Seconds(2));
    publishers_.FailOver(shard);
    done.killed = true;
  } else {
    ChaosBroker::Injection b = broker_.Inject(kind, rng, wait);
    done.kind = b.kind;
    done.restart_consumer = b.restart_consumer;
  }
  return done;
}

}  // namespace chaos
