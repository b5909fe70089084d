// A forward-only JSON scanner for the readers' fast path: no tree, no allocation, numbers by
// std::from_chars. It accepts a strict subset of what the checked reader accepts (strings without
// escapes or non-ASCII bytes where their text is used) and answers false for anything else, so a
// reader that gets false hands the whole document to the checked reader, whose message names the
// problem. It never throws.
#pragma once

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <system_error>

namespace gantry::detail {

class json_scan {
 public:
  json_scan(std::string_view text, std::size_t max_nesting) : text_(text), max_nesting_(max_nesting) {}

  [[nodiscard]] std::size_t position() const noexcept { return at_; }
  [[nodiscard]] std::string_view text() const noexcept { return text_; }

  // Skips whitespace and // and /* */ comments; false on an unterminated comment. Inline for
  // the common case, a token right here (written files have no space between tokens).
  [[nodiscard]] bool space() noexcept {
    if (at_ < text_.size()) {
      const char c = text_[at_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != '/') return true;
    }
    return skip_space();
  }

  // The next character after whitespace is c: consume it.
  [[nodiscard]] bool take(char c) noexcept {
    if (!space() || at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  // Peeks at the next character after whitespace ('\0' at the end or on a bad comment).
  [[nodiscard]] char next() noexcept { return space() && at_ < text_.size() ? text_[at_] : '\0'; }
  [[nodiscard]] bool at_end() noexcept { return space() && at_ == text_.size(); }

  // A string of printable ASCII without escapes; its text (without quotes) in out.
  [[nodiscard]] bool plain_string(std::string_view& out) noexcept {
    if (!take('"')) return false;
    const std::size_t begin = at_;
    const char* const data = text_.data();
    const std::size_t size = text_.size();
    // One table lookup and one branch per byte: 0 for a plain byte, 1 for the closing quote,
    // 2 for a byte that is not plain (backslash, control character, non-ASCII).
    static constexpr auto kind = [] {
      std::array<std::uint8_t, 256> table{};
      for (std::size_t c = 0; c < 256; ++c) table[c] = c < 0x20 || c >= 0x80 || c == '\\' ? 2 : c == '"' ? 1 : 0;
      return table;
    }();
    std::size_t at = at_;
    bool found = false;
    if constexpr (std::endian::native == std::endian::little) {
      // Eight bytes at a time while eight remain: the lowest byte flagged by special_bytes() is the
      // first that is not plain (a flag above it may be a borrow's, never one below).
      for (std::uint64_t word, flags; at + 8 <= size; at += 8) {
        std::memcpy(&word, data + at, 8);
        if ((flags = special_bytes(word)) != 0) {
          at += static_cast<std::size_t>(std::countr_zero(flags)) / 8;
          found = true;
          break;
        }
      }
    }
    if (!found)
      while (at < size && kind[static_cast<unsigned char>(data[at])] == 0) ++at;
    if (at == size || data[at] != '"') return false;
    out = text_.substr(begin, at - begin);
    at_ = at + 1;
    return true;
  }

  // The literal null (consumed) or not (nothing consumed).
  [[nodiscard]] bool null() noexcept {
    if (next() != 'n' || text_.substr(at_, 4) != "null") return false;
    at_ += 4;
    return true;
  }

  // A number in JSON's grammar; its text in out, whether it has a fraction or exponent.
  [[nodiscard]] bool number(std::string_view& out, bool& integral) noexcept {
    if (!space()) return false;
    const std::size_t begin = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    if (at_ >= text_.size()) return false;
    if (text_[at_] == '0') {
      ++at_;
    } else if (digit(text_[at_])) {
      while (at_ < text_.size() && digit(text_[at_])) ++at_;
    } else {
      return false;
    }
    integral = true;
    if (at_ < text_.size() && text_[at_] == '.') {
      integral = false;
      if (++at_ >= text_.size() || !digit(text_[at_])) return false;
      while (at_ < text_.size() && digit(text_[at_])) ++at_;
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      integral = false;
      ++at_;
      if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
      if (at_ >= text_.size() || !digit(text_[at_])) return false;
      while (at_ < text_.size() && digit(text_[at_])) ++at_;
    }
    out = text_.substr(begin, at_ - begin);
    return true;
  }

  // A finite number as a double.
  [[nodiscard]] bool real(double& out) noexcept {
    std::string_view token;
    bool integral = false;
    if (!number(token, integral)) return false;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), out);
    return error == std::errc{} && end == token.data() + token.size() && std::isfinite(out);
  }

  // A whole number >= 0 that fits in 64 bits, written as an integer or as a whole float.
  [[nodiscard]] bool whole(std::uint64_t& out) noexcept {
    std::string_view token;
    bool integral = false;
    if (!number(token, integral) || token.front() == '-') return false;
    if (integral) {
      const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), out);
      return error == std::errc{} && end == token.data() + token.size();
    }
    double x = 0;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), x);
    if (error != std::errc{} || end != token.data() + token.size()) return false;
    if (!(x >= 0) || x != std::floor(x) || !(x < 18446744073709551616.0)) return false;
    out = static_cast<std::uint64_t>(x);
    return true;
  }

  // Skips one value of any kind, found inside `outer` open containers. `loose` lets strings hold
  // escapes and any bytes above 0x7F (for a value that a checked parser reads afterwards);
  // otherwise such strings answer false. Containers nest at most max_nesting (and 512) deep.
  [[nodiscard]] bool skip(bool loose = false, std::size_t outer = 0) noexcept {
    char open[512];
    std::size_t depth = 0;
    if (outer > max_nesting_) return false;
    const std::size_t limit = max_nesting_ - outer < sizeof open ? max_nesting_ - outer : sizeof open;
    while (true) {
      const char c = next();
      if (c == '{' || c == '[') {
        if (depth >= limit) return false;
        open[depth++] = c;
        ++at_;
        if (next() == (c == '{' ? '}' : ']')) {
          ++at_;
          --depth;
        } else {
          if (c == '{' && !member_key(loose)) return false;
          continue;
        }
      } else if (c == '"') {
        if (!skip_string(loose)) return false;
      } else if (c == 't' || c == 'f' || c == 'n') {
        const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
        if (text_.substr(at_, word.size()) != word) return false;
        at_ += word.size();
      } else {
        std::string_view token;
        bool integral = false;
        if (!number(token, integral)) return false;
      }
      // After a value: close finished containers, or go on to the next element.
      while (true) {
        if (depth == 0) return true;
        const char after = next();
        if (after == ',') {
          ++at_;
          if (open[depth - 1] == '{' && !member_key(loose)) return false;
          break;
        }
        if (after != (open[depth - 1] == '{' ? '}' : ']')) return false;
        ++at_;
        --depth;
      }
    }
  }

 private:
  static bool digit(char c) noexcept { return c >= '0' && c <= '9'; }

  // The high bit of each byte of `word` that is a quote, a backslash, a control character or not
  // ASCII, and perhaps of bytes above such a byte (the subtractions' borrows); 0 when there is none.
  static std::uint64_t special_bytes(std::uint64_t word) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    const auto zero_bytes = [](std::uint64_t x) { return (x - ones) & ~x & high; };
    return zero_bytes(word ^ (ones * '"')) | zero_bytes(word ^ (ones * '\\')) | ((word - ones * 0x20) & ~word & high) |
           (word & high);
  }

  // Out of line, so that space() stays small enough to inline everywhere.
  [[gnu::noinline]] bool skip_space() noexcept {
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        ++at_;
      } else if (c == '/' && at_ + 1 < text_.size() && text_[at_ + 1] == '/') {
        const auto end = text_.find('\n', at_ + 2);
        at_ = end == std::string_view::npos ? text_.size() : end + 1;
      } else if (c == '/' && at_ + 1 < text_.size() && text_[at_ + 1] == '*') {
        const auto end = text_.find("*/", at_ + 2);
        if (end == std::string_view::npos) return false;
        at_ = end + 2;
      } else {
        break;
      }
    }
    return true;
  }

  bool skip_string(bool loose) noexcept {
    ++at_;  // the opening quote
    while (at_ < text_.size()) {
      const auto c = static_cast<unsigned char>(text_[at_]);
      if (c == '"') {
        ++at_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\' || c >= 0x80) {
        if (!loose) return false;
        at_ += c == '\\' ? 2 : 1;
        continue;
      }
      ++at_;
    }
    return false;
  }

  // A member's key and its colon.
  bool member_key(bool loose) noexcept { return next() == '"' && skip_string(loose) && take(':'); }

  std::string_view text_;
  std::size_t at_ = 0;
  std::size_t max_nesting_;
};

}  // namespace gantry::detail
