// An SVG picture of a periodic pattern: one row per processor and link, each operation a box at
// its start time in [0, T) (wrapping past T), labelled F or B, the stage and its index shift, as
// the paper's Figures 3 and 6 draw them.
#pragma once

#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

namespace gantry {

namespace detail {
inline std::string svg_escape(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}
inline std::string svg_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", x);
  return buffer;
}
}  // namespace detail

[[nodiscard]] inline std::string pattern_svg(const chain& c, const pipeline_pattern& p) {
  constexpr double left = 90, top = 40, row = 34, width = 720;
  const std::size_t rows = p.resource_count();
  const double scale = p.period > 0 ? width / p.period : 1.0;
  std::string out;
  const double height = top + row * static_cast<double>(rows) + 30;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + detail::svg_number(left + width + 20) +
         "\" height=\"" + detail::svg_number(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  out += "<text x=\"" + detail::svg_number(left) + "\" y=\"20\" font-size=\"13\">" + detail::svg_escape(p.name) +
         ": period " + detail::svg_number(p.period) + " for " + std::to_string(p.batches_per_period) +
         " batch(es), normalized " + detail::svg_number(p.normalized_period()) + "</text>\n";
  for (std::size_t r = 0; r < rows; ++r) {
    const double y = top + row * static_cast<double>(r);
    const std::string label = r < p.processor_count ? "processor " + std::to_string(r)
                                                    : "link " + std::to_string(r - p.processor_count);
    out += "<text x=\"4\" y=\"" + detail::svg_number(y + row / 2 + 4) + "\">" + label + "</text>\n";
    out += "<rect x=\"" + detail::svg_number(left) + "\" y=\"" + detail::svg_number(y + 2) + "\" width=\"" +
           detail::svg_number(width) + "\" height=\"" + detail::svg_number(row - 4) +
           "\" fill=\"#f4f4f4\" stroke=\"#bbb\"/>\n";
  }
  for (const auto& op : p.operations) {
    const auto& st = p.stages[op.stage];
    const double y = top + row * static_cast<double>(st.resource) + 4;
    const std::string fill = st.link ? "#c9c9c9" : op.kind == pass::forward ? "#8ecae6" : "#f4a261";
    const std::string title = std::string(to_string(op.kind)) + " " + detail::stage_label(c, st) + ", shift " +
                              std::to_string(op.shift) + ", start " + detail::svg_number(op.start);
    const std::string text = std::string(to_string(op.kind)) + std::to_string(op.stage) + "^" + std::to_string(op.shift);
    // An operation that runs past T wraps to the start of the period.
    double start = op.start, remaining = op.duration;
    while (remaining > 0 && p.period > 0) {
      const double piece = std::min(remaining, p.period - start);
      out += "<rect x=\"" + detail::svg_number(left + start * scale) + "\" y=\"" + detail::svg_number(y) +
             "\" width=\"" + detail::svg_number(piece * scale) + "\" height=\"" + detail::svg_number(row - 8) +
             "\" fill=\"" + fill + "\" stroke=\"#333\"><title>" + detail::svg_escape(title) + "</title></rect>\n";
      out += "<text x=\"" + detail::svg_number(left + start * scale + 2) + "\" y=\"" + detail::svg_number(y + row / 2) +
             "\">" + detail::svg_escape(text) + "</text>\n";
      remaining -= piece;
      start = 0;
      if (piece <= 0) break;
    }
  }
  out += "</svg>\n";
  return out;
}

}  // namespace gantry
