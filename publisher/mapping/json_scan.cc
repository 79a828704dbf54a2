// JSON scanning: a cursor over the text, values skipped (and validated) with an
// explicit stack of open containers, so nesting depth costs no recursion.
#include "publisher/mapping/json_scan.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"

namespace publisher {
namespace {

int HexDigit(char h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}

class Cursor {
 public:
  explicit Cursor(absl::string_view text) : text_(text) {}

  size_t at() const { return at_; }
  bool done() const { return at_ >= text_.size(); }
  char peek() const { return done() ? '\0' : text_[at_]; }
  absl::string_view Since(size_t start) const { return text_.substr(start, at_ - start); }

  void SkipSpace() {
    while (!done()) {
      char c = text_[at_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
      ++at_;
    }
  }

  bool Take(char c) {
    if (peek() != c) return false;
    ++at_;
    return true;
  }

  absl::Status Fault(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid JSON: ", what, " at byte ", at_));
  }

  // At an opening quote: moves past the closing one. `escaped` tells whether the
  // contents hold a backslash.
  absl::Status String(bool* escaped) {
    *escaped = false;
    ++at_;  // The opening quote.
    while (true) {
      if (done()) return Fault("unterminated string");
      auto c = static_cast<unsigned char>(text_[at_]);
      if (c == '"') {
        ++at_;
        return absl::OkStatus();
      }
      if (c < 0x20) return Fault("control character in a string");
      if (c == '\\') {
        *escaped = true;
        if (absl::Status s = Escape(); !s.ok()) return s;
      } else if (c < 0x80) {
        ++at_;
      } else if (absl::Status s = Utf8(); !s.ok()) {
        return s;
      }
    }
  }

  absl::Status Number() {
    Take('-');
    if (Take('0')) {
      // No leading zeros.
    } else if (!Digits()) {
      return Fault("malformed number");
    }
    if (Take('.') && !Digits()) return Fault("malformed number");
    if (Take('e') || Take('E')) {
      if (!Take('+')) Take('-');
      if (!Digits()) return Fault("malformed number");
    }
    return absl::OkStatus();
  }

  absl::Status Literal(absl::string_view word) {
    if (text_.substr(at_, word.size()) != word) return Fault("unexpected character");
    at_ += word.size();
    return absl::OkStatus();
  }

 private:
  bool Digits() {
    size_t start = at_;
    while (!done() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    return at_ > start;
  }

  absl::Status Escape() {
    ++at_;  // The backslash.
    char c = peek();
    if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
        c == 'r' || c == 't') {
      ++at_;
      return absl::OkStatus();
    }
    if (c != 'u') return Fault("invalid escape");
    ++at_;
    std::optional<uint32_t> code = Hex4();
    if (!code) return Fault("invalid \\u escape");
    if (*code >= 0xDC00 && *code <= 0xDFFF) return Fault("lone low surrogate");
    if (*code >= 0xD800 && *code <= 0xDBFF) {
      // A high surrogate: the low one must follow (it has no UTF-8 form alone).
      if (!Take('\\') || !Take('u')) return Fault("lone high surrogate");
      std::optional<uint32_t> low = Hex4();
      if (!low || *low < 0xDC00 || *low > 0xDFFF) return Fault("lone high surrogate");
    }
    return absl::OkStatus();
  }

  std::optional<uint32_t> Hex4() {
    if (text_.size() - at_ < 4) return std::nullopt;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i, ++at_) {
      int d = HexDigit(text_[at_]);
      if (d < 0) return std::nullopt;
      v = v << 4 | static_cast<uint32_t>(d);
    }
    return v;
  }

  // One multi-byte UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most
  // U+10FFFF).
  absl::Status Utf8() {
    auto byte = [&](size_t i) {
      return at_ + i < text_.size() ? static_cast<unsigned char>(text_[at_ + i]) : 0;
    };
    unsigned char b0 = byte(0);
    int length;
    unsigned char low = 0x80, high = 0xBF;  // The second byte's range.
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      length = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      length = 3;
      if (b0 == 0xE0) low = 0xA0;
      if (b0 == 0xED) high = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      length = 4;
      if (b0 == 0xF0) low = 0x90;
      if (b0 == 0xF4) high = 0x8F;
    } else {
      return Fault("invalid UTF-8");
    }
    if (byte(1) < low || byte(1) > high) return Fault("invalid UTF-8");
    for (int i = 2; i < length; ++i) {
      if (byte(i) < 0x80 || byte(i) > 0xBF) return Fault("invalid UTF-8");
    }
    at_ += length;
    return absl::OkStatus();
  }

  absl::string_view text_;
  size_t at_ = 0;
};

JsonKind KindOf(char c) {
  switch (c) {
    case '"':
      return JsonKind::kString;
    case '{':
      return JsonKind::kObject;
    case '[':
      return JsonKind::kArray;
    case 't':
    case 'f':
      return JsonKind::kBoolean;
    case 'n':
      return JsonKind::kNull;
    default:
      return JsonKind::kNumber;
  }
}

// A key and its colon, the cursor at the key's opening quote. When `m` is given,
// its key and key_escaped are set.
absl::Status KeyAndColon(Cursor& c, JsonMember* m = nullptr) {
  if (c.peek() != '"') return c.Fault("expected a string key");
  bool escaped;
  size_t start = c.at() + 1;
  if (absl::Status s = c.String(&escaped); !s.ok()) return s;
  if (m != nullptr) {
    m->key = c.Since(start);
    m->key.remove_suffix(1);  // The closing quote.
    m->key_escaped = escaped;
  }
  c.SkipSpace();
  if (!c.Take(':')) return c.Fault("expected ':'");
  c.SkipSpace();
  return absl::OkStatus();
}

// Moves the cursor past one value, nested containers included.
absl::Status SkipValue(Cursor& c) {
  std::vector<char> open;  // The closing bracket of each open container.
  while (true) {
    // A value starts here.
    char first = c.peek();
    absl::Status s;
    bool escaped;
    if (first == '{' || first == '[') {
      c.Take(first);
      c.SkipSpace();
      char close = first == '{' ? '}' : ']';
      if (!c.Take(close)) {
        open.push_back(close);
        if (first == '{' && !(s = KeyAndColon(c)).ok()) return s;
        continue;
      }
    } else if (first == '"') {
      s = c.String(&escaped);
    } else if (first == '-' || (first >= '0' && first <= '9')) {
      s = c.Number();
    } else if (first == 't') {
      s = c.Literal("true");
    } else if (first == 'f') {
      s = c.Literal("false");
    } else if (first == 'n') {
      s = c.Literal("null");
    } else {
      return c.Fault(c.done() ? "unexpected end" : "unexpected character");
    }
    if (!s.ok()) return s;
    // After a value: close containers, or move to the next element.
    while (true) {
      if (open.empty()) return absl::OkStatus();
      c.SkipSpace();
      if (c.Take(',')) {
        c.SkipSpace();
        if (open.back() == '}' && !(s = KeyAndColon(c)).ok()) return s;
        break;
      }
      if (!c.Take(open.back())) return c.Fault("expected ',' or a closing bracket");
      open.pop_back();
    }
  }
}

void AppendUtf8(uint32_t code, std::string* out) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// Four hex digits that ScanJsonObject validated.
uint32_t Hex4(absl::string_view s) {
  uint32_t v = 0;
  for (char h : s.substr(0, 4)) v = v << 4 | static_cast<uint32_t>(HexDigit(h));
  return v;
}

}  // namespace

absl::Status ScanJsonObject(absl::string_view text,
                            absl::FunctionRef<void(const JsonMember&)> member) {
  Cursor c(text);
  c.SkipSpace();
  if (!c.Take('{')) return c.Fault("expected an object");
  c.SkipSpace();
  if (!c.Take('}')) {
    while (true) {
      JsonMember m;
      if (absl::Status s = KeyAndColon(c, &m); !s.ok()) return s;
      size_t value_start = c.at();
      m.kind = KindOf(c.peek());
      if (absl::Status s = SkipValue(c); !s.ok()) return s;
      m.raw = c.Since(value_start);
      member(m);
      c.SkipSpace();
      if (c.Take('}')) break;
      if (!c.Take(',')) return c.Fault("expected ',' or '}'");
      c.SkipSpace();
    }
  }
  c.SkipSpace();
  if (!c.done()) return c.Fault("text after the object");
  return absl::OkStatus();
}

void JsonDecodeString(absl::string_view s, std::string* out) {
  size_t i = 0;
  while (i < s.size()) {
    size_t slash = s.find('\\', i);
    if (slash == absl::string_view::npos) {
      out->append(s.data() + i, s.size() - i);
      return;
    }
    out->append(s.data() + i, slash - i);
    char e = s[slash + 1];
    i = slash + 2;
    switch (e) {
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        uint32_t code = Hex4(s.substr(i));
        i += 4;
        if (code >= 0xD800 && code <= 0xDBFF) {  // Validated: a low one follows.
          code = 0x10000 + ((code - 0xD800) << 10) + (Hex4(s.substr(i + 2)) - 0xDC00);
          i += 6;
        }
        AppendUtf8(code, out);
        break;
      }
      default:  // '"', '\\', '/'
        out->push_back(e);
    }
  }
}

}  // namespace publisher
