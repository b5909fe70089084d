// The executor: runs a placement for real on a backend (exec/cpu_backend.hpp, or a GPU one) and
// records what happened as a gantry::schedule, so that a measured run is checked by validate() and
// drawn by the same Chrome trace and SVG writers as a simulated one (DOPPLER Appendix H's runtime).
// It follows the simulator's rules (sim/simulator.hpp) decision for decision: the same ready-vertex
// policy, one vertex at a time per device, transfers over the resources of the cluster's topology
// (model/topology.hpp), tensors sent once per device and cached, memory held and freed as in
// schedule/schedule.hpp, a start that does not fit waiting for memory, and no device or channel
// left idle while work it could start is ready. Only the times differ: they are measured.
#pragma once

#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>
#include <gantry/order/levels.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>
#include <gantry/sim/simulator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <concepts>
#include <functional>
#include <queue>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace gantry {

// What the executor asks a backend to do. Durations are the model's: a backend whose kernels
// stand in for the real work (a calibrated busy loop, a paced copy) runs them that long; one
// that runs the real work ignores them.
struct vertex_launch {
  vertex_id vertex = no_vertex;
  device_id device = no_device;
  seconds duration = 0;
};
struct copy_launch {
  std::uint32_t id = 0;  // the transfer's index in the schedule
  vertex_id tensor = no_vertex;
  device_id from = no_device, to = no_device;
  byte_count bytes = 0;
  seconds duration = 0;
};
// A finished activity, with the times the backend measured on its clock (seconds since begin()).
struct completion {
  bool is_copy = false;
  std::uint32_t id = 0;  // the vertex, or the transfer's index
  seconds start = 0, finish = 0;
};

// A backend runs what it is launched, in launch order per device, and reports each completion
// once. The executor launches a vertex only to an idle device and a copy only when its route is
// free, so a backend needs no queueing policy of its own.
template <class B>
concept execution_backend = requires(B& b, const vertex_launch& v, const copy_launch& c, std::vector<completion>& out) {
  b.begin(std::size_t{});  // a run on this many devices starts now: the clock's zero
  b.launch_vertex(v);
  b.launch_copy(c);
  b.wait(out);  // blocks until at least one launched activity has finished, appends what has
  { b.now() } -> std::convertible_to<seconds>;
};

struct execute_options {
  ready_policy policy = ready_policy::placement_order;
  std::span<const vertex_id> priority = {};  // every vertex once; empty: Kahn order
  bool cache_transfers = true;               // send a tensor to a device once
  bool wait_for_memory = true;               // as simulate_options::wait_for_memory
};

// The options of a simulation that an execution should share, so both follow one rule set.
[[nodiscard]] inline execute_options execute_options_from(const simulate_options& o) {
  return {.policy = o.policy, .priority = o.priority, .cache_transfers = o.cache_transfers,
          .wait_for_memory = o.wait_for_memory};
}

struct execution_result {
  // ok, or out_of_memory with the device, the time, the vertex, the bytes needed and free.
  gantry::outcome outcome;
  gantry::schedule schedule;  // measured; complete when ok, what ran until the failure otherwise
  // Time the executor spent deciding and launching (not waiting), in seconds: its overhead. Wall
  // time between a wake-up and the next wait; and the CPU time its thread used over the whole run,
  // which leaves out time it was preempted and adds what waiting itself costs (the system calls).
  seconds host_seconds = 0;
  seconds host_cpu_seconds = 0;

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
};

// The executor as a class, to step through a run completion by completion:
//   executor ex(g, model, devices, placement, backend, options); while (ex.step()) watch(ex);
// Holds references to its arguments: they must outlive it.
template <placement_model M, device_set D, execution_backend B>
class executor {
 public:
  executor(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement, B& backend,
           execute_options options = {}, std::function<std::string(vertex_id)> names = {})
      : g_(g), model_(model), devices_(devices), placement_(placement), backend_(backend), options_(options),
        names_(std::move(names)) {
    init();
  }

  // Starts a run: checks the arguments (invalid_input for a placement or priority of the wrong
  // size or out of range, or a duration that is negative or not finite), allocates persistent
  // memory and launches what can start.
  void init() {
    const std::size_t n = g_.vertex_count();
    m_ = devices_.device_count();
    check_arguments(n);
    result_ = {};
    auto& s = result_.schedule;
    s.device.assign(placement_.begin(), placement_.end());
    s.start.assign(n, 0);
    s.finish.assign(n, 0);
    s.order.assign(m_, {});
    s.busy.assign(m_, 0);
    s.peak_memory.assign(m_, 0);
    s.peak_memory_time.assign(m_, 0);
    finished_ = 0;
    in_flight_ = 0;
    done_ = false;
    rank_.assign(n, 0);
    if (options_.priority.empty()) {
      const auto order = detail::kahn_on(g_);
      if (order.size() != n) throw not_a_dag("execute: the graph has a cycle");
      for (std::size_t i = 0; i < n; ++i) rank_[order[i]] = static_cast<std::uint32_t>(i);
    } else {
      for (std::size_t i = 0; i < n; ++i) rank_[options_.priority[i]] = static_cast<std::uint32_t>(i);
    }
    if (options_.policy == ready_policy::bottom_level) {
      const auto order = detail::kahn_on(g_);
      if (order.size() != n) throw not_a_dag("execute: the graph has a cycle");
      bottom_ = detail::compute_levels(g_, order, model_, m_).bottom;
    }
    pending_.resize(n);
    for (vertex_id v = 0; v < n; ++v) pending_[v] = static_cast<std::uint32_t>(g_.in_degree(v));
    output_holders_.assign(n, 0);
    edge_transfer_.assign(g_.edge_count(), detail::no_transfer);
    transfer_holders_.clear();
    transfer_duration_.clear();
    busy_.assign(m_, 0);
    topology_ = detail::topology_of(devices_);
    channel_busy_.assign(topology_.resource_count(), 0);
    transfer_queue_.clear();
    ready_.assign(m_, {});
    strict_next_.assign(m_, 0);
    strict_list_.assign(m_, {});
    if (options_.policy == ready_policy::strict_order) {
      std::vector<vertex_id> by_rank(n);
      for (vertex_id v = 0; v < n; ++v) by_rank[rank_[v]] = v;
      for (const vertex_id v : by_rank) strict_list_[placement_[v]].push_back(v);
    }
    memory_now_.assign(m_, 0);
    waiting_ = {};
    backend_.begin(m_);
    cpu_at_start_ = thread_cpu_now();
    const auto t0 = std::chrono::steady_clock::now();
    for (vertex_id v = 0; v < n && result_.ok(); ++v) allocate(placement_[v], model_.persistent_bytes(v), v, "persistent");
    if (result_.ok()) {
      for (vertex_id v = 0; v < n; ++v)
        if (pending_[v] == 0) make_ready(v);
      dispatch();
    }
    add_host_time(t0);
    if (n == 0 || (!result_.ok() && in_flight_ == 0)) finish_run();
  }

  // Waits for the next completions, processes them and launches what can start. Returns false
  // when the run is over (every vertex finished, or memory ran out and what was running finished).
  bool step() {
    if (done_) return false;
    if (in_flight_ == 0) {
      stall();
      return false;
    }
    completions_.clear();
    backend_.wait(completions_);
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t processed = 0;
    try {
      for (const completion& c : completions_) {
        --in_flight_;
        ++processed;
        if (c.is_copy) finish_transfer(c);
        else finish_vertex(c);
      }
      if (result_.ok()) dispatch();
    } catch (...) {
      // Bad input found mid-run: let what was launched finish, so the backend can start again.
      in_flight_ -= completions_.size() - processed;
      drain();
      throw;
    }
    add_host_time(t0);
    // After a failure, what is running still finishes (the backend owns its buffers until then).
    if (finished_ == g_.vertex_count() || (!result_.ok() && in_flight_ == 0)) {
      finish_run();
      return false;
    }
    return true;
  }

  execution_result& run() {
    while (step()) {
    }
    return result_;
  }

  [[nodiscard]] bool done() const noexcept { return done_; }
  [[nodiscard]] std::size_t finished_count() const noexcept { return finished_; }
  [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_; }
  [[nodiscard]] byte_count memory_in_use(device_id d) const { return memory_now_[d]; }
  [[nodiscard]] const execution_result& result() const noexcept { return result_; }

 private:
  using ready_key = std::tuple<double, std::uint32_t, vertex_id>;  // policy key, rank, vertex

  // This thread's CPU clock where POSIX offers it (read twice a run: it is a system call).
  static seconds thread_cpu_now() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
#else
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
  }
  void add_host_time(std::chrono::steady_clock::time_point t0) {
    result_.host_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void check_arguments(std::size_t n) const {
    if (placement_.size() != n)
      throw invalid_input("execute: the placement has " + std::to_string(placement_.size()) + " entries for " +
                          std::to_string(n) + " vertices");
    for (vertex_id v = 0; v < n; ++v) {
      if (placement_[v] >= m_)
        throw invalid_input("execute: vertex " + name(v) + " is placed on device " + std::to_string(placement_[v]) +
                            " but there are " + std::to_string(m_) + " devices");
      const seconds t = model_.compute_time(v, placement_[v]);
      if (!std::isfinite(t) || t < 0)
        throw invalid_input("execute: vertex " + name(v) + " has compute time " + std::to_string(t) +
                            " on device " + std::to_string(placement_[v]) + "; a run needs a finite time >= 0");
    }
    if (!options_.priority.empty()) {
      if (options_.priority.size() != n)
        throw invalid_input("execute: the priority order has " + std::to_string(options_.priority.size()) +
                            " entries for " + std::to_string(n) + " vertices");
      std::vector<std::uint8_t> seen(n, 0);
      for (const vertex_id v : options_.priority) {
        if (v >= n || seen[v])
          throw invalid_input("execute: the priority order lists vertex " + std::to_string(v) +
                              (v >= n ? " which does not exist" : " twice"));
        seen[v] = 1;
      }
    }
  }

  [[nodiscard]] std::string name(vertex_id v) const { return names_ ? names_(v) : "#" + std::to_string(v); }

  void fail_out_of_memory(device_id d, vertex_id v, byte_count bytes, byte_count available, const std::string& words) {
    result_.outcome = {.code = status::out_of_memory, .vertex = v, .device = d, .time = backend_.now(),
                       .needed = bytes, .available = available, .message = words};
  }

  void allocate(device_id d, byte_count bytes, vertex_id v, const char* what) {
    if (bytes == 0) return;
    const byte_count capacity = devices_.capacity(d);
    if (bytes > capacity || memory_now_[d] > capacity - bytes) {
      std::ostringstream text;
      text << "device " << d << " runs out of memory: " << name(v) << " needs " << bytes << " " << what
           << " bytes with " << memory_now_[d] << " of " << capacity << " bytes in use";
      fail_out_of_memory(d, v, bytes, capacity > memory_now_[d] ? capacity - memory_now_[d] : 0, text.str());
      return;
    }
    memory_now_[d] += bytes;
  }
  void release(device_id d, byte_count bytes) { memory_now_[d] -= bytes; }

  void make_ready(vertex_id v) {
    double key = 0;
    if (options_.policy == ready_policy::fifo) key = backend_.now();
    if (options_.policy == ready_policy::bottom_level) key = -bottom_[v];
    ready_[placement_[v]].push({key, rank_[v], v});
  }

  void start_vertex(vertex_id v) {
    const device_id d = placement_[v];
    allocate(d, model_.temporary_bytes(v), v, "temporary");
    if (result_.ok()) allocate(d, model_.output_bytes(v), v, "output");
    if (!result_.ok()) return;
    busy_[d] = 1;
    result_.schedule.order[d].push_back(v);
    ++in_flight_;
    backend_.launch_vertex({v, d, model_.compute_time(v, d)});
  }

  void finish_vertex(const completion& c) {
    const vertex_id v = c.id;
    const device_id d = placement_[v];
    auto& s = result_.schedule;
    s.start[v] = c.start;
    s.finish[v] = c.finish;
    s.busy[d] += c.finish - c.start;
    s.makespan = std::max(s.makespan, c.finish);
    busy_[d] = 0;
    ++finished_;
    release(d, model_.temporary_bytes(v));
    if (result_.ok()) hand_output(v);
    release_inputs(v);
  }

  // As the simulator: consumers on v's device get the output now; others get one transfer per
  // tensor (edges of equal bytes) and device when cached, else one per edge.
  void hand_output(vertex_id v) {
    const device_id d = placement_[v];
    auto& s = result_.schedule;
    std::uint32_t holders = 0;
    const auto succ = g_.successors(v);
    const auto out = g_.out_edges(v);
    const std::size_t first_new = s.transfers.size();
    for (std::size_t i = 0; i < succ.size(); ++i) {
      const vertex_id w = succ[i];
      const device_id to = placement_[w];
      if (to == d) {
        ++holders;
        if (--pending_[w] == 0) make_ready(w);
        continue;
      }
      const edge_id e = out[i];
      const byte_count bytes = model_.edge_bytes(e);
      std::uint32_t t = detail::no_transfer;
      if (options_.cache_transfers)
        for (std::size_t k = first_new; k < s.transfers.size() && t == detail::no_transfer; ++k)
          if (s.transfers[k].to == to && s.transfers[k].bytes == bytes) t = static_cast<std::uint32_t>(k);
      if (t == detail::no_transfer) {
        t = static_cast<std::uint32_t>(s.transfers.size());
        s.transfers.push_back({v, e, d, to, 0, 0, bytes});
        transfer_holders_.push_back(0);
        const seconds time = model_.transfer_time(e, d, to);
        if (!std::isfinite(time) || time < 0)
          throw invalid_input("execute: the transfer of " + name(v) + " to device " + std::to_string(to) +
                              " takes " + std::to_string(time) + " s; a run needs a finite time >= 0");
        transfer_duration_.push_back(time);
        ++holders;
      }
      edge_transfer_[e] = t;
      ++transfer_holders_[t];
    }
    for (std::size_t k = first_new; k < s.transfers.size(); ++k)
      transfer_queue_.insert({backend_.now(), rank_[v], s.transfers[k].edge, static_cast<std::uint32_t>(k)});
    output_holders_[v] = holders;
    if (holders == 0) release(d, model_.output_bytes(v));
  }

  void release_inputs(vertex_id v) {
    const device_id d = placement_[v];
    const auto pred = g_.predecessors(v);
    const auto in = g_.in_edges(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (placement_[u] == d) {
        if (--output_holders_[u] == 0) release(d, model_.output_bytes(u));
      } else {
        const std::uint32_t t = edge_transfer_[in[i]];
        if (t != detail::no_transfer && --transfer_holders_[t] == 0) release(d, result_.schedule.transfers[t].bytes);
      }
    }
  }

  void start_transfer(std::uint32_t t) {
    const auto& tr = result_.schedule.transfers[t];
    allocate(tr.to, tr.bytes, tr.tensor, "received");
    if (!result_.ok()) return;
    for (const resource_id r : topology_.route_of(tr.from, tr.to)) channel_busy_[r] = 1;
    result_.schedule.bytes_moved += tr.bytes;
    ++in_flight_;
    backend_.launch_copy({t, tr.tensor, tr.from, tr.to, tr.bytes, transfer_duration_[t]});
  }

  void finish_transfer(const completion& c) {
    auto& tr = result_.schedule.transfers[c.id];
    tr.start = c.start;
    tr.finish = c.finish;
    result_.schedule.makespan = std::max(result_.schedule.makespan, c.finish);
    for (const resource_id r : topology_.route_of(tr.from, tr.to)) channel_busy_[r] = 0;
    const vertex_id u = tr.tensor;
    if (--output_holders_[u] == 0) release(tr.from, model_.output_bytes(u));
    if (!result_.ok()) return;
    const auto succ = g_.successors(u);
    const auto out = g_.out_edges(u);
    for (std::size_t i = 0; i < succ.size(); ++i)
      if (edge_transfer_[out[i]] == c.id && --pending_[succ[i]] == 0) make_ready(succ[i]);
  }

  // The simulator's dispatch: transfers first (they never wait for devices), then each idle device
  // takes its first ready vertex in policy order that fits. A launch never finishes at once here,
  // so one pass starts everything that can start.
  void dispatch() {
    waiting_ = {};
    for (auto it = transfer_queue_.begin(); it != transfer_queue_.end() && result_.ok();) {
      const std::uint32_t t = std::get<3>(*it);
      const auto& tr = result_.schedule.transfers[t];
      const route path = topology_.route_of(tr.from, tr.to);
      if (std::any_of(path.begin(), path.end(), [&](resource_id r) { return channel_busy_[r] != 0; }) ||
          !room_for(tr.to, tr.bytes, tr.tensor, "received")) {
        ++it;
        continue;
      }
      it = transfer_queue_.erase(it);
      start_transfer(t);
    }
    for (device_id d = 0; d < m_ && result_.ok(); ++d) {
      if (busy_[d]) continue;
      if (options_.policy == ready_policy::strict_order) {
        auto& next = strict_next_[d];
        const auto& list = strict_list_[d];
        if (next < list.size() && pending_[list[next]] == 0 && vertex_fits(list[next])) start_vertex(list[next++]);
        continue;
      }
      skipped_.clear();
      while (!ready_[d].empty()) {
        const auto top = ready_[d].top();
        ready_[d].pop();
        if (vertex_fits(std::get<2>(top))) {
          start_vertex(std::get<2>(top));
          break;
        }
        skipped_.push_back(top);
      }
      for (const auto& key : skipped_) ready_[d].push(key);
    }
  }

  bool room_for(device_id d, byte_count bytes, vertex_id v, const char* what) {
    if (!options_.wait_for_memory || bytes == 0) return true;
    const byte_count capacity = devices_.capacity(d);
    if (bytes <= capacity && memory_now_[d] <= capacity - bytes) return true;
    waiting_ = {d, v, bytes, capacity > memory_now_[d] ? capacity - memory_now_[d] : 0, what};
    return false;
  }
  // A vertex holds its temporary and output bytes while it runs. (The simulator lets a vertex of
  // zero modelled time free its inputs first; a real kernel takes time, so here it does not.)
  bool vertex_fits(vertex_id v) {
    return room_for(placement_[v], detail::saturating_add(model_.temporary_bytes(v), model_.output_bytes(v)), v,
                    "temporary and output");
  }

  void drain() {
    done_ = true;
    while (in_flight_ > 0) {
      completions_.clear();
      backend_.wait(completions_);
      in_flight_ -= std::min(in_flight_, completions_.size());
    }
  }

  // Nothing in flight and vertices left: memory is exhausted, or a strict order contradicts the graph.
  void stall() {
    if (!result_.ok()) {
      finish_run();
      return;
    }
    if (waiting_.vertex != no_vertex) {
      std::ostringstream text;
      text << "device " << waiting_.device << " runs out of memory: " << name(waiting_.vertex) << " needs "
           << waiting_.needed << " " << waiting_.what << " bytes with " << waiting_.available << " of "
           << devices_.capacity(waiting_.device) << " bytes free, and nothing running can free more";
      fail_out_of_memory(waiting_.device, waiting_.vertex, waiting_.needed, waiting_.available, text.str());
      finish_run();
      return;
    }
    done_ = true;
    for (device_id d = 0; d < m_; ++d)
      if (strict_next_[d] < strict_list_[d].size())
        throw invalid_input("execute: the priority order runs " + name(strict_list_[d][strict_next_[d]]) +
                            " on device " + std::to_string(d) + " before one of its inputs can be produced");
    throw invalid_input("execute: the run stalled with " + std::to_string(g_.vertex_count() - finished_) +
                        " vertices left");
  }

  void finish_run() {
    done_ = true;
    result_.host_cpu_seconds = thread_cpu_now() - cpu_at_start_;
    if (!result_.ok()) return;
    auto& s = result_.schedule;
    auto profile = compute_memory_profile(g_, s, model_, m_);
    s.peak_memory = std::move(profile.peak);
    s.peak_memory_time = std::move(profile.peak_time);
  }

  const csr_graph& g_;
  const M& model_;
  const D& devices_;
  std::span<const device_id> placement_;
  B& backend_;
  execute_options options_;
  std::function<std::string(vertex_id)> names_;
  std::size_t m_ = 0;

  execution_result result_;
  std::size_t finished_ = 0;
  std::size_t in_flight_ = 0;
  bool done_ = false;
  seconds cpu_at_start_ = 0;
  std::vector<completion> completions_;
  std::vector<std::uint32_t> rank_;
  std::vector<seconds> bottom_;
  std::vector<std::uint32_t> pending_;
  std::vector<std::uint32_t> output_holders_;
  std::vector<std::uint32_t> edge_transfer_;
  std::vector<std::uint32_t> transfer_holders_;
  std::vector<seconds> transfer_duration_;
  std::vector<std::uint8_t> busy_;
  gantry::topology topology_;
  std::vector<std::uint8_t> channel_busy_;
  struct memory_wait {
    device_id device = no_device;
    vertex_id vertex = no_vertex;
    byte_count needed = 0, available = 0;
    const char* what = "";
  } waiting_;
  std::vector<ready_key> skipped_;
  std::set<std::tuple<seconds, std::uint32_t, edge_id, std::uint32_t>> transfer_queue_;
  std::vector<std::priority_queue<ready_key, std::vector<ready_key>, std::greater<>>> ready_;
  std::vector<std::size_t> strict_next_;
  std::vector<std::vector<vertex_id>> strict_list_;
  std::vector<byte_count> memory_now_;
};

// Runs `placement` of g on `backend`. Bad arguments throw invalid_input (a cycle: not_a_dag);
// running out of memory is the result's outcome.
template <adapted_graph G, placement_model M, device_set D, execution_backend B>
[[nodiscard]] execution_result execute(const G& graph, const M& model, const D& devices,
                                       std::span<const device_id> placement, B& backend, execute_options options = {}) {
  const detail::csr_view<G> g(graph);
  if (const auto cycle = g->find_cycle(); !cycle.empty())
    throw not_a_dag("execute: the graph has a cycle: " + describe_cycle(graph, cycle));
  executor<M, D, B> ex(*g, model, devices, placement, backend, options,
                       [&graph](vertex_id v) { return "'" + vertex_name(graph, v) + "'"; });
  return std::move(ex.run());
}

}  // namespace gantry
