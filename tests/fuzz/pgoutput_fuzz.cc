// libFuzzer target for everything that parses bytes from the server: replication
// framing and pgoutput messages, alone and as a sequence through StreamDecoder.
// Beyond "no crash, no sanitizer report", it checks a property: whatever decodes
// must re-encode to the same bytes and decode to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cdc/framing.h"
#include "cdc/pgoutput.h"
#include "cdc/pgoutput_encoder.h"

namespace {

void CheckRoundTrip(absl::string_view bytes, const cdc::pgoutput::PgOutputMessage& m,
                    bool in_block) {
  std::string again = cdc::pgoutput::Encode(m);
  if (again != std::string(bytes)) std::abort();
  auto back = cdc::pgoutput::Decode(again, {in_block});
  if (!back.ok() || !(*back == m)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 4;
  absl::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (mode) {
    case 0: {  // One server CopyData message, then its payload as pgoutput.
      auto m = cdc::ParseServerMessage(bytes);
      if (m.ok()) {
        if (auto* x = std::get_if<cdc::XLogData>(&*m)) {
          if (cdc::BuildXLogData(*x) != std::string(bytes)) std::abort();
          auto p = cdc::pgoutput::Decode(x->payload, {});
          if (p.ok()) CheckRoundTrip(x->payload, *p, false);
        } else {
          // Any non-zero flag byte reads as true, so compare values, not bytes.
          const auto& k = std::get<cdc::Keepalive>(*m);
          auto again = cdc::ParseServerMessage(cdc::BuildKeepalive(k));
          if (!again.ok() || !(std::get<cdc::Keepalive>(*again) == k)) std::abort();
        }
      }
      auto r = cdc::ParseStandbyStatus(bytes);
      if (r.ok()) {
        auto again = cdc::ParseStandbyStatus(cdc::BuildStandbyStatus(*r));
        if (!again.ok() || !(*again == *r)) std::abort();
      }
      break;
    }
    case 1:
    case 2: {  // One pgoutput message, outside or inside a stream block.
      bool in_block = mode == 2;
      auto m = cdc::pgoutput::Decode(bytes, {in_block});
      if (m.ok()) CheckRoundTrip(bytes, *m, in_block);
      break;
    }
    case 3: {  // A sequence: each message is preceded by a one-byte length.
      cdc::pgoutput::StreamDecoder decoder;
      while (!bytes.empty()) {
        size_t n = std::min<size_t>(static_cast<uint8_t>(bytes[0]), bytes.size() - 1);
        bool in_block = decoder.in_stream_block();
        absl::string_view one = bytes.substr(1, n);
        auto m = decoder.Decode(one);
        if (m.ok() && !std::holds_alternative<cdc::pgoutput::StreamStart>(*m) &&
            !std::holds_alternative<cdc::pgoutput::StreamStop>(*m)) {
          CheckRoundTrip(one, *m, in_block);
        }
        bytes.remove_prefix(1 + n);
      }
      break;
    }
  }
  return 0;
}
