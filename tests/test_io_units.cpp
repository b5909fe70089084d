// Sizes, durations and bandwidths as text: every accepted spelling, every rejected one with its
// own message, and the formatters.
#include <gantry/core/units.hpp>
#include <gantry/io/limits.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace gantry;

namespace {
std::string bytes_error(const std::string& text) {
  try {
    (void)parse_bytes(text);
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "no error";
}
std::string duration_error(const std::string& text) {
  try {
    (void)parse_duration(text);
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("parse_bytes reads plain, SI and IEC sizes in any case, with or without B and spaces") {
  CHECK(parse_bytes("123") == 123);
  CHECK(parse_bytes("0") == 0);
  CHECK(parse_bytes("  42  ") == 42);
  CHECK(parse_bytes("8GiB") == 8ull << 30);
  CHECK(parse_bytes("8 GiB") == 8ull << 30);
  CHECK(parse_bytes("8gib") == 8ull << 30);
  CHECK(parse_bytes("8Gi") == 8ull << 30);
  CHECK(parse_bytes("1.5GB") == 1'500'000'000ull);
  CHECK(parse_bytes("1.5G") == 1'500'000'000ull);
  CHECK(parse_bytes("512MiB") == 512ull << 20);
  CHECK(parse_bytes("64KiB") == 64ull << 10);
  CHECK(parse_bytes("64kB") == 64'000ull);
  CHECK(parse_bytes("64 kb") == 64'000ull);
  CHECK(parse_bytes("2TiB") == 2ull << 40);
  CHECK(parse_bytes("3 TB") == 3'000'000'000'000ull);
  CHECK(parse_bytes("1PiB") == 1ull << 50);
  CHECK(parse_bytes("1e9") == 1'000'000'000ull);
  CHECK(parse_bytes("2.5e3") == 2500);
  CHECK(parse_bytes("100B") == 100);
  CHECK(parse_bytes("100 b") == 100);
  CHECK(parse_bytes("1.5KiB") == 1536);
  CHECK(parse_bytes("1.1MiB") == 1153434);  // 1153433.6 rounded to the nearest byte
  CHECK(parse_bytes("+7") == 7);
  CHECK(parse_bytes("-0") == 0);
  CHECK(parse_bytes("18446744073709551615") == 18446744073709551615ull);  // exact, not rounded through double
  CHECK(parse_bytes("15EiB") == 15ull << 60);
}

TEST_CASE("parse_bytes rejects bad text with a message naming it and the reason") {
  CHECK(bytes_error("") == "invalid byte count '': it is empty");
  CHECK(bytes_error("   ") == "invalid byte count '   ': it is empty");
  CHECK(bytes_error("GiB") ==
        "invalid byte count 'GiB': expected a number, optionally followed by a unit such as GiB or MB");
  CHECK(bytes_error("8 XB") ==
        "invalid byte count '8 XB': unknown unit 'XB' (use B, kB, MB, GB, TB, KiB, MiB, GiB, TiB, ...)");
  CHECK(bytes_error("8 GiBs").find("unknown unit 'GiBs'") != std::string::npos);
  CHECK(bytes_error("-5") == "invalid byte count '-5': a byte count cannot be negative");
  CHECK(bytes_error("-1.5GB") == "invalid byte count '-1.5GB': a byte count cannot be negative");
  CHECK(bytes_error("12.5") == "invalid byte count '12.5': it is not a whole number of bytes");
  CHECK(bytes_error("18446744073709551616") == "invalid byte count '18446744073709551616': it does not fit in 64 bits");
  CHECK(bytes_error("16EiB") == "invalid byte count '16EiB': it does not fit in 64 bits");
  CHECK(bytes_error("1e999") == "invalid byte count '1e999': it does not fit in 64 bits");
  CHECK(bytes_error("inf").find("expected a number") != std::string::npos);
  CHECK(bytes_error("nan").find("expected a number") != std::string::npos);
  CHECK(bytes_error("8 8").find("unknown unit '8'") != std::string::npos);
  CHECK(bytes_error(".").find("expected a number") != std::string::npos);
}

TEST_CASE("format_bytes uses binary units with two decimals") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1024) == "1.00 KiB");
  CHECK(format_bytes(1536) == "1.50 KiB");
  CHECK(format_bytes(8ull << 30) == "8.00 GiB");
  CHECK(format_bytes(3ull << 40) == "3.00 TiB");
  CHECK(format_bytes(unlimited_memory) == "unlimited");
  CHECK(parse_bytes(format_bytes(8ull << 30)) == 8ull << 30);
}

TEST_CASE("parse_duration reads seconds and the usual units") {
  CHECK(parse_duration("1e-5") == doctest::Approx(1e-5));
  CHECK(parse_duration("0.5") == doctest::Approx(0.5));
  CHECK(parse_duration("10us") == doctest::Approx(10e-6));
  CHECK(parse_duration("10 \xC2\xB5s") == doctest::Approx(10e-6));
  CHECK(parse_duration("1.5ms") == doctest::Approx(1.5e-3));
  CHECK(parse_duration("2s") == doctest::Approx(2.0));
  CHECK(parse_duration("250ns") == doctest::Approx(250e-9));
  CHECK(parse_duration("3min") == doctest::Approx(180.0));
  CHECK(parse_duration("1h") == doctest::Approx(3600.0));
  CHECK(parse_duration("0") == 0.0);
  CHECK(parse_duration("-0") == 0.0);
}

TEST_CASE("parse_duration rejects bad text with a message naming it") {
  CHECK(duration_error("") == "invalid duration '': it is empty");
  CHECK(duration_error("fast") ==
        "invalid duration 'fast': expected a number, optionally followed by a unit such as ms or us");
  CHECK(duration_error("5 days") == "invalid duration '5 days': unknown unit 'days' (use ns, us, ms, s, min or h)");
  CHECK(duration_error("-1ms") == "invalid duration '-1ms': a duration cannot be negative");
  CHECK(duration_error("1e999") == "invalid duration '1e999': it is not finite");
}

TEST_CASE("format_seconds picks a unit that keeps three significant digits") {
  CHECK(format_seconds(0) == "0 s");
  CHECK(format_seconds(850e-9) == "850 ns");
  CHECK(format_seconds(12e-6) == "12.0 us");
  CHECK(format_seconds(1.2e-3) == "1.20 ms");
  CHECK(format_seconds(3.25) == "3.25 s");
  CHECK(format_seconds(125.0) == "125 s");
  CHECK(format_seconds(0.9999) == "1.00 s");
}

TEST_CASE("parse_bandwidth reads bytes per second with size units and an optional /s") {
  CHECK(parse_bandwidth("1.2e10") == doctest::Approx(1.2e10));
  CHECK(parse_bandwidth("12 GB/s") == doctest::Approx(12e9));
  CHECK(parse_bandwidth("10GiB/s") == doctest::Approx(10.0 * (1ull << 30)));
  CHECK(parse_bandwidth("800 MB") == doctest::Approx(800e6));
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("0 GB/s"), "invalid bandwidth '0 GB/s': a bandwidth must be > 0",
                       invalid_input);
  // Too large for a double is refused like "inf", not read as an infinitely fast link.
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("1e400GB/s"), "invalid bandwidth '1e400GB/s': it is not finite",
                       invalid_input);
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("1e300 GB/s"), "invalid bandwidth '1e300 GB/s': it is not finite",
                       invalid_input);
  CHECK_THROWS_AS((void)parse_bandwidth("inf"), invalid_input);
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("fast"),
                       "invalid bandwidth 'fast': expected a number of bytes per second, such as 12 GB/s",
                       invalid_input);
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("5 Gbit/s"),
                       "invalid bandwidth '5 Gbit/s': unknown unit 'Gbit' (use B/s, MB/s, GB/s, GiB/s, ...)",
                       invalid_input);
}

TEST_CASE("format_seconds and format_number print any finite number correctly") {
  // A 64-byte buffer cut the 309 digits of 1.6e308 to a wrong 63-digit number.
  CHECK(format_seconds(1.6e308) == "1.60e+308 s");
  CHECK(format_seconds(-2.5e20) == "-2.50e+20 s");
  CHECK(format_seconds(999.0) == "999 s");
  const std::string digits = detail::format_number(1.6e308, 0);
  CHECK(digits.size() == 309);
  CHECK(std::stod(digits) == 1.6e308);
}

TEST_CASE("UTF-8 validation rejects overlong forms, surrogates, truncated and out-of-range sequences") {
  CHECK(detail::invalid_utf8_offset("plain \xC3\xBC \xE2\x9C\x93 \xF0\x9F\x98\x80") == std::string_view::npos);
  CHECK(detail::invalid_utf8_offset("\xC0\xAF") == 0);          // overlong '/'
  CHECK(detail::invalid_utf8_offset("ab\xED\xA0\x80") == 2);    // surrogate
  CHECK(detail::invalid_utf8_offset("abc\xE2\x9C") == 3);       // truncated
  CHECK(detail::invalid_utf8_offset("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(detail::invalid_utf8_offset("x\x80") == 1);             // lone continuation byte
  CHECK(detail::utf8_problem("a\xFF") == "byte 0xFF at offset 1 is not valid UTF-8");
}
