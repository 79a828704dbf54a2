// The two halves of pgoutput agree: every generated message, of every type, in
// and out of stream blocks, with any field values the protocol allows, decodes to
// what was written, and writes back to the same bytes. Hand-picked samples and
// malformed input are in pgoutput_test.cc; a real server's bytes in
// pgoutput_golden_test.cc.
#include <cstdint>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "cdc/pgoutput.h"
#include "cdc/pgoutput_encoder.h"
#include "gtest/gtest.h"

namespace cdc::pgoutput {
namespace {

// Random field values within what the protocol can carry: a C string has no NUL,
// a length-prefixed value may hold any byte.
class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  // One message of type `index` (PgOutputMessage's alternative), and whether it
  // is to be read inside a stream block.
  std::pair<PgOutputMessage, bool> Message(size_t index) {
    bool in_block = Chance();
    auto xid = [&]() -> std::optional<uint32_t> {
      if (in_block) return U32();
      return std::nullopt;
    };
    if (index == Index<Begin>()) return {Begin{Lsn(U64()), I64(), U32()}, false};
    if (index == Index<Commit>()) {
      return {Commit{U8(), Lsn(U64()), Lsn(U64()), I64()}, false};
    }
    if (index == Index<Origin>()) return {Origin{Lsn(U64()), CString()}, false};
    if (index == Index<Relation>()) {
      Relation r{xid(), U32(), CString(), CString(), U8(), {}};
      for (int i = Below(40); i > 0; --i) {
        r.columns.push_back(Column{U8(), CString(), U32(), static_cast<int32_t>(U32())});
      }
      return {r, in_block};
    }
    if (index == Index<Type>()) {
      return {Type{xid(), U32(), CString(), CString()}, in_block};
    }
    if (index == Index<Insert>()) {
      return {Insert{xid(), U32(), MakeTuple(/*toast=*/false)}, in_block};
    }
    if (index == Index<Update>()) {
      const char old_kinds[] = {0, 'K', 'O'};
      Update u{xid(), U32(), old_kinds[Below(3)], {}, MakeTuple(/*toast=*/true)};
      if (u.old_kind != 0) u.old_tuple = MakeTuple(/*toast=*/false);
      return {u, in_block};
    }
    if (index == Index<Delete>()) {
      return {Delete{xid(), U32(), Chance() ? 'K' : 'O', MakeTuple(false)}, in_block};
    }
    if (index == Index<Truncate>()) {
      Truncate t{xid(), U8(), {}};
      for (int i = Below(20); i > 0; --i) t.relation_oids.push_back(U32());
      return {t, in_block};
    }
    if (index == Index<cdc::pgoutput::Message>()) {
      return {cdc::pgoutput::Message{xid(), U8(), Lsn(U64()), CString(), Bytes()},
              in_block};
    }
    if (index == Index<StreamStart>()) return {StreamStart{U32(), U8()}, false};
    if (index == Index<StreamStop>()) return {StreamStop{}, true};
    if (index == Index<StreamCommit>()) {
      return {StreamCommit{U32(), U8(), Lsn(U64()), Lsn(U64()), I64()}, false};
    }
    if (index == Index<StreamAbort>()) return {StreamAbort{U32(), U32()}, false};
    ADD_FAILURE() << "no generator for message type " << index;
    return {StreamStop{}, true};
  }

 private:
  template <typename T>
  static size_t Index() {
    return PgOutputMessage(std::in_place_type<T>).index();
  }

  bool Chance() { return Below(2) == 1; }
  int Below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  uint8_t U8() { return static_cast<uint8_t>(rng_()); }
  uint32_t U32() { return static_cast<uint32_t>(rng_()); }
  uint64_t U64() { return rng_(); }
  int64_t I64() { return static_cast<int64_t>(rng_()); }

  // Lengths skewed short, with an occasional long one.
  size_t Length() { return Below(8) == 0 ? Below(3000) : Below(24); }
  std::string Bytes() {
    std::string s(Length(), '\0');
    for (char& c : s) c = static_cast<char>(U8());
    return s;
  }
  std::string CString() {
    std::string s = Bytes();
    for (char& c : s) {
      if (c == '\0') c = 'x';
    }
    return s;
  }
  Tuple MakeTuple(bool toast) {
    Tuple t;
    for (int i = Below(30); i > 0; --i) {
      switch (Below(toast ? 4 : 3)) {
        case 0:
          t.push_back({Value::Kind::kNull, ""});
          break;
        case 1:
          t.push_back({Value::Kind::kText, Bytes()});
          break;
        case 2:
          t.push_back({Value::Kind::kBinary, Bytes()});
          break;
        default:
          t.push_back({Value::Kind::kUnchangedToast, ""});
      }
    }
    return t;
  }

  std::mt19937_64 rng_;
};

TEST(PgOutputRoundTripTest, EveryGeneratedMessageDecodesToWhatWasWritten) {
  constexpr uint64_t kSeed = 20261207;
  constexpr int kPerType = 2000;
  Generator gen(kSeed);
  for (size_t type = 0; type < std::variant_size_v<PgOutputMessage>; ++type) {
    for (int i = 0; i < kPerType; ++i) {
      auto [message, in_block] = gen.Message(type);
      ASSERT_EQ(message.index(), type);
      std::string bytes = Encode(message);
      absl::StatusOr<PgOutputMessage> got = Decode(bytes, {in_block});
      ASSERT_TRUE(got.ok()) << MessageName(message) << " #" << i << " (seed " << kSeed
                            << "): " << got.status();
      ASSERT_EQ(*got, message) << MessageName(message) << " #" << i << " (seed " << kSeed
                               << ")";
      ASSERT_EQ(Encode(*got), bytes) << MessageName(message) << " #" << i;
    }
  }
}

// The generator reaches what it must: xids both present and absent, each tuple
// kind, long values. A generator that always made the same message would pass the
// round trip above without proving much.
TEST(PgOutputRoundTripTest, TheGeneratorCoversTheShapes) {
  Generator gen(1);
  int with_xid = 0, without_xid = 0, long_values = 0;
  std::vector<int> kinds(256);
  const size_t update = PgOutputMessage(std::in_place_type<Update>).index();
  for (int i = 0; i < 3000; ++i) {
    auto [message, in_block] = gen.Message(update);
    const Update& u = std::get<Update>(message);
    (u.xid ? with_xid : without_xid)++;
    EXPECT_EQ(u.xid.has_value(), in_block);
    for (const Value& v : u.new_tuple) {
      kinds[static_cast<uint8_t>(v.kind)]++;
      if (v.data.size() > 1000) long_values++;
    }
  }
  EXPECT_GT(with_xid, 0);
  EXPECT_GT(without_xid, 0);
  EXPECT_GT(long_values, 0);
  for (char kind : {'n', 't', 'b', 'u'}) {
    EXPECT_GT(kinds[static_cast<uint8_t>(kind)], 0) << kind;
  }
}

}  // namespace
}  // namespace cdc::pgoutput
