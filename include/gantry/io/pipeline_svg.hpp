// An SVG picture of a periodic pattern: one row per processor and link, labelled with the stages
// it runs, each operation a box at its start time in [0, T) (wrapping past T), labelled F or B,
// the stage and its index shift, as the paper's Figures 3 and 6 draw them; a time axis with units
// under the rows and a legend of the colours. Text is escaped by io/markup.hpp's rules.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/io/markup.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace gantry {

namespace detail {
// Ticks at 1, 2 or 5 times a power of ten, about `count` of them over [0, period].
inline double pattern_tick(double period, int count = 6) {
  if (!(period > 0)) return 1;
  const double raw = period / count, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double step : {1.0, 2.0, 5.0, 10.0})
    if (step * power >= raw) return step * power;
  return 10 * power;
}
}  // namespace detail

[[nodiscard]] inline std::string pattern_svg(const chain& c, const pipeline_pattern& p) {
  using detail::svg_coordinate;
  using detail::xml_escape;
  constexpr double left = 230, top = 40, row = 34, width = 720;
  const std::size_t rows = p.resource_count();
  const double scale = p.period > 0 ? width / p.period : 1.0;
  std::string out;
  const double axis_y = top + row * static_cast<double>(rows) + 6;
  const double height = axis_y + 62;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_coordinate(left + width + 30) + "\" height=\"" +
         svg_coordinate(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"4\" y=\"20\" font-size=\"13\">" +
         xml_escape(p.name + ": period " + format_seconds(p.period) + " for " + std::to_string(p.batches_per_period) +
                    " batch(es), " + format_seconds(p.normalized_period()) + " per batch") +
         "</text>\n";
  // Stages are numbered as the plan's table numbers them: compute stages 0, 1, 2, ... and the link
  // after compute stage k as link k (the pattern interleaves them).
  std::vector<std::string> number(p.stages.size());
  for (std::size_t i = 0, computes = 0, links = 0; i < p.stages.size(); ++i)
    number[i] = p.stages[i].link ? "L" + std::to_string(links++) : std::to_string(computes++);
  // Row labels: the resource and the stages it runs.
  std::vector<std::string> stages_on(rows);
  for (std::size_t i = 0; i < p.stages.size(); ++i) {
    const auto& st = p.stages[i];
    if (st.resource >= rows) continue;
    auto& text = stages_on[st.resource];
    text += (text.empty() ? "" : ", ") + std::string(st.link ? "" : "stage ") + number[i] + " " +
            detail::stage_label(c, st);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const double y = top + row * static_cast<double>(r);
    const std::string label =
        r < p.processor_count ? "processor " + std::to_string(r) : "link " + std::to_string(r - p.processor_count);
    std::string stages = stages_on[r];
    if (stages.size() > 36) stages = stages.substr(0, 33) + "...";
    out += "<text x=\"4\" y=\"" + svg_coordinate(y + row / 2 - 2) + "\">" + xml_escape(label) + "<title>" +
           xml_escape(stages_on[r]) + "</title></text>\n";
    out += "<text x=\"4\" y=\"" + svg_coordinate(y + row / 2 + 11) + "\" fill=\"#555\" font-size=\"10\">" +
           xml_escape(stages) + "</text>\n";
    out += "<rect x=\"" + svg_coordinate(left) + "\" y=\"" + svg_coordinate(y + 2) + "\" width=\"" +
           svg_coordinate(width) + "\" height=\"" + svg_coordinate(row - 4) + "\" fill=\"#f4f4f4\" stroke=\"#bbb\"/>\n";
  }
  for (const auto& op : p.operations) {
    const auto& st = p.stages[op.stage];
    const double y = top + row * static_cast<double>(st.resource) + 4;
    const std::string fill = st.link ? "#c9c9c9" : op.kind == pass::forward ? "#8ecae6" : "#f4a261";
    const std::string title = std::string(to_string(op.kind)) + " " + detail::stage_label(c, st) + ", shift " +
                              std::to_string(op.shift) + ", start " + format_seconds(op.start) + ", " +
                              format_seconds(op.duration);
    const std::string text = std::string(to_string(op.kind)) + number[op.stage] + "^" + std::to_string(op.shift);
    // A label wider than its box would run into its neighbours' (about 6.5 px per character at
    // this size): such a box keeps its tooltip only.
    const double label_width = 6.5 * static_cast<double>(text.size()) + 4;
    // An operation that runs past T wraps to the start of the period.
    double start = op.start, remaining = op.duration;
    while (remaining > 0 && p.period > 0) {
      const double piece = std::min(remaining, p.period - start);
      out += "<rect x=\"" + svg_coordinate(left + start * scale) + "\" y=\"" + svg_coordinate(y) + "\" width=\"" +
             svg_coordinate(piece * scale) + "\" height=\"" + svg_coordinate(row - 8) + "\" fill=\"" + fill +
             "\" stroke=\"#333\"><title>" + xml_escape(title) + "</title></rect>\n";
      if (piece * scale >= label_width)
        out += "<text x=\"" + svg_coordinate(left + start * scale + 2) + "\" y=\"" + svg_coordinate(y + row / 2) +
               "\">" + xml_escape(text) + "</text>\n";
      remaining -= piece;
      start = 0;
      if (piece <= 0) break;
    }
  }
  // The time axis over one period, with units.
  out += "<line x1=\"" + svg_coordinate(left) + "\" y1=\"" + svg_coordinate(axis_y) + "\" x2=\"" +
         svg_coordinate(left + width) + "\" y2=\"" + svg_coordinate(axis_y) + "\" stroke=\"#333\"/>\n";
  if (p.period > 0) {
    const double tick = detail::pattern_tick(p.period);
    for (int k = 0; k * tick <= p.period * (1 + 1e-9); ++k) {
      const double x = left + k * tick * scale;
      out += "<line x1=\"" + svg_coordinate(x) + "\" y1=\"" + svg_coordinate(axis_y) + "\" x2=\"" + svg_coordinate(x) +
             "\" y2=\"" + svg_coordinate(axis_y + 4) + "\" stroke=\"#333\"/>\n";
      out += "<text x=\"" + svg_coordinate(x) + "\" y=\"" + svg_coordinate(axis_y + 16) + "\" text-anchor=\"middle\">" +
             xml_escape(format_seconds(k * tick)) + "</text>\n";
    }
  }
  out += "<text x=\"" + svg_coordinate(left + width) + "\" y=\"" + svg_coordinate(axis_y + 30) +
         "\" text-anchor=\"end\">time within one period</text>\n";
  // The legend.
  double x = 4;
  const double legend_y = axis_y + 42;
  for (const auto& [colour, text] : {std::pair<const char*, const char*>{"#8ecae6", "forward (F)"},
                                     {"#f4a261", "backward (B)"},
                                     {"#c9c9c9", "transfer on a link"}}) {
    out += "<rect x=\"" + svg_coordinate(x) + "\" y=\"" + svg_coordinate(legend_y - 9) +
           "\" width=\"12\" height=\"12\" fill=\"" + colour + "\" stroke=\"#333\"/>\n";
    out +=
        "<text x=\"" + svg_coordinate(x + 16) + "\" y=\"" + svg_coordinate(legend_y + 1) + "\">" + text + "</text>\n";
    x += 130;
  }
  out += "<text x=\"" + svg_coordinate(x) + "\" y=\"" + svg_coordinate(legend_y + 1) +
         "\">F3^1: stage 3, index shift 1 (the batch it works on, counted back from the newest)</text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace gantry
