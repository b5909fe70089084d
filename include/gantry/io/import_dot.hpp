// Graphviz DOT with gantry attributes: read_graph_dot() builds a gantry::graph from a digraph,
// write_graph_dot() writes one back so that files round-trip. Bad input throws parse_error
// naming the file, the line and the reason.
//
// Vertex attributes (values are DOT IDs: bare numbers, identifiers or quoted strings):
//   compute=0.0012 or "1.2ms"     seconds, units ns/us/ms/s/min/h accepted (core/units.hpp)
//   compute_<kind>=...            compute time on devices of that kind (graph::set_compute)
//   persistent, output, temporary bytes, units B/kB/MB/GB/KiB/MiB/GiB/... accepted
//   group, op                     strings;  flops  a number >= 0
//   forward="name"                on a backward vertex: its forward vertex
// Edge attribute: bytes (as above); an edge without it carries its source's output bytes.
// Other attributes (label, color, shape, ...) are ignored, so drawings can carry styling.
//
// Accepted syntax: the DOT language (https://graphviz.org/doc/info/lang.html) for one digraph:
// quoted, HTML and bare IDs, // /* */ and # comments, "a" + "b" concatenation, a -> b -> c chains,
// node [...] and edge [...] defaults (scoped to their subgraph), subgraphs as statement groups and
// as edge operands ({a b} -> c), ports (ignored) and graph attributes (ignored). In quoted strings
// \" and \\ stand for " and \, and a backslash before a newline continues the line. Undirected
// graphs, '--' edges and cycles are rejected.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/io/graph_schema.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/limits.hpp>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gantry {

namespace detail {

class dot_parser {
 public:
  dot_parser(std::string_view text, std::string_view source, const read_limits& limits = {})
      : text_(text), source_(source), max_nesting_(limits.max_nesting) {}

  graph parse() {
    next();
    if (keyword("strict")) next();
    if (keyword("graph")) fail("undirected graphs are not dataflow graphs: write 'digraph' and '->' edges");
    if (!keyword("digraph")) fail("expected 'digraph' at the start of the file, found " + describe());
    next();
    if (token_.kind == token_kind::id) next();  // the graph's name
    scope root;
    const std::size_t line = token_.line;
    expect_punct('{', "after 'digraph'");
    statements(root, line);
    next();
    if (token_.kind != token_kind::end)
      fail("unexpected " + describe() + " after the closing '}' (one digraph per file)");
    return build();
  }

 private:
  enum class token_kind { end, id, punct, arrow, undirected };
  struct token {
    token_kind kind = token_kind::end;
    std::string text;
    bool quoted = false;
    std::size_t line = 1;
  };
  struct attribute {
    std::string value;
    std::size_t line = 0;
  };
  using attributes = std::map<std::string, attribute, std::less<>>;
  struct scope {
    attributes node_defaults, edge_defaults;
  };
  struct node_record {
    std::string name;
    attributes attrs;
    std::size_t line = 0;
  };
  struct edge_record {
    std::size_t from = 0, to = 0;
    attributes attrs;
    std::size_t line = 0;
  };

  [[noreturn]] void fail(const std::string& why, std::size_t line = 0) const {
    throw parse_error(std::string(source_) + ":" + std::to_string(line ? line : token_.line) + ": " + why);
  }

  std::string describe() const {
    switch (token_.kind) {
      case token_kind::end:
        return "the end of the file";
      case token_kind::arrow:
        return "'->'";
      case token_kind::undirected:
        return "'--'";
      case token_kind::punct:
        return "'" + token_.text + "'";
      case token_kind::id:
        return token_.quoted ? detail::quoted(token_.text, '"') : detail::quoted(token_.text);
    }
    return "?";
  }

  bool keyword(std::string_view word) const {
    return token_.kind == token_kind::id && !token_.quoted && equals_ignoring_case(token_.text, word);
  }
  bool punct(char c) const { return token_.kind == token_kind::punct && token_.text[0] == c; }
  void expect_punct(char c, const char* where) {
    if (!punct(c)) fail(std::string("expected '") + c + "' " + where + ", found " + describe());
    next();
  }

  // --- lexer ---------------------------------------------------------------------------------
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  void skip_space_and_comments() {
    bool line_start = pos_ == 0 || text_[pos_ - 1] == '\n';
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
        line_start = true;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '#' && line_start) {  // C preprocessor output lines
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        const std::size_t start_line = line_;
        pos_ += 2;
        while (pos_ < text_.size() && !(text_[pos_] == '*' && peek(1) == '/')) {
          if (text_[pos_] == '\n') ++line_;
          ++pos_;
        }
        if (pos_ >= text_.size()) fail("unterminated /* comment", start_line);
        pos_ += 2;
      } else {
        return;
      }
    }
  }

  std::string quoted_string() {
    const std::size_t start_line = line_;
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("unterminated quoted string", start_line);
      const char c = text_[pos_];
      if (c == '"') break;
      if (c == '\\' && (peek(1) == '"' || peek(1) == '\\')) {
        out += peek(1);
        pos_ += 2;
      } else if (c == '\\' && peek(1) == '\n') {
        ++line_;
        pos_ += 2;
      } else if (c == '\\' && peek(1) == '\r' && peek(2) == '\n') {
        ++line_;
        pos_ += 3;
      } else {
        if (c == '\n') ++line_;
        out += c;
        ++pos_;
      }
    }
    ++pos_;  // closing quote
    return out;
  }

  static bool identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
  }

  void next() {
    skip_space_and_comments();
    token_ = token{};
    token_.line = line_;
    if (pos_ >= text_.size()) return;
    const char c = text_[pos_];
    if (c == '-' && peek(1) == '>') {
      token_.kind = token_kind::arrow;
      pos_ += 2;
      return;
    }
    if (c == '-' && peek(1) == '-') {
      token_.kind = token_kind::undirected;
      pos_ += 2;
      return;
    }
    if (std::string_view("{}[];,=:").find(c) != std::string_view::npos) {
      token_.kind = token_kind::punct;
      token_.text = std::string(1, c);
      ++pos_;
      return;
    }
    token_.kind = token_kind::id;
    if (c == '"') {
      token_.quoted = true;
      token_.text = quoted_string();
      // "a" + "b" concatenation
      while (true) {
        const std::size_t save_pos = pos_, save_line = line_;
        skip_space_and_comments();
        if (peek() != '+') {
          pos_ = save_pos;
          line_ = save_line;
          break;
        }
        ++pos_;
        skip_space_and_comments();
        if (peek() != '"') fail("expected a quoted string after '+'");
        token_.text += quoted_string();
      }
      return;
    }
    if (c == '<') {  // HTML string: balanced angle brackets
      const std::size_t start_line = line_;
      int depth = 0;
      const std::size_t begin = pos_;
      do {
        if (pos_ >= text_.size()) fail("unterminated HTML string", start_line);
        if (text_[pos_] == '<') ++depth;
        else if (text_[pos_] == '>') --depth;
        else if (text_[pos_] == '\n') ++line_;
        ++pos_;
      } while (depth > 0);
      token_.quoted = true;
      token_.text = std::string(text_.substr(begin + 1, pos_ - begin - 2));
      return;
    }
    const auto digit = [](char x) { return std::isdigit(static_cast<unsigned char>(x)) != 0; };
    const bool numeral = digit(c) || (c == '.' && digit(peek(1))) ||
                         (c == '-' && (digit(peek(1)) || (peek(1) == '.' && digit(peek(2)))));
    if (numeral) {
      // A DOT numeral, leniently followed by an exponent and a unit ("1e-3", "10ms", "4KiB").
      const std::size_t begin = pos_;
      if (c == '-') ++pos_;
      while (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.') ++pos_;
      if ((peek() == 'e' || peek() == 'E') &&
          (std::isdigit(static_cast<unsigned char>(peek(1))) ||
           ((peek(1) == '-' || peek(1) == '+') && std::isdigit(static_cast<unsigned char>(peek(2)))))) {
        pos_ += 2;
        while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
      }
      while (identifier_char(peek())) ++pos_;
      token_.text = std::string(text_.substr(begin, pos_ - begin));
      return;
    }
    if (!identifier_char(c)) fail("unexpected character " + detail::quoted(std::string_view(&c, 1)));
    const std::size_t begin = pos_;
    while (identifier_char(peek())) ++pos_;
    token_.text = std::string(text_.substr(begin, pos_ - begin));
    if (peek() == '.' || (peek() == '-' && peek(1) != '>' && peek(1) != '-'))
      fail(detail::quoted(token_.text + peek() + "...") + " is not a DOT ID: quote IDs that contain '" + peek() +
           "' (\"aten.relu\", say)");
  }

  // --- grammar -------------------------------------------------------------------------------
  // Parses statements up to the matching '}' (left as the current token).
  void statements(scope& sc, std::size_t open_line) {
    while (!punct('}')) {
      if (token_.kind == token_kind::end)
        fail("missing '}' at the end of the file (the '{' at line " + std::to_string(open_line) + " is never closed)");
      statement(sc);
      while (punct(';') || punct(',')) next();
    }
  }

  void statement(scope& sc) {
    if (keyword("node") || keyword("edge") || keyword("graph")) {
      const std::string which = token_.text;
      next();
      if (!punct('[')) fail("expected '[' after " + detail::quoted(which) + ", found " + describe());
      attributes list;
      attribute_lists(list);
      if (equals_ignoring_case(which, "node")) merge(sc.node_defaults, list);
      else if (equals_ignoring_case(which, "edge")) merge(sc.edge_defaults, list);
      return;
    }
    if (token_.kind == token_kind::id && !keyword("subgraph")) {
      // ID '=' ID is a graph attribute; anything else starts a node or edge statement.
      const token first = token_;
      next();
      if (punct('=')) {
        next();
        if (token_.kind != token_kind::id) fail("expected a value after '=', found " + describe());
        next();
        return;
      }
      std::vector<std::size_t> operand{node_ref(first, sc)};
      skip_port();
      edge_chain(std::move(operand), sc, first.line);
      return;
    }
    if (keyword("subgraph") || punct('{')) {
      const std::size_t line = token_.line;
      auto members = subgraph(sc);
      edge_chain(std::move(members), sc, line);
      return;
    }
    fail("expected a statement, found " + describe());
  }

  // After an operand: zero or more "-> operand", then optional attributes.
  void edge_chain(std::vector<std::size_t> left, scope& sc, std::size_t line) {
    std::vector<std::vector<std::size_t>> operands{std::move(left)};
    while (token_.kind == token_kind::arrow || token_.kind == token_kind::undirected) {
      if (token_.kind == token_kind::undirected) fail("'--' is an undirected edge; a digraph uses '->'");
      next();
      if (keyword("subgraph") || punct('{')) {
        operands.push_back(subgraph(sc));
      } else if (token_.kind == token_kind::id) {
        const token id = token_;
        next();
        operands.push_back({node_ref(id, sc)});
        skip_port();
      } else {
        fail("expected a vertex or subgraph after '->', found " + describe());
      }
    }
    attributes list;
    if (punct('[')) attribute_lists(list);
    if (operands.size() == 1) {
      // A node statement: its attributes apply to the node(s).
      for (const auto v : operands.front()) merge(nodes_[v].attrs, list);
      return;
    }
    attributes edge_attrs = sc.edge_defaults;
    merge(edge_attrs, list);
    for (std::size_t k = 0; k + 1 < operands.size(); ++k)
      for (const auto u : operands[k])
        for (const auto v : operands[k + 1]) edges_.push_back({u, v, edge_attrs, line});
  }

  std::vector<std::size_t> subgraph(scope& outer) {
    if (keyword("subgraph")) {
      next();
      if (token_.kind == token_kind::id) next();
    }
    // statements -> statement -> subgraph recurse once per level: bound the depth.
    if (nesting_ >= max_nesting_)
      fail("subgraphs nest deeper than " + std::to_string(max_nesting_) +
           " levels (the limit, read_limits::max_nesting)");
    const std::size_t line = token_.line;
    expect_punct('{', "to open the subgraph");
    ++nesting_;
    scope inner = outer;  // defaults are scoped: the subgraph's own do not leak out
    const std::size_t before = member_log_.size();
    statements(inner, line);
    --nesting_;
    next();  // '}'
    std::vector<std::size_t> members;
    std::vector<char> seen(nodes_.size(), 0);
    for (std::size_t i = before; i < member_log_.size(); ++i)
      if (!seen[member_log_[i]]) {
        seen[member_log_[i]] = 1;
        members.push_back(member_log_[i]);
      }
    return members;
  }

  void skip_port() {
    for (int parts = 0; parts < 2 && punct(':'); ++parts) {
      next();
      if (token_.kind != token_kind::id) fail("expected a port name after ':', found " + describe());
      next();
    }
  }

  std::size_t node_ref(const token& id, const scope& sc) {
    auto [it, inserted] = index_.try_emplace(id.text, nodes_.size());
    if (inserted) nodes_.push_back({id.text, sc.node_defaults, id.line});
    member_log_.push_back(it->second);
    return it->second;
  }

  void attribute_lists(attributes& out) {
    while (punct('[')) {
      next();
      while (!punct(']')) {
        if (token_.kind != token_kind::id) fail("expected an attribute name or ']', found " + describe());
        const std::string name = token_.text;
        const std::size_t line = token_.line;
        next();
        if (!punct('=')) fail("expected '=' after attribute " + detail::quoted(name) + ", found " + describe());
        next();
        if (token_.kind != token_kind::id)
          fail("expected a value for attribute " + detail::quoted(name) + ", found " + describe());
        out[name] = {token_.text, line};
        next();
        while (punct(',') || punct(';')) next();
      }
      next();  // ']'
    }
  }

  static void merge(attributes& into, const attributes& from) {
    for (const auto& [k, v] : from) into[k] = v;
  }

  // --- semantics -----------------------------------------------------------------------------
  template <class F>
  auto convert(const std::string& vertex, const std::string& name, const attribute& a, F&& parse) const {
    try {
      return parse(a.value);
    } catch (const invalid_input& e) {
      fail("attribute " + detail::quoted(name) + " of " + vertex + ": " + e.what(), a.line);
    }
  }

  graph build() const {
    graph g;
    g.reserve(nodes_.size(), edges_.size());
    std::vector<std::pair<vertex_id, const attribute*>> forwards;
    // Names and strings go into JSON and SVG files, which need UTF-8: refuse other bytes here,
    // where the line is known.
    const auto require_utf8 = [&](std::string_view text, const std::string& what, std::size_t line) {
      if (const std::string problem = utf8_problem(text); !problem.empty()) fail(what + ": " + problem, line);
    };
    for (const auto& node : nodes_) {
      require_utf8(node.name, "the name of a vertex", node.line);
      const std::string who = "vertex " + detail::quoted(node.name, '"');
      for (const auto& [name, a] : node.attrs) {
        require_utf8(name, "an attribute name of " + who, a.line);
        const std::size_t index = find_vertex_field(name);
        if (index < vertex_field_count && (vertex_fields[index].type == field_type::text ||
                                           vertex_fields[index].type == field_type::vertex_reference))
          require_utf8(a.value, "attribute " + detail::quoted(name) + " of " + who, a.line);
      }
      vertex_properties p{.name = node.name};
      std::vector<std::pair<std::string, seconds>> kinds;
      for (const auto& [name, a] : node.attrs) {
        const std::size_t index = find_vertex_field(name);
        if (index == vertex_field_count) {
          // "<key>_<kind>": the time of a per-kind field on devices of that kind.
          for (const vertex_field& f : vertex_fields)
            if (f.per_kind && name.size() > f.key.size() + 1 && name.starts_with(f.key) && name[f.key.size()] == '_')
              kinds.emplace_back(name.substr(f.key.size() + 1), convert(who, name, a, parse_duration));
          continue;  // other attributes are styling
        }
        const vertex_field& f = vertex_fields[index];
        switch (f.type) {
          case field_type::name:
            break;  // a node's name is its ID
          case field_type::time:
            p.*f.real = convert(who, name, a, parse_duration);
            break;
          case field_type::bytes:
            p.*f.whole = convert(who, name, a, parse_bytes);
            break;
          case field_type::number:
            p.*f.real = convert(who, name, a, parse_flops);
            break;
          case field_type::text:
            p.*f.text = a.value;
            break;
          case field_type::vertex_reference:
            forwards.emplace_back(static_cast<vertex_id>(g.vertex_count()), &a);
            break;
        }
      }
      const auto v = g.add_vertex(std::move(p));
      for (const auto& [kind, time] : kinds) g.set_compute(v, kind, time);
    }
    for (const auto& [backward, a] : forwards) {
      const auto it = index_.find(a->value);
      if (it == index_.end())
        fail("attribute 'forward' of vertex " + detail::quoted(g[backward].name, '"') + " names " +
                 detail::quoted(a->value, '"') + ", which is not a vertex of the graph",
             a->line);
      if (it->second == backward)
        fail("vertex " + detail::quoted(g[backward].name, '"') + " names itself as its forward vertex", a->line);
      g.set_forward(backward, static_cast<vertex_id>(it->second));
    }
    for (const auto& e : edges_) {
      if (e.from == e.to)
        fail("edge " + detail::quoted(nodes_[e.from].name, '"') + " -> itself: a dataflow graph has no self-loops",
             e.line);
      byte_count bytes = g[static_cast<vertex_id>(e.from)].output;
      const std::string bytes_key(edge_fields[edge_bytes_field].key);
      if (const auto it = e.attrs.find(bytes_key); it != e.attrs.end())
        bytes = convert(
            "edge " + detail::quoted(nodes_[e.from].name, '"') + " -> " + detail::quoted(nodes_[e.to].name, '"'),
            bytes_key, it->second, parse_bytes);
      g.add_edge(static_cast<vertex_id>(e.from), static_cast<vertex_id>(e.to), bytes);
    }
    if (const auto overflow = find_byte_overflow(g))
      fail(byte_overflow_reason() + " (reached at " +
               (overflow->at_vertex ? "vertex " + detail::quoted(nodes_[overflow->index].name, '"')
                                    : "edge " + detail::quoted(nodes_[edges_[overflow->index].from].name, '"') +
                                          " -> " + detail::quoted(nodes_[edges_[overflow->index].to].name, '"')) +
               ")",
           overflow->at_vertex ? nodes_[overflow->index].line : edges_[overflow->index].line);
    if (const auto cycle = snapshot(g).find_cycle(); !cycle.empty())
      throw parse_error(std::string(source_) + ": the graph has a cycle: " + describe_cycle(g, cycle));
    return g;
  }

  static double parse_flops(std::string_view text) {
    leading_number number;
    const std::string_view input = trim(text);
    if (!read_leading_number(input, number) || !trim(number.rest).empty() || !std::isfinite(number.value) ||
        number.value < 0)
      throw invalid_input("expected a finite number >= 0, got " + detail::quoted(std::string(text)));
    return number.value;
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t max_nesting_;
  std::size_t nesting_ = 0;  // subgraphs open around the current token
  std::size_t pos_ = 0, line_ = 1;
  token token_;
  std::vector<node_record> nodes_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<edge_record> edges_;
  std::vector<std::size_t> member_log_;  // every node mention, in order (for subgraph members)
};

// A DOT ID for `text`: bare when it is an identifier or a plain decimal numeral, quoted otherwise.
inline std::string dot_id(std::string_view text) {
  const auto is_identifier = [&] {
    if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
    for (const char c : text)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    static constexpr std::string_view keywords[] = {"node", "edge", "graph", "digraph", "subgraph", "strict"};
    for (const auto k : keywords)
      if (equals_ignoring_case(text, k)) return false;
    return true;
  };
  const auto is_numeral = [&] {
    std::size_t i = text.starts_with('-') ? 1 : 0, digits = 0, dots = 0;
    for (; i < text.size(); ++i) {
      if (std::isdigit(static_cast<unsigned char>(text[i]))) ++digits;
      else if (text[i] == '.') ++dots;
      else return false;
    }
    return digits > 0 && dots <= 1;
  };
  if (is_identifier() || is_numeral()) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Shortest text that reads back as the same double.
inline std::string exact_number(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

}  // namespace detail

// Parses DOT text. `source_name` (a file name) starts every error message.
[[nodiscard]] inline graph parse_graph_dot(std::string_view text, std::string_view source_name = "<string>",
                                           const read_limits& limits = {}) {
  return detail::dot_parser(text, source_name, limits).parse();
}

// Reads a DOT file (gzip-compressed or not). Throws io_error when it cannot be read and
// parse_error, naming the file and line, when its content is wrong.
[[nodiscard]] inline graph read_graph_dot(const std::filesystem::path& path, const read_limits& limits = {}) {
  return detail::with_text_file(path, limits,
                                [&](std::string_view text) { return parse_graph_dot(text, path.string(), limits); });
}

// Writes g as a digraph with the attributes above; read_graph_dot() gives back the same graph
// (names, times, bytes, groups, ops, FLOPs, forward pairs, per-kind times, edge order).
// Vertex names must be unique, as edges refer to vertices by name.
inline void write_graph_dot(std::ostream& out, const graph& g, std::string_view graph_name = "gantry") {
  std::unordered_map<std::string_view, vertex_id> seen;
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    if (!seen.try_emplace(g[v].name, v).second)
      throw invalid_input("write_graph_dot: vertices " + std::to_string(seen[g[v].name]) + " and " + std::to_string(v) +
                          " share the name " + detail::quoted(g[v].name, '"'));
  using detail::dot_id;
  using detail::exact_number;
  out << "digraph " << dot_id(graph_name) << " {\n";
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& p = g[v];
    out << "  " << dot_id(p.name);
    const char* separator = " [";
    for (const vertex_field& f : vertex_fields) {
      if (f.type == field_type::name || (!f.always_written && at_default(g, v, f))) continue;
      out << separator << f.key << "=";
      separator = ", ";
      switch (f.type) {
        case field_type::name:
        case field_type::text:
          out << dot_id(p.*f.text);
          break;
        case field_type::time:
        case field_type::number:
          out << dot_id(exact_number(p.*f.real));
          if (f.per_kind)
            for (const auto& [kind, time] : g.kind_times(v))
              out << ", " << dot_id(std::string(f.key) + "_" + kind) << "=" << dot_id(exact_number(time));
          break;
        case field_type::bytes:
          out << p.*f.whole;
          break;
        case field_type::vertex_reference:
          out << dot_id(g[g.forward_of(v)].name);
          break;
      }
    }
    out << (separator[0] == ' ' ? "" : "]") << ";\n";
  }
  for (edge_id e = 0; e < g.edge_count(); ++e)
    out << "  " << dot_id(g[g.source(e)].name) << " -> " << dot_id(g[g.target(e)].name) << " ["
        << edge_fields[edge_bytes_field].key << "=" << g.bytes(e) << "];\n";
  out << "}\n";
}

[[nodiscard]] inline std::string write_graph_dot(const graph& g, std::string_view graph_name = "gantry") {
  std::ostringstream out;
  write_graph_dot(out, g, graph_name);
  return out.str();
}

}  // namespace gantry
