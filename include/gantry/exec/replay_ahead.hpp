// Strict replay enqueued ahead: a placement's simulated schedule fixes each device's vertex order
// and each link resource's transfer order; a backend that can order work by itself (CUDA streams
// and events) is handed all of it at once and the host no longer round-trips per vertex. The
// measured schedule comes back from the backend's clock as the executor's does, so validate(),
// the trace writers and compare_start_times() take it unchanged. ahead_clock runs a plan on the
// model's clock: the semantics a backend must follow, and what the tests check plans against.
#pragma once

#include <gantry/exec/executor.hpp>
#include <gantry/model/topology.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/schedule/memory_profile.hpp>

#include <algorithm>
#include <concepts>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gantry {

// One vertex or one transfer of the plan. Streams: a vertex runs on its device's compute stream
// after the device's previous vertex in the plan; a copy on the stream of its (from, to) pair after
// that pair's previous copy. `after` lists what stream order does not already give: a vertex's
// inputs from other devices, a copy's producer and the previous transfer on each resource of its
// route (model/topology.hpp) that is not on its own stream.
struct ahead_activity {
  bool is_copy = false;
  std::uint32_t id = 0;              // the vertex, or the transfer's index (into ahead_plan::copies)
  std::vector<std::uint32_t> after;  // indices into ahead_plan::activities, all earlier than this one
};

struct ahead_plan {
  std::size_t devices = 0;
  std::vector<ahead_activity> activities;  // every vertex and transfer once, each after what it waits for
  std::vector<vertex_launch> vertices;     // per vertex: its device and modelled duration
  std::vector<copy_launch> copies;         // per transfer of the schedule the plan was made from
  // Transfers that share a link resource (sequential or duplex channels, node ports) must not
  // overlap, the pair's previous one included; false: links are independent (parallel), and a
  // pair's stream only orders its copies.
  bool shared_links = false;
};

// A backend that runs a whole plan: it enqueues every activity in plan order, waits for all of
// them, fills one completion per activity (times on its clock, from begin()) and returns the host
// time it spent enqueueing (or launching what it had prepared), not waiting.
template <class B>
concept ahead_backend = requires(B& b, const ahead_plan& p, std::vector<completion>& out, std::size_t devices) {
  b.begin(devices);
  { b.run_ahead(p, out) } -> std::convertible_to<seconds>;
};

namespace detail {
// Vertices of `order` sorted by (start, finish, topological rank): the order they ran in, even
// among zero-time vertices that share a start.
inline void sort_as_run(std::vector<vertex_id>& order, const schedule& s, const std::vector<std::uint32_t>& rank) {
  std::sort(order.begin(), order.end(), [&](vertex_id a, vertex_id b) {
    return std::tie(s.start[a], s.finish[a], rank[a]) < std::tie(s.start[b], s.finish[b], rank[b]);
  });
}
}  // namespace detail

// The plan that replays schedule s (a simulation of a placement of g, for example) on `devices`.
// Throws invalid_input when s does not belong to g and devices, or a cross-device edge has no
// transfer serving it. O((n + e + t) log(n + t)) for t transfers.
template <adapted_graph G, placement_model M, device_set D>
[[nodiscard]] ahead_plan make_ahead_plan(const G& graph, const M& model, const D& devices, const schedule& s) {
  const detail::csr_view<G> view(graph);
  const csr_graph& g = *view;
  const std::size_t n = g.vertex_count(), m = devices.device_count(), t = s.transfers.size();
  if (s.device.size() != n || s.start.size() != n || s.finish.size() != n)
    throw invalid_input("make_ahead_plan: the schedule has " + std::to_string(s.device.size()) +
                        " vertices; the graph " + std::to_string(n));
  for (vertex_id v = 0; v < n; ++v)
    if (s.device[v] >= m)
      throw invalid_input("make_ahead_plan: vertex " + std::to_string(v) + " is on device " +
                          std::to_string(s.device[v]) + " of " + std::to_string(m));
  for (std::size_t i = 0; i < t; ++i) {
    const auto& x = s.transfers[i];
    if (x.tensor >= n || x.from >= m || x.to >= m || x.from == x.to || x.edge >= g.edge_count())
      throw invalid_input("make_ahead_plan: transfer " + std::to_string(i) + " is malformed");
  }
  const auto rank_order = kahn_order(g);
  std::vector<std::uint32_t> rank(n);
  for (std::uint32_t i = 0; i < rank_order.size(); ++i) rank[rank_order[i]] = i;

  ahead_plan plan;
  plan.devices = m;
  plan.vertices.resize(n);
  for (vertex_id v = 0; v < n; ++v) plan.vertices[v] = {v, s.device[v], model.compute_time(v, s.device[v])};
  plan.copies.resize(t);
  for (std::uint32_t i = 0; i < t; ++i) {
    const auto& x = s.transfers[i];
    plan.copies[i] = {i, x.tensor, x.from, x.to, x.bytes, model.transfer_time(x.edge, x.from, x.to)};
  }

  // Activity a < n is vertex a; n + i is transfer i. Every dependency, stream order included, is an
  // arc of this DAG; `after` keeps the cross-stream ones.
  std::vector<std::vector<std::uint32_t>> needs(n + t), cross(n + t);
  const auto need = [&](std::uint32_t a, std::uint32_t b, bool other_stream) {
    needs[a].push_back(b);
    if (other_stream) cross[a].push_back(b);
  };
  std::vector<std::vector<vertex_id>> on_device(m);
  for (vertex_id v = 0; v < n; ++v) on_device[s.device[v]].push_back(v);
  for (auto& list : on_device) {
    detail::sort_as_run(list, s, rank);
    for (std::size_t k = 1; k < list.size(); ++k) need(list[k], list[k - 1], false);
  }
  const auto serving = detail::serving_transfers(g, s, model);
  for (edge_id e = 0; e < g.edge_count(); ++e) {
    const auto u = g.source(e), v = g.target(e);
    if (s.device[u] == s.device[v]) continue;
    if (serving[e] == detail::no_transfer)
      throw invalid_input("make_ahead_plan: edge " + std::to_string(u) + " -> " + std::to_string(v) +
                          " crosses device " + std::to_string(s.device[u]) + " -> " + std::to_string(s.device[v]) +
                          " but no transfer carries it");
    need(v, static_cast<std::uint32_t>(n + serving[e]), true);
  }
  std::vector<std::uint32_t> by_start(t);
  for (std::uint32_t i = 0; i < t; ++i) by_start[i] = i;
  std::stable_sort(by_start.begin(), by_start.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(s.transfers[a].start, s.transfers[a].finish) <
           std::tie(s.transfers[b].start, s.transfers[b].finish);
  });
  const topology net = detail::topology_of(devices);
  plan.shared_links = net.shared();
  std::vector<std::uint32_t> last_on_resource(net.resource_count(), detail::no_transfer);
  std::map<std::pair<device_id, device_id>, std::uint32_t> last_on_pair;
  for (const std::uint32_t i : by_start) {
    const auto& x = s.transfers[i];
    const auto a = static_cast<std::uint32_t>(n + i);
    need(a, x.tensor, true);
    const auto [pair, fresh] = last_on_pair.try_emplace({x.from, x.to}, i);
    if (!fresh) need(a, static_cast<std::uint32_t>(n + std::exchange(pair->second, i)), false);
    if (net.shared())
      for (const resource_id r : net.route_of(x.from, x.to)) {
        const std::uint32_t previous = std::exchange(last_on_resource[r], i);
        if (previous == detail::no_transfer) continue;
        const auto& p = s.transfers[previous];
        need(a, static_cast<std::uint32_t>(n + previous), p.from != x.from || p.to != x.to);
      }
  }

  // Kahn's algorithm, earliest simulated start first, so the plan enqueues work in the order it ran.
  std::vector<std::uint32_t> waiting(n + t, 0);
  std::vector<std::vector<std::uint32_t>> enables(n + t);
  for (std::uint32_t a = 0; a < n + t; ++a) {
    auto& list = needs[a];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    waiting[a] = static_cast<std::uint32_t>(list.size());
    for (const auto b : list) enables[b].push_back(a);
  }
  const auto key = [&](std::uint32_t a) {
    return a < n ? std::tuple{s.start[a], 0, rank[a]} : std::tuple{s.transfers[a - n].start, 1, a};
  };
  using entry = std::pair<std::tuple<seconds, int, std::uint32_t>, std::uint32_t>;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> ready;
  for (std::uint32_t a = 0; a < n + t; ++a)
    if (waiting[a] == 0) ready.push({key(a), a});
  std::vector<std::uint32_t> position(n + t, detail::no_transfer);
  plan.activities.reserve(n + t);
  while (!ready.empty()) {
    const std::uint32_t a = ready.top().second;
    ready.pop();
    position[a] = static_cast<std::uint32_t>(plan.activities.size());
    ahead_activity act{a >= n, a < n ? a : static_cast<std::uint32_t>(a - n), {}};
    auto& list = cross[a];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (const auto b : list) act.after.push_back(position[b]);
    plan.activities.push_back(std::move(act));
    for (const auto c : enables[a])
      if (--waiting[c] == 0) ready.push({key(c), c});
  }
  if (plan.activities.size() != n + t)
    throw invalid_input(
        "make_ahead_plan: the schedule's orders contradict the graph's edges (not a schedule of this "
        "graph?)");
  return plan;
}

// Runs `plan` on `backend` and returns the measured schedule, as the executor does: the same
// placement and transfers, with the backend's times. Memory is not enforced while it runs (the
// order is the plan's): the peak is computed from the measured times, and validate() judges it.
template <adapted_graph G, placement_model M, device_set D, class B>
requires ahead_backend<B>
[[nodiscard]] execution_result run_ahead_plan(const G& graph, const M& model, const D& devices, const ahead_plan& plan,
                                              const std::vector<transfer>& transfers, B& backend) {
  const detail::csr_view<G> view(graph);
  const csr_graph& g = *view;
  const std::size_t n = g.vertex_count(), m = devices.device_count();
  if (plan.vertices.size() != n || plan.devices != m || plan.copies.size() != transfers.size())
    throw invalid_input("run_ahead_plan: the plan was made for another graph, cluster or schedule");
  execution_result out;
  backend.begin(m);
  std::vector<completion> done;
  done.reserve(plan.activities.size());
  out.host_seconds = backend.run_ahead(plan, done);
  auto& s = out.schedule;
  s.device.resize(n);
  s.start.assign(n, 0);
  s.finish.assign(n, 0);
  for (vertex_id v = 0; v < n; ++v) s.device[v] = plan.vertices[v].device;
  s.transfers = transfers;
  std::size_t vertices = 0, copies = 0;
  for (const auto& c : done) {
    if (c.is_copy && c.id < s.transfers.size()) {
      s.transfers[c.id].start = c.start, s.transfers[c.id].finish = c.finish;
      ++copies;
    } else if (!c.is_copy && c.id < n) {
      s.start[c.id] = c.start, s.finish[c.id] = c.finish;
      ++vertices;
    }
  }
  if (vertices != n || copies != transfers.size())
    throw std::logic_error("run_ahead_plan: the backend reported " + std::to_string(vertices) + " of " +
                           std::to_string(n) + " vertices and " + std::to_string(copies) + " of " +
                           std::to_string(transfers.size()) + " transfers");
  summarize(s, g, model, m);
  return out;
}

// The plan of `simulated` (a schedule of g on devices), run on backend.
template <adapted_graph G, placement_model M, device_set D, class B>
requires ahead_backend<B>
[[nodiscard]] execution_result replay_ahead(const G& graph, const M& model, const D& devices, const schedule& simulated,
                                            B& backend) {
  const ahead_plan plan = make_ahead_plan(graph, model, devices, simulated);
  return run_ahead_plan(graph, model, devices, plan, simulated.transfers, backend);
}

namespace detail {
// An ahead backend's own cost per task on one worker (the StarPU backends' measure_task_cost): a
// chain of `length` empty vertices on device 0, each after the one before, replayed ahead; the
// median over `runs` runs of the measured makespan over `length`.
template <class B>
requires ahead_backend<B>
[[nodiscard]] seconds measure_ahead_task_cost(B& backend, std::size_t length, std::size_t runs) {
  graph g;
  for (std::size_t i = 0; i < length; ++i) {
    g.add_vertex("v" + std::to_string(i), 0);
    if (i > 0) g.add_edge(static_cast<vertex_id>(i - 1), static_cast<vertex_id>(i), 64);
  }
  const cluster c = cluster::uniform(1, unlimited_memory);
  const graph_model model(g, c);
  const auto simulated = simulate(g, model, c, std::vector<device_id>(length, 0));
  std::vector<double> per_task;
  for (std::size_t run = 0; run < std::max<std::size_t>(runs, 1); ++run)
    per_task.push_back(replay_ahead(g, model, c, simulated.schedule, backend).schedule.makespan /
                       static_cast<double>(std::max<std::size_t>(length, 1)));
  std::sort(per_task.begin(), per_task.end());
  return per_task[(per_task.size() - 1) / 2];
}
}  // namespace detail

// A plan run on the model's clock: every activity starts once its stream's previous activity and
// everything in `after` has finished, and lasts its modelled duration. For a strict replay over
// sequential or duplex links this is the simulation itself; over parallel links copies of one
// device pair queue behind each other, as on one CUDA stream.
class ahead_clock {
 public:
  void begin(std::size_t /*devices*/) {}
  void launch_vertex(const vertex_launch&) { throw std::logic_error("ahead_clock runs whole plans: use run_ahead"); }
  void launch_copy(const copy_launch&) { throw std::logic_error("ahead_clock runs whole plans: use run_ahead"); }
  void wait(std::vector<completion>&) {}
  [[nodiscard]] seconds now() const noexcept { return 0; }

  seconds run_ahead(const ahead_plan& plan, std::vector<completion>& out) {
    std::vector<seconds> device_free(plan.devices, 0), end(plan.activities.size(), 0);
    std::map<std::pair<device_id, device_id>, seconds> pair_free;
    for (std::size_t i = 0; i < plan.activities.size(); ++i) {
      const auto& a = plan.activities[i];
      seconds start = 0;
      for (const auto b : a.after) start = std::max(start, end[b]);
      if (a.is_copy) {
        const auto& c = plan.copies[a.id];
        seconds& free = pair_free[{c.from, c.to}];
        start = std::max(start, free);
        free = end[i] = start + c.duration;
      } else {
        const auto& v = plan.vertices[a.id];
        start = std::max(start, device_free[v.device]);
        device_free[v.device] = end[i] = start + v.duration;
      }
      out.push_back({a.is_copy, a.id, start, end[i]});
    }
    return 0;
  }
};
static_assert(ahead_backend<ahead_clock> && execution_backend<ahead_clock>);

}  // namespace gantry
