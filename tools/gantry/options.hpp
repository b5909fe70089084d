// The option layer every command of the tool shares: how counts, real numbers, sizes, durations
// and rates are written on the command line and what a wrong one is told. One rule for
// quantities: a size, a duration or a bandwidth carries its unit ("8GiB", "10us", "12GB/s"); a
// bare number other than 0 is refused, since "--latency 10" could mean seconds or microseconds and
// "--memory 8" bytes or gigabytes. (Files are different: a JSON number there is in the format's
// base unit, docs/format.md.) Every message starts with the option's name.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/model/cluster.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <limits>
#include <optional>
#include <ios>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::cli {

// The link between devices when a command is given none: every command that models links starts
// from the same one (place, simulate, compare, learn, execute and pipeline).
inline constexpr const char* default_bandwidth = "12GB/s";
inline constexpr const char* default_latency = "10us";

// A number for messages, as short as it reads: 0.1, 1e+06, 600.
// x with `decimals` digits after the point, e.g. fixed_text(12.345, 1) is "12.3".
[[nodiscard]] inline std::string fixed_text(double x, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << x;
  return out.str();
}

[[nodiscard]] inline std::string number_text(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

// A whole number of type T in [low, high], written in full ("-1", "1.5", "1e3" and "nan" fail);
// CLI11 prefixes the option's name: "--devices: expected a whole number from 1 to 1048576, got '0'".
template <class T>
CLI::Validator whole_number_between(T low, T high) {
  const std::string range = high == std::numeric_limits<T>::max()
                                ? "a whole number of at least " + std::to_string(low)
                                : "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        T value{};
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc{} || end != text.data() + text.size() || value < low || value > high)
          return "expected " + range + ", got '" + text + "'";
        return {};
      },
      range);
}

// A whole number of type T that is at least `low`.
template <class T>
CLI::Validator whole_number_from(T low) {
  return whole_number_between<T>(low, std::numeric_limits<T>::max());
}

// One of `choices`, exactly: "expected a, b or c, got 'x'", with the nearest choice when one is near
// ("did you mean 'b'?"). For every option with a fixed set of values, so that all say it alike.
inline CLI::Validator one_of(std::vector<std::string> choices) {
  std::string listed;
  for (std::size_t i = 0; i < choices.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return CLI::Validator(
      [choices, listed](std::string& text) -> std::string {
        if (std::find(choices.begin(), choices.end(), text) != choices.end()) return {};
        return "expected " + listed + ", got '" + text + "'" + did_you_mean(text, choices);
      },
      "one of " + listed);
}

// A whole number >= 1 of the type of the variable it goes into.
template <class T>
CLI::Validator positive_whole(const T&) {
  return whole_number_from<T>(1);
}

// A finite real number in [low, high] (or above `low` when `open_low`): NaN and infinities fail.
inline CLI::Validator finite_number_in(double low, double high, bool open_low = false) {
  const bool bounded = high < std::numeric_limits<double>::max();
  const std::string range =
      "a finite number " + (bounded && !open_low ? "from " + number_text(low) + " to " + number_text(high)
                                                 : std::string(open_low ? "> " : ">= ") + number_text(low) +
                                                       (bounded ? " and <= " + number_text(high) : ""));
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) ||
            (open_low ? value <= low : value < low) || value > high)
          return "expected " + range + ", got '" + text + "'";
        return {};
      },
      range);
}

// A finite real number > 0, or >= 0.
inline CLI::Validator positive_number() { return finite_number_in(0, std::numeric_limits<double>::max(), true); }
inline CLI::Validator non_negative_number() { return finite_number_in(0, std::numeric_limits<double>::max()); }

namespace option_detail {
// Whether the whole text (spaces around it aside) is a plain number, and its value.
[[nodiscard]] inline bool bare_number(std::string_view text, double& value) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  if (text.size() >= 2 && text.substr(text.size() - 2) == "/s") {  // a rate without a size unit: "12/s"
    text.remove_suffix(2);
    while (!text.empty() && space(text.back())) text.remove_suffix(1);
  }
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc{} && end == text.data() + text.size();
}

// "unlimited", in any case.
[[nodiscard]] inline bool is_unlimited(std::string_view text) {
  return gantry::detail::equals_ignoring_case(text, "unlimited");
}

template <class Parse>
auto parse_with_unit(std::string_view option, const std::string& text, std::string_view examples, Parse parse) {
  double value = 0;
  if (bare_number(text, value) && value != 0)
    throw invalid_input(std::string(option) + ": '" + text + "' has no unit; write it with one, e.g. " +
                        std::string(examples));
  try {
    return parse(text);
  } catch (const invalid_input& e) {
    throw invalid_input(std::string(option) + ": " + e.what());
  }
}
}  // namespace option_detail

// A size ("8GiB", "512 MB", "0", or "unlimited" where allowed).
[[nodiscard]] inline byte_count size_option(std::string_view option, const std::string& text, bool unlimited_allowed) {
  if (unlimited_allowed && option_detail::is_unlimited(text)) return unlimited_memory;
  return option_detail::parse_with_unit(option, text, "8GiB, 512MB or 100B",
                                        [](const std::string& t) { return parse_bytes(t); });
}

// A duration ("10us", "5ms", "2s", "0").
[[nodiscard]] inline seconds duration_option(std::string_view option, const std::string& text) {
  return option_detail::parse_with_unit(option, text, "10us, 5ms or 2s",
                                        [](const std::string& t) { return parse_duration(t); });
}

// A time limit: a positive duration, or "none" (empty).
[[nodiscard]] inline std::optional<seconds> time_limit_option(std::string_view option, const std::string& text) {
  if (text == "none") return std::nullopt;
  const seconds limit = duration_option(option, text);
  if (!(limit > 0) || !std::isfinite(limit))
    throw invalid_input(std::string(option) + ": expected a positive duration or 'none', got '" + text + "'");
  return limit;
}

// A bandwidth in bytes per second ("12GB/s", "800 MB/s", or "unlimited" where allowed).
[[nodiscard]] inline double rate_option(std::string_view option, const std::string& text, bool unlimited_allowed) {
  if (unlimited_allowed && option_detail::is_unlimited(text)) return std::numeric_limits<double>::infinity();
  return option_detail::parse_with_unit(option, text, "12GB/s or 800MB/s",
                                        [](const std::string& t) { return parse_bandwidth(t); });
}

// The link between devices as every command's header prints it: "10.0 us + bytes / 12.0 GB/s", or
// "(no bandwidth limit)"; a cluster whose pairs have links of their own says how many.
[[nodiscard]] inline std::string link_text(const cluster& c) {
  const link_model link = c.default_link();
  std::string text = !std::isfinite(link.bandwidth)
                         ? format_seconds(link.latency) + " (no bandwidth limit)"
                         : format_seconds(link.latency) + " + bytes / " +
                               format_bytes(static_cast<byte_count>(std::min(link.bandwidth, 1e18))) + "/s";
  if (const std::size_t own = c.own_link_count(); own > 0)
    text +=
        " (" + std::to_string(own) + " device pair" + (own == 1 ? " has a link" : "s have links") + " of their own)";
  return text;
}

}  // namespace gantry::cli
