// PipeDream's profiler output (graph.txt, as read by its optimizer's graph.py) as a
// gantry::graph of forward and backward vertices. Bad input throws parse_error naming the file,
// the line and the reason.
//
// Lines, as PipeDream writes them:
//   node4 -- Conv2d(3, 64, kernel_size=(3, 3)) -- forward_compute_time=3.047, backward_compute_time=6.213,
//   activation_size=102760448.0, parameter_size=7168.000 <TAB>node1 -- node4
// Times are milliseconds, sizes bytes; activation_size may be a list "[a; b]" (summed); a
// trailing " -- stage_id=N" (a previous partition) is accepted and ignored; blank lines too.
// parameter_size is the bytes of the layer's parameters (fp32 weights only, no gradients or
// optimizer state); it becomes `persistent` times options.weight_factor.
//
// The graph: node n gives a forward vertex "n" (compute = forward time, output = activation
// size, persistent = parameter size, op = the description) and, unless it is an input (no
// predecessors, no parameters and no backward time), a backward vertex "n.backward" paired with
// it through graph::set_forward (compute = backward time, output = the gradients it sends, the
// sum of its predecessors' activation sizes). Edges: u -> v forward carrying u's activation;
// v.backward -> u.backward, the reversed edge, carrying the same bytes (the gradient of u's
// output); and n -> n.backward carrying n's activation (the stashed activation its backward
// reads), so every backward vertex follows its forward one.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/limits.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gantry {

struct pipedream_options {
  bool backward = true;         // false: forward vertices and edges only
  bool colocate_pairs = false;  // put n and n.backward in colocation group "n" (PipeDream keeps
                                // a layer's forward and backward on one stage)
  std::string backward_suffix = ".backward";
  // An "Input" source's time is data loading, not a stage's work: PipeDream's optimizer zeroes it.
  bool zero_input_time = false;
  // persistent = weight_factor × parameter_size: 1 counts weights only, as PipeDream does; 2 adds
  // gradients, 3 SGD momentum, 4 Adam's two moments.
  double weight_factor = 1.0;
};

namespace detail {

struct pipedream_node {
  std::string id, description;
  double forward_ms = 0, backward_ms = 0, activation = 0, parameters = 0;
  std::size_t line = 0;
};

class pipedream_parser {
 public:
  pipedream_parser(std::string_view text, std::string_view source, const pipedream_options& options)
      : text_(text), source_(source), options_(options) {}

  graph parse() {
    std::size_t line_number = 0;
    std::size_t begin = 0;
    while (begin <= text_.size()) {
      std::size_t end = text_.find('\n', begin);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(begin, end - begin);
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!trim(line).empty()) {
        if (line.front() == '\t' || line.front() == ' ') edge_line(trim(line), line_number);
        else node_line(trim(line), line_number);
      }
      if (end == text_.size()) break;
      begin = end + 1;
    }
    if (nodes_.empty() && trim(text_).empty())
      throw parse_error(std::string(source_) +
                        ": the file is empty (expected PipeDream node lines "
                        "'node1 -- description -- forward_compute_time=...')");
    if (nodes_.empty())
      fail(line_number, "no node lines (expected 'node1 -- description -- forward_compute_time=...')");
    return build();
  }

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& why) const {
    throw parse_error(std::string(source_) + ":" + std::to_string(line) + ": " + why);
  }

  static std::vector<std::string_view> split(std::string_view text, std::string_view separator) {
    std::vector<std::string_view> parts;
    std::size_t begin = 0;
    while (true) {
      const std::size_t at = text.find(separator, begin);
      if (at == std::string_view::npos) {
        parts.push_back(text.substr(begin));
        return parts;
      }
      parts.push_back(text.substr(begin, at - begin));
      begin = at + separator.size();
    }
  }

  double number(std::string_view text, std::size_t line, std::string_view key) const {
    leading_number parsed;
    const std::string_view value = trim(text);
    if (!read_leading_number(value, parsed) || !trim(parsed.rest).empty())
      fail(line, std::string(key) + " is not a number: " + detail::quoted(std::string(value)));
    if (!std::isfinite(parsed.value) || parsed.value < 0)
      fail(line, std::string(key) + " must be finite and >= 0, got " + detail::quoted(value));
    return parsed.value;
  }

  void node_line(std::string_view line, std::size_t line_number) {
    const auto parts = split(line, " -- ");
    if (parts.size() < 3 || parts.size() > 4)
      fail(line_number,
           "expected 'id -- description -- forward_compute_time=..., backward_compute_time=..., "
           "activation_size=..., parameter_size=...', found " +
               std::to_string(parts.size()) + " field(s) separated by ' -- '");
    pipedream_node node{
        .id = std::string(trim(parts[0])), .description = std::string(trim(parts[1])), .line = line_number};
    if (node.id.empty()) fail(line_number, "empty node id");
    // Names and descriptions go into JSON and SVG files, which need UTF-8.
    if (const std::string problem = utf8_problem(node.id); !problem.empty()) fail(line_number, "node id: " + problem);
    if (const std::string problem = utf8_problem(node.description); !problem.empty())
      fail(line_number, "description of node " + detail::quoted(node.id) + ": " + problem);
    if (parts.size() == 4 && !trim(parts[3]).starts_with("stage_id=") && !trim(parts[3]).starts_with("vlayer_id="))
      fail(line_number,
           "unexpected fourth field " + detail::quoted(std::string(trim(parts[3]))) + " (only stage_id=N may follow)");
    bool seen[4] = {false, false, false, false};
    static constexpr std::string_view keys[] = {"forward_compute_time", "backward_compute_time", "activation_size",
                                                "parameter_size"};
    // Splitting at '=' rather than ", " copes with list-valued activation sizes "[a; b]".
    for (const auto field : split(parts[2], ", ")) {
      const std::size_t eq = field.find('=');
      if (eq == std::string_view::npos)
        fail(line_number, "expected key=value, found " + detail::quoted(std::string(field)));
      const std::string_view key = trim(field.substr(0, eq));
      std::string_view value = trim(field.substr(eq + 1));
      std::size_t k = 0;
      while (k < 4 && keys[k] != key) ++k;
      if (k == 4)
        fail(line_number,
             "unknown key " + detail::quoted(key) +
                 " (expected forward_compute_time, backward_compute_time, activation_size, parameter_size)");
      if (seen[k]) fail(line_number, "key " + detail::quoted(std::string(key)) + " given twice");
      seen[k] = true;
      double parsed = 0;
      if (k == 2 && value.starts_with('[')) {
        if (!value.ends_with(']')) fail(line_number, "activation_size list is missing its closing ']'");
        value = value.substr(1, value.size() - 2);
        if (!trim(value).empty())
          for (const auto item : split(value, ";")) parsed += number(item, line_number, key);
      } else {
        parsed = number(value, line_number, key);
      }
      if (k >= 2 && !(parsed < static_cast<double>(max_graph_bytes)))
        fail(line_number, std::string(key) + " " + detail::quoted(value) + " is 2^63 bytes (8 EiB) or more");
      (k == 0 ? node.forward_ms : k == 1 ? node.backward_ms : k == 2 ? node.activation : node.parameters) = parsed;
    }
    for (std::size_t k = 0; k < 4; ++k)
      if (!seen[k]) fail(line_number, "missing key " + detail::quoted(std::string(keys[k])));
    const auto [it, inserted] = index_.try_emplace(node.id, nodes_.size());
    if (!inserted)
      fail(line_number, "node " + detail::quoted(node.id) + " is defined twice (first at line " +
                            std::to_string(nodes_[it->second].line) + ")");
    nodes_.push_back(std::move(node));
  }

  void edge_line(std::string_view line, std::size_t line_number) {
    const auto parts = split(line, " -- ");
    if (parts.size() != 2 || trim(parts[0]).empty() || trim(parts[1]).empty())
      fail(line_number, "expected an edge line '<TAB>from -- to', found " + detail::quoted(std::string(line)));
    edges_.push_back({std::string(trim(parts[0])), std::string(trim(parts[1])), line_number});
  }

  // Sizes are below 2^63 (checked when read, and for the gradient sums in build()), so the
  // conversion is exact and defined.
  static byte_count bytes(double value) { return static_cast<byte_count>(std::round(value)); }

  graph build() const {
    const std::size_t n = nodes_.size();
    std::vector<std::pair<std::size_t, std::size_t>> resolved;
    resolved.reserve(edges_.size());
    std::vector<std::size_t> in_degree(n, 0);
    std::vector<double> gradient_bytes(n, 0);
    for (const auto& e : edges_) {
      const auto from = index_.find(e.from), to = index_.find(e.to);
      if (from == index_.end()) fail(e.line, "edge from unknown node " + detail::quoted(e.from));
      if (to == index_.end()) fail(e.line, "edge to unknown node " + detail::quoted(e.to));
      if (from->second == to->second) fail(e.line, "edge from node " + detail::quoted(e.from) + " to itself");
      resolved.emplace_back(from->second, to->second);
      ++in_degree[to->second];
      gradient_bytes[to->second] += nodes_[from->second].activation;
    }
    graph g;
    g.reserve(2 * n, 2 * edges_.size() + n);
    if (!(options_.weight_factor >= 0) || !std::isfinite(options_.weight_factor))
      throw invalid_input("PipeDream import: weight_factor must be finite and >= 0");
    for (std::size_t i = 0; i < n; ++i) {
      const auto& node = nodes_[i];
      const bool input = in_degree[i] == 0 && node.description.starts_with("Input");
      if (!(std::round(node.parameters * options_.weight_factor) < static_cast<double>(max_graph_bytes))) {
        std::ostringstream why;
        why << "parameter_size " << node.parameters << " x weight_factor " << options_.weight_factor
            << " is 2^63 bytes (8 EiB) or more";
        fail(node.line, why.str());
      }
      (void)g.add_vertex(
          vertex_properties{.name = node.id,
                            .compute = input && options_.zero_input_time ? 0.0 : node.forward_ms / 1000.0,
                            .persistent = bytes(node.parameters * options_.weight_factor),
                            .output = bytes(node.activation),
                            .group = options_.colocate_pairs ? node.id : std::string{},
                            .op = node.description});
    }
    if (options_.backward)
      for (std::size_t i = 0; i < n; ++i)
        if (!(gradient_bytes[i] < static_cast<double>(max_graph_bytes)))
          fail(nodes_[i].line, "the gradients node " + detail::quoted(nodes_[i].id) +
                                   " receives (the activation sizes of its predecessors) add up to 2^63 bytes or more");
    std::vector<vertex_id> backward(n, no_vertex);
    if (options_.backward) {
      std::unordered_map<std::string, std::size_t> names(index_.begin(), index_.end());
      for (std::size_t i = 0; i < n; ++i) {
        const auto& node = nodes_[i];
        if (in_degree[i] == 0 && node.parameters == 0 && node.backward_ms == 0) continue;  // an input
        std::string name = node.id + options_.backward_suffix;
        if (names.contains(name))
          fail(node.line, "the backward vertex of node " + detail::quoted(node.id) + " would be named " +
                              detail::quoted(name) + ", which is already a node (choose another backward_suffix)");
        names.emplace(name, i);
        backward[i] = g.add_vertex(vertex_properties{.name = std::move(name),
                                                     .compute = node.backward_ms / 1000.0,
                                                     .output = bytes(gradient_bytes[i]),
                                                     .group = options_.colocate_pairs ? node.id : std::string{},
                                                     .op = node.description + " backward"});
        g.set_forward(backward[i], static_cast<vertex_id>(i));
      }
    }
    for (const auto& [u, v] : resolved)
      g.add_edge(static_cast<vertex_id>(u), static_cast<vertex_id>(v), bytes(nodes_[u].activation));
    for (std::size_t i = 0; i < n; ++i)
      if (backward[i] != no_vertex) g.add_edge(static_cast<vertex_id>(i), backward[i], bytes(nodes_[i].activation));
    for (const auto& [u, v] : resolved)
      if (backward[u] != no_vertex && backward[v] != no_vertex)
        g.add_edge(backward[v], backward[u], bytes(nodes_[u].activation));
    if (const auto overflow = find_byte_overflow(g)) {
      // Vertices 0..n-1 are the nodes; the rest are backward vertices of nodes, found by name.
      const vertex_id v = overflow->at_vertex ? static_cast<vertex_id>(overflow->index)
                                              : g.source(static_cast<edge_id>(overflow->index));
      const vertex_id node = v < n ? v : g.forward_of(v);
      fail(nodes_[node].line, byte_overflow_reason() + " (reached at node " + detail::quoted(nodes_[node].id) + ")");
    }
    if (const auto cycle = snapshot(g).find_cycle(); !cycle.empty())
      throw parse_error(std::string(source_) + ": the graph has a cycle: " + describe_cycle(g, cycle));
    return g;
  }

  struct edge_record {
    std::string from, to;
    std::size_t line = 0;
  };

  std::string_view text_;
  std::string_view source_;
  const pipedream_options& options_;
  std::vector<pipedream_node> nodes_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<edge_record> edges_;
};

}  // namespace detail

// True when text reads as a PipeDream graph.txt: its first non-blank line is a node line
// "id -- description -- forward_compute_time=...". Used to recognise profiles by content.
[[nodiscard]] inline bool looks_like_pipedream(std::string_view text) {
  const std::size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return false;
  std::string_view line = text.substr(begin, text.find('\n', begin) - begin);
  const std::size_t first = line.find(" -- ");
  return first != std::string_view::npos && line.find(" -- ", first + 4) != std::string_view::npos &&
         line.find("forward_compute_time=") != std::string_view::npos;
}

// Parses graph.txt text. `source_name` (a file name) starts every error message.
[[nodiscard]] inline graph parse_graph_pipedream(std::string_view text, std::string_view source_name = "<string>",
                                                 const pipedream_options& options = {}) {
  return detail::pipedream_parser(text, source_name, options).parse();
}

// Reads a PipeDream graph.txt file (gzip-compressed or not). Throws io_error when it cannot be
// read and parse_error, naming the file and line, when its content is wrong.
[[nodiscard]] inline graph read_graph_pipedream(const std::filesystem::path& path,
                                                const pipedream_options& options = {}, const read_limits& limits = {}) {
  return detail::with_text_file(
      path, limits, [&](std::string_view text) { return parse_graph_pipedream(text, path.string(), options); });
}

}  // namespace gantry
