// Reading and writing a gantry::cluster as a "gantry.cluster" JSON document (docs/format.md):
// devices with kind, memory and speed, the default link, per-pair link overrides, the
// communication mode (Baechi §3.4, §4.1) and the memory-bandwidth domains devices share. Its members
// are listed in io/document_schema.hpp; same error discipline as the graph reader.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/core/units.hpp>
#include <gantry/io/document_schema.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/json_support.hpp>
#include <gantry/model/cluster.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gantry {

inline constexpr std::string_view cluster_format_name = "gantry.cluster";
inline constexpr int cluster_format_version = 1;

// "parallel", "sequential" or "duplex" (comm_mode's name table, any case); nullopt for anything else.
[[nodiscard]] inline std::optional<comm_mode> parse_comm_mode(std::string_view text) {
  return parse_enum<comm_mode>(text);
}

namespace detail {

// A bandwidth: bytes per second as a number, a string such as "12 GB/s", or "unlimited".
inline double read_bandwidth(const json_reader& in, const nlohmann::json& value, const std::string& pointer) {
  double x = 0;
  if (value.is_string()) {
    if (equals_ignoring_case(trim(value.get_ref<const std::string&>()), "unlimited"))
      return std::numeric_limits<double>::infinity();
    try {
      x = parse_bandwidth(value.get<std::string>());
    } catch (const invalid_input& e) {
      in.fail(pointer, e.what());
    }
  } else {
    if (!value.is_number()) in.fail(pointer, "expected a bandwidth in bytes per second, got " + describe_json(value));
    x = value.get<double>();
    if (std::isnan(x) || x <= 0)
      in.fail(pointer, "bandwidth must be > 0 bytes per second, got " + describe_json(value));
  }
  // Below it the largest transfer takes longer than a double holds (model/cluster.hpp).
  if (x < least_bandwidth)
    in.fail(pointer, "bandwidth must be at least " + three_significant(least_bandwidth) + " bytes per second, got " +
                         describe_json(value));
  return x;
}

// Reads "latency" and "bandwidth" of a link object; absent fields keep the values in `link`.
inline link_model read_link(const json_reader& in, const nlohmann::json& object, const std::string& pointer,
                            link_model link) {
  if (const auto* latency = json_reader::find(object, "latency"))
    link.latency = in.time(*latency, pointer_to(pointer, "latency"), "latency");
  if (const auto* bandwidth = json_reader::find(object, "bandwidth"))
    link.bandwidth = read_bandwidth(in, *bandwidth, pointer_to(pointer, "bandwidth"));
  return link;
}

inline nlohmann::ordered_json link_to_json(const link_model& link) {
  nlohmann::ordered_json out;
  out["latency"] = finite_number(link.latency, "cluster_to_json: link latency");
  // JSON has no infinity: an unlimited bandwidth is written as the string "unlimited".
  if (std::isfinite(link.bandwidth)) out["bandwidth"] = link.bandwidth;
  else out["bandwidth"] = "unlimited";
  return out;
}

}  // namespace detail

namespace detail {
inline cluster read_cluster_document(const nlohmann::json& document, const json_reader& in) {
  in.header(document, cluster_format_name, cluster_format_version);
  in.check_members(document, "", schema::cluster_document);

  comm_mode comm = comm_mode::parallel;
  if (const auto* value = detail::json_reader::find(document, "communication")) {
    const std::string text = in.string(*value, "/communication");
    const auto mode = parse_comm_mode(text);
    if (!mode)
      in.fail("/communication",
              "unknown mode " + detail::quoted(text) + " (expected " + enum_choices<comm_mode>() + ")");
    comm = *mode;
  }

  const auto& list = in.array(in.require(document, "devices", ""), "/devices");
  if (list.empty()) in.fail("/devices", "a cluster needs at least one device");
  std::vector<device> devices;
  devices.reserve(list.size());
  std::vector<std::uint32_t> node_of(list.size(), no_node);
  bool has_nodes = false;
  std::unordered_map<std::string, device_id> by_name;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = detail::pointer_to("/devices", i);
    const auto& entry = in.check_members(list[i], at, schema::cluster_device);
    device dev;
    dev.name = in.name(in.require(entry, "name", at), detail::pointer_to(at, "name"));
    if (const auto [existing, inserted] = by_name.try_emplace(dev.name, static_cast<device_id>(i)); !inserted)
      in.fail(detail::pointer_to(at, "name"), "duplicate device name " + detail::quoted(dev.name, '"') + " (also at " +
                                                  detail::pointer_to("/devices", existing->second) + ")");
    if (const auto* kind = detail::json_reader::find(entry, "kind"))
      dev.kind = in.name(*kind, detail::pointer_to(at, "kind"));
    if (const auto* memory = detail::json_reader::find(entry, "memory")) {
      const std::string field = detail::pointer_to(at, "memory");
      if (memory->is_string() &&
          detail::equals_ignoring_case(detail::trim(memory->get_ref<const std::string&>()), "unlimited"))
        dev.capacity = unlimited_memory;
      else dev.capacity = in.bytes(*memory, field);
    }
    if (const auto* speed = detail::json_reader::find(entry, "speed")) {
      const std::string field = detail::pointer_to(at, "speed");
      dev.speed = in.number(*speed, field);
      if (!std::isfinite(dev.speed) || dev.speed <= 0)
        in.fail(field, "speed must be a finite number > 0, got " + detail::describe_json(*speed));
    }
    if (const auto* node = detail::json_reader::find(entry, "node")) {
      const std::string field = detail::pointer_to(at, "node");
      if (!node->is_number_unsigned() && !(node->is_number_integer() && node->get<std::int64_t>() >= 0))
        in.fail(field, "a node is a whole number >= 0 naming the machine the device sits in, got " +
                           detail::describe_json(*node));
      const auto id = node->get<std::uint64_t>();
      if (id >= no_node)
        in.fail(field, "node " + std::to_string(id) + " is too large (at most " + std::to_string(no_node - 1) + ")");
      node_of[i] = static_cast<std::uint32_t>(id);
      has_nodes = true;
    }
    devices.push_back(std::move(dev));
  }

  link_model default_link;
  if (const auto* link = detail::json_reader::find(document, "link")) {
    in.check_members(*link, "/link", schema::cluster_link);
    default_link = detail::read_link(in, *link, "/link", {});
  }

  cluster result(std::move(devices), default_link, comm);
  if (has_nodes) result.set_nodes(std::move(node_of));
  if (const auto* links = detail::json_reader::find(document, "links")) {
    in.array(*links, "/links");
    std::unordered_map<std::uint64_t, std::size_t> seen_pairs;
    for (std::size_t i = 0; i < links->size(); ++i) {
      const std::string at = detail::pointer_to("/links", i);
      const auto& entry = in.check_members((*links)[i], at, schema::cluster_pair_link);
      const auto endpoint = [&](std::string_view key) {
        const std::string field = detail::pointer_to(at, key);
        const std::string name = in.string(in.require(entry, key, at), field);
        const auto it = by_name.find(name);
        if (it == by_name.end())
          in.fail(field, "unknown device " + detail::quoted(name, '"') + " (no device has this name)");
        return it->second;
      };
      const device_id from = endpoint("from"), to = endpoint("to");
      if (from == to)
        in.fail(at, "a link joins two different devices, but both ends are " + detail::quoted(result[from].name, '"'));
      const auto key = (std::uint64_t{from} << 32) | to;
      if (const auto [earlier, inserted] = seen_pairs.try_emplace(key, i); !inserted)
        in.fail(at, "a second link from " + detail::quoted(result[from].name, '"') + " to " +
                        detail::quoted(result[to].name, '"') + " (the first is " +
                        detail::pointer_to("/links", earlier->second) + ")");
      result.set_link(from, to, detail::read_link(in, entry, at, default_link));
    }
  }
  if (const auto* domains = detail::json_reader::find(document, "domains")) {
    in.array(*domains, "/domains");
    std::unordered_map<std::string, std::size_t> domain_names;
    std::vector<std::size_t> domain_at(result.device_count(), 0);  // where each device was put in a domain
    std::vector<std::uint8_t> placed(result.device_count(), 0);
    for (std::size_t i = 0; i < domains->size(); ++i) {
      const std::string at = detail::pointer_to("/domains", i);
      const auto& entry = in.check_members((*domains)[i], at, schema::cluster_domain);
      bandwidth_domain domain;
      domain.name = in.name(in.require(entry, "name", at), detail::pointer_to(at, "name"));
      if (const auto [earlier, inserted] = domain_names.try_emplace(domain.name, i); !inserted)
        in.fail(detail::pointer_to(at, "name"), "duplicate domain name " + detail::quoted(domain.name, '"') +
                                                    " (also at " + detail::pointer_to("/domains", earlier->second) +
                                                    ")");
      const std::string members_at = detail::pointer_to(at, "devices");
      const auto& members = in.array(in.require(entry, "devices", at), members_at);
      if (members.empty()) in.fail(members_at, "a bandwidth domain needs at least one device");
      for (std::size_t k = 0; k < members.size(); ++k) {
        const std::string field = detail::pointer_to(members_at, k);
        const std::string name = in.string(members[k], field);
        const auto it = by_name.find(name);
        if (it == by_name.end())
          in.fail(field, "unknown device " + detail::quoted(name, '"') + " (no device has this name)");
        if (placed[it->second])
          in.fail(field, "device " + detail::quoted(name, '"') + " is already in a bandwidth domain (at " +
                             detail::pointer_to("/domains", domain_at[it->second]) +
                             "); a device shares one domain at most");
        placed[it->second] = 1;
        domain_at[it->second] = i;
        domain.devices.push_back(it->second);
      }
      if (const auto* bandwidth = detail::json_reader::find(entry, "bandwidth"))
        domain.bandwidth = detail::read_bandwidth(in, *bandwidth, detail::pointer_to(at, "bandwidth"));
      if (const auto* copies = detail::json_reader::find(entry, "copies")) {
        if (!copies->is_boolean())
          in.fail(detail::pointer_to(at, "copies"),
                  "expected true or false (copies between devices draw on the domain), got " +
                      detail::describe_json(*copies));
        domain.copies = copies->get<bool>();
      }
      if (const auto* cores = detail::json_reader::find(entry, "cores")) {
        const std::string field = detail::pointer_to(at, "cores");
        if (!cores->is_number_integer() || cores->get<std::int64_t>() < 0 || cores->get<std::int64_t>() > 1'000'000)
          in.fail(field,
                  "cores is a whole number from 0 (none shared) to 1000000, got " + detail::describe_json(*cores));
        domain.cores = static_cast<std::uint32_t>(cores->get<std::int64_t>());
      }
      result.add_domain(std::move(domain));
    }
  }
  return result;
}
}  // namespace detail

// Builds a cluster from a parsed "gantry.cluster" document. `source_name` prefixes every message.
[[nodiscard]] inline cluster cluster_from_json(const nlohmann::json& document,
                                               std::string_view source_name = "<json>") {
  return detail::read_cluster_document(document, detail::json_reader{std::string(source_name)});
}

// Parses "gantry.cluster" JSON text.
[[nodiscard]] inline cluster read_cluster_json(std::string_view text, std::string_view source_name = "<string>",
                                               const read_limits& limits = {}) {
  return cluster_from_json(detail::parse_json_text(text, source_name, limits.max_nesting), source_name);
}

// Reads a cluster file (gzip-compressed or not). Throws io_error or parse_error naming the file.
[[nodiscard]] inline cluster read_cluster(const std::filesystem::path& path, const read_limits& limits = {}) {
  return detail::with_text_file(path, limits,
                                [&](std::string_view text) { return read_cluster_json(text, path.string(), limits); });
}

// The "gantry.cluster" document of c. Unlimited memory is written by leaving the field out,
// unlimited bandwidth as "unlimited". Throws invalid_input when device names are empty or repeated.
[[nodiscard]] inline nlohmann::ordered_json cluster_to_json(const cluster& c) {
  std::unordered_map<std::string_view, device_id> seen;
  for (device_id d = 0; d < c.device_count(); ++d) {
    if (c[d].name.empty()) throw invalid_input("cluster_to_json: device " + std::to_string(d) + " has no name");
    if (const auto [it, inserted] = seen.try_emplace(c[d].name, d); !inserted)
      throw invalid_input("cluster_to_json: devices " + std::to_string(it->second) + " and " + std::to_string(d) +
                          " are both named " + detail::quoted(c[d].name));
  }
  nlohmann::ordered_json document;
  document["format"] = cluster_format_name;
  document["version"] = cluster_format_version;
  document["communication"] = to_string(c.comm());
  auto& devices = document["devices"] = nlohmann::ordered_json::array();
  for (const auto& dev : c.devices()) {
    nlohmann::ordered_json entry;
    entry["name"] = dev.name;
    entry["kind"] = dev.kind;
    if (dev.capacity != unlimited_memory) entry["memory"] = dev.capacity;
    entry["speed"] = dev.speed;
    if (const auto d = static_cast<std::size_t>(&dev - c.devices().data());
        !c.nodes().empty() && c.nodes()[d] != no_node)
      entry["node"] = c.nodes()[d];
    devices.push_back(std::move(entry));
  }
  document["link"] = detail::link_to_json(c.default_link());
  auto& links = document["links"] = nlohmann::ordered_json::array();
  for (const auto& [pair, own] : c.own_links()) {
    const auto [a, b] = pair;
    if (a == b) continue;  // a device's link to itself is never used, and a file cannot state it
    nlohmann::ordered_json entry = {{"from", c[a].name}, {"to", c[b].name}};
    const auto link = detail::link_to_json(own);
    for (auto it = link.begin(); it != link.end(); ++it) entry[it.key()] = *it;
    links.push_back(std::move(entry));
  }
  if (!c.domains().empty()) {
    auto& domains = document["domains"] = nlohmann::ordered_json::array();
    for (const auto& domain : c.domains()) {
      nlohmann::ordered_json entry;
      entry["name"] = domain.name;
      auto& members = entry["devices"] = nlohmann::ordered_json::array();
      for (const device_id d : domain.devices) members.push_back(c[d].name);
      if (std::isfinite(domain.bandwidth)) entry["bandwidth"] = domain.bandwidth;
      else entry["bandwidth"] = "unlimited";
      entry["copies"] = domain.copies;
      if (domain.cores > 0) entry["cores"] = domain.cores;
      domains.push_back(std::move(entry));
    }
  }
  return document;
}

// The "gantry.cluster" JSON text of c, one device and one link per line.
[[nodiscard]] inline std::string cluster_to_json_text(const cluster& c) {
  return detail::document_text(cluster_to_json(c), "cluster_to_json");
}

// Writes c to `path` atomically (gzip-compressed when the path ends in ".gz").
inline void write_cluster(const std::filesystem::path& path, const cluster& c) {
  save_text_file(path, detail::content_for(path, [&] { return cluster_to_json_text(c); }));
}

}  // namespace gantry
