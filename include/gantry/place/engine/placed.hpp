// detail::placed_vertices: what a list-scheduling run has placed so far (per vertex its device,
// start, finish and placement step) and the order a result lists the placed vertices in. Every
// other part of the engine (place/engine/) reads it; only the engine writes it.
#pragma once

#include <gantry/core/types.hpp>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace gantry::detail {

struct placed_vertices {
  std::vector<device_id> device;  // no_device until placed
  std::vector<seconds> start, finish;
  std::vector<std::uint32_t> step;  // 0 for the first vertex placed
  std::size_t count = 0;            // vertices placed

  void reset(std::size_t n) {
    device.assign(n, no_device);
    start.assign(n, 0);
    finish.assign(n, 0);
    step.assign(n, 0);
    count = 0;
  }
  [[nodiscard]] bool placed(vertex_id v) const { return device[v] != no_device; }
  void record(vertex_id v, device_id d, seconds begin, seconds end) {
    device[v] = d;
    start[v] = begin;
    finish[v] = end;
    step[v] = static_cast<std::uint32_t>(count++);
  }

  // The placed vertices in the order they were placed. O(n).
  [[nodiscard]] std::vector<vertex_id> by_step() const {
    std::vector<vertex_id> out(count);
    for (vertex_id v = 0; v < device.size(); ++v)
      if (device[v] != no_device) out[step[v]] = v;
    return out;
  }

  // The placed vertices by (start, finish, placement step) over `devices` devices. A device's
  // vertices in placement order are already in that order unless a policy inserts into idle gaps,
  // so the devices' lists are merged in O(n log m); a list out of order falls back to sorting
  // everything, O(n log n).
  [[nodiscard]] std::vector<vertex_id> order_by_start(std::size_t devices) const {
    std::vector<vertex_id> by_step(count);
    std::vector<std::uint32_t> first(devices + 1, 0);
    for (vertex_id v = 0; v < device.size(); ++v)
      if (device[v] != no_device) {
        by_step[step[v]] = v;
        ++first[device[v] + 1];
      }
    for (std::size_t d = 0; d < devices; ++d) first[d + 1] += first[d];
    std::vector<vertex_id> on_device(count);
    {
      std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
      for (const vertex_id v : by_step) on_device[fill[device[v]]++] = v;
    }
    const auto before = [&](vertex_id a, vertex_id b) {
      return std::tie(start[a], finish[a], step[a]) < std::tie(start[b], finish[b], step[b]);
    };
    bool sorted = true;
    for (std::size_t d = 0; d < devices && sorted; ++d)
      for (std::uint32_t i = first[d]; i + 1 < first[d + 1] && sorted; ++i)
        sorted = before(on_device[i], on_device[i + 1]);
    if (!sorted) {
      std::sort(by_step.begin(), by_step.end(), before);
      return by_step;
    }
    // A min-heap of the devices' next vertices, keys held in place.
    struct head {
      seconds start, finish;
      std::uint32_t step;
      device_id d;
      bool operator<(const head& o) const {
        return std::tie(start, finish, step) < std::tie(o.start, o.finish, o.step);
      }
    };
    std::vector<std::uint32_t> next(first.begin(), first.end() - 1);
    const auto head_of = [&](device_id d) {
      const vertex_id v = on_device[next[d]];
      return head{start[v], finish[v], step[v], d};
    };
    std::vector<head> heap;
    for (device_id d = 0; d < devices; ++d)
      if (first[d] != first[d + 1]) heap.push_back(head_of(d));
    const auto sift_down = [&](std::size_t i) {
      const head moving = heap[i];
      for (std::size_t child; (child = 2 * i + 1) < heap.size(); i = child) {
        if (child + 1 < heap.size() && heap[child + 1] < heap[child]) ++child;
        if (!(heap[child] < moving)) break;
        heap[i] = heap[child];
      }
      heap[i] = moving;
    };
    for (std::size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
    std::vector<vertex_id> order;
    order.reserve(count);
    while (!heap.empty()) {
      const device_id d = heap.front().d;
      order.push_back(on_device[next[d]++]);
      if (next[d] != first[d + 1]) {
        heap.front() = head_of(d);
      } else {
        heap.front() = heap.back();
        heap.pop_back();
      }
      if (!heap.empty()) sift_down(0);
    }
    return order;
  }
};

}  // namespace gantry::detail
