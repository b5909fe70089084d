// The helpers of `gantry place`, `simulate` and `compare` (placement_commands.hpp): progress, summaries,
// outputs, the single-device reference, the devices in words.
#pragma once

#include "files.hpp"
#include "placement_commands.hpp"
#include "warnings.hpp"

#include <gantry/core/units.hpp>
#include <gantry/io/atomic_file.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/place/local_search.hpp>
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
#include <cstdint>
#include <future>
#include <iomanip>
#include <iostream>
#include <limits>
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

// The tool's judge of a placement, one rule for place, compare and simulate: the --policy replay,
// the run with each device taking its vertices in the placer's order (strict-order) and, for a
// list scheduler, its own schedule replayed (strict-order, each channel serving its transfers in
// the order the placer reserved them, which gives the placer's times): the fastest of those that
// run, the replay on a tie, then the run in order. A memory-aware placer checks memory along its own
// order; a work-conserving replay may start a vertex before its turn and run out where that order
// fits (sim/admission.hpp holds such starts back only where the one-at-a-time reference run fits),
// so judging by the replay alone refused placements their placer had rightly said fit; and where
// transfers share channels the placer's own transfer order may beat both other runs, which ranked
// it below its own schedule. Every run is the simulator's: the placer's schedule is replayed, not
// trusted. simulate reads a placement file, which holds no transfer order: it has the first two.
enum class judged_kind : std::uint8_t { replay, in_order, own };
// compare's JSON name of each: "replay", "in_order", "own".
[[nodiscard]] inline const char* judged_kind_name(judged_kind kind) {
  switch (kind) {
    case judged_kind::in_order:
      return "in_order";
    case judged_kind::own:
      return "own";
    case judged_kind::replay:
      break;
  }
  return "replay";
}
struct judged_run {
  simulation_result replay;                // by --policy
  simulation_result in_order;              // strict-order; under --policy strict-order, the replay itself
  std::optional<simulation_result> own{};  // the placer's own schedule, replayed; list schedulers only

  // Which run is kept.
  [[nodiscard]] judged_kind which() const {
    const auto faster = [](const simulation_result& a, const simulation_result* b) {
      return a.ok() && (b == nullptr || a.schedule.makespan < b->schedule.makespan);
    };
    const simulation_result* best = replay.ok() ? &replay : nullptr;
    judged_kind kind = judged_kind::replay;
    if (faster(in_order, best)) {
      best = &in_order;
      kind = judged_kind::in_order;
    }
    if (own && faster(*own, best)) kind = judged_kind::own;
    return kind;
  }
  // Whether the run kept is one in the placer's order (strict-order, with or without its transfer order).
  [[nodiscard]] bool by_order() const { return which() != judged_kind::replay; }
  // The run kept; when none runs, the replay, whose outcome says why.
  [[nodiscard]] const simulation_result& kept() const {
    switch (which()) {
      case judged_kind::in_order:
        return in_order;
      case judged_kind::own:
        return *own;
      case judged_kind::replay:
        break;
    }
    return replay;
  }
  [[nodiscard]] bool ok() const { return kept().ok(); }
  // What the run kept is called in reports and in the placement file's metadata.
  [[nodiscard]] std::string kept_name(const simulation_flags& sf) const {
    switch (which()) {
      case judged_kind::in_order:
        return "strict-order";
      case judged_kind::own:
        return "own schedule";
      case judged_kind::replay:
        break;
    }
    return sf.policy;
  }
  // The options of the run kept, for what follows it (drawn durations, a local search); the own
  // schedule's transfer order refers to this object, which must outlive them.
  [[nodiscard]] simulate_options options(const simulation_flags& sf, std::span<const vertex_id> order) const {
    if (which() == judged_kind::replay) return sf.make(order);
    simulate_options o = sf.make_in_order(order);
    if (which() == judged_kind::own) o.transfer_order = own->schedule.transfers;
    return o;
  }
};
// `own_schedule`: the placer's schedule of this placement, when it made one (placer_result).
inline judged_run judge_placement(const graph& g, const graph_model& model, const cluster& c,
                                  std::span<const device_id> device, std::span<const vertex_id> order,
                                  const simulation_flags& sf, const std::optional<schedule>& own_schedule = {}) {
  // The runs are independent and only read their inputs: the run in order and the replay of the
  // placer's schedule go on threads of their own beside the replay. The tool's place on a graph of
  // 1M vertices and 8 devices, 2 cores: 6.37 s -> 5.26 s, peak resident 829 -> 1,061 MB. A run
  // that throws rethrows here; the others are waited for first.
  std::future<simulation_result> in_order, own;
  if (sf.policy != "strict-order")
    in_order = std::async(std::launch::async, [&] { return simulate(g, model, c, device, sf.make_in_order(order)); });
  // Without transfers there is no transfer order to follow: the run in order is that replay.
  if (own_schedule && !own_schedule->transfers.empty())
    own = std::async(std::launch::async, [&] {
      simulate_options o = sf.make_in_order(order);
      o.transfer_order = own_schedule->transfers;
      return simulate(g, model, c, device, o);
    });
  judged_run run{simulate(g, model, c, device, sf.make(order)), {}};
  run.in_order = in_order.valid() ? in_order.get() : run.replay;
  if (own_schedule) run.own = own.valid() ? own.get() : run.in_order;
  return run;
}
// "kept" beside the run judged_run keeps, when there were two or more.
inline std::string kept_mark(const judged_run& run, judged_kind kind, const simulation_flags& sf) {
  return (sf.policy != "strict-order" || run.own) && run.ok() && run.which() == kind ? ", kept" : "";
}

// --local-search after a placer (place, compare): moves the colocation groups of the graph the
// placer saw (--fuse baechi and exact pair forward and backward vertices first) and the fused
// clusters, with the run `judged` kept as the objective; where that finds a faster placement,
// `placed` and `judged` become it. A search longer than 2 s says where it stands every 2 s on
// stderr. Nothing when --local-search is 0 or the placement does not run.
struct local_search_step {
  local_search_result result;
  bool improved = false;  // placed and judged were replaced

  // "3 moves in 120 simulations (0.41 s): 1.20 s -> 1.05 s", and whether the search stopped early.
  [[nodiscard]] std::string text() const {
    return std::to_string(result.moves) + " moves in " + std::to_string(result.simulations) + " simulations (" +
           format_seconds(result.placement.placement_time) + "): " + format_seconds(result.start_makespan) + " -> " +
           format_seconds(result.makespan) + (improved ? "" : ", the placer's placement kept") +
           (result.timed_out ? " (stopped at --local-search-time)" : "");
  }
  [[nodiscard]] nlohmann::ordered_json json() const {
    return {{"moves", result.moves},
            {"simulations", result.simulations},
            {"seconds", result.placement.placement_time},
            {"start_makespan", result.start_makespan},
            {"makespan", result.makespan},
            {"improved", improved},
            {"timed_out", result.timed_out}};
  }
};
inline std::optional<local_search_step> improve_locally(const graph& g, const graph_model& model, const cluster& c,
                                                        placer_result& placed, judged_run& judged,
                                                        const std::optional<coarsening>& coarse,
                                                        const after_placing_flags& after, const simulation_flags& sf,
                                                        const std::string& command, bool show) {
  placement& p = placed.placement;
  if (after.local_search == 0 || !p.ok() || !judged.ok()) return std::nullopt;
  const auto opts = judged.options(sf, p.order);
  const bool fused = coarse && !placed_unfused(placed);
  const std::optional<seconds> budget = after.local_search_seconds();
  progress(show, "local search, at most " + std::to_string(after.local_search) + " simulations" +
                     (budget ? " or " + format_seconds(*budget) : std::string()) + "...");
  const auto report = [&](const local_search_progress& at) {
    std::cerr << (show ? "\n" : "") << "gantry " << command << ": local search: " << fixed_text(at.elapsed, 0) << " s, "
              << at.simulations << " simulations, " << at.moves << " moves, best " << format_seconds(at.best)
              << (show ? "" : "\n") << std::flush;
  };
  local_search_step step;
  try {
    step.result = local_search(g, model, c, p,
                               {.policy = opts.policy,
                                .cache_transfers = opts.cache_transfers,
                                .group = colocation_groups(fused ? colocate_forward_backward(g) : g),
                                .cluster = fused ? coarse->coarse_of : std::vector<vertex_id>{},
                                .max_simulations = after.local_search,
                                .time_limit = budget.value_or(std::numeric_limits<double>::infinity()),
                                .progress = report});
    progress(show, " " + format_seconds(step.result.placement.placement_time) + "\n");
  } catch (const invalid_input& e) {  // a placer that splits colocation groups (enumerative)
    progress(show, "\n");
    std::cerr << "gantry " << command << ": warning: --local-search skipped: " << e.what() << "\n";
    return std::nullopt;
  }
  if (step.result.placement.ok() && step.result.makespan < judged.kept().schedule.makespan) {
    p.device = step.result.placement.device;
    p.order = step.result.placement.order;
    placed.own_schedule.reset();  // the placer's schedule was of the placement replaced
    judged = judge_placement(g, model, c, std::span<const device_id>(p.device), p.order, sf);
    step.improved = true;
  }
  return step;
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
