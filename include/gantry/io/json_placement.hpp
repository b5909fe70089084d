// Writing and reading a placement as a "gantry.placement" JSON document (docs/format.md): the
// device of every vertex by name, the placement order, the outcome, the cluster it was made for,
// and optionally the summary and vertex times of a schedule. Reading maps names back to the ids
// of a given graph and cluster.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/adaptor.hpp>
#include <gantry/io/document_schema.hpp>
#include <gantry/io/documents.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/io/json_support.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/schedule/schedule.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gantry {

inline constexpr std::string_view placement_format_name = "gantry.placement";
inline constexpr int placement_format_version = 1;

// The identifier of a status in files: its name from status's one table (core/types.hpp) with
// '_' for ' ': "ok", "out_of_memory", "over_capacity", "infeasible", "solver_error".
[[nodiscard]] inline std::string status_identifier(status s) {
  std::string identifier = to_string(s);
  std::replace(identifier.begin(), identifier.end(), ' ', '_');
  return identifier;
}
// The status whose identifier is `text` (any case); nullopt for anything else.
[[nodiscard]] inline std::optional<status> parse_status(std::string_view text) {
  if (text.find(' ') != std::string_view::npos) return std::nullopt;
  std::string name(text);
  std::replace(name.begin(), name.end(), '_', ' ');
  return parse_enum<status>(name);
}
// "ok, out_of_memory, ... or solver_error", for messages.
[[nodiscard]] inline std::string status_identifiers() {
  const auto names = enum_names(status{});
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += status_identifier(names[i].value);
  }
  return out;
}

// placement_json_options and placement_file: io/documents.hpp.

namespace detail {

// Vertex name -> id of g; throws invalid_input when two vertices share a name, since a file could
// not say which one it means.
template <adapted_graph G>
std::unordered_map<std::string, vertex_id> vertex_ids_by_name(const G& g, std::string_view caller) {
  const std::size_t n = graph_adaptor<G>::vertex_count(g);
  std::unordered_map<std::string, vertex_id> ids;
  ids.reserve(n);
  for (vertex_id v = 0; v < n; ++v)
    if (const auto [it, inserted] = ids.try_emplace(vertex_name(g, v), v); !inserted)
      throw invalid_input(std::string(caller) + ": vertices " + std::to_string(it->second) + " and " +
                          std::to_string(v) + " are both named " + detail::quoted(it->first) +
                          " (a placement file refers to vertices by name)");
  return ids;
}

inline void check_device_names(const cluster& c, std::string_view caller) {
  std::unordered_map<std::string_view, device_id> seen;
  for (device_id d = 0; d < c.device_count(); ++d)
    if (const auto [it, inserted] = seen.try_emplace(c[d].name, d); !inserted || c[d].name.empty())
      throw invalid_input(
          std::string(caller) + ": device " + std::to_string(d) +
          (c[d].name.empty() ? " has no name" : " has the same name as device " + std::to_string(it->second)) +
          " (a placement file refers to devices by name)");
}

// The "gantry.placement" document of p without its two per-vertex arrays ("placement" and
// "order", which come last), after every check of the arguments, the order's and the times' too.
template <adapted_graph G>
[[nodiscard]] nlohmann::ordered_json placement_head(const G& g, const cluster& c, const placement& p,
                                                    const placement_json_options& options, bool names_checked = false) {
  const std::size_t n = graph_adaptor<G>::vertex_count(g);
  if (!names_checked) (void)detail::vertex_ids_by_name(g, "placement_to_json");
  detail::check_device_names(c, "placement_to_json");
  if (p.device.size() != n)
    throw invalid_input("placement_to_json: the placement has " + std::to_string(p.device.size()) +
                        " devices but the graph has " + std::to_string(n) + " vertices");
  for (vertex_id v = 0; v < n; ++v)
    if (p.device[v] != no_device && p.device[v] >= c.device_count())
      throw invalid_input("placement_to_json: vertex " + detail::quoted(vertex_name(g, v)) + " is on device " +
                          std::to_string(p.device[v]) + " but the cluster has " + std::to_string(c.device_count()));
  const schedule* s = options.schedule;
  if (s != nullptr && (s->start.size() != n || s->finish.size() != n))
    throw invalid_input("placement_to_json: the schedule has times for " + std::to_string(s->start.size()) +
                        " vertices but the graph has " + std::to_string(n));
  if (!options.metadata.is_object() && !options.metadata.is_null())
    throw invalid_input("placement_to_json: metadata must be a JSON object, got " +
                        detail::describe_json(options.metadata));
  for (const vertex_id v : p.order)
    if (v >= n)
      throw invalid_input("placement_to_json: the order names vertex " + std::to_string(v) + " but the graph has " +
                          std::to_string(n));
  if (s != nullptr)
    for (vertex_id v = 0; v < n; ++v) {
      if (!std::isfinite(s->start[v]))
        (void)detail::finite_number(s->start[v], "placement_to_json: start of " + detail::quoted(vertex_name(g, v)));
      if (!std::isfinite(s->finish[v]))
        (void)detail::finite_number(s->finish[v], "placement_to_json: finish of " + detail::quoted(vertex_name(g, v)));
    }

  nlohmann::ordered_json document;
  document["format"] = placement_format_name;
  document["version"] = placement_format_version;
  document["algorithm"] = options.algorithm;
  document["status"] = status_identifier(p.outcome.code);
  document["message"] = p.outcome.message;
  if (!options.metadata.is_null() && !options.metadata.empty())
    document["metadata"] = nlohmann::ordered_json(options.metadata);
  document["placement_time"] = detail::finite_number(p.placement_time, "placement_to_json: placement_time");
  if (s != nullptr) {
    document["makespan"] = detail::finite_number(s->makespan, "placement_to_json: makespan");
    document["bytes_moved"] = s->bytes_moved;
    document["transfers"] = s->transfers.size();
  }
  auto& devices = document["devices"] = nlohmann::ordered_json::array();
  for (const auto& dev : c.devices()) devices.push_back(dev.name);
  // The whole cluster, so that the file can be simulated again without its cluster file.
  document["cluster"] = cluster_to_json(c);
  if (s != nullptr) {
    auto& summary = document["device_summary"] = nlohmann::ordered_json::array();
    for (device_id d = 0; d < c.device_count(); ++d) {
      nlohmann::ordered_json entry = {{"device", c[d].name}};
      if (d < s->order.size()) entry["vertices"] = s->order[d].size();
      if (d < s->busy.size()) entry["busy"] = s->busy[d];
      if (d < s->peak_memory.size()) entry["peak_memory"] = s->peak_memory[d];
      if (d < s->peak_memory_time.size()) entry["peak_memory_time"] = s->peak_memory_time[d];
      summary.push_back(std::move(entry));
    }
  }
  return document;
}
}  // namespace detail

// The "gantry.placement" document of p for graph g on cluster c.
template <adapted_graph G>
[[nodiscard]] nlohmann::ordered_json placement_to_json(const G& g, const cluster& c, const placement& p,
                                                       const placement_json_options& options = {}) {
  nlohmann::ordered_json document = detail::placement_head(g, c, p, options);
  const std::size_t n = graph_adaptor<G>::vertex_count(g);
  const schedule* s = options.schedule;
  auto& entries = document["placement"] = nlohmann::ordered_json::array();
  for (vertex_id v = 0; v < n; ++v) {
    nlohmann::ordered_json entry = {{"vertex", vertex_name(g, v)}};
    entry["device"] =
        p.device[v] == no_device ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c[p.device[v]].name);
    if (s != nullptr) {
      entry["start"] = s->start[v];
      entry["finish"] = s->finish[v];
    }
    entries.push_back(std::move(entry));
  }
  auto& order = document["order"] = nlohmann::ordered_json::array();
  for (const vertex_id v : p.order) order.push_back(vertex_name(g, v));
  return document;
}

// The "gantry.placement" JSON text, one vertex per line: the text of
// detail::document_text(placement_to_json()), its two per-vertex arrays written directly instead of
// through a JSON tree (times in the shortest digits that read back exactly, which nlohmann's dump
// now and then writes with one more).
template <adapted_graph G>
[[nodiscard]] std::string placement_to_json_text(const G& g, const cluster& c, const placement& p,
                                                 const placement_json_options& options = {}) {
  const std::size_t n = graph_adaptor<G>::vertex_count(g);
  std::vector<std::string> names(n);
  for (vertex_id v = 0; v < n; ++v) {
    names[v] = vertex_name(g, v);
    if (!detail::utf8_problem(names[v]).empty())  // the tree's writer says what is wrong, and where
      return detail::document_text(placement_to_json(g, c, p, options), "placement_to_json");
  }
  for (device_id d = 0; d < c.device_count(); ++d)
    if (!detail::utf8_problem(c[d].name).empty())
      return detail::document_text(placement_to_json(g, c, p, options), "placement_to_json");
  {  // names are unique (vertex_ids_by_name's check, on views of the names at hand)
    std::unordered_map<std::string_view, vertex_id> seen;
    seen.reserve(n);
    for (vertex_id v = 0; v < n; ++v)
      if (const auto [it, inserted] = seen.try_emplace(names[v], v); !inserted)
        throw invalid_input("placement_to_json: vertices " + std::to_string(it->second) + " and " + std::to_string(v) +
                            " are both named " + detail::quoted(names[v]) +
                            " (a placement file refers to vertices by name)");
  }
  std::string out = detail::document_text(detail::placement_head(g, c, p, options, true), "placement_to_json");
  out.resize(out.size() - 3);  // the head's closing "\n}\n": the two arrays follow
  const schedule* s = options.schedule;
  out.reserve(out.size() + n * (s != nullptr ? 96 : 48) + p.order.size() * 16);
  out += ",\n  \"placement\": ";
  out += n == 0 ? "[]" : "[\n    ";
  for (vertex_id v = 0; v < n; ++v) {
    if (v > 0) out += ",\n    ";
    out += "{\"vertex\":";
    detail::append_json_string(out, names[v]);
    out += ",\"device\":";
    if (p.device[v] == no_device) {
      out += "null";
    } else {
      detail::append_json_string(out, c[p.device[v]].name);
    }
    if (s != nullptr) {
      out += ",\"start\":";
      detail::append_json_number(out, s->start[v]);
      out += ",\"finish\":";
      detail::append_json_number(out, s->finish[v]);
    }
    out += '}';
  }
  if (n > 0) out += "\n  ]";
  // The order's names packed into lines of about 100 characters, as document_text packs them.
  out += ",\n  \"order\": ";
  out += p.order.empty() ? "[]" : "[\n    ";
  std::size_t line = 0;
  std::string element;
  for (std::size_t i = 0; i < p.order.size(); ++i) {
    element.clear();
    detail::append_json_string(element, names[p.order[i]]);
    detail::append_array_element(out, line, i, element, /*plain=*/true);
  }
  if (!p.order.empty()) out += "\n  ]";
  out += "\n}\n";
  return out;
}

// Writes the placement document atomically (gzip-compressed when the path ends in ".gz"). A value
// the document cannot hold (a non-finite makespan) throws invalid_input naming the path.
template <adapted_graph G>
void write_placement(const std::filesystem::path& path, const G& g, const cluster& c, const placement& p,
                     const placement_json_options& options = {}) {
  save_text_file(path, detail::content_for(path, [&] { return placement_to_json_text(g, c, p, options); }));
}

// Reads a parsed "gantry.placement" document against graph g and cluster c: every vertex and
// device name must exist there; with status "ok" every vertex must be placed exactly once. Throws
// parse_error naming the source, the JSON pointer and the name.
template <adapted_graph G>
[[nodiscard]] placement_file placement_from_json(const nlohmann::json& document, const G& g, const cluster& c,
                                                 std::string_view source_name = "<json>") {
  const detail::json_reader in{std::string(source_name)};
  in.header(document, placement_format_name, placement_format_version);
  in.check_members(document, "", schema::placement_document);
  const auto vertex_ids = detail::vertex_ids_by_name(g, "placement_from_json");
  const std::size_t n = graph_adaptor<G>::vertex_count(g);

  placement_file file;
  placement& p = file.placement;
  if (const auto* algorithm = detail::json_reader::find(document, "algorithm"))
    file.algorithm = in.string(*algorithm, "/algorithm");
  if (const auto* value = detail::json_reader::find(document, "status")) {
    const std::string text = in.string(*value, "/status");
    const auto parsed = parse_status(text);
    if (!parsed)
      in.fail("/status", "unknown status " + detail::quoted(text) + " (expected " + status_identifiers() + ")");
    p.outcome.code = *parsed;
  }
  if (const auto* message = detail::json_reader::find(document, "message"))
    p.outcome.message = in.string(*message, "/message");
  if (const auto* metadata = detail::json_reader::find(document, "metadata"))
    file.metadata = in.object(*metadata, "/metadata");
  if (const auto* time = detail::json_reader::find(document, "placement_time"))
    p.placement_time = in.time(*time, "/placement_time", "placement time");
  if (const auto* makespan = detail::json_reader::find(document, "makespan"))
    file.makespan = in.time(*makespan, "/makespan", "makespan");

  const auto device_id_of = [&](const nlohmann::json& value, const std::string& at) {
    const std::string name = in.string(value, at);
    const auto d = c.find(name);
    if (!d) in.fail(at, "unknown device " + detail::quoted(name, '"') + " (the cluster has no device of this name)");
    return *d;
  };
  if (const auto* devices = detail::json_reader::find(document, "devices")) {
    in.array(*devices, "/devices");
    for (std::size_t i = 0; i < devices->size(); ++i)
      (void)device_id_of((*devices)[i], detail::pointer_to("/devices", i));
  }
  const auto vertex_id_of = [&](const nlohmann::json& value, const std::string& at) {
    const std::string name = in.string(value, at);
    const auto it = vertex_ids.find(name);
    if (it == vertex_ids.end())
      in.fail(at, "unknown vertex " + detail::quoted(name, '"') + " (the graph has no vertex of this name)");
    return it->second;
  };

  const auto& entries = in.array(in.require(document, "placement", ""), "/placement");
  p.device.assign(n, no_device);
  std::vector<std::size_t> entry_of(n, static_cast<std::size_t>(-1));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string at = detail::pointer_to("/placement", i);
    const auto& entry = in.check_members(entries[i], at, schema::placement_entry);
    const vertex_id v = vertex_id_of(in.require(entry, "vertex", at), detail::pointer_to(at, "vertex"));
    if (entry_of[v] != static_cast<std::size_t>(-1))
      in.fail(detail::pointer_to(at, "vertex"), "vertex " + detail::quoted(vertex_name(g, v), '"') +
                                                    " is placed twice (also at " +
                                                    detail::pointer_to("/placement", entry_of[v]) + ")");
    entry_of[v] = i;
    if (const auto* dev = detail::json_reader::find(entry, "device"))
      p.device[v] = device_id_of(*dev, detail::pointer_to(at, "device"));
    else if (p.outcome.code == status::ok)
      in.fail(at, "vertex " + detail::quoted(vertex_name(g, v), '"') + " has no device, but the status is ok");
  }
  if (p.outcome.code == status::ok) {
    std::size_t missing = 0;
    std::string names;
    for (vertex_id v = 0; v < n; ++v)
      if (entry_of[v] == static_cast<std::size_t>(-1)) {
        if (++missing <= 5) names += (missing > 1 ? ", \"" : "\"") + vertex_name(g, v) + "\"";
      }
    if (missing != 0)
      in.fail("/placement", std::to_string(missing) + " of the graph's " + std::to_string(n) +
                                " vertices are not placed: " + names + (missing > 5 ? ", ..." : ""));
  }

  // Read past (a schedule's summary), but held to its table like everything else (check_members
  // above made it a list).
  if (const auto* summary = detail::json_reader::find(document, "device_summary")) {
    for (std::size_t i = 0; i < summary->size(); ++i)
      in.check_members((*summary)[i], detail::pointer_to("/device_summary", i), schema::placement_device_summary);
  }

  if (const auto* order = detail::json_reader::find(document, "order")) {
    in.array(*order, "/order");
    std::vector<std::size_t> position(n, static_cast<std::size_t>(-1));
    p.order.reserve(order->size());
    for (std::size_t i = 0; i < order->size(); ++i) {
      const std::string at = detail::pointer_to("/order", i);
      const vertex_id v = vertex_id_of((*order)[i], at);
      if (position[v] != static_cast<std::size_t>(-1))
        in.fail(at, "vertex " + detail::quoted(vertex_name(g, v), '"') + " appears twice in the order (also at " +
                        detail::pointer_to("/order", position[v]) + ")");
      position[v] = i;
      p.order.push_back(v);
    }
    if (p.outcome.code == status::ok && !p.order.empty() && p.order.size() != n)
      in.fail("/order", "lists " + std::to_string(p.order.size()) + " of the graph's " + std::to_string(n) +
                            " vertices; with status ok the order lists every vertex once (or is left out)");
  }
  return file;
}

// Throws parse_error naming the source and the field when a placement read from it cannot be
// simulated: its status is not ok (a failed placer's file may leave vertices without a device).
inline void require_complete_placement(const placement_file& file, std::string_view source_name) {
  const placement& p = file.placement;
  if (p.outcome.code != status::ok)
    throw parse_error(std::string(source_name) + ": /status: the placement failed (" +
                      status_identifier(p.outcome.code) +
                      (p.outcome.message.empty() ? std::string() : ": " + p.outcome.message) +
                      "); only a placement with status ok can be simulated");
  for (std::size_t v = 0; v < p.device.size(); ++v)
    if (p.device[v] == no_device)
      throw parse_error(std::string(source_name) + ": /placement: vertex " + std::to_string(v) + " has no device");
}

// The cluster a placement document was written for (its "cluster" member). Throws parse_error
// when the document has none or it is not a valid gantry.cluster document.
[[nodiscard]] inline cluster placement_cluster_from_json(const nlohmann::json& document,
                                                         std::string_view source_name = "<json>") {
  const detail::json_reader in{std::string(source_name)};
  in.header(document, placement_format_name, placement_format_version);
  const auto& embedded = in.require(document, "cluster", "");
  return detail::read_cluster_document(embedded, detail::json_reader{std::string(source_name), "/cluster"});
}

// The cluster stored in a placement file (see placement_cluster_from_json).
[[nodiscard]] inline cluster read_placement_cluster(const std::filesystem::path& path, const read_limits& limits = {}) {
  return detail::with_text_file(path, limits, [&](std::string_view text) {
    return placement_cluster_from_json(detail::parse_json_text(text, path.string(), limits.max_nesting), path.string());
  });
}

template <adapted_graph G>
[[nodiscard]] placement_file read_placement_json(std::string_view text, const G& g, const cluster& c,
                                                 std::string_view source_name = "<string>",
                                                 const read_limits& limits = {}) {
  return placement_from_json(detail::parse_json_text(text, source_name, limits.max_nesting), g, c, source_name);
}

// Reads a placement file (gzip-compressed or not) against g and c.
template <adapted_graph G>
[[nodiscard]] placement_file read_placement(const std::filesystem::path& path, const G& g, const cluster& c,
                                            const read_limits& limits = {}) {
  return detail::with_text_file(
      path, limits, [&](std::string_view text) { return read_placement_json(text, g, c, path.string(), limits); });
}

}  // namespace gantry
