// How good a placement is: the lower bound `gantry compare` prints beside every placer, and the
// `exact` placer (GLPK's optimal schedule of a small graph, with a proven bound), which the tool
// offers next to the library's registry when it is built with GLPK.
#pragma once

#include <gantry/order/lower_bound.hpp>
#include <gantry/core/units.hpp>
#include <gantry/io/markup.hpp>
#include <gantry/place/colocation.hpp>
#include <gantry/place/placers.hpp>

#include "options.hpp"

#include <CLI/CLI.hpp>

#include <climits>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gantry::cli {

// The exact placer refuses larger graphs and clusters: its program grows as n² + n·m binaries and
// its table of transfer times as e·m².
inline constexpr std::size_t exact_vertex_limit = 30;
inline constexpr std::size_t exact_device_limit = 64;
// Why the exact placer refuses a graph of n vertices on m devices; empty when it takes them.
[[nodiscard]] inline std::string exact_too_large(std::size_t n, std::size_t m) {
  if (n > exact_vertex_limit)
    return "the graph has " + std::to_string(n) + " vertices; the exact placer takes at most " +
           std::to_string(exact_vertex_limit);
  if (m > exact_device_limit)
    return "the cluster has " + std::to_string(m) + " devices; the exact placer takes at most " +
           std::to_string(exact_device_limit);
  return {};
}
inline constexpr bool exact_available = GANTRY_CLI_HAS_GLPK != 0;

// What the last run of the exact placer proved.
struct exact_proof {
  seconds bound = 0;
  bool optimal = false;
  bool time_limit_reached = false;
  std::string stopped{};  // why GLPK's search ended early otherwise (exact_result's message), or empty
};

// Limits of the placers that search: the exact placer's time limit (it returns its best schedule
// and a proven bound) and, where the tool has DOPPLER, a wall-clock limit on its training. Without
// that option `doppler` runs its whole episode budget, so its answer is the same on every machine.
struct placer_limit_flags {
  std::string exact_time_limit = "10s";
  std::string doppler_time_limit = "none";

  void add_to(CLI::App& app) {
    app.add_option(
           "--exact-time-limit", exact_time_limit,
           "the exact placer (graphs of at most 30 vertices) stops here with its best schedule and a proven bound")
        ->capture_default_str();
#if GANTRY_CLI_HAS_LEARN
    app.add_option("--doppler-time-limit", doppler_time_limit,
                   "stop doppler's training after this long (e.g. 60s; the output says when it did); none: "
                   "train for its whole episode budget, the same answer on every machine")
        ->capture_default_str();
#endif
  }
  [[nodiscard]] int exact_milliseconds() const {
    const seconds limit = duration_option("--exact-time-limit", exact_time_limit);
    if (!(limit >= 0.001) || limit > INT_MAX / 1000.0)
      throw invalid_input("--exact-time-limit: expected a duration from 1ms to " + std::to_string(INT_MAX / 1000) +
                          "s, got '" + exact_time_limit + "'");
    return static_cast<int>(std::lround(limit * 1000));
  }
  // Empty for none.
  [[nodiscard]] std::optional<seconds> doppler_seconds() const {
    return time_limit_option("--doppler-time-limit", doppler_time_limit);
  }
};

// The library's placers and, with GLPK, `exact`; its proof lands in *proof after each run. With
// Eigen also `doppler`. Compiled in tool_placers.cpp.
[[nodiscard]] std::vector<placer_entry> tool_placers(int exact_time_limit_ms, std::shared_ptr<exact_proof> proof,
                                                     std::optional<seconds> doppler_time_limit = {});

[[nodiscard]] inline const placer_entry* find_tool_placer(const std::vector<placer_entry>& all, std::string_view name) {
  for (const auto& entry : all)
    if (entry.name == name) return &entry;
  return nullptr;
}

// The error for a placer name that find_tool_placer() does not know, with the nearest name.
[[nodiscard]] inline invalid_input unknown_algorithm(const std::vector<placer_entry>& all, std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto& entry : all) names.push_back(entry.name);
  return invalid_input("unknown algorithm '" + std::string(name) + "'" + did_you_mean(name, names) +
                       "; `gantry algorithms` lists them");
}

// The bound `compare` reports: the critical-path and work bounds, raised to the exact placer's
// proven bound when it ran and memory did not constrain it (its static memory rule is stricter
// than the simulator's, so with limited memory its bound holds only for placements that fit that
// rule).
struct compare_bound {
  makespan_bound simple;
  std::optional<exact_proof> exact;
  seconds value = 0;
  std::string source;  // "critical path", "work" or "exact"
};

[[nodiscard]] inline compare_bound make_compare_bound(const graph& g, const graph_model& model, const cluster& c,
                                                      const std::optional<exact_proof>& exact) {
  compare_bound b;
  b.simple = makespan_lower_bound(g, model, c);
  b.value = b.simple.value;
  b.source = b.simple.binding();
  bool unlimited = true;
  for (device_id d = 0; d < c.device_count(); ++d) unlimited = unlimited && c.capacity(d) == unlimited_memory;
  if (exact && unlimited) {
    b.exact = exact;
    if (exact->bound > b.value) {
      b.value = exact->bound;
      b.source = "exact";
    }
  }
  return b;
}

// "1.23x" of the bound, or "-" when there is none.
[[nodiscard]] inline std::string ratio_to_bound(seconds makespan, const compare_bound& b) {
  if (!(b.value > 0)) return "-";
  // Rounded up, so that 1.000x means at the bound (within 1e-9, as compare_svg colours it) and a
  // ratio just above it never reads as optimal.
  const double ratio = makespan / b.value;
  const double shown = ratio <= 1 + 1e-9 ? ratio : std::ceil(ratio * 1000 - 1e-6) / 1000;
  char text[32];
  std::snprintf(text, sizeof text, "%.3fx", shown);
  return text;
}

[[nodiscard]] inline std::string describe_bound(const compare_bound& b) {
  // "lower bound 7.70 ms: the critical path (work 1.93 ms)"
  std::string text = "lower bound " + format_seconds(b.value) + ": ";
  std::vector<std::string> others;
  if (b.source == "exact") {
    text += b.exact->optimal              ? "the exact optimum"
            : b.exact->time_limit_reached ? "the exact solver's proven bound (time limit reached)"
                                          : "the exact solver's proven bound (its search ended early)";
    others = {"critical path " + format_seconds(b.simple.critical_path), "work " + format_seconds(b.simple.work)};
  } else {
    text += b.source == "work" ? "the work over the devices' speed" : "the critical path at the fastest device";
    others.push_back(b.source == "work" ? "critical path " + format_seconds(b.simple.critical_path)
                                        : "work " + format_seconds(b.simple.work));
    if (b.exact) others.push_back("exact " + format_seconds(b.exact->bound));
  }
  text += " (";
  for (std::size_t i = 0; i < others.size(); ++i) text += (i == 0 ? "" : ", ") + others[i];
  return text + ")";
}

// One row of the comparison chart: a placer and its replayed makespan, or why it has none.
struct chart_row {
  std::string name;
  std::optional<seconds> makespan;
  std::string failure;  // when there is no makespan
};

// `gantry compare --svg`: one horizontal bar per placer, as long as its replayed makespan, with its
// time and ratio to the lower bound written beside it, and the lower bound as a dashed line
// across all bars, so that the comparison reads at a glance.
[[nodiscard]] inline std::string compare_svg(const std::string& title, const std::vector<chart_row>& rows,
                                             const compare_bound& bound) {
  using detail::svg_coordinate;
  using detail::xml_escape;
  constexpr double label_width = 150, bar_area = 480, row_height = 24, top = 76, right_margin = 190;
  constexpr const char* at_bound = "#2a9d4b";
  constexpr const char* above_bound = "#4a78b5";
  double longest = bound.value;
  for (const auto& row : rows)
    if (row.makespan) longest = std::max(longest, *row.makespan);
  const double scale = longest > 0 ? bar_area / longest : 0.0;
  const double width = label_width + bar_area + right_margin;
  const double height = top + row_height * static_cast<double>(rows.size()) + 40;
  const auto x_of = [&](seconds t) { return svg_coordinate(label_width + t * scale); };
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_coordinate(width) + "\" height=\"" +
                    svg_coordinate(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + xml_escape(title) + "</text>\n";
  out += "<text x=\"10\" y=\"38\">replayed makespan per placer; dashed line: " + xml_escape(describe_bound(bound)) +
         "</text>\n";
  // The legend: what each bar colour means.
  out += std::string("<rect x=\"10\" y=\"48\" width=\"12\" height=\"12\" fill=\"") + at_bound +
         "\"/><text x=\"28\" y=\"58\">at the lower bound (optimal)</text>\n";
  out += std::string("<rect x=\"210\" y=\"48\" width=\"12\" height=\"12\" fill=\"") + above_bound +
         "\"/><text x=\"228\" y=\"58\">above the lower bound</text>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const double y = top + row_height * static_cast<double>(i);
    out += "<text x=\"" + svg_coordinate(label_width - 8) + "\" y=\"" + svg_coordinate(y + 15) +
           "\" text-anchor=\"end\">" + xml_escape(row.name) + "</text>\n";
    if (!row.makespan) {
      out += "<text x=\"" + svg_coordinate(label_width + 4) + "\" y=\"" + svg_coordinate(y + 15) + "\" fill=\"#b00\">" +
             xml_escape(row.failure) + "</text>\n";
      continue;
    }
    const bool optimal = bound.value > 0 && *row.makespan <= bound.value * (1 + 1e-9);
    out += "<rect x=\"" + svg_coordinate(label_width) + "\" y=\"" + svg_coordinate(y + 3) + "\" width=\"" +
           svg_coordinate(*row.makespan * scale) + "\" height=\"" + svg_coordinate(row_height - 6) + "\" fill=\"" +
           (optimal ? at_bound : above_bound) + "\"><title>" +
           xml_escape(row.name + ": " + format_seconds(*row.makespan)) + "</title></rect>\n";
    out += "<text x=\"" + svg_coordinate(label_width + *row.makespan * scale + 6) + "\" y=\"" + svg_coordinate(y + 15) +
           "\">" + xml_escape(format_seconds(*row.makespan) + "  " + ratio_to_bound(*row.makespan, bound)) +
           "</text>\n";
  }
  const double bottom = top + row_height * static_cast<double>(rows.size());
  if (bound.value > 0) {
    out += "<line x1=\"" + x_of(bound.value) + "\" y1=\"" + svg_coordinate(top - 4) + "\" x2=\"" + x_of(bound.value) +
           "\" y2=\"" + svg_coordinate(bottom + 4) +
           "\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\"/>\n";
    out += "<text x=\"" + x_of(bound.value) + "\" y=\"" + svg_coordinate(bottom + 18) +
           "\" text-anchor=\"middle\" fill=\"#d62728\">lower bound " + xml_escape(format_seconds(bound.value)) +
           "</text>\n";
  }
  // The time axis: 0 and the longest bar.
  out += "<line x1=\"" + x_of(0) + "\" y1=\"" + svg_coordinate(bottom + 4) + "\" x2=\"" + x_of(longest) + "\" y2=\"" +
         svg_coordinate(bottom + 4) + "\" stroke=\"#444\"/>\n";
  out += "<text x=\"" + x_of(0) + "\" y=\"" + svg_coordinate(bottom + 18) + "\" text-anchor=\"middle\">0</text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace gantry::cli
