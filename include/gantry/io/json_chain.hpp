// Chain files: read and write the "gantry.chain" JSON format (docs/pipeline.md) under the rules
// every document of docs/format.md follows. Errors name the file, the JSON pointer of the bad
// value and the reason, like every gantry reader.
#pragma once

#include <gantry/io/document_schema.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/json_support.hpp>
#include <gantry/pipeline/chain.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <string_view>

namespace gantry {

inline constexpr std::string_view chain_format_name = "gantry.chain";
inline constexpr int chain_format_version = 1;

// { "format": "gantry.chain", "version": 1, "layers": [ {"name": "l1", "forward": 0.01,
//   "backward": 0.02, "weights": 1048576, "activation": 524288} ] }
// forward and backward are seconds (or duration strings such as "1.5ms"); weights and activation
// are bytes (or size strings such as "16MiB"). name is optional ("layer<i>" when absent). The
// times must add up to a finite number and the bytes to less than max_chain_bytes (2^63), or the
// field where the sum gets there is named. The members are listed in io/document_schema.hpp
// (schema::chain_document); "metadata" is free-form and read past.
[[nodiscard]] inline chain parse_chain(std::string_view text, std::string_view source = "<chain>",
                                       const read_limits& limits = {}) {
  const auto root = detail::parse_json_text(text, source, limits.max_nesting);
  const detail::json_reader reader{std::string(source)};
  reader.header(root, chain_format_name, chain_format_version);
  reader.check_members(root, "", schema::chain_document);
  const auto& layers = reader.array(reader.require(root, "layers", ""), "/layers");
  chain c;
  c.layers.reserve(layers.size());
  seconds total_time = 0;
  byte_count total_bytes = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string at = detail::pointer_to("/layers", i);
    const auto& item = reader.check_members(layers[i], at, schema::chain_layer);
    layer x;
    const auto* name = detail::json_reader::find(item, "name");
    x.name = name ? reader.name(*name, detail::pointer_to(at, "name")) : "layer" + std::to_string(i);
    x.forward = reader.time(reader.require(item, "forward", at), detail::pointer_to(at, "forward"), "forward time");
    x.backward = reader.time(reader.require(item, "backward", at), detail::pointer_to(at, "backward"), "backward time");
    total_time += x.forward + x.backward;
    if (!std::isfinite(total_time))
      reader.fail(detail::pointer_to(at, "backward"), "the forward and backward times of layers 0 to " +
                                                          std::to_string(i) +
                                                          " add up to more than the largest finite number of seconds");
    const auto add_bytes = [&](byte_count bytes, std::string_view field) {
      if (bytes >= max_chain_bytes - total_bytes)
        reader.fail(detail::pointer_to(at, field), "the weights and activations of layers 0 to " + std::to_string(i) +
                                                       " add up to 2^63 bytes (8 EiB) or more, which gantry's memory "
                                                       "sums cannot hold");
      total_bytes += bytes;
      return bytes;
    };
    if (const auto* w = detail::json_reader::find(item, "weights"))
      x.weights = add_bytes(reader.bytes(*w, detail::pointer_to(at, "weights")), "weights");
    if (const auto* a = detail::json_reader::find(item, "activation"))
      x.activation = add_bytes(reader.bytes(*a, detail::pointer_to(at, "activation")), "activation");
    c.layers.push_back(std::move(x));
  }
  return c;
}

// Reads a chain file (gzip-compressed or not). Throws io_error or parse_error naming the file.
[[nodiscard]] inline chain read_chain(const std::filesystem::path& path, const read_limits& limits = {}) {
  return detail::with_text_file(path, limits,
                                [&](std::string_view text) { return parse_chain(text, path.string(), limits); });
}

[[nodiscard]] inline std::string chain_text(const chain& c) {
  check_chain(c);
  nlohmann::ordered_json doc;
  doc["format"] = chain_format_name;
  doc["version"] = chain_format_version;
  auto layers = nlohmann::ordered_json::array();
  for (const auto& x : c.layers)
    layers.push_back({{"name", x.name},
                      {"forward", x.forward},
                      {"backward", x.backward},
                      {"weights", x.weights},
                      {"activation", x.activation}});
  doc["layers"] = std::move(layers);
  return detail::document_text(doc, "chain");
}

// Writes atomically; gzip-compressed when the path ends in ".gz".
inline void write_chain(const chain& c, const std::filesystem::path& path) { save_text_file(path, chain_text(c)); }

}  // namespace gantry
