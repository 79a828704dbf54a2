// codec-bench: CPU per row of the pure hot path, on its own (Google Benchmark):
// decoding one pgoutput INSERT, mapping a tuple to an envelope record, and both,
// for a 100-byte and a 4 KiB JSON payload, with and without a headers value; and
// mapping a table-less event (a logical decoding message's JSON content).
#include <benchmark/benchmark.h>

#include <string>

#include "cdc/pgoutput.h"
#include "cdc/pgoutput_encoder.h"
#include "publisher/mapping/mapper.h"
#include "publisher/mapping/message_events.h"
#include "tools/harness/schema_outbox_relation.h"

namespace {

namespace pg = cdc::pgoutput;

pg::Value T(std::string s) { return {pg::Value::Kind::kText, std::move(s)}; }

// The INSERT's bytes as pgoutput sends them.
std::string InsertBytes(size_t payload_bytes, bool headers) {
  std::string payload = "{\"pad\": \"" + std::string(payload_bytes - 11, 'x') + "\"}";
  pg::Tuple row = {
      T("0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01"),
      T("order"),
      T("o-42"),
      T("OrderCreated"),
      T(payload),
      headers ? T(R"({"trace": "abc"})") : pg::Value{pg::Value::Kind::kNull, ""},
      T("2026-01-02 03:04:05.123456+00")};
  return pg::Encode(pg::Insert{std::nullopt, 16384, row});
}

const publisher::RowSource kSource{cdc::Lsn(0x1000), cdc::Lsn(0x1100), 742,
                                   absl::FromUnixSeconds(1'767'225'600), "app"};

publisher::BoundRelation Bound() {
  return *publisher::BoundRelation::Bind(harness::SchemaOutboxRelation(),
                                         publisher::ColumnMapping{},
                                         "outbox.event.{aggregate_type}");
}

void BM_Decode(benchmark::State& state) {
  std::string bytes = InsertBytes(state.range(0), state.range(1));
  pg::StreamDecoder decoder;
  for (auto _ : state) benchmark::DoNotOptimize(decoder.Decode(bytes));
  state.SetItemsProcessed(state.iterations());
}

void BM_Map(benchmark::State& state) {
  pg::StreamDecoder decoder;
  auto insert =
      std::get<pg::Insert>(*decoder.Decode(InsertBytes(state.range(0), state.range(1))));
  publisher::BoundRelation bound = Bound();
  publisher::OutboxRecord record;  // Reused, as the relay reuses its own.
  for (auto _ : state) {
    benchmark::DoNotOptimize(bound.MapInto(insert.new_tuple, kSource, &record));
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_DecodeAndMap(benchmark::State& state) {
  std::string bytes = InsertBytes(state.range(0), state.range(1));
  pg::StreamDecoder decoder;
  publisher::BoundRelation bound = Bound();
  publisher::OutboxRecord record;
  for (auto _ : state) {
    auto m = decoder.Decode(bytes);
    benchmark::DoNotOptimize(
        bound.MapInto(std::get<pg::Insert>(*m).new_tuple, kSource, &record));
  }
  state.SetItemsProcessed(state.iterations());
}

// The table-less path (--message-prefix): one outbox_emit() message's content, as
// jsonb's text form writes it, mapped to the same record.
void BM_MapMessage(benchmark::State& state) {
  std::string content =
      std::string(
          R"({"id": "0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01", "payload": {"pad": ")") +
      std::string(state.range(0) - 11, 'x') + R"("}, "headers": )" +
      (state.range(1) ? R"({"trace": "abc"})" : "null") +
      R"(, "event_type": "OrderCreated", "aggregate_id": "o-42", "aggregate_type": "order"})";
  publisher::MessageEvents events = *publisher::MessageEvents::Bind(
      publisher::ColumnMapping{}, "outbox.event.{aggregate_type}");
  publisher::OutboxRecord record;
  for (auto _ : state)
    benchmark::DoNotOptimize(events.MapInto(content, kSource, &record));
  state.SetItemsProcessed(state.iterations());
}

// Arguments: payload bytes, headers present.
BENCHMARK(BM_Decode)->ArgsProduct({{100, 4096}, {0, 1}});
BENCHMARK(BM_Map)->ArgsProduct({{100, 4096}, {0, 1}});
BENCHMARK(BM_DecodeAndMap)->ArgsProduct({{100, 4096}, {0, 1}});
BENCHMARK(BM_MapMessage)->ArgsProduct({{100, 4096}, {0, 1}});

}  // namespace

BENCHMARK_MAIN();
