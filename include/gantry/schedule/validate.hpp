// validate(): checks a schedule against its graph, model and devices and returns every violation
// it finds, in words: sizes and ids, durations, precedence including transfer time, device
// exclusivity, channel exclusivity (sequential and duplex modes), memory over capacity and, when
// groups are given, colocation groups split over devices.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace gantry {

enum class violation_kind {
  structure,
  duration,
  precedence,
  transfer,
  device_overlap,
  channel_overlap,
  memory,
  colocation
};

[[nodiscard]] constexpr const char* to_string(violation_kind k) noexcept {
  switch (k) {
    case violation_kind::structure:
      return "structure";
    case violation_kind::duration:
      return "duration";
    case violation_kind::precedence:
      return "precedence";
    case violation_kind::transfer:
      return "transfer";
    case violation_kind::device_overlap:
      return "device overlap";
    case violation_kind::channel_overlap:
      return "channel overlap";
    case violation_kind::memory:
      return "memory";
    case violation_kind::colocation:
      return "colocation";
  }
  return "unknown";
}

struct violation {
  violation_kind kind;
  std::string message;
};

struct validation_report {
  std::vector<violation> violations;
  std::vector<byte_count> peak_memory;  // per device, when the structure allowed computing it

  [[nodiscard]] bool ok() const noexcept { return violations.empty(); }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] std::size_t count(violation_kind k) const {
    return static_cast<std::size_t>(
        std::count_if(violations.begin(), violations.end(), [k](const violation& v) { return v.kind == k; }));
  }
  // All violations, one per line.
  [[nodiscard]] std::string to_string() const {
    std::string text;
    for (const auto& v : violations) text += std::string(gantry::to_string(v.kind)) + ": " + v.message + "\n";
    return text;
  }
};

struct validate_options {
  // Require every vertex and transfer to last exactly as long as the model says (at least as long,
  // where devices share a memory bandwidth). Turn off for schedules with drawn (stochastic) durations.
  bool exact_durations = true;
  // Without exact durations: every vertex must still run for at least this share of the model's
  // time, so that a measured run whose work was skipped or cut short fails (0: no such check).
  double min_duration_share = 0;
  // Relative tolerance for time comparisons (scaled by the makespan).
  double tolerance = 1e-9;
  // Stop after this many violations (the rest are counted in a final message).
  std::size_t max_violations = 1000;
  // Colocation group per vertex (no_group, the largest value, for none); empty for none. Every
  // group must sit on one device.
  std::span<const std::uint32_t> group = {};
};

template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] validation_report validate(const schedule& s, const G& graph, const M& model, const D& devices,
                                         validate_options options = {}) {
  validation_report report;
  const detail::csr_view<G> view(graph);
  const csr_graph& g = *view;
  const std::size_t n = g.vertex_count(), m = devices.device_count();
  std::size_t dropped = 0;
  const auto name = [&](vertex_id v) { return std::string("'").append(vertex_name(graph, v)).append("'"); };
  const auto fail = [&](violation_kind kind, std::string message) {
    if (report.violations.size() < options.max_violations) report.violations.push_back({kind, std::move(message)});
    else ++dropped;
  };
  const auto num = [](double x) {
    std::ostringstream out;
    out.precision(9);
    out << x;
    return out.str();
  };

  // Structure first: the later checks index by these vectors.
  if (s.device.size() != n || s.start.size() != n || s.finish.size() != n) {
    fail(violation_kind::structure,
         "the schedule has " + std::to_string(s.device.size()) + " devices, " + std::to_string(s.start.size()) +
             " starts and " + std::to_string(s.finish.size()) + " finishes for " + std::to_string(n) + " vertices");
    return report;
  }
  bool structure_ok = true;
  seconds horizon = 0;
  for (vertex_id v = 0; v < n; ++v) {
    if (s.device[v] >= m) {
      fail(violation_kind::structure, "vertex " + name(v) + " is on device " + std::to_string(s.device[v]) +
                                          " but there are " + std::to_string(m) + " devices");
      structure_ok = false;
    }
    if (!std::isfinite(s.start[v]) || !std::isfinite(s.finish[v]) || s.start[v] < 0 || s.finish[v] < s.start[v]) {
      fail(violation_kind::structure,
           "vertex " + name(v) + " has start " + num(s.start[v]) + " and finish " + num(s.finish[v]));
      structure_ok = false;
    } else {
      horizon = std::max(horizon, s.finish[v]);
    }
  }
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const auto& t = s.transfers[i];
    const std::string what = "transfer " + std::to_string(i);
    if (t.tensor >= n || t.from >= m || t.to >= m || t.from == t.to || t.edge >= g.edge_count() ||
        g.source(t.edge) != t.tensor || !std::isfinite(t.start) || !std::isfinite(t.finish) || t.start < 0 ||
        t.finish < t.start) {
      fail(violation_kind::structure, what + " (tensor " + std::to_string(t.tensor) + ", edge " +
                                          std::to_string(t.edge) + ", device " + std::to_string(t.from) + " -> " +
                                          std::to_string(t.to) + ", " + num(t.start) + " to " + num(t.finish) +
                                          ") is malformed");
      structure_ok = false;
    } else {
      horizon = std::max(horizon, t.finish);
    }
  }
  if (!structure_ok) return report;
  const double eps = options.tolerance * std::max(1.0, horizon);

  // Durations. Where devices share a memory bandwidth an activity may take longer than alone,
  // never shorter (sim/shared_bandwidth.hpp).
  const bool stretchable = detail::shares_bandwidth(devices);
  const auto wrong = [&](seconds took, seconds expected) {
    return stretchable ? took + eps < expected : std::abs(took - expected) > eps;
  };
  if (options.exact_durations) {
    for (vertex_id v = 0; v < n; ++v) {
      const seconds expected = model.compute_time(v, s.device[v]);
      if (wrong(s.finish[v] - s.start[v], expected))
        fail(violation_kind::duration, "vertex " + name(v) + " runs for " + num(s.finish[v] - s.start[v]) +
                                           " s on device " + std::to_string(s.device[v]) + " but takes " +
                                           num(expected) + " s" + (stretchable ? " at the least" : ""));
    }
  } else if (options.min_duration_share > 0) {
    for (vertex_id v = 0; v < n; ++v) {
      const seconds least = options.min_duration_share * model.compute_time(v, s.device[v]);
      if (s.finish[v] - s.start[v] + eps < least)
        fail(violation_kind::duration, "vertex " + name(v) + " runs for " + num(s.finish[v] - s.start[v]) +
                                           " s on device " + std::to_string(s.device[v]) + ", less than " +
                                           num(options.min_duration_share) + " of the " +
                                           num(model.compute_time(v, s.device[v])) + " s it takes");
    }
  }

  // Transfers: from the producer's device, after it finished, long enough.
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const auto& t = s.transfers[i];
    const std::string what = "transfer " + std::to_string(i) + " of " + name(t.tensor) + " (device " +
                             std::to_string(t.from) + " -> " + std::to_string(t.to) + ")";
    if (t.from != s.device[t.tensor])
      fail(violation_kind::transfer, what + " leaves device " + std::to_string(t.from) + " but the vertex ran on " +
                                         std::to_string(s.device[t.tensor]));
    if (t.start + eps < s.finish[t.tensor])
      fail(violation_kind::transfer,
           what + " starts at " + num(t.start) + " before its producer finishes at " + num(s.finish[t.tensor]));
    if (t.bytes < model.edge_bytes(t.edge))
      fail(violation_kind::transfer, what + " moves " + std::to_string(t.bytes) + " bytes but edge " +
                                         std::to_string(t.edge) + " carries " +
                                         std::to_string(model.edge_bytes(t.edge)));
    const seconds needed = model.transfer_time(t.edge, t.from, t.to);
    const seconds took = t.finish - t.start;
    if (options.exact_durations && wrong(took, needed))
      fail(violation_kind::transfer, what + " takes " + num(took) + " s but the model says " + num(needed) + " s" +
                                         (stretchable ? " at the least" : ""));
  }

  // Precedence.
  const auto serving = detail::serving_transfers(g, s, model);
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const auto u = g.source(e), v = g.target(e);
    if (s.device[u] == s.device[v]) {
      if (s.start[v] + eps < s.finish[u])
        fail(violation_kind::precedence, "vertex " + name(v) + " starts at " + num(s.start[v]) + " before " + name(u) +
                                             " finishes at " + num(s.finish[u]) + " on device " +
                                             std::to_string(s.device[u]));
      continue;
    }
    if (serving[e] == detail::no_transfer) {
      fail(violation_kind::precedence, "edge " + name(u) + " -> " + name(v) + " crosses device " +
                                           std::to_string(s.device[u]) + " -> " + std::to_string(s.device[v]) +
                                           " but no transfer carries it");
      continue;
    }
    const auto& t = s.transfers[serving[e]];
    if (s.start[v] + eps < t.finish)
      fail(violation_kind::precedence, "vertex " + name(v) + " starts at " + num(s.start[v]) +
                                           " before the transfer of " + name(u) + " arrives at " + num(t.finish));
    if (t.bytes < model.edge_bytes(e))
      fail(violation_kind::transfer, "the transfer serving edge " + name(u) + " -> " + name(v) + " moves " +
                                         std::to_string(t.bytes) + " bytes but the edge carries " +
                                         std::to_string(model.edge_bytes(e)));
  }

  // Device exclusivity.
  std::vector<std::vector<vertex_id>> on_device(m);
  for (vertex_id v = 0; v < n; ++v) on_device[s.device[v]].push_back(v);
  for (device_id d = 0; d < m; ++d) {
    auto& list = on_device[d];
    std::sort(list.begin(), list.end(), [&](vertex_id a, vertex_id b) {
      return std::tie(s.start[a], s.finish[a], a) < std::tie(s.start[b], s.finish[b], b);
    });
    for (std::size_t i = 1; i < list.size(); ++i) {
      const auto a = list[i - 1], b = list[i];
      if (s.start[b] + eps < s.finish[a])
        fail(violation_kind::device_overlap, "vertices " + name(a) + " [" + num(s.start[a]) + ", " + num(s.finish[a]) +
                                                 ") and " + name(b) + " [" + num(s.start[b]) + ", " + num(s.finish[b]) +
                                                 ") overlap on device " + std::to_string(d));
    }
  }

  // Channel exclusivity: each resource of the topology (model/topology.hpp) serves one transfer at a time.
  if (const topology net = detail::topology_of(devices); net.shared()) {
    std::vector<std::vector<std::size_t>> on_resource(net.resource_count());
    for (std::size_t i = 0; i < s.transfers.size(); ++i) {
      const auto& t = s.transfers[i];
      if (t.from >= m || t.to >= m || t.from == t.to) continue;  // reported above
      for (const resource_id r : net.route_of(t.from, t.to)) on_resource[r].push_back(i);
    }
    for (resource_id r = 0; r < on_resource.size(); ++r) {
      auto& list = on_resource[r];
      std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(s.transfers[a].start, s.transfers[a].finish, a) <
               std::tie(s.transfers[b].start, s.transfers[b].finish, b);
      });
      for (std::size_t i = 1; i < list.size(); ++i) {
        const auto& a = s.transfers[list[i - 1]];
        const auto& b = s.transfers[list[i]];
        if (b.start + eps < a.finish)
          fail(violation_kind::channel_overlap, "transfers " + std::to_string(list[i - 1]) + " [" + num(a.start) +
                                                    ", " + num(a.finish) + ") and " + std::to_string(list[i]) + " [" +
                                                    num(b.start) + ", " + num(b.finish) + ") overlap on the " +
                                                    net.resource_name(r));
      }
    }
  }

  // Colocation groups.
  if (!options.group.empty()) {
    if (options.group.size() != n) {
      fail(violation_kind::structure, "the group vector has " + std::to_string(options.group.size()) + " entries for " +
                                          std::to_string(n) + " vertices");
    } else {
      constexpr auto alone = std::numeric_limits<std::uint32_t>::max();
      std::unordered_map<std::uint32_t, vertex_id> first;
      for (vertex_id v = 0; v < n; ++v) {
        if (options.group[v] == alone) continue;
        const vertex_id f = first.try_emplace(options.group[v], v).first->second;
        if (s.device[f] != s.device[v])
          fail(violation_kind::colocation, "vertices " + name(f) + " and " + name(v) + " share colocation group " +
                                               std::to_string(options.group[v]) + " but run on devices " +
                                               std::to_string(s.device[f]) + " and " + std::to_string(s.device[v]));
      }
    }
  }

  // Memory.
  auto profile = detail::profile_of(detail::memory_events(g, s, model, m, serving));
  for (device_id d = 0; d < m; ++d)
    if (profile.peak[d] > devices.capacity(d))
      fail(violation_kind::memory, "device " + std::to_string(d) + " holds " + std::to_string(profile.peak[d]) +
                                       " bytes at time " + num(profile.peak_time[d]) + " but its capacity is " +
                                       std::to_string(devices.capacity(d)));
  report.peak_memory = std::move(profile.peak);
  if (dropped > 0)
    report.violations.push_back({violation_kind::structure, std::to_string(dropped) + " more violations not listed"});
  return report;
}

#if defined(GANTRY_SEPARATE_COMPILATION)
// Compiled once for gantry's own types, in the unit that includes place/instances.hpp.
extern template validation_report validate(const schedule&, const graph&, const graph_model&, const cluster&,
                                           validate_options);
#endif

}  // namespace gantry
