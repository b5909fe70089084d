// What the DOT, SVG and trace writers share: UTF-8 repair, XML and DOT escaping, colours that
// stay the same for the same device or vertex in every output, and the checks that a schedule
// is complete enough to draw.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/schedule/schedule.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <string>
#include <string_view>

namespace gantry::detail {

// Appends the UTF-8 encoding of code point c.
inline void append_utf8(std::string& out, std::uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

inline constexpr std::uint32_t replacement_character = 0xFFFD;

// Calls f(code point) for each character of text, with U+FFFD for each invalid UTF-8 sequence
// (overlong forms, surrogates and values above U+10FFFF are invalid too).
template <class F>
void for_each_code_point(std::string_view text, F&& f) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < text.size()) {
    const unsigned char lead = byte(i);
    std::size_t length = 0;
    std::uint32_t c = 0, minimum = 0;
    if (lead < 0x80) {
      f(static_cast<std::uint32_t>(lead));
      ++i;
      continue;
    }
    if ((lead & 0xE0) == 0xC0) {
      length = 2;
      c = lead & 0x1F;
      minimum = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      c = lead & 0x0F;
      minimum = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      c = lead & 0x07;
      minimum = 0x10000;
    }
    bool valid = length != 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) valid = false;
      else c = (c << 6) | (byte(i + k) & 0x3F);
    }
    if (valid && (c < minimum || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))) valid = false;
    if (valid) {
      f(c);
      i += length;
    } else {
      f(replacement_character);
      ++i;  // resynchronise on the next byte
    }
  }
}

// text with every invalid UTF-8 sequence replaced by U+FFFD.
inline std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_code_point(text, [&](std::uint32_t c) { append_utf8(out, c); });
  return out;
}

// Escapes text for XML character data and attribute values. Characters XML 1.0 does not allow
// (most control characters, U+FFFE, U+FFFF) become U+FFFD; a newline stays a newline.
inline std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for_each_code_point(text, [&](std::uint32_t c) {
    switch (c) {
      case '&':
        out += "&amp;";
        return;
      case '<':
        out += "&lt;";
        return;
      case '>':
        out += "&gt;";
        return;
      case '"':
        out += "&quot;";
        return;
      case '\'':
        out += "&apos;";
        return;
      case '\n':
        out += "&#10;";
        return;
      case '\t':
        out += "&#9;";
        return;
      default:
        break;
    }
    if (c < 0x20 || c == 0xFFFE || c == 0xFFFF) c = replacement_character;
    append_utf8(out, c);
  });
  return out;
}

// Escapes text for a double-quoted DOT string: quotes and backslashes escaped, a newline written
// as the line break escape \n, other control characters as spaces.
inline std::string dot_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for_each_code_point(text, [&](std::uint32_t c) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c < 0x20 || c == 0x7F) out += ' ';
    else append_utf8(out, c);
  });
  return out;
}

// "#rrggbb".
inline std::string hex_colour(double red, double green, double blue) {
  const auto channel = [](double x) { return static_cast<int>(std::lround(std::fmin(1.0, std::fmax(0.0, x)) * 255)); };
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", channel(red), channel(green), channel(blue));
  return buffer;
}

inline std::string hsl_colour(double hue, double saturation, double lightness) {
  const double chroma = (1 - std::fabs(2 * lightness - 1)) * saturation;
  const double h = std::fmod(hue, 1.0) * 6;
  const double x = chroma * (1 - std::fabs(std::fmod(h, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (h < 1) {
    r = chroma;
    g = x;
  } else if (h < 2) {
    r = x;
    g = chroma;
  } else if (h < 3) {
    g = chroma;
    b = x;
  } else if (h < 4) {
    g = x;
    b = chroma;
  } else if (h < 5) {
    r = x;
    b = chroma;
  } else {
    r = chroma;
    b = x;
  }
  const double m = lightness - chroma / 2;
  return hex_colour(r + m, g + m, b + m);
}

// The colour of device d: twelve well-separated colours (Tableau 10 and two more), then hues
// spaced by the golden ratio.
inline std::string device_colour(std::size_t d) {
  static constexpr const char* palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                                            "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d37295"};
  if (d < std::size(palette)) return palette[d];
  return hsl_colour(0.61803398875 * static_cast<double>(d), 0.55, 0.55);
}

// The colour of vertex v in charts: light, distinct hues for neighbouring ids.
inline std::string vertex_colour(std::size_t v) {
  return hsl_colour(0.61803398875 * static_cast<double>(v) + 0.1, 0.6, 0.62);
}

// A number for SVG coordinates: two decimals, no exponent.
inline std::string svg_coordinate(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.2f", x);
  return buffer;
}

// The number of devices a schedule uses (at least `known`): one more than the largest device id
// of a vertex, a per-device list or a transfer.
inline std::size_t schedule_device_count(const schedule& s, std::size_t known) {
  std::size_t m = std::max(known, s.order.size());
  for (const device_id d : s.device)
    if (d != no_device) m = std::max<std::size_t>(m, std::size_t{d} + 1);
  for (const auto& t : s.transfers) m = std::max<std::size_t>(m, std::size_t{std::max(t.from, t.to)} + 1);
  return m;
}

// Checks what a chart needs: a device, start and finish for each of the n vertices, device ids
// below m, finite times, transfers between known devices. Throws invalid_input naming the caller.
inline void check_drawable(const schedule& s, std::size_t n, std::size_t m, const char* caller) {
  const auto fail = [&](const std::string& why) { throw invalid_input(std::string(caller) + ": " + why); };
  if (s.device.size() != n || s.start.size() != n || s.finish.size() != n)
    fail("the schedule has " + std::to_string(s.device.size()) + " devices, " + std::to_string(s.start.size()) +
         " starts and " + std::to_string(s.finish.size()) + " finishes for a graph of " + std::to_string(n) +
         " vertices");
  for (vertex_id v = 0; v < n; ++v) {
    if (s.device[v] >= m)
      fail("vertex " + std::to_string(v) + " has no device (or device " + std::to_string(s.device[v]) + ")");
    if (!std::isfinite(s.start[v]) || !std::isfinite(s.finish[v]))
      fail("vertex " + std::to_string(v) + " has a time that is not finite");
  }
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const auto& t = s.transfers[i];
    if (t.from >= m || t.to >= m)
      fail("transfer " + std::to_string(i) + " names a device outside [0, " + std::to_string(m) + ")");
    if (t.tensor >= n)
      fail("transfer " + std::to_string(i) + " moves vertex " + std::to_string(t.tensor) + ", which does not exist");
    if (!std::isfinite(t.start) || !std::isfinite(t.finish))
      fail("transfer " + std::to_string(i) + " has a time that is not finite");
  }
}

}  // namespace gantry::detail
