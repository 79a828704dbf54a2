// outbox-chaos: a Jepsen-style fault-injection run of outbox-publisher.
//
//   outbox-chaos [--rows N] [--faults F] [--seed S] [--max-tx-rows R] [--aggregates A]
//                [--schedule full|no-pg-restart|failover|standby|soak]
//                [--in-flight-requests K]
//                [--delivery at-least-once|exactly-once] [--writer table|message|mixed]
//                [--broker mock|kafka] [--pg-version N] [--shards N] [--rate N]
//                [--consumer-properties K=V,...]
//
// A writer commits outbox rows continuously (transactions of 1..R rows across A
// aggregates, each row numbered within its aggregate in commit order) while a
// fault injector, at random moments, kills and restarts the publisher (kill -9 and
// SIGTERM), injects broker faults (brokers.h: on the 3-broker mock cluster, all
// down and up, Produce errors, leader moves, delays; on a real 3-node Apache Kafka
// cluster with --broker kafka, a broker killed and restarted, a broker frozen, a
// real leader move), restarts PostgreSQL, terminates the walsender, freezes every
// publisher connection to PostgreSQL without closing it (blackhole: the publishers
// reach PostgreSQL through fault-proxy, with --replication-timeout 5s and the
// server's wal_sender_timeout 5s), and starts a second publisher on the same slot
// (which must take over when the first dies).
//
// Schedules: `full` uses every fault kind. `no-pg-restart` never restarts
// PostgreSQL (a restart sets a PostgreSQL 15 slot back to its last saved position,
// which re-sends rows and hides a confirmation that ran ahead of the broker) and
// follows every other fault with a kill -9, so any early confirmation becomes a loss.
// `failover` (PostgreSQL 17+, --pg-version, 17 by default) is no-pg-restart plus
// primary failovers: the primary is killed (-9) and its standby, which keeps a
// synchronized copy of the failover slot, promoted; the old primary is rebuilt as
// the new standby, so the run fails over again and again (servers.h). The history
// is then the last primary's table: rows that committed on a killed primary but
// never reached its standby are gone from the database itself. `standby` (16+, 17
// by default) publishes from a standby (--pg-primary, --on-slot-gap=republish): the
// publishers decode on a standby cascading from a spare one, and besides the
// no-pg-restart faults the run restarts that standby, fails the primary over to the
// spare (which the publishing standby follows across the timeline switch; the old
// primary is rebuilt as the new spare), and loses the publishing standby with its
// slot (a gap, closed from the table, on a new standby cloned in its place).
// `soak` (--broker kafka, PostgreSQL 17+, two shards) runs every fault kind at once
// from concurrent lanes (soak.h), network faults on both paths included, writes
// until --rows committed and --faults injected, and watches the publishers while
// it runs (watch.h): recovery time per fault kind, /healthz around each outage,
// /metrics against the verifier, and the RSS, threads and descriptors of the
// publisher that lives through the run (soak_audit.h).
//
// A verifier consumes concurrently, and a sampler records the slot's
// confirmed_flush_lsn against the partitions' high watermarks (audit.h). At the end
// it checks, against the table (the history of what was committed):
//   - every committed id was delivered (zero loss);
//   - no sampled confirmation passed a row the broker did not hold yet;
//   - per aggregate, first deliveries follow commit order, in one partition;
//   - per partition, first deliveries follow commit order (not with --shards:
//     shards publish independently, so order holds per key only);
// and reports duplicates, faults survived, deliveries the publisher found unproven
// (librdkafka's implicit acks) and the longest commit-to-delivery time. Exit status 0
// only when every check holds and every fault was injected.
//
// --writer message emits every event as a transactional logical decoding message
// (an outbox without a table, --message-prefix), noting it in chaos_history, which
// is then the history; --writer mixed interleaves rows and messages in each
// transaction.
//
// --shards N runs N publishers sharing the table by key (--shard I/N, PostgreSQL
// 15+), each on its own slot; every publisher fault (kill -9, SIGTERM, a second
// publisher, the kill -9 after a fault) hits one shard's, chosen at random, and the
// run ends once every shard's slot has caught up. The confirmation samples are of
// the slowest slot.
//
// With --delivery exactly-once the publisher runs Kafka transactions, and only the
// records of committed Kafka transactions count; then duplicates must be zero too,
// and no PostgreSQL transaction may be split (some rows delivered, others not). The
// verifier is a plain read_committed consumer. mock-kafka writes no transaction
// markers, so its consumers also see records of aborted transactions: there
// exactly-once is judged for loss, order and splits, and for duplicates only on a
// real cluster (--broker kafka).
#include <dirent.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cdc/key_shard.h"
#include "cdc/lsn.h"
#include "tools/chaos/audit.h"
#include "tools/chaos/brokers.h"
#include "tools/chaos/consumers.h"
#include "tools/chaos/faults.h"
#include "tools/chaos/options.h"
#include "tools/chaos/publishers.h"
#include "tools/chaos/sampler.h"
#include "tools/chaos/servers.h"
#include "tools/chaos/soak.h"
#include "tools/chaos/trouble.h"
#include "tools/chaos/watch.h"
#include "tools/chaos/verifier.h"
#include "tools/chaos/writer.h"
#include "tools/harness/fatal.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"
#include "tools/harness/tool_flags.h"

ABSL_FLAG(int64_t, rows, 200000, "rows the writers commit");
ABSL_FLAG(int64_t, faults, 30, "faults injected, one at a time");
ABSL_FLAG(int64_t, seed, 1, "the schedule's random seed");
ABSL_FLAG(int64_t, max_tx_rows, 500, "the most rows in one writer transaction");
ABSL_FLAG(int64_t, aggregates, 200, "distinct keys");
ABSL_FLAG(std::string, schedule, "full",
          "full (PostgreSQL restarts too), no-pg-restart (a kill -9 of the publisher "
          "after each fault instead), failover (primary failovers, PostgreSQL 17+), "
          "standby (publishing from a standby, PostgreSQL 16+), or soak (every fault "
          "at once, --broker kafka)");
ABSL_FLAG(std::string, delivery, "at-least-once", "at-least-once or exactly-once");
ABSL_FLAG(std::string, writer, "table",
          "table (outbox rows), message (transactional messages) or mixed");
ABSL_FLAG(std::string, broker, "mock",
          "mock (mock-kafka) or kafka (3-node Apache Kafka)");
ABSL_FLAG(std::optional<int64_t>, in_flight_requests, std::nullopt,
          "the publisher's max.in.flight (default: the publisher's own)");
ABSL_FLAG(int64_t, rate, 3000,
          "--schedule soak: the rows a second the writer commits, at most");
ABSL_FLAG(std::string, consumer_properties, "",
          "--schedule soak: Kafka properties for the consumer kit's instances, "
          "KEY=VALUE[,KEY=VALUE...] (e.g. librdkafka's own defaults, to compare with "
          "the kit's)");
ABSL_FLAG(int64_t, shards, 1,
          "publishers sharing the outbox table by key (--shard I/N, PostgreSQL 15+); "
          "each publisher fault hits one shard's, at random");
ABSL_FLAG(std::optional<int64_t>, pg_version, std::nullopt,
          "PostgreSQL major version (default: the harness's; 17 for failover and "
          "standby)");

namespace chaos {
namespace {

using harness::Die;
using harness::Must;
using harness::PgCluster;
using harness::PgSession;
using harness::Process;
using harness::WaitFor;

constexpr char kTopic[] = "outbox.event.chaos";
constexpr char kCheckpointTopic[] = "outbox.checkpoints";
constexpr int kPartitions = 32;

void Say(const std::string& line) { std::cout << "chaos: " << line << std::endl; }

Options ParseArgs(int argc, char** argv) {
  harness::ToolArgs args = harness::ParseToolFlags(
      argc, argv,
      "outbox-chaos [--rows N] [--faults N] [--seed N] [--max-tx-rows N] "
      "[--aggregates N] [--schedule full|no-pg-restart|failover|standby|soak] "
      "[--delivery at-least-once|exactly-once] [--writer table|message|mixed] "
      "[--broker mock|kafka] [--in-flight-requests N] [--pg-version N] [--shards N] "
      "[--rate N] [--consumer-properties K=V,...]");
  if (!args.positional.empty() || !args.passed_on.empty())
    Die("outbox-chaos takes flags only (--help)");
  Options o;
  auto at_least_one = [](absl::string_view flag, int64_t v) {
    if (v < 1) Die(absl::StrCat("--", flag, " takes a number of at least 1"));
    return v;
  };
  o.rows = at_least_one("rows", absl::GetFlag(FLAGS_rows));
  o.faults = static_cast<int>(at_least_one("faults", absl::GetFlag(FLAGS_faults)));
  o.seed = static_cast<uint64_t>(at_least_one("seed", absl::GetFlag(FLAGS_seed)));
  o.max_tx_rows =
      static_cast<int>(at_least_one("max-tx-rows", absl::GetFlag(FLAGS_max_tx_rows)));
  o.aggregates =
      static_cast<int>(at_least_one("aggregates", absl::GetFlag(FLAGS_aggregates)));
  if (std::optional<int64_t> n = absl::GetFlag(FLAGS_in_flight_requests))
    o.in_flight_requests = static_cast<int>(at_least_one("in-flight-requests", *n));
  if (std::optional<int64_t> n = absl::GetFlag(FLAGS_pg_version))
    o.pg_version = static_cast<int>(at_least_one("pg-version", *n));

  std::string delivery = absl::GetFlag(FLAGS_delivery);
  if (delivery != "at-least-once" && delivery != "exactly-once")
    Die("--delivery takes at-least-once or exactly-once");
  o.exactly_once = delivery == "exactly-once";
  std::string writer = absl::GetFlag(FLAGS_writer);
  if (writer == "table") {
    o.writer = Options::WriterMode::kTable;
  } else if (writer == "message") {
    o.writer = Options::WriterMode::kMessage;
  } else if (writer == "mixed") {
    o.writer = Options::WriterMode::kMixed;
  } else {
    Die("--writer takes table, message or mixed");
  }
  o.broker = absl::GetFlag(FLAGS_broker);
  if (o.broker != "mock" && o.broker != "kafka") Die("--broker takes mock or kafka");
  std::string schedule = absl::GetFlag(FLAGS_schedule);
  if (schedule != "full" && schedule != "no-pg-restart" && schedule != "failover" &&
      schedule != "standby" && schedule != "soak")
    Die("--schedule takes full, no-pg-restart, failover, standby or soak");
  o.schedule = schedule;
  o.soak = schedule == "soak";
  o.pg_restarts = schedule == "full" || o.soak;
  o.failover = schedule == "failover" || o.soak;
  o.publishing_standby = schedule == "standby";
  if (o.soak && o.broker != "kafka")
    Die("--schedule soak needs --broker kafka (its network faults sit between the "
        "publishers and each broker)");
  if ((o.failover || o.publishing_standby) && o.pg_version == 0) o.pg_version = 17;
  if (o.failover && o.pg_version < 17)
    Die("--schedule failover needs PostgreSQL 17 or later (failover slots)");
  if (o.publishing_standby && o.pg_version < 16)
    Die("--schedule standby needs PostgreSQL 16 or later (decoding on a standby)");
  o.shards = static_cast<int>(at_least_one("shards", absl::GetFlag(FLAGS_shards)));
  if (o.shards > 8) Die("--shards takes 1 to 8");
  // The soak's publisher faults hit shard 1; shard 2's publisher lives through the
  // run, and its size over time is the leak check.
  if (o.soak && o.shards < 2) o.shards = 2;
  o.rate = at_least_one("rate", absl::GetFlag(FLAGS_rate));
  if (o.shards > 1 && o.writer != Options::WriterMode::kTable)
    Die("--shards needs --writer table (a row filter does not apply to messages)");
  if (o.shards > 1 && o.pg_version != 0 && o.pg_version < 15)
    Die("--shards needs PostgreSQL 15 or later (row filters)");
  return o;
}

// The commit LSNs, read from the WAL, of the committed rows that never arrived.
std::vector<Missing> CommitLsnsOf(PgCluster& pg, const std::string& wal_start,
                                  cdc::Lsn wal_end, const harness::Rows& committed,
                                  const std::vector<std::string>& lost) {
  if (lost.empty()) return {};
  std::set<std::string> wanted(lost.begin(), lost.end());
  std::map<std::string, std::string> xid_of;  // Row id -> inserting xid.
  for (const auto& row : committed) {
    if (wanted.count(*row[0])) xid_of[*row[0]] = *row[3];
  }
  auto commits =
      Must(pg.Exec(absl::StrCat(
               "SELECT xid::text, start_lsn::text FROM pg_get_wal_records_info('",
               wal_start, "', '", wal_end.ToString(),
               "') WHERE resource_manager = 'Transaction' AND record_type = "
               "'COMMIT'")),
           "read commits from the WAL");
  std::map<std::string, uint64_t> commit_of;  // Xid -> commit LSN.
  for (const auto& c : commits)
    commit_of[*c[0]] = Must(cdc::Lsn::Parse(*c[1]), "lsn").value();
  std::vector<Missing> missing;
  for (const auto& [id, xid] : xid_of) {
    auto it = commit_of.find(xid);
    if (it == commit_of.end()) Die(absl::StrCat("no commit record for xid ", xid));
    missing.push_back({id, it->second});
  }
  return missing;
}

// Each key's shard (0-based) by the publications' row filter (cdc/key_shard.h);
// every key in shard 0 without shards.
std::map<std::string, int> ShardOfKey(PgCluster& pg, const std::string& history_table,
                                      int shards) {
  std::map<std::string, int> shard_of;
  for (int i = 0; i < shards; ++i) {
    auto keys = Must(pg.Exec(absl::StrCat(
                         "SELECT DISTINCT aggregate_id FROM ", history_table, " WHERE ",
                         cdc::ShardRowFilter("aggregate_id", cdc::KeyShard{i + 1, shards}))),
                     "read the shards' keys");
    for (const auto& k : keys) shard_of[*k[0]] = i;
  }
  return shard_of;
}

// What the soak's report reads, gathered from the run.
SoakFacts SoakFactsOf(const Options& o, FaultLog& log, Writer& writer, Verifier& verifier,
                      const std::map<std::string, Committed>& history,
                      std::map<std::string, int>& shard_of_key, Watch& watch,
                      ConsumerGroup& consumers) {
  SoakFacts f;
  f.faults = log.all();
  f.committed = writer.CommitTimes();
  f.delivered.assign(f.committed.size(), absl::InfiniteFuture());
  f.shard.assign(f.committed.size(), 0);
  f.exactly_once = o.exactly_once;
  auto number = [](const std::string& id) {
    int64_t n = -1;
    return absl::SimpleAtoi(absl::string_view(id).substr(1), &n) ? n : -1;
  };
  for (const auto& [id, at] : verifier.first_seen()) {
    int64_t n = number(id);
    if (n >= 0 && static_cast<size_t>(n) < f.delivered.size()) f.delivered[n] = at;
  }
  for (const auto& [id, c] : history) {
    int64_t n = number(id);
    int shard = shard_of_key[c.aggregate];
    if (n >= 0 && static_cast<size_t>(n) < f.shard.size()) f.shard[n] = shard;
    if (shard == f.watched_shard) ++f.watched_distinct;
  }
  for (const Delivered& d : verifier.all()) {
    auto h = history.find(d.id);
    if (h != history.end() && shard_of_key[h->second.aggregate] == f.watched_shard)
      ++f.watched_records;
  }
  f.watched_rewinds_logged = CountInFile(watch.watched_log(), {kRewindLine})[0];
  f.watched_failed_tx_records = FailedTransactionRecords(watch.watched_log());
  std::map<std::string, int64_t> per_order;  // The example's order is the aggregate.
  for (const auto& [id, c] : history) ++per_order[c.aggregate];
  f.effects = consumers.Read(per_order);
  f.expected_events = static_cast<int64_t>(history.size());
  f.longest_stall = consumers.longest_stall();
  f.stall_start = consumers.longest_stall_start();
  f.consumer_restarts = consumers.restarts();
  return f;
}

int Main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  harness::KillChildrenOnStopSignal();
  Say(absl::StrCat("rows=", o.rows, " faults=", o.faults, " seed=", o.seed,
                   " max_tx_rows=", o.max_tx_rows, " aggregates=", o.aggregates,
                   " schedule=", o.schedule, " pg_version=", o.pg_version,
                   " delivery=", o.exactly_once ? "exactly-once" : "at-least-once",
                   " writer=", WriterName(o.writer), " broker=", o.broker,
                   " shards=", o.shards, " in_flight_requests=",
                   o.in_flight_requests > 0 ? absl::StrCat(o.in_flight_requests)
                                            : std::string("default")));
  // The WAL stays (wal_keep_size) so that the commit LSN of a row that never
  // arrived can be read from it at the end (pg_walinspect).
  // wal_sender_timeout 5 s: a walsender whose publisher went silent (blackhole)
  // lets go of the slot soon, as the publishers' --replication-timeout 5s does.
  // With failovers, commits wait for the physical standby (by the name
  // pg_cluster.sh gives every standby; `*` also matched the publishers'
  // walsenders, so that commits waited for Kafka): a commit the writer saw is then
  // in the promoted standby's table, the history.
  std::vector<std::string> settings = {"wal_keep_size=4GB", "wal_sender_timeout=5s"};
  if (o.failover) settings.push_back("synchronous_standby_names='physical_standby'");
  Servers servers(o.pg_version,
                  o.failover             ? Servers::Topology::kFailoverSlots
                  : o.publishing_standby ? Servers::Topology::kPublishingStandby
                                         : Servers::Topology::kPrimary,
                  settings);
  auto sql = Must(harness::ConnectTo(servers.direct_conninfo()), "connect");
  if (!sql->Exec("CREATE EXTENSION pg_walinspect").ok()) Die("pg_walinspect");
  std::string wal_start =
      Must(sql->Value("SELECT pg_current_wal_insert_lsn()::text"), "lsn");
  if (!sql->Exec(
              "CREATE TABLE outbox (id text PRIMARY KEY, aggregate_type text NOT NULL, "
              "aggregate_id text NOT NULL, seq bigint NOT NULL, event_type text NOT "
              "NULL, "
              "payload jsonb NOT NULL, headers jsonb, created_at timestamptz NOT NULL "
              "DEFAULT now())")
           .ok()) {
    Die("create table");
  }
  // With messages, the history of what committed (not in the publication).
  if (!sql->Exec("CREATE TABLE chaos_history (id text PRIMARY KEY, aggregate_id text NOT "
                 "NULL, seq bigint NOT NULL)")
           .ok()) {
    Die("create history table");
  }
  const char* history_table =
      o.writer == Options::WriterMode::kTable ? "outbox" : "chaos_history";
  std::unique_ptr<ChaosBroker> broker =
      StartBroker(o.broker, kTopic, kPartitions, o.exactly_once ? kCheckpointTopic : "",
                  /*proxied_paths=*/o.soak);

  // Publisher logs outlive the cluster: they are the evidence when a check fails.
  char log_dir[] = "/tmp/outbox-chaos-logs.XXXXXX";
  if (mkdtemp(log_dir) == nullptr) Die("mkdtemp");
  Say(absl::StrCat("publisher logs in ", log_dir));
  Say(absl::StrCat("librdkafka ", rd_kafka_version_str(),
                   " (the publisher's, as built here)"));
  std::vector<std::string> publisher_args;
  if (o.in_flight_requests > 0) {
    publisher_args.insert(publisher_args.end(),
                          {"-X", absl::StrCat("max.in.flight.requests.per.connection=",
                                              o.in_flight_requests)});
  }
  if (o.exactly_once) {
    publisher_args.insert(publisher_args.end(), {"--delivery", "exactly-once",
                                                 "--checkpoint-topic", kCheckpointTopic});
  }
  if (o.writer != Options::WriterMode::kTable) {
    publisher_args.insert(publisher_args.end(), {"--message-prefix", "outbox"});
  }
  // The publishers reach PostgreSQL through proxies that the blackhole fault
  // freezes: their connections go silent without closing.
  publisher_args.insert(publisher_args.end(), {"--replication-timeout", "5s"});
  // From a standby: the primaries for the state table, and a lost standby's gap
  // closed from the table.
  if (o.publishing_standby) {
    publisher_args.insert(
        publisher_args.end(),
        {"--pg-primary", servers.direct_conninfo(), "--on-slot-gap", "republish"});
  }
  Publishers publishers(servers.publisher_conninfo(), broker->publisher_bootstrap(),
                        log_dir, publisher_args, o.shards);
  publishers.EnsurePrimary();
  // Every shard's slot streams before the writer starts: a shard's slot only sees
  // what commits after its consistent point, which its creation sets last
  // (confirmed_flush_lsn stays NULL while the slot waits for running transactions).
  if (!WaitFor(
          [&] {
            return Must(servers.slot_server().Exec(
                            "SELECT 1 FROM pg_replication_slots WHERE active AND "
                            "slot_type = 'logical' AND confirmed_flush_lsn IS NOT NULL"),
                        "slot")
                       .size() >= static_cast<size_t>(o.shards);
          },
          absl::Seconds(60))) {
    Die("the publishers never started streaming");
  }
  Verifier verifier(broker->bootstrap(), kTopic);
  ConfirmationSampler sampler(servers.slot_conninfo(), broker->bootstrap(), kTopic,
                              kPartitions, absl::Milliseconds(100));

  // Pace the writer so that writing spans the fault schedule (about 2.5 s a fault,
  // more with the kill -9 that follows each fault without PostgreSQL restarts).
  int64_t expected_tx = std::max<int64_t>(1, o.rows * 2 / (o.max_tx_rows + 1));
  absl::Duration per_fault = absl::Seconds(o.failover || o.publishing_standby ? 8
                                           : o.pg_restarts                    ? 2.5
                                                                              : 3.5);
  absl::Duration pace = per_fault * o.faults / expected_tx;
  // The soak writes at --rate, and on until its faults are done too.
  Options writer_options = o;
  if (o.soak) {
    pace = absl::Seconds((o.max_tx_rows + 1) / 2.0 / o.rate);
    writer_options.rows = std::numeric_limits<int64_t>::max();
  }
  Writer writer(servers.direct_conninfo(), writer_options,
                std::min(pace, absl::Milliseconds(500)));
  std::atomic<bool> stop_writer{false};
  std::thread writer_thread([&] { writer.Run(stop_writer); });

  std::mt19937_64 rng(o.seed);
  auto random_ms = [&](int lo, int hi) {
    return absl::Milliseconds(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  // Waits while the verifier keeps reading.
  auto wait = [&](absl::Duration d) {
    absl::Time until = absl::Now() + d;
    while (absl::Now() < until) {
      verifier.Tick(verifier.distinct() < static_cast<size_t>(writer.written()));
      absl::SleepFor(absl::Milliseconds(50));
    }
  };
  const std::vector<std::string> kinds = FaultKinds(o, *broker);
  FaultInjector injector(servers, publishers, *broker);
  std::map<std::string, int> injected;
  // What each fault kind cost the Kafka client: the trouble logged from one fault
  // to the next is put down to the earlier one.
  std::map<std::string, ProducerTrouble> trouble_by_kind;
  ProducerTrouble trouble_before;
  std::string previous_kind = "before the first fault";
  auto settle_trouble = [&] {
    ProducerTrouble now = ProducerTrouble::Read(log_dir);
    trouble_by_kind[previous_kind] += now - trouble_before;
    trouble_before = now;
  };
  FaultLog fault_log;
  std::unique_ptr<Watch> watch;
  std::unique_ptr<ConsumerGroup> consumers;
  std::unique_ptr<PgCluster> consumer_db;  // The consumers' own server.
  std::atomic<int64_t> delivered{0};  // The verifier's distinct count, for other threads.
  if (o.soak) {
    watch =
        std::make_unique<Watch>(publishers, /*watched_shard=*/1, servers.slot_conninfo(),
                                [&] { return broker->server_pids(); });
    watch->Start();
    // The consumers' database is a service's own, on a server of its own (the
    // outbox's primary commits wait for a synchronous standby).
    consumer_db = Must(PgCluster::Start({}, o.pg_version), "start the consumers' server");
    std::vector<std::string> consumer_args;
    for (absl::string_view kv :
         absl::StrSplit(absl::GetFlag(FLAGS_consumer_properties), ',', absl::SkipEmpty()))
      consumer_args.insert(consumer_args.end(), {"-X", std::string(kv)});
    consumers = std::make_unique<ConsumerGroup>(
        consumer_db->conninfo(), broker->bootstrap(), kTopic, log_dir, consumer_args);
    consumers->Start();
    consumers->Watch([&] { return delivered.load(); });
    injector.set_consumers(consumers.get());
    RunSoak(o.faults, o.rows, o.seed, publishers, injector, fault_log, writer,
            stop_writer, [&] {
              verifier.Tick(verifier.distinct() < static_cast<size_t>(writer.written()));
              delivered = static_cast<int64_t>(verifier.distinct());
            });
    for (const FaultRecord& f : fault_log.all()) ++injected[f.kind];
    previous_kind = "the soak (every lane at once)";
  } else {
    for (int f = 0; f < o.faults; ++f) {
      wait(random_ms(800, 2500));
      publishers.EnsurePrimary();
      // The shard whose publisher a publisher fault hits.
      int shard = std::uniform_int_distribution<int>(0, o.shards - 1)(rng);
      std::string kind =
          f < static_cast<int>(kinds.size())
              ? kinds[f]
              : kinds[std::uniform_int_distribution<size_t>(0, kinds.size() - 1)(rng)];
      Say(absl::StrCat("fault ", f + 1, "/", o.faults, ": ", kind,
                       o.shards > 1 ? absl::StrCat(" (shard ", shard + 1, ")") : "",
                       " (written ", writer.written(), ", delivered ",
                       verifier.distinct(), ")"));
      settle_trouble();
      previous_kind = kind;
      FaultInjector::Done done = injector.Inject(kind, shard, rng, wait);
      if (!done.detail.empty()) Say("  " + done.detail);
      if (done.restart_consumer) verifier.Restart();
      kind = done.kind;
      bool killed = done.killed;
      ++injected[kind];
      previous_kind = kind;  // The broker's injection may name itself more closely.
      if (!o.pg_restarts && !killed) {
        // Whatever the fault made the publisher confirm, a kill -9 now makes final.
        wait(random_ms(300, 1500));
        Say("  then kill-9");
        publishers.KillPrimary(SIGKILL, shard);
        ++injected["kill-9 after a fault"];
      }
      publishers.EnsurePrimary();
    }
  }

  Say("faults done; waiting for the writer and for every row to arrive");
  writer_thread.join();
  publishers.EnsurePrimary();
  PgCluster* pg = &servers.primary();  // The last primary: its table is the history.
  cdc::Lsn end = Must(
      cdc::Lsn::Parse(Must(pg->Value("SELECT pg_current_wal_insert_lsn()::text"), "lsn")),
      "lsn");
  bool caught_up = WaitFor(
      [&] {
        publishers.EnsurePrimary();
        // Every shard's slot (the slowest one).
        auto v = servers.slot_server().Value(
            "SELECT min(confirmed_flush_lsn)::text FROM pg_replication_slots WHERE "
            "slot_type = 'logical'");
        return v.ok() && *cdc::Lsn::Parse(*v) >= end;
      },
      absl::Minutes(5));
  auto committed =
      Must(pg->Exec(absl::StrCat("SELECT id, aggregate_id, seq, xmin::text FROM ",
                                 history_table)),
           "read history");
  WaitFor(
      [&] {
        verifier.Tick(true);
        return verifier.distinct() >= committed.size();
      },
      absl::Minutes(2));
  verifier.Collect();
  sampler.Stop();
  if (watch) watch->Stop();  // Its last reading of /metrics, before they stop.
  if (consumers) {
    delivered = static_cast<int64_t>(verifier.distinct());
    // As long as they make progress (a minute at most without).
    int64_t applied = -1;
    absl::Time progress = absl::Now();
    while (applied < static_cast<int64_t>(committed.size()) &&
           absl::Now() - progress < absl::Minutes(1)) {
      int64_t now = consumers->Applied();
      if (now > applied) progress = absl::Now();
      applied = std::max(applied, now);
      absl::SleepFor(absl::Seconds(1));
    }
    if (applied < static_cast<int64_t>(committed.size()))
      Say("the consumer group stopped applying events before it had them all");
    consumers->StopAll();
  }
  publishers.StopAll();
  settle_trouble();  // The last fault's, up to the end.

  // A plain read_committed consumer: on a real broker it receives the records of
  // committed Kafka transactions only; mock-kafka writes no markers and shows
  // aborted ones too, so exactly-once's duplicates are judged on a real broker.
  std::vector<Delivered> received = verifier.all();
  std::set<std::string> received_ids;
  for (const Delivered& d : received) received_ids.insert(d.id);
  uint64_t duplicates = received.size() - received_ids.size();

  std::map<std::string, Committed> history;
  std::vector<std::string> lost;
  // Per PostgreSQL transaction (xid): rows delivered, rows lost. Split: both.
  std::map<std::string, std::pair<int64_t, int64_t>> by_xid;
  for (const auto& row : committed) {
    history[*row[0]] = {*row[1], std::stoll(*row[2])};
    bool got = received_ids.count(*row[0]) > 0;
    if (!got) lost.push_back(*row[0]);
    ++(got ? by_xid[*row[3]].first : by_xid[*row[3]].second);
  }
  int64_t split = 0;
  for (const auto& [xid, n] : by_xid) split += n.first > 0 && n.second > 0;
  // After a failover the WAL from the run's start spans timelines: the commit LSNs
  // of lost rows are not read then (the lost rows are named all the same).
  std::vector<Missing> missing = servers.failovers() > 0
                                     ? std::vector<Missing>{}
                                     : CommitLsnsOf(*pg, wal_start, end, committed, lost);
  std::map<std::string, Delivered> first = FirstDeliveries(received);
  std::vector<std::string> key_examples, partition_examples;
  int64_t key_violations = KeyOrderViolations(first, history, &key_examples);
  // Shards publish independently into the same partitions: order holds per key
  // (each key lives in one shard), and per partition within each shard.
  std::map<std::string, int> shard_of_key = ShardOfKey(*pg, history_table, o.shards);
  std::vector<std::map<std::string, Delivered>> first_by_shard(o.shards);
  for (const auto& [id, d] : first) {
    auto h = history.find(id);
    int shard = h == history.end() ? 0 : shard_of_key[h->second.aggregate];
    first_by_shard[shard].emplace(id, d);
  }
  int64_t partition_violations = 0;
  for (const auto& f : first_by_shard)
    partition_violations += PartitionOrderViolations(f, &partition_examples);
  std::vector<ConfirmationSample> samples = sampler.samples();
  std::vector<EarlyConfirmation> early = FindEarlyConfirmations(first, missing, samples);

  absl::Duration worst;
  std::string worst_id;
  for (const auto& [id, seen] : verifier.first_seen()) {
    auto committed_at = writer.CommitTime(id);
    if (committed_at && seen - *committed_at > worst) {
      worst = seen - *committed_at;
      worst_id = id;
    }
  }
  int total_faults = 0;
  std::vector<std::string> by_kind;
  for (const auto& [k, n] : injected) {
    if (k != "kill-9 after a fault") total_faults += n;
    by_kind.push_back(absl::StrCat(k, "=", n));
  }

  Say(absl::StrCat("committed rows: ", committed.size(), " in ", writer.transactions(),
                   " transactions"));
  // A gap's re-publication is at least once by design; the WAL path's are judged.
  int64_t wal_duplicates = PositionedDuplicates(received);
  Say(absl::StrCat("delivered: ", received_ids.size(), " distinct ids, ", received.size(),
                   " deliveries, duplicates: ", duplicates, " (", wal_duplicates,
                   " of them through the WAL, the rest re-published from the table)"));
  if (o.exactly_once && !broker->writes_markers()) {
    Say("  (mock-kafka writes no transaction markers: these include records of aborted "
        "Kafka transactions, so duplicates are not judged here; run --broker kafka)");
  }
  Say(absl::StrCat("faults survived: ", total_faults, " (", absl::StrJoin(by_kind, ", "),
                   ")"));
  Say(absl::StrCat("lost: ", lost.size(),
                   lost.empty() ? "" : absl::StrCat(" e.g. ", lost[0])));
  Say(absl::StrCat("split transactions: ", split, " of ", by_xid.size()));
  Say(absl::StrCat(
      "duplicates per fault: ",
      absl::StrFormat("%.1f", total_faults > 0
                                  ? static_cast<double>(duplicates) / total_faults
                                  : 0.0)));
  Say(absl::StrCat("early_confirmations: ", early.size(), " of ", samples.size(),
                   " samples (", sampler.dropped(), " dropped while a side was down)"));
  if (!early.empty()) {
    const EarlyConfirmation& e = early.front();
    std::string where = e.never_delivered
                            ? std::string("never reached the broker")
                            : absl::StrCat("was not in partition ", e.row.partition,
                                           " yet: first stored at offset ", e.row.offset,
                                           ", high watermark ",
                                           e.sample.high_watermarks.at(e.row.partition));
    Say(absl::StrCat("  e.g. confirmed ", cdc::Lsn(e.sample.confirmed).ToString(),
                     " while ", e.row.id, " (commit LSN ",
                     cdc::Lsn(e.row.commit_lsn).ToString(), ") ", where));
  }
  // Only a gap re-publishes from the table (the standby schedule loses its slot).
  int64_t republished = RepublishedFirst(first);
  Say(absl::StrCat(
      "rows first delivered by a re-publication from the table: ", republished,
      republished > 0 ? " (no WAL position: judged for loss and per-key "
                        "order, not for early confirmation or partition "
                        "order)"
                      : ""));
  Say(absl::StrCat("per-key order violations: ", key_violations));
  for (const std::string& e : key_examples) Say("  " + e);
  Say(absl::StrCat("per-partition order violations: ", partition_violations,
                   o.shards > 1 ? " (within each shard)" : ""));
  for (const std::string& e : partition_examples) Say("  " + e);
  ProducerTrouble trouble;
  for (const auto& [k, t] : trouble_by_kind) trouble += t;
  Say(absl::StrCat(
      "unproven deliveries (implicit acks) seen by the publisher: ", trouble.unproven,
      ", producer rewinds: ", trouble.rewinds, ", fatal producer errors: ", trouble.fatal,
      ", Kafka transactions aborted: ", trouble.aborted));
  for (const auto& [k, t] : trouble_by_kind) {
    if (t.fatal + t.rewinds + t.aborted + t.unproven > 0)
      Say(absl::StrCat("  after ", k, ": ", t.ToString()));
  }
  Say(absl::StrCat("longest commit-to-delivery: ", absl::FormatDuration(worst),
                   worst_id.empty() ? "" : absl::StrCat(" (", worst_id, ")")));
  Say(absl::StrCat("slot caught up: ", caught_up ? "yes" : "no"));
  if (o.failover || o.publishing_standby)
    Say(absl::StrCat("primary failovers: ", servers.failovers()));
  Say(absl::StrCat("verifier consumer restarts: ", verifier.restarts(),
                   ", undecodable records: ", verifier.undecodable()));
  for (const std::string& e : publishers.unexpected_exits())
    Say("unexpected publisher exit: " + e);

  bool ok =
      lost.empty() && split == 0 && early.empty() && key_violations == 0 &&
      (!o.exactly_once || !broker->writes_markers() ||
       (o.publishing_standby ? wal_duplicates : static_cast<int64_t>(duplicates)) == 0) &&
      partition_violations == 0 && caught_up &&
      total_faults >= o.faults && verifier.undecodable() == 0 &&
      static_cast<int64_t>(committed.size()) >= o.rows &&
      publishers.unexpected_exits().empty() && !samples.empty() &&
      (o.publishing_standby || republished == 0);
  if (o.soak) {
    ok &= ReportSoak(SoakFactsOf(o, fault_log, writer, verifier, history, shard_of_key,
                                 *watch, *consumers),
                     *watch);
  }
  std::cout << (ok ? "1 passed, 0 failed" : "0 passed, 1 failed") << std::endl;
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace chaos

int main(int argc, char** argv) { return chaos::Main(argc, argv); }
