// Supervisor: the reconnect / standby / producer-recreation loop around the relay.
#include "publisher/relay/supervisor.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cdc/catalog_facts.h"

namespace publisher {

void InterruptibleSleep(absl::Duration d, const std::atomic<bool>& stop) {
  absl::Time until = absl::Now() + d;
  while (!stop.load() && absl::Now() < until) {
    absl::SleepFor(std::min(absl::Milliseconds(100), until - absl::Now()));
  }
}

Supervisor::Supervisor(SupervisorOptions options, SessionSource& sessions,
                       SinkFactory& sinks, Relay& relay, common::Logger& log, Sleep sleep)
    : options_(options),
      sessions_(sessions),
      sinks_(sinks),
      relay_(relay),
      log_(log),
      sleep_(std::move(sleep)) {}

SupervisorResult Supervisor::Run(const std::atomic<bool>& stop) {
  // At start the factory checks the brokers before PostgreSQL is touched; a
  // factory may leave the producer to be made once the slot is held (null).
  absl::StatusOr<std::unique_ptr<Sink>> sink = sinks_.Create(true);
  if (!sink.ok()) return {sink.status(), false};
  common::Backoff backoff(options_.backoff_initial, options_.backoff_max);
  bool started = false;
  bool stood_by = false;  // Went through every check up to the slot.
  while (!stop.load()) {
    absl::StatusOr<Session> session = sessions_.Open();
    if (!session.ok()) {
      const absl::Status& s = session.status();
      if (cdc::IsSlotInUse(s)) {
        stood_by = true;
        StandBy(s, stop);
        continue;
      }
      EndStandBy(/*taking_over=*/false);
      if (!absl::IsUnavailable(s) || (!started && !stood_by)) return {s, started};
      absl::Duration wait = backoff.Next();
      WaitToRetry("cannot reach PostgreSQL; retrying",
                  absl::StrCat("cannot reach PostgreSQL: ", s.message()), s,
                  backoff.attempts(), wait, stop);
      continue;
    }
    EndStandBy(/*taking_over=*/true);
    if (*sink == nullptr) {
      // Made only now that this instance holds the slot: a transactional producer
      // fences every other instance of its id, so a standby must not make one.
      sink = sinks_.Create(false);
      if (!sink.ok()) {
        session->stream.reset();
        if (!absl::IsUnavailable(sink.status())) return {sink.status(), started};
        absl::Duration wait = backoff.Next();
        absl::Status cause = sink.status();
        sink = std::unique_ptr<Sink>();
        WaitToRetry("cannot create the Kafka producer; retrying",
                    absl::StrCat("cannot create the Kafka producer: ", cause.message()),
                    cause, backoff.attempts(), wait, stop);
        continue;
      }
    }
    if (started) log_.Info("replication session restarted; resuming from the slot");
    started = true;
    backoff.Reset();
    relay_.set_source(session->database, session->system_id);
    relay_.set_timeline(session->timeline, session->history);
    absl::Status s = relay_.Run(*session->stream, **sink, stop);
    session->stream.reset();
    if (s.ok()) return {s, true};
    if (absl::IsAborted(s)) {
      log_.Warn(
          "ending the Kafka producer session; recreating the producer and rewinding "
          "to the slot (rows since the last confirmation will be published again)",
          {{"reason", std::string(s.message())}});
      if (monitor_ != nullptr) monitor_->SetNotStreamingReason("rewinding to the slot");
      sink->reset();  // Destroy the old producer first: its queue must not outlive it.
      continue;       // The next session makes the new one.
    }
    if (absl::IsUnavailable(s)) {
      absl::Duration wait = backoff.Next();
      if (monitor_ != nullptr) monitor_->CountReconnect();
      WaitToRetry("replication connection lost; reconnecting",
                  absl::StrCat("replication connection lost; reconnecting: ", s.message()),
                  s, backoff.attempts(), wait, stop);
      continue;
    }
    return {s, true};
  }
  return {absl::OkStatus(), started};
}

void Supervisor::StandBy(const absl::Status& cause, const std::atomic<bool>& stop) {
  absl::Status brokers = sinks_.ProbeBrokers();
  std::string problem =
      brokers.ok() ? std::string()
                   : absl::StrCat("the Kafka brokers do not answer: ", brokers.message());
  absl::Time now = options_.now();
  if (monitor_ != nullptr) monitor_->SetStandingBy(problem, now);
  std::vector<common::Field> fields = {{"reason", std::string(cause.message())}};
  if (!problem.empty()) fields.push_back({"problem", problem});
  if (standing_by_since_ == absl::InfinitePast()) {
    standing_by_since_ = now;
    log_.Info("another publisher holds the slot; standing by to take over", fields);
    standby_logged_ = now;
  } else if (problem != standby_problem_) {
    if (problem.empty()) {
      log_.Info("standing by: the Kafka brokers answer again; ready to take over", fields);
    } else {
      log_.Warn("standing by, but could not take over: the Kafka brokers do not answer",
                fields);
    }
    standby_logged_ = now;
  } else if (now - standby_logged_ >= options_.standby_reminder) {
    fields.push_back(
        {"standing_by_s", absl::ToInt64Seconds(now - standing_by_since_)});
    log_.Info("still standing by: another publisher holds the slot", fields);
    standby_logged_ = now;
  }
  standby_problem_ = std::move(problem);
  sleep_(options_.standby_retry, stop);
}

void Supervisor::EndStandBy(bool taking_over) {
  if (standing_by_since_ == absl::InfinitePast()) return;
  sinks_.ReleaseProbe();
  if (taking_over) {
    log_.Info(
        "the slot is free: this standby takes over",
        {{"stood_by_s", absl::ToInt64Seconds(options_.now() - standing_by_since_)}});
  }
  standing_by_since_ = absl::InfinitePast();
  standby_problem_.clear();
}

void Supervisor::WaitToRetry(absl::string_view warning, const std::string& reason,
                             const absl::Status& cause, int attempt, absl::Duration wait,
                             const std::atomic<bool>& stop) {
  if (monitor_ != nullptr) monitor_->SetNotStreamingReason(reason);
  log_.Warn(warning, {{"reason", std::string(cause.message())},
                      {"attempt", int64_t{attempt}},
                      {"retry_in_ms", absl::ToInt64Milliseconds(wait)}});
  sleep_(wait, stop);
}

}  // namespace publisher
