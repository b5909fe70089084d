// A schedule as an SVG Gantt chart: a row per device for compute and, below it, a row for its
// transfers (sends in the upper half, receives in the lower), a time axis with ticks, and each
// vertex's name as a tooltip. A vertex has the same colour in every row. Runs of bars narrower
// than a pixel are merged into grey bars a few pixels wide (their tooltip says what they hold), so
// a 100k-vertex chart stays a few thousand elements; names are drawn inside bars wide enough to
// hold them. All text is XML-escaped.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/graph/adaptor.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/markup.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace gantry {

struct svg_gantt_options {
  const cluster* devices = nullptr;  // names the rows; "d0", "d1", ... otherwise
  double width = 1200;               // pixels for the time axis
  double row_height = 24;            // pixels per compute row (a transfer row is 0.8 of it)
  bool transfers = true;             // draw a transfer row under each device
  std::string title{};               // drawn above the chart when not empty
  double min_bar_width = 1;          // narrower bars are merged with their neighbours
  double label_min_width = 48;       // bars at least this wide show the vertex name
};

namespace detail {

// 1, 2 or 5 times a power of ten, so that about `target` ticks span `span`.
inline double tick_step(double span, int target) {
  const double raw = span / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0})
    if (raw <= factor * power * (1 + 1e-9)) return factor * power;
  return 10 * power;
}

// At most `characters` characters of text (whole UTF-8 characters), with "…" when cut.
inline std::string shorten(std::string_view text, std::size_t characters) {
  std::string out;
  std::size_t count = 0, total = 0;
  for_each_code_point(text, [&](std::uint32_t) { ++total; });
  if (total <= characters) return std::string(text);
  if (characters == 0) return {};
  for_each_code_point(text, [&](std::uint32_t c) {
    if (++count < characters) append_utf8(out, c);
  });
  return out + "\xE2\x80\xA6";
}

struct gantt_bar {
  seconds start, finish;
  vertex_id vertex;    // the vertex, or the tensor's producer for a transfer
  std::uint32_t item;  // vertex id or transfer index
};

class svg_writer {
 public:
  svg_writer(std::string& out, double left, double scale, double min_width, double label_width)
      : out_(out), left_(left), scale_(scale), min_width_(min_width), merge_width_(std::max(4.0, 4 * min_width)),
        label_width_(label_width) {}

  // Draws the bars of one track at [y, y + height), merging runs of narrow bars.
  template <class Title, class Name>
  void track(std::vector<gantt_bar>& bars, double y, double height, const Title& title, const Name& name) {
    std::stable_sort(bars.begin(), bars.end(),
                     [](const gantt_bar& a, const gantt_bar& b) { return a.start < b.start; });
    std::size_t run_begin = 0, run_end = 0;
    double run_x0 = 0, run_x1 = 0;
    const auto flush = [&] {
      if (run_end == run_begin) return;
      if (run_end - run_begin == 1) bar(bars[run_begin], y, height, title, name);
      else merged(bars, run_begin, run_end, run_x0, run_x1, y, height, name);
      run_begin = run_end;
    };
    for (std::size_t i = 0; i < bars.size(); ++i) {
      const double x0 = x(bars[i].start), x1 = x(bars[i].finish);
      if (x1 - x0 >= min_width_) {
        flush();
        run_begin = run_end = i + 1;
        bar(bars[i], y, height, title, name);
        continue;
      }
      // A run ends at a gap or after a few pixels, so merged bars still show where the work is.
      if (run_end == run_begin || x0 > run_x1 + min_width_ || x1 > run_x0 + merge_width_) {
        flush();
        run_begin = i;
        run_x0 = x0;
        run_x1 = x1;
      }
      run_end = i + 1;
      run_x1 = std::max(run_x1, x1);
    }
    flush();
  }

  [[nodiscard]] double x(seconds t) const { return left_ + t * scale_; }

 private:
  template <class Title, class Name>
  void bar(const gantt_bar& b, double y, double height, const Title& title, const Name& name) {
    const double x0 = x(b.start), width = std::max(x(b.finish) - x0, min_width_);
    out_ += "<rect class=\"bar\" x=\"" + svg_coordinate(x0) + "\" y=\"" + svg_coordinate(y) + "\" width=\"" +
            svg_coordinate(width) + "\" height=\"" + svg_coordinate(height) + "\" fill=\"" + vertex_colour(b.vertex) +
            "\"><title>" + xml_escape(title(b)) + "</title></rect>\n";
    if (width >= label_width_) {
      const auto characters = static_cast<std::size_t>((width - 6) / 6.2);
      out_ += "<text class=\"label\" x=\"" + svg_coordinate(x0 + 3) + "\" y=\"" + svg_coordinate(y + height / 2 + 4) +
              "\">" + xml_escape(shorten(name(b.vertex), characters)) + "</text>\n";
    }
  }

  template <class Name>
  void merged(const std::vector<gantt_bar>& bars, std::size_t begin, std::size_t end, double x0, double x1, double y,
              double height, const Name& name) {
    seconds busy = 0, first = bars[begin].start, last = bars[begin].finish;
    for (std::size_t i = begin; i < end; ++i) {
      busy += bars[i].finish - bars[i].start;
      last = std::max(last, bars[i].finish);
    }
    const std::string title = std::to_string(end - begin) + " items, " + name(bars[begin].vertex) + " \xE2\x80\xA6 " +
                              name(bars[end - 1].vertex) + "\n" + format_seconds(first) + " \xE2\x80\x93 " +
                              format_seconds(last) + ", busy " + format_seconds(busy);
    out_ += "<rect class=\"merged\" x=\"" + svg_coordinate(x0) + "\" y=\"" + svg_coordinate(y) + "\" width=\"" +
            svg_coordinate(std::max(x1 - x0, min_width_)) + "\" height=\"" + svg_coordinate(height) + "\"><title>" +
            xml_escape(title) + "</title></rect>\n";
  }

  std::string& out_;
  double left_, scale_, min_width_, merge_width_, label_width_;
};

}  // namespace detail

// The SVG text of the Gantt chart of schedule s of graph g. Throws invalid_input when the
// schedule does not cover g or an option is out of range.
template <adapted_graph G>
[[nodiscard]] std::string svg_gantt(const G& g, const schedule& s, const svg_gantt_options& options = {}) {
  const std::size_t n = graph_adaptor<G>::vertex_count(g);
  const std::size_t m =
      detail::schedule_device_count(s, options.devices != nullptr ? options.devices->device_count() : 0);
  detail::check_drawable(s, n, m, "svg_gantt");
  if (!(options.width >= 100 && options.width <= 1e6) || !(options.row_height >= 4 && options.row_height <= 1000) ||
      !(options.min_bar_width > 0) || !(options.label_min_width >= 0))
    throw invalid_input("svg_gantt: width must be in [100, 1e6], row_height in [4, 1000] and min_bar_width > 0");
  const auto device_name = [&](device_id d) {
    if (options.devices != nullptr && d < options.devices->device_count()) return (*options.devices)[d].name;
    return "d" + std::to_string(d);
  };
  const auto name = [&](vertex_id v) { return vertex_name(g, v); };

  seconds end = s.makespan;
  for (vertex_id v = 0; v < n; ++v) end = std::max(end, s.finish[v]);
  for (const auto& t : s.transfers) end = std::max(end, t.finish);
  if (!(end > 0)) end = 1;

  const double left = 150, right = 24, top = options.title.empty() ? 12 : 36;
  const double compute_height = options.row_height, transfer_height = options.transfers ? options.row_height * 0.8 : 0;
  const double gap = 6, device_height = compute_height + (options.transfers ? transfer_height + 2 : 0) + gap;
  const double chart_height = static_cast<double>(m) * device_height;
  const double total_width = left + options.width + right, total_height = top + chart_height + 76;
  const double scale = options.width / end;

  std::string out;
  out.reserve(4096 + 160 * std::min<std::size_t>(n + s.transfers.size(), 200000));
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + detail::svg_coordinate(total_width) + "\" height=\"" +
         detail::svg_coordinate(total_height) + "\" viewBox=\"0 0 " + detail::svg_coordinate(total_width) + " " +
         detail::svg_coordinate(total_height) + "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n";
  out +=
      "<style>.label{font-size:10px;fill:#1a1a1a;pointer-events:none}.row{font-size:12px}.sub{font-size:10px;fill:#666}"
      ".tick{font-size:10px;fill:#444}.bar{stroke:#ffffff;stroke-width:0.5}.merged{fill:#9e9e9e}.grid{stroke:#dddddd;"
      "stroke-width:1}</style>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  if (!options.title.empty())
    out += "<text x=\"" + detail::svg_coordinate(left) + "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" +
           detail::xml_escape(options.title) + "</text>\n";

  // Time axis: grid lines through the rows, tick labels below them.
  const double step = detail::tick_step(end, std::max(2, static_cast<int>(options.width / 110)));
  const double axis_y = top + chart_height + 4;
  out += "<g class=\"axis\">\n<line x1=\"" + detail::svg_coordinate(left) + "\" y1=\"" +
         detail::svg_coordinate(axis_y) + "\" x2=\"" + detail::svg_coordinate(left + options.width) + "\" y2=\"" +
         detail::svg_coordinate(axis_y) + "\" stroke=\"#444444\"/>\n";
  for (int k = 0;; ++k) {
    const double t = k * step;
    if (t > end * (1 + 1e-9)) break;
    const double tx = left + t * scale;
    out += "<line class=\"grid\" x1=\"" + detail::svg_coordinate(tx) + "\" y1=\"" + detail::svg_coordinate(top) +
           "\" x2=\"" + detail::svg_coordinate(tx) + "\" y2=\"" + detail::svg_coordinate(axis_y + 4) + "\"/>\n";
    out += "<text class=\"tick\" x=\"" + detail::svg_coordinate(tx) + "\" y=\"" + detail::svg_coordinate(axis_y + 16) +
           "\" text-anchor=\"middle\">" + detail::xml_escape(format_seconds(t)) + "</text>\n";
  }
  out += "<text class=\"tick\" x=\"" + detail::svg_coordinate(left + options.width) + "\" y=\"" +
         detail::svg_coordinate(axis_y + 30) + "\" text-anchor=\"end\">makespan " +
         detail::xml_escape(format_seconds(end)) + "</text>\n</g>\n";
  // The key: what the colours and rows mean.
  const double key_y = axis_y + 44;
  out += "<g class=\"key\">\n<rect x=\"4\" y=\"" + detail::svg_coordinate(key_y - 9) +
         "\" width=\"10\" height=\"10\" fill=\"" + detail::vertex_colour(0) +
         "\"/>\n<text class=\"sub\" x=\"18\" y=\"" + detail::svg_coordinate(key_y) +
         "\">a colour per vertex, the same in every row (its tensor's transfers too)</text>\n<rect class=\"merged\" "
         "x=\"4\" y=\"" +
         detail::svg_coordinate(key_y + 5) + "\" width=\"10\" height=\"10\"/>\n<text class=\"sub\" x=\"18\" y=\"" +
         detail::svg_coordinate(key_y + 14) + "\">" +
         (options.transfers ? "bars under a pixel, merged; transfer rows: sends above, receives below"
                            : "bars under a pixel, merged (the tooltip lists them)") +
         "</text>\n</g>\n";

  std::vector<std::vector<detail::gantt_bar>> compute(m);
  for (vertex_id v = 0; v < n; ++v) compute[s.device[v]].push_back({s.start[v], s.finish[v], v, v});
  std::vector<std::vector<detail::gantt_bar>> sends(m), receives(m);
  if (options.transfers)
    for (std::uint32_t i = 0; i < s.transfers.size(); ++i) {
      const auto& t = s.transfers[i];
      sends[t.from].push_back({t.start, t.finish, t.tensor, i});
      receives[t.to].push_back({t.start, t.finish, t.tensor, i});
    }
  const auto compute_title = [&](const detail::gantt_bar& b) {
    return name(b.vertex) + "\n" + format_seconds(b.start) + " \xE2\x80\x93 " + format_seconds(b.finish) + " (" +
           format_seconds(b.finish - b.start) + ") on " + device_name(s.device[b.vertex]);
  };
  const auto transfer_title = [&](const detail::gantt_bar& b) {
    const auto& t = s.transfers[b.item];
    return name(t.tensor) + ": " + device_name(t.from) + " \xE2\x86\x92 " + device_name(t.to) + ", " +
           format_bytes(t.bytes) + "\n" + format_seconds(t.start) + " \xE2\x80\x93 " + format_seconds(t.finish) + " (" +
           format_seconds(t.finish - t.start) + ")";
  };

  detail::svg_writer writer(out, left, scale, options.min_bar_width, options.label_min_width);
  for (device_id d = 0; d < m; ++d) {
    const double y = top + d * device_height;
    out += "<g class=\"device\">\n";
    out += "<rect x=\"" + detail::svg_coordinate(left) + "\" y=\"" + detail::svg_coordinate(y) + "\" width=\"" +
           detail::svg_coordinate(options.width) + "\" height=\"" + detail::svg_coordinate(compute_height) +
           "\" fill=\"" + (d % 2 == 0 ? "#f6f6f6" : "#eeeeee") + "\"/>\n";
    out += "<rect x=\"4\" y=\"" + detail::svg_coordinate(y + 3) + "\" width=\"8\" height=\"" +
           detail::svg_coordinate(compute_height - 6) + "\" fill=\"" + detail::device_colour(d) + "\"/>\n";
    out += "<text class=\"row\" x=\"16\" y=\"" + detail::svg_coordinate(y + compute_height / 2 + 4) + "\">" +
           detail::xml_escape(detail::shorten(device_name(d), 20)) + "</text>\n";
    writer.track(compute[d], y, compute_height, compute_title, name);
    if (options.transfers) {
      const double ty = y + compute_height + 2, half = transfer_height / 2;
      out += "<rect x=\"" + detail::svg_coordinate(left) + "\" y=\"" + detail::svg_coordinate(ty) + "\" width=\"" +
             detail::svg_coordinate(options.width) + "\" height=\"" + detail::svg_coordinate(transfer_height) +
             "\" fill=\"#fafafa\" stroke=\"#e4e4e4\"/>\n";
      out += "<text class=\"sub\" x=\"16\" y=\"" + detail::svg_coordinate(ty + transfer_height / 2 + 4) +
             "\">transfers (out / in)</text>\n";
      writer.track(sends[d], ty, half - 0.5, transfer_title, name);
      writer.track(receives[d], ty + half + 0.5, half - 0.5, transfer_title, name);
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

// Writes the chart atomically.
template <adapted_graph G>
void write_svg_gantt(const std::filesystem::path& path, const G& g, const schedule& s,
                     const svg_gantt_options& options = {}) {
  save_text_file(path, svg_gantt(g, s, options));
}

}  // namespace gantry
