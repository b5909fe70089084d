// Sizes and durations as people write them: parse_bytes("8 GiB"), parse_duration("10us"),
// parse_bandwidth("12 GB/s"), and the matching formatters for messages, labels and reports.
// Decimal SI (kB, MB, GB, ...) and binary IEC (KiB, MiB, GiB, ...) suffixes, case-insensitive.
#pragma once

#include <gantry/core/types.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

namespace gantry {

namespace detail {

inline std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

inline bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// A number at the front of `text` (sign, digits, fraction, exponent; no "inf" or "nan"), and the
// rest of the text. Returns false when there is no number.
struct leading_number {
  double value = 0;
  std::string_view digits;  // the number as written
  std::string_view rest;
  bool whole = false;  // written without fraction or exponent
};

inline bool read_leading_number(std::string_view text, leading_number& out) {
  std::size_t i = 0;
  const auto digit = [&](std::size_t k) {
    return k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]));
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  const std::size_t mantissa = i;
  while (digit(i)) ++i;
  bool whole = true;
  if (i < text.size() && text[i] == '.') {
    whole = false;
    ++i;
    while (digit(i)) ++i;
  }
  if (i == mantissa || (i == mantissa + 1 && text[mantissa] == '.')) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t k = i + 1;
    if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
    if (digit(k)) {
      whole = false;
      while (digit(k)) ++k;
      i = k;
    }
  }
  out.digits = text.substr(0, i);
  out.rest = text.substr(i);
  out.whole = whole;
  // from_chars does not take a leading '+'.
  const std::string_view number = out.digits.front() == '+' ? out.digits.substr(1) : out.digits;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), out.value);
  if (error == std::errc::result_out_of_range) out.value = number.front() == '-' ? -HUGE_VAL : HUGE_VAL;
  else if (error != std::errc{} || end != number.data() + number.size()) return false;
  return true;
}

// The multiplier of a size suffix ("", "B", "k", "KB", "KiB", "Gi", ...), or 0 when unknown.
inline double size_multiplier(std::string_view suffix) {
  if (suffix.empty() || equals_ignoring_case(suffix, "b")) return 1;
  if (suffix.size() >= 2 && (suffix.back() == 'b' || suffix.back() == 'B')) suffix.remove_suffix(1);
  bool binary = false;
  if (suffix.size() == 2 && (suffix[1] == 'i' || suffix[1] == 'I')) {
    binary = true;
    suffix.remove_suffix(1);
  }
  if (suffix.size() != 1) return 0;
  constexpr std::string_view prefixes = "kmgtpe";
  const auto power = prefixes.find(static_cast<char>(std::tolower(static_cast<unsigned char>(suffix[0]))));
  if (power == std::string_view::npos) return 0;
  return std::pow(binary ? 1024.0 : 1000.0, static_cast<double>(power + 1));
}

// Exact whole-number parse for plain integers, so that "18446744073709551615" is not rounded.
inline bool read_exact_integer(std::string_view digits, byte_count& out) {
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return error == std::errc{} && end == digits.data() + digits.size();
}

// Text from a file or a command line, made safe for a message: printable ASCII and valid UTF-8
// as they are, \n \r \t, `quote` and \\ escaped, every other byte (control characters, binary
// junk, broken UTF-8) as \xNN, cut after `limit` bytes of input with "...". Every reader puts
// input into its messages through this (or quoted()), so a message never carries raw bytes.
inline std::string escaped(std::string_view text, char quote = '\'', std::size_t limit = 80) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  std::size_t i = 0;
  while (i < text.size() && i < limit) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      if (c == static_cast<unsigned char>(quote) || c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
      continue;
    }
    // A valid UTF-8 sequence (no overlongs, surrogates or code points past U+10FFFF) is kept.
    const std::size_t length = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    bool valid = length != 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (valid && length >= 3) {
      const auto second = static_cast<unsigned char>(text[i + 1]);
      valid = !(c == 0xE0 && second < 0xA0) && !(c == 0xED && second >= 0xA0) && !(c == 0xF0 && second < 0x90) &&
              !(c == 0xF4 && second >= 0x90);
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 0xF];
    ++i;
  }
  if (i < text.size()) out += "...";
  return out;
}

// escaped(text) between quotes: 'text'.
inline std::string quoted(std::string_view text, char quote = '\'', std::size_t limit = 80) {
  return quote + escaped(text, quote, limit) + quote;
}

}  // namespace detail

// The value of enum E named `text` (any case), by E's one name table (core/enum_names.hpp);
// throws invalid_input naming `what`, the text (quoted) and the names it could have been.
template <named_enum E>
[[nodiscard]] E parse_enum_name(std::string_view text, std::string_view what) {
  if (const auto value = parse_enum<E>(text)) return *value;
  throw invalid_input("unknown " + std::string(what) + " " + detail::quoted(text) +
                      did_you_mean(text, enum_name_list<E>()) + " (expected " + enum_choices<E>() + ")");
}

namespace detail {

// Any finite double, however large: "%f" of 1.6e308 has 309 digits, more than a fixed buffer.
inline std::string format_number(double value, int decimals) {
  const int length = std::snprintf(nullptr, 0, "%.*f", decimals, value);
  if (length <= 0) return "?";
  std::string out(static_cast<std::size_t>(length), '\0');
  std::snprintf(out.data(), out.size() + 1, "%.*f", decimals, value);
  return out;
}

// Fewer decimals for larger values: "1.25", "12.5", "125".
inline std::string format_3_digits(double value) {
  const double magnitude = std::fabs(value);
  return format_number(value, magnitude >= 99.95 ? 0 : magnitude >= 9.995 ? 1 : 2);
}

}  // namespace detail

// A byte count from text: "123", "8GiB", "8 GiB", "1.5GB", "512MiB", "64KiB", "1e9", "16 gb".
// Suffixes: B, kB/MB/GB/TB/PB/EB (powers of 1000) and KiB/MiB/GiB/TiB/PiB/EiB (powers of 1024),
// the B optional, any case. With a suffix the result is rounded to the nearest byte; without one
// it must be a whole number. Throws invalid_input naming the text.
[[nodiscard]] inline byte_count parse_bytes(std::string_view text) {
  const std::string_view input = detail::trim(text);
  const auto fail = [&](const std::string& why) -> byte_count {
    throw invalid_input("invalid byte count " + detail::quoted(text) + ": " + why);
  };
  detail::leading_number number;
  if (input.empty()) return fail("it is empty");
  if (!detail::read_leading_number(input, number))
    return fail("expected a number, optionally followed by a unit such as GiB or MB");
  const std::string_view suffix = detail::trim(number.rest);
  const double multiplier = detail::size_multiplier(suffix);
  if (multiplier == 0)
    return fail("unknown unit " + detail::quoted(suffix) + " (use B, kB, MB, GB, TB, KiB, MiB, GiB, TiB, ...)");
  if (number.digits.front() == '-') {
    if (number.value != 0) return fail("a byte count cannot be negative");
    return 0;
  }
  if (number.whole && multiplier == 1) {
    byte_count exact = 0;
    if (!detail::read_exact_integer(number.digits, exact)) return fail("it does not fit in 64 bits");
    return exact;
  }
  constexpr long double two_to_64 = 18446744073709551616.0L;
  const long double bytes = static_cast<long double>(number.value) * multiplier;
  if (!(bytes < two_to_64)) return fail("it does not fit in 64 bits");
  if (multiplier == 1 && bytes != std::floor(bytes)) return fail("it is not a whole number of bytes");
  const long double rounded = std::floor(bytes + 0.5L);
  if (!(rounded < two_to_64)) return fail("it does not fit in 64 bits");
  return static_cast<byte_count>(rounded);
}

// "512 B", "1.50 KiB", "8.00 GiB" (binary units, three significant digits); "unlimited" for
// unlimited_memory.
[[nodiscard]] inline std::string format_bytes(byte_count bytes) {
  if (bytes == unlimited_memory) return "unlimited";
  if (bytes < 1024) return std::to_string(bytes) + " B";
  constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  return detail::format_number(value, 2) + " " + units[unit];
}

// A duration in seconds from text: "1e-5", "0.5", "10us", "10 µs", "1.5ms", "2s", "3min", "1h",
// "250ns". No suffix means seconds. Throws invalid_input naming the text for anything else,
// including negative, infinite and NaN values.
[[nodiscard]] inline seconds parse_duration(std::string_view text) {
  const std::string_view input = detail::trim(text);
  const auto fail = [&](const std::string& why) -> seconds {
    throw invalid_input("invalid duration " + detail::quoted(text) + ": " + why);
  };
  detail::leading_number number;
  if (input.empty()) return fail("it is empty");
  if (!detail::read_leading_number(input, number))
    return fail("expected a number, optionally followed by a unit such as ms or us");
  const std::string_view unit = detail::trim(number.rest);
  double scale = 0;
  if (unit.empty() || unit == "s" || unit == "sec") scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") scale = 1e-6;  // us, µs (micro sign or mu)
  else if (unit == "ns") scale = 1e-9;
  else if (unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else return fail("unknown unit " + detail::quoted(unit) + " (use ns, us, ms, s, min or h)");
  const double value = number.value * scale;
  if (!std::isfinite(value)) return fail("it is not finite");
  if (number.digits.front() == '-' && value != 0) return fail("a duration cannot be negative");
  return value == 0 ? 0.0 : value;
}

// "0 s", "850 ns", "12.0 us", "1.20 ms", "3.25 s" (three significant digits, unit chosen so the
// number is below 1000; seconds for anything of a second or more).
[[nodiscard]] inline std::string format_seconds(seconds t) {
  if (std::isnan(t)) return "nan";
  if (std::isinf(t)) return t > 0 ? "inf s" : "-inf s";
  if (t == 0) return "0 s";
  const double magnitude = std::fabs(t);
  if (magnitude >= 1e15) {  // beyond a million years: scientific notation, still three digits
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2e s", t);
    return buffer;
  }
  if (magnitude >= 0.9995) return detail::format_3_digits(t) + " s";
  if (magnitude >= 0.9995e-3) return detail::format_3_digits(t * 1e3) + " ms";
  if (magnitude >= 0.9995e-6) return detail::format_3_digits(t * 1e6) + " us";
  return detail::format_3_digits(t * 1e9) + " ns";
}

// A bandwidth in bytes per second from text: "1.2e10", "12 GB/s", "10GiB/s", "800 MB/s" (a size
// as parse_bytes reads it, the "/s" optional). Throws invalid_input naming the text, also for a
// value too large for a double ("1e400 GB/s"), as "inf" is refused.
[[nodiscard]] inline double parse_bandwidth(std::string_view text) {
  std::string_view input = detail::trim(text);
  if (input.size() >= 2 && input.substr(input.size() - 2) == "/s") input.remove_suffix(2);
  input = detail::trim(input);
  detail::leading_number number;
  const auto fail = [&](const std::string& why) -> double {
    throw invalid_input("invalid bandwidth " + detail::quoted(text) + ": " + why);
  };
  if (input.empty()) return fail("it is empty");
  if (!detail::read_leading_number(input, number))
    return fail("expected a number of bytes per second, such as 12 GB/s");
  const double multiplier = detail::size_multiplier(detail::trim(number.rest));
  if (multiplier == 0)
    return fail("unknown unit " + detail::quoted(detail::trim(number.rest)) + " (use B/s, MB/s, GB/s, GiB/s, ...)");
  const double value = number.value * multiplier;
  if (std::isnan(value) || value <= 0) return fail("a bandwidth must be > 0");
  if (!std::isfinite(value)) return fail("it is not finite");
  return value;
}

}  // namespace gantry
