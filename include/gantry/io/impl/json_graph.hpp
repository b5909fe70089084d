// The definitions of io/json_graph.hpp: the graph file's fast and checked readers and its writers.
// Included by that header, or, with GANTRY_SEPARATE_COMPILATION, compiled once in the program's unit
// that includes gantry/compiled.hpp.
#pragma once

#include <gantry/core/config.hpp>
#include <gantry/core/huge_pages.hpp>
#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/io/documents.hpp>
#include <gantry/io/graph_schema.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/json_graph.hpp>
#include <gantry/io/json_scan.hpp>
#include <gantry/io/json_support.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gantry {

// A graph file (graph_file, io/documents.hpp): the graph and the document's "metadata" object (an
// empty object when absent).

namespace detail {

// Reads a per-kind time such as a vertex's "compute": a number (seconds), or
// {"default": t, "<kind>": t, ...}.
inline void read_compute(const json_reader& in, const nlohmann::json& value, const std::string& pointer, seconds& time,
                         std::vector<std::pair<std::string, seconds>>& kinds) {
  if (!value.is_object()) {
    time = in.time(value, pointer, "compute time");
    return;
  }
  if (json_reader::find(value, "default") == nullptr)
    in.fail(pointer, "missing field \"default\" (per-kind compute times need a default for other device kinds)");
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it->is_null()) continue;
    const seconds t = in.time(*it, pointer_to(pointer, it.key()), "compute time");
    if (it.key() == "default") time = t;
    else kinds.emplace_back(it.key(), t);
  }
}

// The edge id of some edge a -> b in g (the one that closes a reported cycle).
inline edge_id find_edge(const graph& g, vertex_id a, vertex_id b) {
  edge_id found = no_edge;
  g.for_each_out_edge(a, [&](edge_id e) {
    if (found == no_edge && g.target(e) == b) found = e;
  });
  return found;
}

// Vertex names of a document being read, copied one after another, found by an open-addressing
// table with a cheap hash: reading a graph looks a name up twice per edge, and
// std::unordered_map's node allocations and hashing were a fifth of the fast path's time. At a
// million vertices the table outgrows the caches and each probe is a miss, so: a slot keeps 32 bits
// of the name's hash beside its id, and a probe compares names only where those match (names of
// one length would otherwise each cost a miss on a random name); the table is built once all names
// are known, its slots prefetched ahead; and a lookup is split in two, hash() and prefetch() when
// the name is read, find() a few names later (edge_list() keeps them in flight).
class name_index {
 public:
  void reserve(std::size_t names) { ends_.reserve(names); }
  // Adds `name` as the next id; build() indexes the names added.
  void add(std::string_view name) {
    text_.append(name);
    ends_.push_back(text_.size());
  }

  // Indexes every name added; false when one appears twice.
  [[nodiscard]] bool build() {
    names_.resize(ends_.size());
    for (std::size_t id = 0, begin = 0; id < ends_.size(); begin = ends_[id++])
      names_[id] = std::string_view(text_).substr(begin, ends_[id] - begin);
    std::vector<std::size_t>().swap(ends_);
    std::size_t size = 16;
    while (size < 2 * names_.size()) size *= 2;
    std::vector<slot>().swap(slots_);
    slots_.reserve(size);
    advise_huge_pages(slots_.data(), size * sizeof(slot));  // before the first touch
    slots_.assign(size, slot{});
    mask_ = size - 1;
    std::vector<std::uint64_t> hashes(names_.size());
    for (std::size_t id = 0; id < names_.size(); ++id) hashes[id] = hash(names_[id]);
    constexpr std::size_t ahead = 16;
    for (std::size_t id = 0; id < names_.size(); ++id) {
      if (id + ahead < names_.size()) prefetch(hashes[id + ahead]);
      const std::uint64_t h = hashes[id];
      const auto tag = static_cast<std::uint32_t>(h >> 32);
      std::size_t at = h & mask_;
      for (; slots_[at].id != no_vertex; at = (at + 1) & mask_)
        if (slots_[at].tag == tag && names_[slots_[at].id] == names_[id]) return false;
      slots_[at] = {static_cast<vertex_id>(id), tag};
    }
    return true;
  }

  // The id of `name` (whose hash() is `h`), or no_vertex.
  [[nodiscard]] vertex_id find(std::string_view name, std::uint64_t h) const {
    if (slots_.empty()) return no_vertex;
    const auto tag = static_cast<std::uint32_t>(h >> 32);
    for (std::size_t at = h & mask_; slots_[at].id != no_vertex; at = (at + 1) & mask_)
      if (slots_[at].tag == tag && names_[slots_[at].id] == name) return slots_[at].id;
    return no_vertex;
  }
  [[nodiscard]] vertex_id find(std::string_view name) const { return find(name, hash(name)); }
  // Brings the slot a find() of a name with hash `h` starts at into the cache.
  void prefetch(std::uint64_t h) const noexcept {
    if (!slots_.empty()) __builtin_prefetch(slots_.data() + (h & mask_));
  }

  // Eight bytes at a time, each word mixed in by a multiply and a shift (as in splitmix64).
  [[nodiscard]] static std::uint64_t hash(std::string_view text) noexcept {
    std::uint64_t h = text.size() * 0x9E3779B97F4A7C15ull;
    std::size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
      std::uint64_t word;
      std::memcpy(&word, text.data() + i, 8);
      h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
    }
    std::uint64_t tail = 0;
    for (std::size_t k = 0; i + k < text.size(); ++k)
      tail |= std::uint64_t{static_cast<unsigned char>(text[i + k])} << (8 * k);
    h = (h ^ tail) * 0x94D049BB133111EBull;
    return h ^ (h >> 29);
  }

 private:
  struct slot {
    vertex_id id = no_vertex;
    std::uint32_t tag = 0;  // the high half of the name's hash
  };
  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  // The names one after another, in their own few megabytes: a lookup compares with a name here,
  // near the names looked up before it, and not in the document's text (cold by then).
  std::string text_;
  std::vector<std::size_t> ends_;  // until build(): where each name ends in text_
  std::vector<std::string_view> names_;
};

// The fast path of parse_graph_file(): one pass over the text, no JSON tree. It reads documents
// whose names, groups, ops and keys are plain ASCII without escapes, with each key at most once
// per object and "vertices" before "edges"; for anything else, valid or not, it returns nothing
// and the checked reader (graph_from_json) reads the document and names any problem. On the
// documents it reads, the result equals the checked reader's.
class fast_graph_reader {
 public:
  fast_graph_reader(std::string_view text, std::size_t max_nesting) : in_(text, max_nesting) {}

  [[nodiscard]] std::optional<graph_file> read() {
    graph_file file;
    // Room for every vertex and edge at once, so that the arrays are not grown and copied while
    // reading: each is an object, so the count of '{' before the first "edges" (the key, in the
    // documents this path reads, unless a name holds the word) bounds the vertices and the count
    // after it the edges; a count too small only lets an array grow. memchr jumps from brace to
    // brace with wide loads: several times faster than std::count.
    const auto braces = [](std::string_view text) {
      std::size_t objects = 0;
      const char* const end = text.data() + text.size();
      for (const char* at = text.data(); at < end; ++at, ++objects) {
        at = static_cast<const char*>(std::memchr(at, '{', static_cast<std::size_t>(end - at)));
        if (at == nullptr) break;
      }
      return objects;
    };
    // memmem, not string_view::find, which stops at every quote.
    constexpr std::string_view key = "\"edges\"";
    const void* const found = ::memmem(in_.text().data(), in_.text().size(), key.data(), key.size());
    const std::size_t split = found == nullptr
                                  ? in_.text().size()
                                  : static_cast<std::size_t>(static_cast<const char*>(found) - in_.text().data());
    const std::size_t vertices = braces(in_.text().substr(0, split)), edges = braces(in_.text().substr(split));
    file.graph.reserve(vertices, edges);
    by_name_.reserve(vertices);
    if (!document(file)) return std::nullopt;
    return file;
  }

 private:
  bool document(graph_file& file) {
    if (!in_.take('{')) return false;
    bool format = false, version = false, metadata = false, vertices = false, edges = false;
    if (in_.next() == '}') return false;  // the header is missing: the checked reader says so
    do {
      std::string_view key;
      if (!in_.plain_string(key) || !in_.take(':')) return false;
      if (key == "format") {
        std::string_view value;
        if (format || !in_.plain_string(value) || value != graph_format_name) return false;
        format = true;
      } else if (key == "version") {
        std::string_view token;
        bool integral = false;
        if (version || !in_.number(token, integral) || token != "1") return false;
        version = true;
      } else if (key == "metadata") {
        if (metadata) return false;
        metadata = true;
        if (in_.null()) continue;
        if (in_.next() != '{') return false;
        const std::size_t begin = in_.position();
        if (!in_.skip(/*loose=*/true, 1)) return false;
        try {
          file.metadata = nlohmann::json::parse(in_.text().substr(begin, in_.position() - begin), nullptr, true, true);
        } catch (const nlohmann::json::exception&) {
          return false;
        }
      } else if (key == "vertices") {
        if (vertices || !vertex_list(file.graph) || !by_name_.build()) return false;
        vertices = true;
      } else if (key == "edges") {
        if (edges || !vertices) return false;
        edges = true;
        if (!in_.null() && !edge_list(file.graph)) return false;
      } else {
        return false;  // an unknown key: the checked reader names it
      }
    } while (in_.take(','));
    if (!in_.take('}') || !in_.at_end() || !format || !version || !vertices) return false;
    graph& g = file.graph;
    for (const auto& [backward, name] : forwards_) {
      const vertex_id forward = by_name_.find(name);
      if (forward == no_vertex || forward == backward) return false;
      g.set_forward(backward, forward);
    }
    return !find_byte_overflow(g) && snapshot(g).find_cycle().empty();
  }

  // A time: a number of seconds >= 0 or a duration string.
  bool time(seconds& out) {
    if (in_.next() == '"') {
      std::string_view text;
      if (!in_.plain_string(text)) return false;
      try {
        out = parse_duration(text);
      } catch (const invalid_input&) {
        return false;
      }
      return true;
    }
    return in_.real(out) && out >= 0;
  }
  bool bytes(byte_count& out) {
    if (in_.next() == '"') {
      std::string_view text;
      if (!in_.plain_string(text)) return false;
      try {
        out = parse_bytes(text);
      } catch (const invalid_input&) {
        return false;
      }
      return true;
    }
    return in_.whole(out);
  }
  bool text(std::string& out) {
    std::string_view value;
    if (!in_.plain_string(value)) return false;
    out.assign(value);
    return true;
  }

  bool vertex_list(graph& g) {
    if (!in_.take('[')) return false;
    if (in_.take(']')) return true;
    std::vector<std::pair<std::string_view, seconds>> kinds;
    do {
      if (!in_.take('{')) return false;
      vertex_properties p;
      std::string_view name;
      kinds.clear();
      unsigned seen = 0;
      if (in_.next() != '}') {
        do {
          std::string_view key;
          if (!in_.plain_string(key) || !in_.take(':')) return false;
          const std::size_t index = find_vertex_field(key);
          if (index == vertex_field_count) return false;  // an unknown key: the checked reader names it
          if ((seen >> index) & 1u) return false;         // a key twice: the checked reader decides
          seen |= 1u << index;
          if (in_.null()) continue;  // a null counts as absent
          const vertex_field& f = vertex_fields[index];
          bool ok = true;
          switch (f.type) {
            case field_type::name:
              ok = in_.plain_string(name) && !name.empty();
              break;
            case field_type::time:
              ok = f.per_kind && in_.next() == '{' ? compute_object(p.*f.real, kinds) : time(p.*f.real);
              break;
            case field_type::bytes:
              ok = bytes(p.*f.whole);
              break;
            case field_type::text:
              ok = text(p.*f.text);
              break;
            case field_type::number:
              ok = in_.real(p.*f.real) && p.*f.real >= 0;
              break;
            case field_type::vertex_reference: {
              std::string_view forward;
              ok = in_.plain_string(forward) && !forward.empty();
              if (ok) forwards_.emplace_back(static_cast<vertex_id>(g.vertex_count()), forward);
            }
          }
          if (!ok) return false;
        } while (in_.take(','));
      }
      if (!in_.take('}') || name.empty()) return false;  // name is the one required field
      const auto v = static_cast<vertex_id>(g.vertex_count());
      by_name_.add(name);  // ids follow vertex ids; build() finds names given twice
      p.name.assign(name);
      g.add_vertex(std::move(p));
      // The checked reader sets kinds in the order of its object's keys: sorted.
      std::sort(kinds.begin(), kinds.end());
      for (const auto& [kind, t] : kinds) g.set_compute(v, kind, t);
    } while (in_.take(','));
    return in_.take(']');
  }

  bool compute_object(seconds& default_time, std::vector<std::pair<std::string_view, seconds>>& kinds) {
    if (!in_.take('{') || in_.next() == '}') return false;
    bool has_default = false;
    do {
      std::string_view kind;
      if (!in_.plain_string(kind) || !in_.take(':')) return false;
      for (const auto& [other, t] : kinds)
        if (other == kind) return false;
      if (kind == "default" && has_default) return false;
      if (in_.null()) {
        if (kind == "default") return false;
        continue;
      }
      seconds t = 0;
      if (!time(t)) return false;
      if (kind == "default") {
        has_default = true;
        default_time = t;
      } else {
        kinds.emplace_back(kind, t);
      }
    } while (in_.take(','));
    return in_.take('}') && has_default;
  }

  // An edge read whose ends are not looked up yet: their names, and their hashes, whose slots
  // are being prefetched.
  struct pending_edge {
    std::string_view from, to;
    std::uint64_t from_hash = 0, to_hash = 0;
    byte_count bytes = 0;
  };

  bool edge_list(graph& g) {
    if (!in_.take('[')) return false;
    if (in_.take(']')) return true;
    // Each edge's ends are looked up `ahead` edges after it is read, so that the slots of its
    // names' hashes have arrived in the cache; the edges are added in the document's order.
    constexpr std::size_t ahead = 8;
    std::array<pending_edge, ahead> ring;
    std::size_t read = 0;
    const auto add_oldest = [&](std::size_t k) {
      const pending_edge& e = ring[k % ahead];
      const vertex_id from = by_name_.find(e.from, e.from_hash), to = by_name_.find(e.to, e.to_hash);
      if (from == no_vertex || to == no_vertex) return false;
      g.add_edge(from, to, e.bytes);
      return true;
    };
    do {
      if (!in_.take('{')) return false;
      pending_edge& e = ring[read % ahead];
      if (read >= ahead && !add_oldest(read - ahead)) return false;
      e = {};
      bool has_from = false, has_to = false, has_bytes = false, null_bytes = false;
      if (in_.next() != '}') {
        do {
          std::string_view key;
          if (!in_.plain_string(key) || !in_.take(':')) return false;
          const std::size_t index = find_edge_field(key);
          if (index == edge_from_field || index == edge_to_field) {
            const bool to = index == edge_to_field;
            bool& has = to ? has_to : has_from;
            std::string_view& name = to ? e.to : e.from;
            if (has || !in_.plain_string(name)) return false;
            has = true;
            std::uint64_t& h = to ? e.to_hash : e.from_hash;
            h = name_index::hash(name);
            by_name_.prefetch(h);
          } else if (index == edge_bytes_field) {
            if (has_bytes || null_bytes) return false;
            if (in_.null()) null_bytes = true;
            else if (!bytes(e.bytes)) return false;
            else has_bytes = true;
          } else {
            return false;  // an unknown key: the checked reader names it
          }
        } while (in_.take(','));
      }
      if (!in_.take('}') || !has_from || !has_to) return false;
      ++read;
    } while (in_.take(','));
    for (std::size_t k = read > ahead ? read - ahead : 0; k < read; ++k)
      if (!add_oldest(k)) return false;
    return in_.take(']');
  }

  json_scan in_;
  name_index by_name_;
  std::vector<std::pair<vertex_id, std::string_view>> forwards_;
};

}  // namespace detail

[[nodiscard]] GANTRY_DECL graph_file graph_from_json(const nlohmann::json& document, std::string_view source_name) {
  const detail::json_reader in{std::string(source_name)};
  in.header(document, graph_format_name, graph_format_version);
  in.only_known_keys(document, "", graph_document_keys, "a graph document");
  graph_file file;
  if (const auto* metadata = detail::json_reader::find(document, "metadata"))
    file.metadata = in.object(*metadata, "/metadata");

  const auto& vertices = in.array(in.require(document, "vertices", ""), "/vertices");
  const auto* edges = detail::json_reader::find(document, "edges");
  if (edges != nullptr) in.array(*edges, "/edges");
  graph& g = file.graph;
  g.reserve(vertices.size(), edges != nullptr ? edges->size() : 0);

  std::unordered_map<std::string, vertex_id> by_name;
  by_name.reserve(vertices.size());
  std::vector<std::pair<vertex_id, const nlohmann::json*>> forwards;
  std::vector<std::pair<std::string, seconds>> kinds;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const std::string at = detail::pointer_to("/vertices", i);
    const auto& vertex = in.object(vertices[i], at);
    in.only_known_keys(vertex, at, vertex_field_keys, "a vertex");
    vertex_properties properties;
    kinds.clear();
    const nlohmann::json* forward = nullptr;
    for (const vertex_field& f : vertex_fields) {
      const auto* value = f.required ? &in.require(vertex, f.key, at) : detail::json_reader::find(vertex, f.key);
      if (value == nullptr) continue;
      const std::string field = detail::pointer_to(at, f.key);
      switch (f.type) {
        case field_type::name:
          properties.*f.text = in.name(*value, field);
          break;
        case field_type::time:
          if (f.per_kind) detail::read_compute(in, *value, field, properties.*f.real, kinds);
          else properties.*f.real = in.time(*value, field, f.key);
          break;
        case field_type::bytes:
          properties.*f.whole = in.bytes(*value, field);
          break;
        case field_type::text:
          properties.*f.text = in.string(*value, field);
          break;
        case field_type::number:
          properties.*f.real = in.number(*value, field);
          if (!std::isfinite(properties.*f.real) || properties.*f.real < 0)
            in.fail(field, std::string(f.key) + " must be a finite number >= 0, got " + detail::describe_json(*value));
          break;
        case field_type::vertex_reference:
          forward = value;
          break;
      }
    }
    const auto [existing, inserted] = by_name.try_emplace(properties.name, static_cast<vertex_id>(i));
    if (!inserted)
      in.fail(detail::pointer_to(at, "name"), "duplicate vertex name " + detail::quoted(properties.name, '"') +
                                                  " (also at " + detail::pointer_to("/vertices", existing->second) +
                                                  ")");
    const vertex_id v = g.add_vertex(std::move(properties));
    for (const auto& [kind, time] : kinds) g.set_compute(v, kind, time);
    if (forward != nullptr) forwards.emplace_back(v, forward);
  }

  for (const auto& [backward, forward] : forwards) {
    const std::string at = detail::pointer_to(detail::pointer_to("/vertices", backward), "forward");
    const std::string name = in.name(*forward, at);
    const auto it = by_name.find(name);
    if (it == by_name.end()) in.fail(at, "unknown vertex " + detail::quoted(name, '"') + " (no vertex has this name)");
    if (it->second == backward)
      in.fail(at, "vertex " + detail::quoted(name, '"') + " names itself as its forward vertex");
    g.set_forward(backward, it->second);
  }

  if (edges != nullptr) {
    const auto endpoint = [&](const nlohmann::json& edge, std::string_view key, const std::string& at) {
      const std::string field = detail::pointer_to(at, key);
      const auto& value = in.require(edge, key, at);
      if (!value.is_string()) in.fail(field, "expected a vertex name, got " + detail::describe_json(value));
      const auto it = by_name.find(value.get_ref<const std::string&>());
      if (it == by_name.end())
        in.fail(field,
                "unknown vertex " + detail::quoted(value.get<std::string>(), '"') + " (no vertex has this name)");
      return it->second;
    };
    for (std::size_t i = 0; i < edges->size(); ++i) {
      const std::string at = detail::pointer_to("/edges", i);
      const auto& edge = in.object((*edges)[i], at);
      in.only_known_keys(edge, at, edge_field_keys, "an edge");
      const vertex_id from = endpoint(edge, edge_fields[edge_from_field].key, at);
      const vertex_id to = endpoint(edge, edge_fields[edge_to_field].key, at);
      const std::string_view bytes_key = edge_fields[edge_bytes_field].key;
      byte_count bytes = 0;
      if (const auto* b = detail::json_reader::find(edge, bytes_key))
        bytes = in.bytes(*b, detail::pointer_to(at, bytes_key));
      g.add_edge(from, to, bytes);
    }
  }

  if (const auto overflow = detail::find_byte_overflow(g))
    in.fail(detail::pointer_to(overflow->at_vertex ? "/vertices" : "/edges", overflow->index),
            detail::byte_overflow_reason());
  if (const auto cycle = snapshot(g).find_cycle(); !cycle.empty()) {
    const edge_id closing = detail::find_edge(g, cycle.back(), cycle.front());
    in.fail("/edges", "the graph has a cycle: " + describe_cycle(g, cycle) + " (the edge " +
                          detail::pointer_to("/edges", closing) + " closes it)");
  }
  return file;
}

[[nodiscard]] GANTRY_DECL graph_file parse_graph_file(std::string_view text, std::string_view source_name,
                                                      const read_limits& limits) {
  try {
    if (auto fast = detail::fast_graph_reader(text, limits.max_nesting).read()) return std::move(*fast);
  } catch (const invalid_input&) {
    // A value the graph refuses: the checked reader names it.
  }
  return graph_from_json(detail::parse_json_text(text, source_name, limits.max_nesting), source_name);
}

[[nodiscard]] GANTRY_DECL graph read_graph_json(std::string_view text, std::string_view source_name) {
  return parse_graph_file(text, source_name).graph;
}

[[nodiscard]] GANTRY_DECL graph_file read_graph_file(const std::filesystem::path& path, const read_limits& limits) {
  return detail::with_text_file(path, limits,
                                [&](std::string_view text) { return parse_graph_file(text, path.string(), limits); });
}

[[nodiscard]] GANTRY_DECL graph read_graph(const std::filesystem::path& path, const read_limits& limits) {
  return read_graph_file(path, limits).graph;
}

namespace detail {
// What a graph file needs of g before it is written: vertex names non-empty, unique and valid
// UTF-8 (the file refers to vertices by name), metadata an object. Throws invalid_input.
inline void check_graph_for_writing(const graph& g, const nlohmann::json& metadata) {
  if (!metadata.is_object() && !metadata.is_null())
    throw invalid_input("graph_to_json: metadata must be a JSON object, got " + detail::describe_json(metadata));
  std::unordered_map<std::string_view, vertex_id> seen;
  seen.reserve(g.vertex_count());
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const std::string& name = g[v].name;
    if (name.empty())
      throw invalid_input("graph_to_json: vertex " + std::to_string(v) +
                          " has no name (a graph file refers to vertices by name)");
    if (const std::string problem = detail::utf8_problem(name); !problem.empty())
      throw invalid_input("graph_to_json: the name of vertex " + std::to_string(v) + " is not valid UTF-8 (" + problem +
                          "); JSON strings must be");
    if (const auto [it, inserted] = seen.try_emplace(name, v); !inserted)
      throw invalid_input("graph_to_json: vertices " + std::to_string(it->second) + " and " + std::to_string(v) +
                          " are both named " + detail::quoted(name) + " (names in a graph file must be unique)");
  }
}

}  // namespace detail

[[nodiscard]] GANTRY_DECL nlohmann::ordered_json graph_to_json(const graph& g, const nlohmann::json& metadata) {
  detail::check_graph_for_writing(g, metadata);

  nlohmann::ordered_json document;
  document["format"] = graph_format_name;
  document["version"] = graph_format_version;
  document["metadata"] = metadata.is_null() ? nlohmann::ordered_json::object() : nlohmann::ordered_json(metadata);
  auto& vertices = document["vertices"] = nlohmann::ordered_json::array();
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& p = g[v];
    nlohmann::ordered_json vertex;
    for (const vertex_field& f : vertex_fields) {
      if (!f.always_written && at_default(g, v, f)) continue;
      const std::string key(f.key);
      switch (f.type) {
        case field_type::name:
        case field_type::text:
          vertex[key] = p.*f.text;
          break;
        case field_type::time:
        case field_type::number: {
          nlohmann::ordered_json value =
              detail::finite_number(p.*f.real, "graph_to_json: " + key + " of vertex " + detail::quoted(p.name));
          const auto kinds = f.per_kind ? g.kind_times(v) : decltype(g.kind_times(v)){};
          if (kinds.empty()) {
            vertex[key] = std::move(value);
          } else {
            auto& times = vertex[key] = {{"default", std::move(value)}};
            for (const auto& [kind, time] : kinds) times[kind] = time;
          }
          break;
        }
        case field_type::bytes:
          vertex[key] = p.*f.whole;
          break;
        case field_type::vertex_reference:
          vertex[key] = g[g.forward_of(v)].name;
          break;
      }
    }
    vertices.push_back(std::move(vertex));
  }
  auto& edges = document["edges"] = nlohmann::ordered_json::array();
  for (edge_id e = 0; e < g.edge_count(); ++e)
    edges.push_back({{edge_fields[edge_from_field].key, g[g.source(e)].name},
                     {edge_fields[edge_to_field].key, g[g.target(e)].name},
                     {edge_fields[edge_bytes_field].key, g.bytes(e)}});
  return document;
}

[[nodiscard]] GANTRY_DECL std::string graph_to_json_text(const graph& g, const nlohmann::json& metadata) {
  detail::check_graph_for_writing(g, metadata);
  for (vertex_id v = 0; v < g.vertex_count(); ++v)
    for (const vertex_field& f : vertex_fields)
      if ((f.type == field_type::text && !detail::utf8_problem(g[v].*f.text).empty()) ||
          (f.real != nullptr && !std::isfinite(g[v].*f.real)))
        return detail::document_text(graph_to_json(g, metadata), "graph_to_json");  // throws, naming the value
  std::string out;
  out.reserve(64 + 120 * g.vertex_count() + 80 * g.edge_count());
  out += "{\n  \"format\": \"gantry.graph\",\n  \"version\": 1,\n  \"metadata\": ";
  out += detail::dump_json(metadata.is_null() ? nlohmann::ordered_json::object() : nlohmann::ordered_json(metadata),
                           "graph_to_json");
  out += ",\n  \"vertices\": ";
  out += g.vertex_count() == 0 ? "[]" : "[\n    ";
  for (vertex_id v = 0; v < g.vertex_count(); ++v) {
    const auto& p = g[v];
    if (v > 0) out += ",\n    ";
    char separator = '{';
    for (const vertex_field& f : vertex_fields) {
      if (!f.always_written && at_default(g, v, f)) continue;
      out += separator;
      separator = ',';
      out += '"';  // keys are plain ASCII: nothing to escape
      out += f.key;
      out += "\":";
      switch (f.type) {
        case field_type::name:
        case field_type::text:
          detail::append_json_string(out, p.*f.text);
          break;
        case field_type::time:
        case field_type::number: {
          const auto kinds = f.per_kind && g.kind_count() != 0 ? g.kind_times(v) : decltype(g.kind_times(v)){};
          if (kinds.empty()) {
            detail::append_json_number(out, p.*f.real);
            break;
          }
          out += "{\"default\":";
          detail::append_json_number(out, p.*f.real);
          for (const auto& [kind, time] : kinds) {
            if (!detail::utf8_problem(kind).empty())
              return detail::document_text(graph_to_json(g, metadata), "graph_to_json");  // throws, naming the kind
            out += ',';
            detail::append_json_string(out, kind);
            out += ':';
            detail::append_json_number(out, time);
          }
          out += '}';
          break;
        }
        case field_type::bytes:
          detail::append_json_unsigned(out, p.*f.whole);
          break;
        case field_type::vertex_reference:
          detail::append_json_string(out, g[g.forward_of(v)].name);
          break;
      }
    }
    out += '}';
  }
  if (g.vertex_count() > 0) out += "\n  ]";
  out += ",\n  \"edges\": ";
  out += g.edge_count() == 0 ? "[]" : "[\n    ";
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    if (e > 0) out += ",\n    ";
    out += '{';
    detail::append_json_string(out, edge_fields[edge_from_field].key);
    out += ':';
    detail::append_json_string(out, g[g.source(e)].name);
    out += ',';
    detail::append_json_string(out, edge_fields[edge_to_field].key);
    out += ':';
    detail::append_json_string(out, g[g.target(e)].name);
    out += ',';
    detail::append_json_string(out, edge_fields[edge_bytes_field].key);
    out += ':';
    detail::append_json_unsigned(out, g.bytes(e));
    out += '}';
  }
  if (g.edge_count() > 0) out += "\n  ]";
  out += "\n}\n";
  return out;
}

GANTRY_DECL void write_graph(const std::filesystem::path& path, const graph& g, const nlohmann::json& metadata) {
  save_text_file(path, detail::content_for(path, [&] { return graph_to_json_text(g, metadata); }));
}
GANTRY_DECL void write_graph(const std::filesystem::path& path, const graph_file& file) {
  write_graph(path, file.graph, file.metadata);
}

}  // namespace gantry
