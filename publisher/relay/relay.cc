// Relay: the read -> map -> produce -> acknowledge -> confirm loop.
#include "publisher/relay/relay.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cdc/pg_time.h"
#include "common/status_macros.h"

namespace publisher {

Relay::Relay(RelayOptions options, outbox::Logger& log, Clock clock)
    : options_(std::move(options)),
      log_(log),
      clock_(clock),
      dead_letters_(options_.on_error, options_.dead_letter_topic),
      silence_(options_.replication_timeout) {}

absl::Status Relay::Run(cdc::WalStream& stream, Sink& sink,
                        const std::atomic<bool>& stop) {
  stream_ = &stream;
  sink_ = &sink;
  stop_ = &stop;
  // A new session re-reads every unconfirmed transaction from the slot.
  tracker_.Reset();
  ++stats_.sessions;
  stats_.session_confirmed = cdc::Lsn();
  std::optional<Checkpoint> latest = sink.committed_checkpoint();
  checkpoints_ = CheckpointFilter(OnTimeline(latest, options_.timeline, options_.history));
  if (latest && checkpoints_.latest()->end_lsn != latest->end_lsn) {
    log_.Warn(
        "the latest checkpoint is on an earlier timeline (a promotion): only what lies "
        "below that timeline's switch point is skipped",
        {{"checkpoint_lsn", latest->end_lsn.ToString()},
         {"checkpoint_timeline", uint64_t{latest->timeline}},
         {"timeline", uint64_t{options_.timeline}},
         {"skips_below", checkpoints_.latest()->end_lsn.ToString()}});
  }
  // Before anything is read: a checkpoint of another cluster would skip rows.
  RETURN_IF_ERROR(CheckSameCluster(checkpoints_.latest(), options_.system_id));
  decoder_ = cdc::pgoutput::StreamDecoder();
  relations_.Clear();
  outbox_.clear();
  fatal_ = absl::OkStatus();
  paused_ = false;
  if (!options_.message_prefix.empty() && !messages_) {
    absl::StatusOr<MessageEvents> m =
        MessageEvents::Bind(options_.columns, options_.topic);
    if (!m.ok()) return m.status();
    messages_ = std::move(*m);
  }
  absl::Time now = clock_();
  next_status_ = now + options_.status_interval;
  next_stats_ = now + options_.stats_interval;
  silence_.Start(now);
  PublishMetrics(true);
  while (!stop.load()) {
    PollSink(absl::ZeroDuration());
    if (!fatal_.ok()) return Finish(fatal_, Outstanding::kDrain);
    if (absl::Status f = sink.failure(); !f.ok()) return Finish(f, Outstanding::kLeave);
    if (fault_ != nullptr && fault_->raised())
      return Finish(fault_->status(), Outstanding::kDrain);

    // A sink that acknowledges whole transactions only must be fed each one to
    // its end (Sink::acknowledges_whole_transactions).
    bool full = InFlightFull() &&
                !(sink.acknowledges_whole_transactions() && tracker_.in_transaction());
    if (full != paused_) {
      paused_ = full;
      if (full) {
        log_.Warn(
            "reading the WAL paused: in-flight limit reached",
            {{"in_flight", static_cast<uint64_t>(tracker_.in_flight_messages())},
             {"in_flight_bytes", static_cast<uint64_t>(tracker_.in_flight_bytes())}});
      } else {
        log_.Info("reading the WAL resumed");
      }
    }
    now = clock_();
    absl::Time wake = NextWake(now, sink);
    if (paused_) {
      silence_.Pause(now);
      PollSink(std::max(wake - now, absl::ZeroDuration()));
    } else {
      absl::StatusOr<std::optional<cdc::ServerMessage>> m = stream_->Read(wake);
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
    if (!fatal_.ok()) return Finish(fatal_, Outstanding::kDrain);
    absl::Status s = MaybeSendStatus(false);
    if (!s.ok()) return Finish(s, Outstanding::kLeave);
    MaybeLogStats(false);
    // `now` is this turn's reading (before the read): a copy due a turn late is fine,
    // and the hot path pays no extra clock reading per message.
    if (now >= next_metrics_) PublishMetrics(true);
  }
  return Finish(absl::OkStatus(), Outstanding::kDrain);
}

void Relay::PublishMetrics(bool streaming) {
  next_metrics_ = clock_() + options_.metrics_interval;
  if (monitor_ == nullptr) return;
  RelaySnapshot m;
  m.streaming = streaming;
  m.stats = stats_;
  m.in_flight_messages = tracker_.in_flight_messages();
  m.in_flight_bytes = tracker_.in_flight_bytes();
  m.oldest_unacked = tracker_.oldest_unacknowledged();
  m.last_heard = silence_.last_heard();
  m.replication_timeout = options_.replication_timeout;
  monitor_->PublishRelay(m);
}

void Relay::CountError(ErrorKind kind) {
  ++stats_.errors;
  ++stats_.errors_by_kind[static_cast<int>(kind)];
}

absl::Status Relay::HandleServerMessage(const cdc::ServerMessage& message) {
  if (const auto* k = std::get_if<cdc::Keepalive>(&message)) {
    stats_.server_wal_end = std::max(stats_.server_wal_end, k->wal_end);
    tracker_.ObserveServerWalEnd(k->wal_end);
    return absl::OkStatus();
  }
  const auto& frame = std::get<cdc::XLogData>(message);
  stats_.server_wal_end = std::max(stats_.server_wal_end, frame.wal_end);
  return HandleXLogData(frame);
}

absl::Status Relay::HandleXLogData(const cdc::XLogData& frame) {
  ASSIGN_OR_RETURN(cdc::pgoutput::PgOutputMessage message,
                   decoder_.Decode(frame.payload));
  if (const auto* b = std::get_if<cdc::pgoutput::Begin>(&message)) {
    transaction_ = {b->final_lsn, b->xid, cdc::FromPgTimestamp(b->commit_time),
                    checkpoints_.Covers(b->final_lsn)};
    return tracker_.Begin();
  }
  if (const auto* c = std::get_if<cdc::pgoutput::Commit>(&message)) {
    ++stats_.transactions;
    // A skipped transaction has no messages: it is confirmable once every earlier
    // one is, which is right, since its rows are in Kafka already.
    RETURN_IF_ERROR(tracker_.Commit(c->end_lsn));
    if (!transaction_.skipped) {
      sink_->TransactionCommitted({c->end_lsn, transaction_.xid, transaction_.commit_time,
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

absl::Status Relay::OnRelation(const cdc::pgoutput::Relation& relation) {
  relations_.Apply(relation);
  outbox_.erase(relation.oid);
  bool is_outbox = std::any_of(
      options_.tables.begin(), options_.tables.end(), [&](const TableName& t) {
        return t.schema == relation.schema && t.table == relation.name;
      });
  if (!is_outbox) return absl::OkStatus();
  ASSIGN_OR_RETURN(BoundRelation bound,
                   BoundRelation::Bind(relation, options_.columns, options_.topic));
  outbox_.insert_or_assign(relation.oid, std::move(bound));
  return absl::OkStatus();
}

absl::Status Relay::OnInsert(const cdc::XLogData& frame,
                             const cdc::pgoutput::Insert& insert) {
  auto it = outbox_.find(insert.relation_oid);
  if (it == outbox_.end()) {
    // Another table in the publication, or a change before its Relation message.
    return relations_.Find(insert.relation_oid).status();
  }
  if (CountEvent()) return absl::OkStatus();
  RowSource source{frame.data_start, transaction_.commit_lsn, transaction_.xid,
                   transaction_.commit_time, options_.database};
  const BoundRelation& bound = it->second;
  absl::Status mapped = bound.MapInto(insert.new_tuple, source, &record_);
  return Publish(mapped, [&] {
    // The row cannot become an envelope: its raw columns are what a dead letter holds.
    OutboxRecord raw;
    raw.value = bound.RowAsJson(insert.new_tuple);
    return raw;
  });
}

absl::Status Relay::OnMessage(const cdc::pgoutput::Message& message) {
  if (!messages_ || message.prefix != options_.message_prefix) return absl::OkStatus();
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
  if (CountEvent()) return absl::OkStatus();
  RowSource source{message.lsn, transaction_.commit_lsn, transaction_.xid,
                   transaction_.commit_time, options_.database};
  absl::Status mapped = messages_->MapInto(message.content, source, &record_);
  return Publish(mapped, [&] {
    OutboxRecord raw;
    raw.value = MessageEvents::ContentAsJson(message.content);
    return raw;
  });
}

bool Relay::CountEvent() {
  ++stats_.rows_seen;
  if (!transaction_.skipped) return false;
  ++stats_.rows_skipped;
  return true;
}

absl::Status Relay::Publish(const absl::Status& mapped,
                            const std::function<OutboxRecord()>& raw) {
  size_t bytes = mapped.ok() ? record_.value.size() + record_.key.size() : 0;
  ASSIGN_OR_RETURN(MessageToken token, tracker_.Enqueue(bytes, clock_()));
  token.committed = transaction_.commit_time;
  if (!mapped.ok()) {
    OutboxRecord letter = raw();
    letter.timestamp_ms = absl::ToUnixMillis(transaction_.commit_time);
    letter.headers = {{"content_type", "application/json"}};
    HandlePermanent(token, letter, mapped, ErrorKind::kMapping);
    return absl::OkStatus();
  }
  ++stats_.published;
  Produce(record_, token, false);
  return absl::OkStatus();
}

void Relay::Produce(const OutboxRecord& record, const MessageToken& token,
                    bool dead_letter) {
  while (true) {
    absl::Status s = sink_->Produce(record, token, dead_letter);
    if (s.ok()) return;
    if (absl::IsResourceExhausted(s)) {
      // Local queue full: serve deliveries to make room, then try again, keeping
      // status updates flowing and honouring a stop (the row stays unconfirmed).
      PollSink(absl::Milliseconds(100));
      if (!fatal_.ok()) return;
      if (stop_ != nullptr && stop_->load()) {
        fatal_ = absl::DeadlineExceededError(
            "stopped while the producer's local queue was full; the rows not yet "
            "acknowledged stay unconfirmed and are published after a restart");
        return;
      }
      MaybeSendStatus(false).IgnoreError();  // A broken stream shows at the next Read.
      continue;
    }
    if (absl::IsAborted(s) || !sink_->failure().ok()) {
      fatal_ = sink_->failure().ok() ? s : sink_->failure();
      return;
    }
    if (dead_letter) {
      DeadLetterRejected(record.id, s);
      return;
    }
    HandlePermanent(token, record, s, ErrorKind::kProduce);
    return;
  }
}

void Relay::HandlePermanent(const MessageToken& token, const OutboxRecord& record,
                            const absl::Status& why, ErrorKind kind) {
  CountError(kind);
  absl::string_view stage = ErrorKindName(kind);
  absl::StatusOr<OutboxRecord> letter = dead_letters_.Letter(record, why, stage);
  if (!letter.ok()) {
    fatal_ = letter.status();  // --on-error=halt.
    return;
  }
  log_.Error("publishing failed permanently; sending the row to the dead-letter topic",
             {{"id", record.id},
              {"topic", record.topic},
              {"stage", std::string(stage)},
              {"error", std::string(why.message())}});
  Produce(*letter, token, true);
}

void Relay::DeadLetterRejected(const std::string& id, const absl::Status& why) {
  CountError(ErrorKind::kDeadLetter);
  fatal_ = dead_letters_.Rejected(id, why);
}

void Relay::OnDelivery(Delivery d, absl::Time now) {
  if (d.status.ok()) {
    tracker_.Acknowledge(d.token, d.messages);
    acknowledged_since_status_ = true;
    (d.dead_letter ? stats_.dead_lettered : stats_.acknowledged) += d.messages;
    stats_.last_ack = now;
    if (d.token.committed != absl::InfinitePast())
      stats_.commit_to_ack.Observe(now - d.token.committed);
    return;
  }
  // The run is already ending; this row stays unconfirmed like every other.
  if (!fatal_.ok()) return;
  if (absl::IsUnavailable(d.status)) {
    // Failed transiently, or reported stored without proof (an implicit ack).
    // Producing it again would put it behind newer messages of its partition, and
    // the partition may already hold a gap where it belongs. So the producer
    // session ends: the supervisor recreates the producer and rewinds to the slot,
    // which sends this row and everything after it again, in commit order.
    ++stats_.rewinds;
    fatal_ = absl::AbortedError(absl::StrCat(
        "row ", d.record.id.empty() ? "?" : d.record.id, ": ", d.status.message(),
        "; ending the producer session to rewind to the slot"));
    return;
  }
  if (absl::IsAborted(d.status)) {
    fatal_ = d.status;  // The supervisor recreates the producer and rewinds.
    return;
  }
  if (d.dead_letter) {
    DeadLetterRejected(d.record.id, d.status);
    return;
  }
  HandlePermanent(d.token, d.record, d.status, ErrorKind::kDelivery);
}

void Relay::PollSink(absl::Duration timeout) {
  // Handled after Poll returns, not inside librdkafka's callback: handling may
  // produce again (a retry, a dead letter), which may poll again.
  std::vector<Delivery> deliveries;
  sink_->Poll(timeout, [&](Delivery d) { deliveries.push_back(std::move(d)); });
  if (deliveries.empty()) return;
  absl::Time now = clock_();  // One reading for the batch: they arrived together.
  for (Delivery& d : deliveries) OnDelivery(std::move(d), now);
}

bool Relay::InFlightFull() const {
  return tracker_.in_flight_messages() >= static_cast<size_t>(options_.max_in_flight) ||
         tracker_.in_flight_bytes() >= static_cast<size_t>(options_.max_in_flight_bytes);
}

absl::Time Relay::NextWake(absl::Time now, const Sink& sink) const {
  absl::Time wake = std::min(
      {next_status_, next_stats_, now + absl::Milliseconds(100), sink.next_deadline()});
  wake = std::min(wake, std::max(now, ConfirmationDue()));
  // Deliveries come one by one (a transactional sink's come when its commit falls
  // due: next_deadline).
  if (tracker_.in_flight_messages() > 0 && !sink.acknowledges_whole_transactions())
    wake = std::min(wake, now + options_.delivery_poll_gap);
  return wake;
}

absl::Time Relay::ConfirmationDue() const {
  if (tracker_.confirmable() <= stats_.confirmed) return absl::InfiniteFuture();
  // The end of a burst or backlog: nothing more is coming to confirm soon.
  if (acknowledged_since_status_ && tracker_.in_flight_messages() == 0)
    return absl::InfinitePast();
  return last_status_ + options_.min_status_gap;
}

absl::Status Relay::MaybeSendStatus(bool force) {
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
  RETURN_IF_ERROR(stream_->SendStatus(confirmable, ask));
  stats_.confirmed = std::max(stats_.confirmed, confirmable);
  stats_.session_confirmed = std::max(stats_.session_confirmed, confirmable);
  last_status_ = now;
  next_status_ = now + options_.status_interval;
  acknowledged_since_status_ = false;
  return absl::OkStatus();
}

void Relay::MaybeLogStats(bool force) {
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

void Relay::Drain(absl::Time deadline) {
  while (sink_->outstanding() > 0 && clock_() < deadline) {
    PollSink(std::min(absl::Milliseconds(100), deadline - clock_()));
  }
}

absl::Status Relay::SilentServer() {
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

absl::Status Relay::Finish(absl::Status why, Outstanding outstanding) {
  // Stop reading. Unless the stream or the producer is gone, let outstanding
  // deliveries land so the confirmation goes as far as is safe, then confirm it. A
  // failed row's transaction, and everything after it, stays unconfirmed.
  // The producer will report nothing more.
  if (absl::IsAborted(why) || !sink_->failure().ok()) {
    outstanding = Outstanding::kLeave;
  } else {
    sink_->EndRun();
    if (why.ok() && !sink_->failure().ok()) {
      why = sink_->failure();  // Its last Kafka transaction failed.
      outstanding = Outstanding::kLeave;
    }
  }
  if (outstanding == Outstanding::kDrain) Drain(clock_() + options_.drain_timeout);
  absl::Status status = absl::OkStatus(), stop = absl::OkStatus();
  if (!absl::IsUnavailable(why)) {
    status = MaybeSendStatus(true);
    stop = stream_->Stop(clock_() + absl::Seconds(10));
  }
  MaybeLogStats(true);
  PublishMetrics(false);
  if (!why.ok()) return why;
  // What the sink still owes (a transactional sink aborts, and never reports, the
  // rows of a PostgreSQL transaction the run stopped inside: they stay unconfirmed).
  if (sink_->outstanding() > 0) {
    return absl::DeadlineExceededError(absl::StrCat(
        sink_->outstanding(), " message(s) still unacknowledged after ",
        absl::FormatDuration(options_.drain_timeout),
        "; they are unconfirmed and will be published again after a restart"));
  }
  RETURN_IF_ERROR(status);
  return stop;
}

}  // namespace publisher
