// The helpers of `gantry place`, `simulate` and `compare` (placement_commands.hpp): progress, summaries,
// outputs, the single-device reference, the devices in words.
#pragma once

#include "files.hpp"
#include "placement_commands.hpp"
#include "warnings.hpp"

#include <gantry/core/units.hpp>
#include <gantry/io/atomic_file.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/place/placers.hpp>
#include <gantry/place/single_device.hpp>
#include <gantry/schedule/validate.hpp>
#include <gantry/sim/simulator.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace gantry::cli {

inline bool progress_wanted(const graph& g) { return isatty(STDERR_FILENO) != 0 || g.vertex_count() >= 50000; }

inline void progress(bool on, const std::string& text) {
  if (on) std::cerr << text << std::flush;
}

inline double elapsed_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline std::string percent_list(const std::vector<byte_count>& peak, const cluster& c) {
  std::string text;
  for (device_id d = 0; d < peak.size(); ++d) {
    if (!text.empty()) text += " ";
    if (c.capacity(d) == unlimited_memory) text += format_bytes(peak[d]);
    else text += fixed_text(100.0 * static_cast<double>(peak[d]) / static_cast<double>(c.capacity(d)), 1) + "%";
  }
  return text;
}

// Adds one output to the command's group of files; a content that cannot be written (a name
// JSON cannot hold, say) is reported with the file's name.
template <class Content>
void stage_output(atomic_file_group& outputs, const std::string& path, Content&& content) {
  if (!path.empty()) add_text_file(outputs, path, detail::content_for(path, content));
}

inline void output_flags::stage(atomic_file_group& outputs, const graph& g, const cluster& c, const placement& p,
                                const schedule& s, const std::string& title) const {
  stage_output(outputs, dot, [&] { return dot_text(g, c, p); });
  stage_output(outputs, trace, [&] { return trace_text(g, s, c, true); });
  stage_output(outputs, svg, [&] { return gantt_text(g, s, c, title); });
}

// JSON cannot hold, and no reader should believe, a makespan that overflowed: compute or transfer
// times near the largest double add up to infinity.
inline void require_finite(seconds makespan, const std::string& graph_path, const std::string& what) {
  if (!std::isfinite(makespan))
    throw invalid_input(what + " is not finite (" + format_seconds(makespan) + "): the compute and transfer times of " +
                        graph_path + " are too large to add up in a double");
}

// How many times faster than `baseline` a run of `makespan` is: 1 when both are 0 (a graph of
// zero-time work), nothing when only the run takes no time.
inline std::optional<double> speedup(seconds baseline, seconds makespan) {
  if (makespan > 0) return baseline / makespan;
  if (baseline == 0) return 1.0;
  return std::nullopt;
}

inline void print_schedule_summary(const schedule& s, const cluster& c) {
  std::cout << "makespan      " << format_seconds(s.makespan) << "\n";
  std::cout << "bytes moved   " << format_bytes(s.bytes_moved) << " in " << s.transfers.size() << " transfers\n";
  std::cout << "device        busy         peak memory\n";
  for (device_id d = 0; d < c.device_count(); ++d) {
    std::cout << std::left << std::setw(14) << c[d].name << std::setw(13) << format_seconds(s.busy[d])
              << format_bytes(s.peak_memory[d]);
    if (c.capacity(d) != unlimited_memory)
      std::cout << " of " << format_bytes(c.capacity(d)) << " ("
                << fixed_text(100.0 * static_cast<double>(s.peak_memory[d]) / static_cast<double>(c.capacity(d)), 1)
                << "%)";
    std::cout << "\n";
  }
}

// The same summary as JSON, with every number at full precision; times in seconds, sizes in bytes.
inline nlohmann::ordered_json schedule_summary_json(const schedule& s, const cluster& c) {
  nlohmann::ordered_json out;
  out["units"] = {{"time", "seconds"}, {"memory", "bytes"}};
  out["makespan"] = s.makespan;
  out["bytes_moved"] = s.bytes_moved;
  out["transfers"] = s.transfers.size();
  out["devices"] = nlohmann::ordered_json::array();
  for (device_id d = 0; d < c.device_count(); ++d)
    out["devices"].push_back({{"name", c[d].name},
                              {"busy", s.busy[d]},
                              {"peak_memory", s.peak_memory[d]},
                              {"capacity", c.capacity(d) == unlimited_memory ? nlohmann::ordered_json(nullptr)
                                                                             : nlohmann::ordered_json(c.capacity(d))}});
  return out;
}

// The fastest single device that can hold the whole run, simulated: the reference every placement
// should beat. Devices are tried in order (at most 16; one of each kind, speed and capacity) and
// the first of equal makespans wins.
struct single_device_reference {
  device_id device = no_device;
  placement placed;
  simulation_result simulated;
};
inline std::optional<single_device_reference> best_single_device(const graph& g, const graph_model& model,
                                                                 const cluster& c, const simulation_flags& sf) {
  std::optional<single_device_reference> best;
  for (device_id d = 0; d < std::min<std::size_t>(c.device_count(), 16); ++d) {
    const auto same = [&](device_id e) {
      return c[e].kind == c[d].kind && c[e].speed == c[d].speed && c[e].capacity == c[d].capacity;
    };
    bool seen = false;
    for (device_id e = 0; e < d && !seen; ++e) seen = same(e);
    if (seen) continue;  // runs exactly as an earlier device does
    auto p = single_device(g, c, {.device = d});
    if (!p.ok()) continue;
    auto sim = simulate(g, model, c, std::span<const device_id>(p.device), sf.make(p.order));
    if (sim.ok() && (!best || sim.schedule.makespan < best->simulated.schedule.makespan))
      best = single_device_reference{d, std::move(p), std::move(sim)};
  }
  return best;
}

// What a placer says its user must know about this run (metadata "note"), if anything.
inline std::optional<std::string> note_of(const placer_result& placed) {
  for (const auto& [key, value] : placed.metadata)
    if (key == "note") return value;
  return std::nullopt;
}

// "name: message", without repeating the name where the message starts with it (in any case).
inline std::string named_message(const std::string& name, const std::string& message) {
  const bool named =
      message.size() > name.size() && message[name.size()] == ':' &&
      std::equal(name.begin(), name.end(), message.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
      });
  return named ? message : name + ": " + message;
}

// The devices in words, identical ones counted once: "4 devices of 8.00 GiB" or
// "3 devices: gpu0 and gpu1 (gpu, 16.0 GiB), cpu (default, speed 0.25, unlimited memory)".
inline std::string describe_devices(const cluster& c) {
  const auto same = [&](device_id a, device_id b) {
    return c[a].kind == c[b].kind && c[a].speed == c[b].speed && c[a].capacity == c[b].capacity;
  };
  const auto traits = [&](device_id d, bool with_kind) {
    std::string text = with_kind ? c[d].kind : std::string();
    const auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    if (c[d].speed != 1.0) add("speed " + cli::number_text(c[d].speed));
    add(c.capacity(d) == unlimited_memory ? std::string("unlimited memory") : format_bytes(c.capacity(d)));
    return text;
  };
  const std::size_t m = c.device_count();
  std::string text = std::to_string(m) + (m == 1 ? " device" : " devices");
  bool uniform = m > 0;
  for (device_id d = 1; d < m && uniform; ++d) uniform = same(0, d);
  if (uniform) return text + " of " + traits(0, c[0].kind != "default");
  text += ":";
  std::vector<bool> listed(m, false);
  for (device_id d = 0; d < m; ++d) {
    if (listed[d]) continue;
    std::vector<std::string> names;
    for (device_id e = d; e < m; ++e)
      if (!listed[e] && same(d, e)) {
        listed[e] = true;
        names.push_back(c[e].name);
      }
    text += (d == 0 ? " " : "; ");
    if (names.size() > 3) text += std::to_string(names.size()) + " like " + names.front();
    else
      for (std::size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    text += " (" + traits(d, true) + ")";
  }
  return text;
}

}  // namespace gantry::cli
