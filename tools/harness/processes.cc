// Child processes and a background consumer for integration tests.
#include "tools/harness/processes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tools/harness/shell.h"

namespace harness {

std::string BuildPath(const std::string& name) {
  return absl::StrCat(OUTBOX_BUILD_DIR, "/", name);
}

int FreeTcpPort() {
  // The harness's one rule for free ports (pg_cluster.sh free-port): outside the
  // ephemeral range, so that no client's outgoing connection takes it before the
  // test's server binds it.
  absl::StatusOr<std::string> out =
      RunCommand(HarnessPath("pg_cluster.sh") + " free-port");
  int port = -1;
  if (!out.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*out), &port)) return -1;
  return port;
}

bool WaitFor(const std::function<bool()>& predicate, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (predicate()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return predicate();
}

absl::StatusOr<std::unique_ptr<CommandProcess>> CommandProcess::Start(
    const std::vector<std::string>& argv, const std::string& key) {
  int to_child[2], from_child[2];
  if (pipe(to_child) != 0 || pipe(from_child) != 0)
    return absl::InternalError("pipe failed");
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[1]);
    close(from_child[0]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  fcntl(to_child[1], F_SETFD, FD_CLOEXEC);
  fcntl(from_child[0], F_SETFD, FD_CLOEXEC);
  auto p = std::unique_ptr<CommandProcess>(new CommandProcess());
  p->pid_ = pid;
  p->in_ = fdopen(to_child[1], "w");
  p->out_ = fdopen(from_child[0], "r");
  char line[4096];
  if (fgets(line, sizeof(line), p->out_) == nullptr) {
    return absl::InternalError(absl::StrCat(argv[0], " printed no ", key, "= line"));
  }
  absl::string_view l = absl::StripAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&l, key + "=")) {
    return absl::InternalError(
        absl::StrCat("unexpected output of ", argv[0], ": ", line));
  }
  p->value_ = std::string(l);
  return p;
}

CommandProcess::~CommandProcess() {
  if (in_ != nullptr) fclose(in_);  // The child exits at end of stdin.
  if (out_ != nullptr) fclose(out_);
  if (pid_ > 0) {
    int status;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
      absl::SleepFor(absl::Milliseconds(50));
      if (i == 99) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
    }
  }
}

std::string CommandProcess::Command(const std::string& line) {
  fprintf(in_, "%s\n", line.c_str());
  fflush(in_);
  char answer[4096];
  if (fgets(answer, sizeof(answer), out_) == nullptr) return "error: the process is gone";
  return std::string(absl::StripAsciiWhitespace(answer));
}

absl::StatusOr<std::unique_ptr<MockKafka>> MockKafka::Start(int brokers) {
  absl::StatusOr<std::unique_ptr<CommandProcess>> p = CommandProcess::Start(
      {BuildPath("mock-kafka"), "--brokers", std::to_string(brokers)}, "bootstrap");
  if (!p.ok()) return p.status();
  return std::unique_ptr<MockKafka>(new MockKafka(*std::move(p)));
}

absl::StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::Start(
    const std::string& target) {
  absl::StatusOr<std::unique_ptr<CommandProcess>> p =
      CommandProcess::Start({BuildPath("fault-proxy"), target}, "port");
  if (!p.ok()) return p.status();
  int port = 0;
  if (!absl::SimpleAtoi((*p)->value(), &port))
    return absl::InternalError("fault-proxy printed no port");
  return std::unique_ptr<FaultProxy>(new FaultProxy(*std::move(p), port));
}

absl::Status FaultProxy::Say(const std::string& command) {
  std::string answer = process_->Command(command);
  if (answer == "ok") return absl::OkStatus();
  return absl::InternalError(absl::StrCat("fault-proxy ", command, ": ", answer));
}
absl::Status FaultProxy::Freeze() { return Say("freeze"); }
absl::Status FaultProxy::Blackhole() { return Say("blackhole"); }
absl::Status FaultProxy::Thaw() { return Say("thaw"); }
absl::Status FaultProxy::Cut() { return Say("cut"); }
absl::Status FaultProxy::Latency(absl::Duration latency, absl::Duration jitter) {
  return Say(absl::StrCat("latency ", absl::ToInt64Milliseconds(latency), " ",
                          absl::ToInt64Milliseconds(jitter)));
}
absl::Status FaultProxy::Bandwidth(int64_t bytes_per_second) {
  return Say(absl::StrCat("bandwidth ", bytes_per_second));
}
absl::Status FaultProxy::Clear() { return Say("clear"); }
absl::Status FaultProxy::Reset() { return Say("reset"); }
absl::Status FaultProxy::CutAfter(int64_t bytes) {
  return Say(absl::StrCat("cut-after ", bytes));
}

namespace {

// The pids of the Processes not reaped yet, for the signal handler: a fixed
// array of atomics, since a handler may neither lock nor allocate.
constexpr int kMaxChildren = 1024;
std::atomic<pid_t> live_children[kMaxChildren];

void Track(pid_t pid) {
  for (std::atomic<pid_t>& slot : live_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void Untrack(pid_t pid) {
  for (std::atomic<pid_t>& slot : live_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void KillChildrenAndDie(int sig) {
  for (std::atomic<pid_t>& slot : live_children) {
    pid_t pid = slot.load();
    if (pid > 0) kill(pid, SIGKILL);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void KillChildrenOnStopSignal() {
  signal(SIGTERM, KillChildrenAndDie);
  signal(SIGINT, KillChildrenAndDie);
}

absl::StatusOr<std::unique_ptr<Process>> Process::Start(
    const std::vector<std::string>& argv, const std::string& log_path) {
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  Track(pid);
  auto p = std::unique_ptr<Process>(new Process());
  p->pid_ = pid;
  p->log_path_ = log_path;
  return p;
}

Process::~Process() {
  if (running()) {
    kill(pid_, SIGKILL);
    Wait(absl::Seconds(10));
  }
}

void Process::Signal(int sig) {
  if (running()) kill(pid_, sig);
}

bool Process::running() {
  if (exit_code_) return false;
  int status;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    Untrack(pid_);
    return false;
  }
  return r == 0;
}

std::optional<int> Process::Wait(absl::Duration timeout) {
  WaitFor([&] { return !running(); }, timeout);
  return exit_code_;
}

std::string Process::Log() const {
  std::ifstream in(log_path_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::StatusOr<std::unique_ptr<Consumer>> Consumer::Start(
    const std::string& bootstrap, const std::vector<std::string>& topics,
    const Offsets& start_offsets, const std::string& isolation_level) {
  // After an outage, never skip ahead: re-read from the start if an offset is lost.
  // Fetch what arrives promptly (the default waits up to 500 ms for more), so that
  // receive times measure the publisher, not the consumer's batching.
  absl::StatusOr<common::KafkaConf> conf = common::NewKafkaConf(
      {{"bootstrap.servers", bootstrap},
       {"group.id", "outbox-test-verifier"},
       {"enable.auto.commit", "false"},
       {"auto.offset.reset", "earliest"},
       {"log_level", "3"},
       {"isolation.level", isolation_level},
       {"fetch.wait.max.ms", "5"}},
      {});
  if (!conf.ok()) return conf.status();
  absl::StatusOr<common::KafkaClient> rk = common::NewKafkaClient(
      RD_KAFKA_CONSUMER, *std::move(conf), {}, "the verifying consumer");
  if (!rk.ok()) return rk.status();
  auto consumer = std::unique_ptr<Consumer>(new Consumer());
  consumer->rk_ = *std::move(rk);
  // Assign every partition of each topic explicitly: no group rebalancing.
  common::KafkaPartitionList parts(rd_kafka_topic_partition_list_new(16));
  for (const std::string& topic : topics) {
    common::KafkaTopic t(rd_kafka_topic_new(consumer->rk_.get(), topic.c_str(), nullptr));
    const struct rd_kafka_metadata* raw = nullptr;
    rd_kafka_resp_err_t e = rd_kafka_metadata(consumer->rk_.get(), 0, t.get(), &raw, 10000);
    common::KafkaMetadata md(raw);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR || md->topic_cnt != 1 ||
        md->topics[0].partition_cnt == 0) {
      return absl::InternalError(absl::StrCat("no metadata for topic ", topic));
    }
    for (int i = 0; i < md->topics[0].partition_cnt; ++i) {
      int32_t partition = md->topics[0].partitions[i].id;
      auto it = start_offsets.find({topic, partition});
      rd_kafka_topic_partition_list_add(parts.get(), topic.c_str(), partition)->offset =
          it == start_offsets.end() ? RD_KAFKA_OFFSET_BEGINNING : it->second;
    }
  }
  rd_kafka_assign(consumer->rk_.get(), parts.get());
  consumer->thread_ = std::thread([c = consumer.get()] { c->Loop(); });
  return consumer;
}

void Consumer::Loop() {
  rd_kafka_t* rk = rk_.get();
  // Records not yet handed over: while a reader copies records_ under the lock,
  // this thread goes on polling and stamping receive times instead of waiting
  // for it (a first copy of 150k records took 0.1-0.4 s, and every record that
  // arrived meanwhile looked that much later).
  std::vector<ConsumedRecord> pending;
  while (!stop_) {
    if (!pending.empty()) {
      std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
      if (lock.owns_lock()) {
        for (ConsumedRecord& r : pending) records_.push_back(std::move(r));
        pending.clear();
      }
    }
    common::KafkaMessage m(rd_kafka_consumer_poll(rk, pending.empty() ? 100 : 1));
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ConsumedRecord r;
      r.topic = rd_kafka_topic_name(m->rkt);
      r.partition = m->partition;
      r.offset = m->offset;
      if (m->key) r.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload) r.value.assign(static_cast<const char*>(m->payload), m->len);
      r.value_null = m->payload == nullptr;
      rd_kafka_timestamp_type_t type;
      r.timestamp_ms = rd_kafka_message_timestamp(m.get(), &type);
      r.received = absl::Now();
      rd_kafka_headers_t* h = nullptr;
      if (rd_kafka_message_headers(m.get(), &h) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* value;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &value, &size) == 0;
             ++i) {
          r.headers.emplace_back(
              name, value ? std::string(static_cast<const char*>(value), size) : "");
        }
      }
      pending.push_back(std::move(r));
    }
  }
}

Consumer::~Consumer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  rd_kafka_consumer_close(rk_.get());
}

std::vector<ConsumedRecord> Consumer::Records(size_t from) {
  std::lock_guard<std::mutex> lock(mu_);
  if (from >= records_.size()) return {};
  return std::vector<ConsumedRecord>(records_.begin() + from, records_.end());
}

size_t Consumer::Count() {
  std::lock_guard<std::mutex> lock(mu_);
  return records_.size();
}

absl::Status ProduceAll(const std::string& bootstrap, const std::string& topic,
                        const std::vector<std::pair<std::string, std::string>>& records) {
  absl::StatusOr<common::KafkaConf> conf =
      common::NewKafkaConf({{"bootstrap.servers", bootstrap}}, {});
  if (!conf.ok()) return conf.status();
  absl::StatusOr<common::KafkaClient> client =
      common::NewKafkaClient(RD_KAFKA_PRODUCER, *std::move(conf), {}, "a test producer");
  if (!client.ok()) return client.status();
  rd_kafka_t* rk = client->get();
  absl::Status status;
  for (const auto& [key, value] : records) {
    rd_kafka_resp_err_t e = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_KEY(key.data(), key.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = absl::InternalError(absl::StrCat("produce: ", rd_kafka_err2str(e)));
      break;
    }
  }
  rd_kafka_resp_err_t flushed = rd_kafka_flush(rk, 30000);
  if (status.ok() && flushed != RD_KAFKA_RESP_ERR_NO_ERROR)
    status = absl::InternalError(absl::StrCat("flush: ", rd_kafka_err2str(flushed)));
  return status;
}

}  // namespace harness
