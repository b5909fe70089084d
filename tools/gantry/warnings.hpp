// What the tool warns about before it reports figures that may not mean what they seem: a graph
// profiled on one kind of device placed on another, and measurements taken on a busy machine.
// Each function returns the warning's text, or nothing; the commands print it to stderr.
#pragma once

#include <gantry/core/units.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/model/cluster.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

namespace gantry::cli {

namespace warning_detail {
// "cpu" or "gpu" for a profile's or a device's description, else empty.
[[nodiscard]] inline std::string device_class(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (text.rfind("cpu", 0) == 0) return "cpu";
  if (text.rfind("gpu", 0) == 0 || text.rfind("cuda", 0) == 0 || text.find("nvidia") != std::string::npos) return "gpu";
  return {};
}
}  // namespace warning_detail

// A graph file's metadata names the device its times were profiled on ("device": "cpu: ..."), as
// the exporter writes it; a cluster's devices name their kind. Where a device of the other class
// (cpu or gpu) would run the graph's own times (the graph gives none for its kind), the makespans
// are of the profiling device, not of the cluster's.
[[nodiscard]] inline std::optional<std::string> profile_mismatch(const graph& g, const nlohmann::json& metadata,
                                                                 const cluster& c) {
  const auto device = metadata.find("device");
  if (device == metadata.end() || !device->is_string()) return std::nullopt;
  const std::string profiled = warning_detail::device_class(device->get<std::string>());
  if (profiled.empty()) return std::nullopt;
  for (device_id d = 0; d < c.device_count(); ++d) {
    const std::string kind = warning_detail::device_class(c[d].kind);
    if (kind.empty() || kind == profiled || g.kind_id(c[d].kind) != graph::no_kind) continue;
    return "the graph's times were profiled on " + device->get<std::string>() + " (its metadata's \"device\"), but " +
           c[d].name + " is a " + kind + " device and the graph gives no times of its own for kind '" + c[d].kind +
           "': every makespan below uses the " + profiled + "'s times";
  }
  return std::nullopt;
}

// The one-minute load average against the hardware threads, read from /proc/loadavg (nothing where
// it cannot be read). Above half the threads busy, measured times include waiting for a core.
[[nodiscard]] inline std::optional<std::string> busy_machine() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  if (!(in >> load)) return std::nullopt;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (load <= 0.5 * threads) return std::nullopt;
  return "this machine is busy (load average " + gantry::detail::format_number(load, 2) + " on " +
         std::to_string(threads) +
         " hardware threads): measured times include waiting for a core, so the errors and rankings below are not "
         "to be trusted; measure on a quiet machine";
}

}  // namespace gantry::cli
