// A schedule as Chrome trace event JSON, viewable in Perfetto (ui.perfetto.dev) and
// chrome://tracing: one process per device, with a "compute" thread and, per link, a "send to X"
// thread on the sender and a "receive from Y" thread on the receiver; each vertex and transfer is
// an "X" (complete) event, times in microseconds. Overlapping events (parallel transfers on one
// link) are spread over extra numbered threads of that link, since a viewer draws one thread's
// events as a stack and partial overlaps would be misdrawn. Given a memory curve
// (schedule/memory_curve.hpp), each device also gets a "memory" counter track: "C" events of the
// bytes in use over time.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/adaptor.hpp>
#include <gantry/io/gzip.hpp>
#include <gantry/io/markup.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/schedule/memory_curve.hpp>
#include <gantry/schedule/schedule.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <queue>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace gantry {

struct chrome_trace_options {
  const cluster* devices = nullptr;  // names the processes; "d0", "d1", ... otherwise
  bool transfers = true;             // include the send and receive threads
  // Bytes in use per device over time (compute_memory_curve of the same schedule): one "memory"
  // counter track per device. None when null.
  const memory_curve* memory = nullptr;
};

namespace detail {

// Assigns each interval (given in start order) the lowest-numbered free lane at its start:
// lanes[i] for interval i. Greedy interval partitioning, optimal in the number of lanes.
inline std::vector<std::uint32_t> assign_lanes(const std::vector<std::pair<double, double>>& intervals) {
  std::vector<std::uint32_t> lane(intervals.size());
  using busy_until = std::pair<double, std::uint32_t>;
  std::priority_queue<busy_until, std::vector<busy_until>, std::greater<>> in_use;
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> free_lanes;
  std::uint32_t lanes = 0;
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    while (!in_use.empty() && in_use.top().first <= intervals[i].first) {
      free_lanes.push(in_use.top().second);
      in_use.pop();
    }
    if (free_lanes.empty()) free_lanes.push(lanes++);
    lane[i] = free_lanes.top();
    free_lanes.pop();
    in_use.emplace(std::max(intervals[i].first, intervals[i].second), lane[i]);
  }
  return lane;
}

// Thread ids within a device's process: compute lanes from 1; the lanes of the link to or from
// device `peer` from 2^44 + peer·2^20 + 1 (sends) and 2^45 + peer·2^20 + 1 (receives). Ids stay
// below 2^53, so JSON readers hold them exactly.
inline std::uint64_t trace_thread(int kind, std::uint32_t lane, std::uint64_t peer = 0) {
  return 1 + (static_cast<std::uint64_t>(kind) << 44) + (peer << 20) + lane;
}

}  // namespace detail

// The trace of schedule s of graph g. Throws invalid_input when the schedule does not cover g.
template <adapted_graph G>
[[nodiscard]] nlohmann::json chrome_trace(const G& g, const schedule& s, const chrome_trace_options& options = {}) {
  const std::size_t n = graph_adaptor<G>::vertex_count(g);
  const std::size_t m =
      detail::schedule_device_count(s, options.devices != nullptr ? options.devices->device_count() : 0);
  detail::check_drawable(s, n, m, "chrome_trace");
  const auto device_name = [&](device_id d) {
    if (options.devices != nullptr && d < options.devices->device_count()) return (*options.devices)[d].name;
    std::string name = std::to_string(d);  // "d" + to_string(d) trips GCC 12's -Wrestrict (a false positive)
    name.insert(name.begin(), 'd');
    return name;
  };
  const auto micro = [](seconds t) { return t * 1e6; };
  const auto pid = [](device_id d) { return std::uint64_t{d} + 1; };  // some viewers treat pid 0 specially

  nlohmann::json events = nlohmann::json::array();
  const auto thread_name = [&](device_id d, std::uint64_t tid, const std::string& name) {
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid(d)}, {"tid", tid}, {"args", {{"name", name}}}});
    events.push_back(
        {{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid(d)}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  };
  for (device_id d = 0; d < m; ++d) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid(d)}, {"args", {{"name", device_name(d)}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid(d)}, {"args", {{"sort_index", d}}}});
  }

  // Compute events, device by device in start order, so lanes come out the same on every run.
  std::vector<std::vector<vertex_id>> on_device(m);
  for (vertex_id v = 0; v < n; ++v) on_device[s.device[v]].push_back(v);
  std::vector<std::pair<double, double>> intervals;
  for (device_id d = 0; d < m; ++d) {
    auto& list = on_device[d];
    std::stable_sort(list.begin(), list.end(), [&](vertex_id a, vertex_id b) { return s.start[a] < s.start[b]; });
    intervals.clear();
    for (const vertex_id v : list) intervals.emplace_back(s.start[v], s.finish[v]);
    const auto lanes = detail::assign_lanes(intervals);
    std::uint32_t lane_count = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const vertex_id v = list[i];
      lane_count = std::max(lane_count, lanes[i] + 1);
      nlohmann::json args = {{"vertex", v}, {"start_s", s.start[v]}, {"finish_s", s.finish[v]}};
      if constexpr (std::is_same_v<G, graph>) {
        if (!g[v].op.empty()) args["op"] = g[v].op;
        args["output_bytes"] = g[v].output;
      }
      events.push_back({{"ph", "X"},
                        {"cat", "compute"},
                        {"name", vertex_name(g, v)},
                        {"pid", pid(d)},
                        {"tid", detail::trace_thread(0, lanes[i])},
                        {"ts", micro(s.start[v])},
                        {"dur", micro(std::max(0.0, s.finish[v] - s.start[v]))},
                        {"args", std::move(args)}});
    }
    for (std::uint32_t lane = 0; lane < std::max<std::uint32_t>(lane_count, 1); ++lane)
      thread_name(d, detail::trace_thread(0, lane), lane == 0 ? "compute" : "compute " + std::to_string(lane + 1));
  }

  if (options.transfers && !s.transfers.empty()) {
    // kind 1: on the sender's "send to <peer>" threads; kind 2: on the receiver's "receive from
    // <peer>" threads. One group of threads per link, so a device shows one track per peer.
    for (int kind = 1; kind <= 2; ++kind) {
      std::vector<std::uint32_t> list(s.transfers.size());
      for (std::uint32_t i = 0; i < list.size(); ++i) list[i] = i;
      const auto here = [&](const transfer& t) { return kind == 1 ? t.from : t.to; };
      const auto peer = [&](const transfer& t) { return kind == 1 ? t.to : t.from; };
      std::stable_sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
        const auto& x = s.transfers[a];
        const auto& y = s.transfers[b];
        return std::make_tuple(here(x), peer(x), x.start) < std::make_tuple(here(y), peer(y), y.start);
      });
      for (std::size_t first = 0; first < list.size();) {
        const auto& head = s.transfers[list[first]];
        const device_id d = here(head), other_device = peer(head);
        std::size_t last = first;
        while (last < list.size() && here(s.transfers[list[last]]) == d &&
               peer(s.transfers[list[last]]) == other_device)
          ++last;
        intervals.clear();
        for (std::size_t k = first; k < last; ++k)
          intervals.emplace_back(s.transfers[list[k]].start, s.transfers[list[k]].finish);
        const auto lanes = detail::assign_lanes(intervals);
        std::uint32_t lane_count = 0;
        const std::string other = device_name(other_device);
        for (std::size_t k = first; k < last; ++k) {
          const auto& t = s.transfers[list[k]];
          const std::uint32_t lane = lanes[k - first];
          lane_count = std::max(lane_count, lane + 1);
          nlohmann::json args = {{"tensor", vertex_name(g, t.tensor)},
                                 {"bytes", t.bytes},
                                 {"from", device_name(t.from)},
                                 {"to", device_name(t.to)},
                                 {"start_s", t.start},
                                 {"finish_s", t.finish}};
          if (t.edge != no_edge) args["edge"] = t.edge;
          events.push_back({{"ph", "X"},
                            {"cat", kind == 1 ? "send" : "receive"},
                            {"name", vertex_name(g, t.tensor) + (kind == 1 ? " to " : " from ") + other},
                            {"pid", pid(d)},
                            {"tid", detail::trace_thread(kind, lane, other_device)},
                            {"ts", micro(t.start)},
                            {"dur", micro(std::max(0.0, t.finish - t.start))},
                            {"args", std::move(args)}});
        }
        const std::string base = (kind == 1 ? "send to " : "receive from ") + other;
        for (std::uint32_t lane = 0; lane < lane_count; ++lane)
          thread_name(d, detail::trace_thread(kind, lane, other_device),
                      lane == 0 ? base : base + " (" + std::to_string(lane + 1) + ")");
        first = last;
      }
    }
  }

  if (options.memory != nullptr) {
    if (options.memory->size() != m)
      throw invalid_input("chrome_trace: the memory curve has " + std::to_string(options.memory->size()) +
                          " devices, the schedule " + std::to_string(m));
    for (device_id d = 0; d < m; ++d)
      for (const memory_step& step : (*options.memory)[d])
        events.push_back({{"ph", "C"},
                          {"name", "memory"},
                          {"pid", pid(d)},
                          {"ts", micro(step.time)},
                          {"args", {{"bytes", step.bytes}}}});
  }

  seconds makespan = s.makespan;
  for (vertex_id v = 0; v < n; ++v) makespan = std::max(makespan, s.finish[v]);
  for (const auto& t : s.transfers) makespan = std::max(makespan, t.finish);
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"generator", "gantry"},
            {"makespan_s", makespan},
            {"bytes_moved", s.bytes_moved},
            {"vertices", n},
            {"transfers", s.transfers.size()}}}};
}

// The trace as JSON text. Names that are not valid UTF-8 are repaired (U+FFFD), since a trace
// is for looking at.
template <adapted_graph G>
[[nodiscard]] std::string chrome_trace_text(const G& g, const schedule& s, const chrome_trace_options& options = {}) {
  return chrome_trace(g, s, options).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Writes the trace atomically (gzip-compressed when the path ends in ".gz"; Perfetto opens both).
template <adapted_graph G>
void write_chrome_trace(const std::filesystem::path& path, const G& g, const schedule& s,
                        const chrome_trace_options& options = {}) {
  save_text_file(path, chrome_trace_text(g, s, options));
}

}  // namespace gantry
