// RelayRun: the read -> map -> produce -> acknowledge -> confirm loop of one session.
// Over 450 lines on purpose: it is the hub that every spoke (the decoder, the
// mapper, the sink, the AckTracker, the dead-letter policy, status and stats)
// meets, and each of its steps is a short method named for what it does; split
// across files, the loop would no longer read top to bottom in one place.
#include "publisher/relay/relay_run.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cdc/pg_time.h"
#include "common/status_macros.h"

namespace publisher {

RelayRun::RelayRun(const RelayContext& relay, cdc::WalStream& stream, Sink& sink,
                   const std::atomic<bool>& stop)
    : options_(relay.options),
      log_(relay.log),
      clock_(relay.clock),
      dead_letters_(relay.dead_letters),
      messages_(relay.messages),
      stats_(relay.stats),
      tracker_(relay.tracker),
      monitor_(relay.monitor),
      fault_(relay.fault),
      stream_(stream),
      sink_(sink),
      stop_(stop),
      silence_(relay.options.replication_timeout) {}

absl::Status RelayRun::Execute() {
  // A new session re-reads every unconfirmed transaction from the slot.
  tracker_.Reset();
  ++stats_.sessions;
  stats_.session_confirmed = cdc::Lsn();
  RETURN_IF_ERROR(LoadCheckpoint());
  absl::Time now = clock_();
  next_status_ = now + options_.status_interval;
  next_stats_ = now + options_.stats_interval;
  silence_.Start(now);
  PublishMetrics(true);
  while (!stop_.load()) {
    if (absl::Status s = ServeDeliveries(absl::ZeroDuration()); !s.ok())
      return Finish(s, Outstanding::kDrain);
    if (absl::Status f = sink_.failure(); !f.ok()) return Finish(f, Outstanding::kLeave);
    if (fault_ != nullptr && fault_->raised())
      return Finish(fault_->status(), Outstanding::kDrain);
    UpdatePause();
    now = clock_();
    absl::Time wake = NextWake(now);
    if (paused_) {
      silence_.Pause(now);
      absl::Status s = ServeDeliveries(std::max(wake - now, absl::ZeroDuration()));
      if (!s.ok()) return Finish(s, Outstanding::kDrain);
    } else {
      absl::StatusOr<std::optional<cdc::ServerMessage>> m = stream_.Read(wake);
      if (!m.ok()) return Finish(m.status(), Outstanding::kLeave);
      if (m->has_value()) {
        silence_.Heard(now);
        absl::Status s = HandleServerMessage(**m);
        if (!s.ok())
          return Finish(
              s, absl::IsUnavailable(s) ? Outstanding::kLeave : Outstanding::kDrain);
      } else if (silence_.Expired(clock_())) {
        return Finish(SilentServer(), Outstanding::kLeave);
      }
    }
    if (absl::Status s = MaybeSendStatus(false); !s.ok())
      return Finish(s, Outstanding::kLeave);
    MaybeLogStats(false);
    // `now` is this turn's reading (before the read): a copy due a turn late is fine,
    // and the hot path pays no extra clock reading per message.
    if (now >= next_metrics_) PublishMetrics(true);
  }
  return Finish(absl::OkStatus(), Outstanding::kDrain);
}

absl::Status RelayRun::LoadCheckpoint() {
  std::optional<Checkpoint> latest = sink_.committed_checkpoint();
  checkpoints_ =
      CheckpointFilter(OnTimeline(latest, options_.timeline, options_.history));
  if (latest && checkpoints_.latest()->end_lsn != latest->end_lsn) {
    log_.Warn(
        "the latest checkpoint is on an earlier timeline (a promotion): only what lies "
        "below that timeline's switch point is skipped",
        {{"checkpoint_lsn", latest->end_lsn.ToString()},
         {"checkpoint_timeline", uint64_t{latest->timeline}},
         {"timeline", uint64_t{options_.timeline}},
         {"skips_below", checkpoints_.latest()->end_lsn.ToString()}});
  }
  // A checkpoint of another cluster would skip rows.
  return CheckSameCluster(checkpoints_.latest(), options_.system_id);
}

void RelayRun::UpdatePause() {
  // A sink that acknowledges whole transactions only must be fed each one to its
  // end (Sink::acknowledges_whole_transactions).
  bool full = InFlightFull() &&
              !(sink_.acknowledges_whole_transactions() && tracker_.in_transaction());
  if (full == paused_) return;
  paused_ = full;
  if (full) {
    log_.Warn("reading the WAL paused: in-flight limit reached",
              {{"in_flight", static_cast<uint64_t>(tracker_.in_flight_messages())},
               {"in_flight_bytes", static_cast<uint64_t>(tracker_.in_flight_bytes())}});
  } else {
    log_.Info("reading the WAL resumed");
  }
}

void RelayRun::PublishMetrics(bool streaming) {
  next_metrics_ = clock_() + options_.metrics_interval;
  if (monitor_ == nullptr) return;
  RelaySnapshot m;
  m.streaming = streaming;
  m.stats = stats_;
  m.in_flight_messages = tracker_.in_flight_messages();
  m.in_flight_bytes = tracker_.in_flight_bytes();
  m.oldest_unacked = tracker_.oldest_unacknowledged();
  m.oldest_pending_commit = tracker_.oldest_pending_commit();
  m.last_heard = silence_.last_heard();
  m.replication_timeout = options_.replication_timeout;
  monitor_->PublishRelay(m);
}

void RelayRun::CountError(ErrorKind kind) {
  ++stats_.errors;
  ++stats_.errors_by_kind[static_cast<int>(kind)];
}

absl::Status RelayRun::HandleServerMessage(const cdc::ServerMessage& message) {
  if (const auto* k = std::get_if<cdc::Keepalive>(&message)) {
    stats_.server_wal_end = std::max(stats_.server_wal_end, k->wal_end);
    tracker_.ObserveServerWalEnd(k->wal_end);
    return absl::OkStatus();
  }
  const auto& frame = std::get<cdc::XLogData>(message);
  stats_.server_wal_end = std::max(stats_.server_wal_end, frame.wal_end);
  return HandleXLogData(frame);
}

absl::Status RelayRun::HandleXLogData(const cdc::XLogData& frame) {
  ASSIGN_OR_RETURN(cdc::pgoutput::PgOutputMessage message,
                   decoder_.Decode(frame.payload));
  if (const auto* b = std::get_if<cdc::pgoutput::Begin>(&message)) {
    transaction_ = {b->final_lsn, b->xid, cdc::FromPgTimestamp(b->commit_time),
                    checkpoints_.Covers(b->final_lsn)};
    return tracker_.Begin(transaction_.commit_time);
  }
  if (const auto* c = std::get_if<cdc::pgoutput::Commit>(&message)) {
    ++stats_.transactions;
    // A skipped transaction has no messages: it is confirmable once every earlier
    // one is, which is right, since its rows are in Kafka already.
    RETURN_IF_ERROR(tracker_.Commit(c->end_lsn));
    if (!transaction_.skipped) {
      sink_.TransactionCommitted({c->end_lsn, transaction_.xid, transaction_.commit_time,
                                  options_.system_id, options_.timeline});
    }
    return absl::OkStatus();
  }
  if (const auto* r = std::get_if<cdc::pgoutput::Relation>(&message))
    return OnRelation(*r);
  if (const auto* i = std::get_if<cdc::pgoutput::Insert>(&message))
    return OnInsert(frame, *i);
  if (const auto* m = std::get_if<cdc::pgoutput::Message>(&message)) return OnMessage(*m);
  // UPDATE, DELETE, TRUNCATE, types and origins publish nothing.
  return absl::OkStatus();
}

absl::Status RelayRun::OnRelation(const cdc::pgoutput::Relation& relation) {
  relations_.Apply(relation);
  outbox_.erase(relation.oid);
  bool is_outbox = std::any_of(
      options_.tables.begin(), options_.tables.end(), [&](const TableName& t) {
        return t.schema == relation.schema && t.table == relation.name;
      });
  if (!is_outbox) return absl::OkStatus();
  ASSIGN_OR_RETURN(BoundRelation bound,
                   BoundRelation::Bind(relation, options_.columns, options_.topic,
                                       options_.value_format));
  outbox_.insert_or_assign(relation.oid, std::move(bound));
  return absl::OkStatus();
}

absl::Status RelayRun::OnInsert(const cdc::XLogData& frame,
                                const cdc::pgoutput::Insert& insert) {
  auto it = outbox_.find(insert.relation_oid);
  if (it == outbox_.end()) {
    // Another table in the publication, or a change before its Relation message.
    return relations_.Find(insert.relation_oid).status();
  }
  if (SkipEvent()) return absl::OkStatus();
  const BoundRelation& bound = it->second;
  absl::Status mapped =
      bound.MapInto(insert.new_tuple, Source(frame.data_start), &record_);
  // A row that cannot become an envelope: its raw columns are what a dead letter holds.
  if (!mapped.ok()) return PublishUnmappable(mapped, bound.RowAsJson(insert.new_tuple));
  return PublishEvent(record_);
}

absl::Status RelayRun::OnMessage(const cdc::pgoutput::Message& message) {
  if (messages_ == nullptr || message.prefix != options_.message_prefix)
    return absl::OkStatus();
  if (!(message.flags & cdc::pgoutput::Message::kTransactional)) {
    // Emitted outside the transaction's control: it may describe a change that
    // rolled back, so it is not an outbox event.
    log_.Warn(
        "ignored a non-transactional message with the outbox prefix: emit outbox events "
        "with pg_logical_emit_message(true, ...) or outbox_emit(), so that they commit "
        "or roll back with the transaction",
        {{"prefix", message.prefix}, {"lsn", message.lsn.ToString()}});
    return absl::OkStatus();
  }
  if (SkipEvent()) return absl::OkStatus();
  absl::Status mapped =
      messages_->MapInto(message.content, Source(message.lsn), &record_);
  if (!mapped.ok())
    return PublishUnmappable(mapped, MessageEvents::ContentAsJson(message.content));
  return PublishEvent(record_);
}

bool RelayRun::SkipEvent() {
  ++stats_.rows_seen;
  if (!transaction_.skipped) return false;
  ++stats_.rows_skipped;
  return true;
}

RowSource RelayRun::Source(cdc::Lsn lsn) const {
  return {lsn, transaction_.commit_lsn, transaction_.xid, transaction_.commit_time,
          options_.database};
}

absl::StatusOr<MessageToken> RelayRun::Enqueue(size_t bytes) {
  ASSIGN_OR_RETURN(MessageToken token, tracker_.Enqueue(bytes, clock_()));
  token.committed = transaction_.commit_time;
  return token;
}

absl::Status RelayRun::PublishEvent(const OutboxRecord& record) {
  ASSIGN_OR_RETURN(MessageToken token, Enqueue(record.value.size() + record.key.size()));
  ++stats_.published;
  ASSIGN_OR_RETURN(Offered offered, Offer(record, token, RecordKind::kEvent));
  if (offered.refused.ok()) return absl::OkStatus();
  return DeadLetter(token, record, offered.refused, ErrorKind::kProduce);
}

absl::Status RelayRun::PublishUnmappable(const absl::Status& why,
                                         std::string content_json) {
  ASSIGN_OR_RETURN(MessageToken token, Enqueue(0));
  OutboxRecord raw;
  raw.value = std::move(content_json);
  raw.timestamp_ms = absl::ToUnixMillis(transaction_.commit_time);
  raw.headers = {{"content_type", "application/json"}};
  return DeadLetter(token, raw, why, ErrorKind::kMapping);
}

absl::StatusOr<RelayRun::Offered> RelayRun::Offer(const OutboxRecord& record,
                                                  const MessageToken& token,
                                                  RecordKind kind) {
  while (true) {
    absl::Status s = sink_.Produce(record, token, kind);
    if (s.ok()) return Offered{};
    if (absl::IsResourceExhausted(s)) {
      // Local queue full: serve deliveries to make room, then try again, keeping
      // status updates flowing and honouring a stop (the row stays unconfirmed).
      // What the poll finds refused waits in refused_ for the loop.
      RETURN_IF_ERROR(PollSink(absl::Milliseconds(100)));
      if (stop_.load()) {
        return absl::DeadlineExceededError(
            "stopped while the producer's local queue was full; the rows not yet "
            "acknowledged stay unconfirmed and are published after a restart");
      }
      RETURN_IF_ERROR(MaybeSendStatus(false));
      continue;
    }
    if (!sink_.failure().ok()) return sink_.failure();
    if (absl::IsAborted(s)) return s;
    return Offered{s};
  }
}

absl::Status RelayRun::DeadLetter(const MessageToken& token, const OutboxRecord& record,
                                  const absl::Status& why, ErrorKind kind) {
  CountError(kind);
  absl::string_view stage = ErrorKindName(kind);
  // Under --on-error=halt, the failure itself.
  ASSIGN_OR_RETURN(OutboxRecord letter, dead_letters_.Letter(record, why, stage));
  log_.Error("publishing failed permanently; sending the row to the dead-letter topic",
             {{"id", record.id},
              {"topic", record.topic},
              {"stage", std::string(stage)},
              {"error", std::string(why.message())}});
  ASSIGN_OR_RETURN(Offered offered, Offer(letter, token, RecordKind::kDeadLetter));
  if (offered.refused.ok()) return absl::OkStatus();
  return DeadLetterRejected(letter.id, offered.refused);
}

absl::Status RelayRun::DeadLetterRejected(const std::string& id,
                                          const absl::Status& why) {
  CountError(ErrorKind::kDeadLetter);
  return dead_letters_.Rejected(id, why);
}

absl::Status RelayRun::ServeDeliveries(absl::Duration timeout) {
  RETURN_IF_ERROR(PollSink(timeout));
  return DeadLetterRefused();
}

absl::Status RelayRun::PollSink(absl::Duration timeout) {
  // Handled after Poll returns, not inside librdkafka's callback.
  std::vector<Delivery> deliveries;
  sink_.Poll(timeout, [&](Delivery d) { deliveries.push_back(std::move(d)); });
  if (deliveries.empty()) return absl::OkStatus();
  absl::Time now = clock_();  // One reading for the batch: they arrived together.
  absl::Status ends_run;
  for (Delivery& d : deliveries) {
    if (d.status.ok()) {
      Acknowledge(d, now);
    } else if (ends_run.ok()) {
      ends_run = Failed(std::move(d));
    }
    // Else the run is already ending; this row stays unconfirmed like every other.
  }
  return ends_run;
}

void RelayRun::Acknowledge(const Delivery& d, absl::Time now) {
  tracker_.Acknowledge(d.token, d.messages);
  acknowledged_since_status_ = true;
  (d.kind == RecordKind::kDeadLetter ? stats_.dead_lettered : stats_.acknowledged) +=
      d.messages;
  stats_.last_ack = now;
  if (d.token.committed != absl::InfinitePast())
    stats_.commit_to_ack.Observe(now - d.token.committed);
}

absl::Status RelayRun::Failed(Delivery d) {
  if (absl::IsUnavailable(d.status)) {
    // Failed transiently, or reported stored without proof (an implicit ack).
    // Producing it again would put it behind newer messages of its partition, and
    // the partition may already hold a gap where it belongs. So the producer
    // session ends: the supervisor recreates the producer and rewinds to the slot,
    // which sends this row and everything after it again, in commit order.
    return absl::AbortedError(absl::StrCat(
        "row ", d.record.id.empty() ? "?" : d.record.id, ": ", d.status.message(),
        "; ending the producer session to rewind to the slot"));
  }
  // The supervisor recreates the producer and rewinds.
  if (absl::IsAborted(d.status)) return d.status;
  if (d.kind == RecordKind::kDeadLetter) return DeadLetterRejected(d.record.id, d.status);
  refused_.push_back(std::move(d));
  return absl::OkStatus();
}

absl::Status RelayRun::DeadLetterRefused() {
  while (!refused_.empty()) {
    Delivery d = std::move(refused_.front());
    refused_.pop_front();
    RETURN_IF_ERROR(DeadLetter(d.token, d.record, d.status, ErrorKind::kDelivery));
  }
  return absl::OkStatus();
}

bool RelayRun::InFlightFull() const {
  return tracker_.in_flight_messages() >= static_cast<size_t>(options_.max_in_flight) ||
         tracker_.in_flight_bytes() >= static_cast<size_t>(options_.max_in_flight_bytes);
}

absl::Time RelayRun::NextWake(absl::Time now) const {
  absl::Time wake = std::min(
      {next_status_, next_stats_, now + absl::Milliseconds(100), sink_.next_deadline()});
  wake = std::min(wake, std::max(now, ConfirmationDue()));
  // Deliveries come one by one (a transactional sink's come when its commit falls
  // due: next_deadline).
  if (tracker_.in_flight_messages() > 0 && !sink_.acknowledges_whole_transactions())
    wake = std::min(wake, now + options_.delivery_poll_gap);
  return wake;
}

absl::Time RelayRun::ConfirmationDue() const {
  if (tracker_.confirmable() <= stats_.confirmed) return absl::InfiniteFuture();
  // The end of a burst or backlog: nothing more is coming to confirm soon.
  if (acknowledged_since_status_ && tracker_.in_flight_messages() == 0)
    return absl::InfinitePast();
  return last_status_ + options_.min_status_gap;
}

absl::Status RelayRun::MaybeSendStatus(bool force) {
  absl::Time now = clock_();
  cdc::Lsn confirmable = tracker_.confirmable();
  bool periodic = now >= next_status_;
  bool advanced = now >= ConfirmationDue();
  if (!force && !periodic && !advanced) return absl::OkStatus();
  // When idle, the periodic update asks for a keepalive: its WAL end is then
  // confirmable, so an idle outbox never pins WAL. It asks too when the server has
  // been quiet for a status interval: a live server answers at once, so only a
  // dead path stays silent for --replication-timeout.
  bool ask =
      periodic && (tracker_.idle() || silence_.silent(now) >= options_.status_interval);
  RETURN_IF_ERROR(stream_.SendStatus(confirmable, ask));
  stats_.confirmed = std::max(stats_.confirmed, confirmable);
  stats_.session_confirmed = std::max(stats_.session_confirmed, confirmable);
  last_status_ = now;
  next_status_ = now + options_.status_interval;
  acknowledged_since_status_ = false;
  return absl::OkStatus();
}

void RelayRun::MaybeLogStats(bool force) {
  absl::Time now = clock_();
  if (!force && now < next_stats_) return;
  next_stats_ = now + options_.stats_interval;
  std::optional<absl::Time> oldest = tracker_.oldest_unacknowledged();
  uint64_t lag = stats_.server_wal_end > stats_.confirmed
                     ? stats_.server_wal_end.value() - stats_.confirmed.value()
                     : 0;
  log_.Info("stats",
            {{"published", stats_.published},
             {"acknowledged", stats_.acknowledged},
             {"dead_lettered", stats_.dead_lettered},
             {"in_flight", static_cast<uint64_t>(tracker_.in_flight_messages())},
             {"in_flight_bytes", static_cast<uint64_t>(tracker_.in_flight_bytes())},
             {"confirmed_lsn", stats_.confirmed.ToString()},
             {"server_wal_end", stats_.server_wal_end.ToString()},
             {"lag_bytes", lag},
             {"oldest_unacked_age_ms",
              oldest ? absl::ToInt64Milliseconds(now - *oldest) : int64_t{0}},
             {"server_silent_ms", absl::ToInt64Milliseconds(silence_.silent(now))},
             {"transactions", stats_.transactions},
             {"rows_skipped", stats_.rows_skipped},
             {"paused", paused_},
             {"rewinds", stats_.rewinds},
             {"errors", stats_.errors}});
}

absl::Status RelayRun::Drain(absl::Time deadline) {
  absl::Status failed;
  while (sink_.outstanding() > 0 && clock_() < deadline) {
    absl::Duration wait = std::min(absl::Milliseconds(100), deadline - clock_());
    // After a failure, only acknowledgements count: nothing more is dead-lettered.
    failed.Update(failed.ok() ? ServeDeliveries(wait) : PollSink(wait));
  }
  return failed;
}

absl::Status RelayRun::SilentServer() {
  absl::Duration silent = silence_.silent(clock_());
  log_.Warn(
      "the replication connection is silent: no message from PostgreSQL within "
      "--replication-timeout (a dropped NAT or firewall entry, a paused server, a "
      "half-open connection); dropping it and reconnecting",
      {{"silent_ms", absl::ToInt64Milliseconds(silent)},
       {"replication_timeout", absl::FormatDuration(options_.replication_timeout)}});
  return absl::UnavailableError(absl::StrCat(
      "the replication connection was silent for ", absl::FormatDuration(silent),
      " (--replication-timeout ", absl::FormatDuration(options_.replication_timeout),
      "): reconnecting"));
}

absl::Status RelayRun::Finish(absl::Status why, Outstanding outstanding) {
  // Stop reading. Unless the stream or the producer is gone, let outstanding
  // deliveries land so the confirmation goes as far as is safe, then confirm it. A
  // failed row's transaction, and everything after it, stays unconfirmed.
  // The producer will report nothing more.
  if (absl::IsAborted(why) || !sink_.failure().ok()) {
    outstanding = Outstanding::kLeave;
  } else {
    sink_.EndRun();
    if (why.ok() && !sink_.failure().ok()) {
      why = sink_.failure();  // Its last Kafka transaction failed.
      outstanding = Outstanding::kLeave;
    }
  }
  if (outstanding == Outstanding::kDrain) {
    absl::Status drained = Drain(clock_() + options_.drain_timeout);
    if (!drained.ok()) {
      log_.Warn("a delivery failed while the run ended; its row stays unconfirmed",
                {{"error", std::string(drained.message())}});
    }
  }
  absl::Status status = absl::OkStatus(), stop = absl::OkStatus();
  if (!absl::IsUnavailable(why)) {
    status = MaybeSendStatus(true);
    stop = stream_.Stop(clock_() + absl::Seconds(10));
  }
  MaybeLogStats(true);
  PublishMetrics(false);
  if (!why.ok()) return why;
  // What the sink still owes (a transactional sink aborts, and never reports, the
  // rows of a PostgreSQL transaction the run stopped inside: they stay unconfirmed).
  if (sink_.outstanding() > 0) {
    return absl::DeadlineExceededError(absl::StrCat(
        sink_.outstanding(), " message(s) still unacknowledged after ",
        absl::FormatDuration(options_.drain_timeout),
        "; they are unconfirmed and will be published again after a restart"));
  }
  RETURN_IF_ERROR(status);
  return stop;
}

}  // namespace publisher
