// The admission rule of the event loop (sim/event_loop.hpp), in the spirit of the banker's
// algorithm: a start or transfer that fits now is still held back when admitting it would leave the
// priority order, run one vertex at a time from the current state, without room to finish.
//
// The reference run R: the vertices not yet started, one at a time in priority order, all that has
// started taken as finished. At a vertex's step its device holds the persistent bytes, the outputs
// and received copies a later step still needs, and the vertex's temporary and output bytes. A
// copy is received just before the first step that reads it, and its source is held until then
// (both are held at that step, as during a real transfer). need[d][k] bounds what device d holds
// at R's step k; the loop admits a start only while need stays within capacity at every step still
// to come, so that R remains a way to finish.
//
// Starting vertex x (step p) early holds its output from now until p: need[d][0, p) grows by it; a
// copy received early, for a first reader at step p, does the same on its device. Nothing else
// grows: an early start frees its inputs no later than R would. Why a run then never gets stuck:
// let k0 be the lowest step not started while nothing is in flight. Its vertex's producers came
// earlier, so have finished; the copies it lacks wait with first reader k0, so need[., 0, k0) has
// no step to come and they are admitted, and fit, as need[., k0] counts them and all that is held.
// Then the vertex is ready, admitted and fits the same way. So where R fits at the start (checked
// then; otherwise the rule stays off), a run never gets stuck on memory, on a virtual clock or a
// measured one: the argument uses no durations.
//
// Cost: off (no allocation, a branch per start) unless some device could fill up, that is, its
// persistent, temporary and output bytes plus every byte it could receive exceed its capacity.
// Each such device gets a segment tree over the n steps (prefix add, prefix max): O(log n) per
// start and transfer, O((n + e) log n) over a run, and up to 48 bytes per vertex for each.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/model/cluster.hpp>
#include <gantry/model/model.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace gantry::detail {

// Prefix add and prefix max over n values (heap layout, size a power of two).
class prefix_max_tree {
 public:
  static constexpr std::int64_t none = std::numeric_limits<std::int64_t>::min() / 2;  // a started step

  explicit prefix_max_tree(std::span<const std::int64_t> values) {
    while (size_ < values.size()) size_ *= 2;
    max_.assign(2 * size_, none);
    add_.assign(size_, 0);
    std::copy(values.begin(), values.end(), max_.begin() + static_cast<std::ptrdiff_t>(size_));
    for (std::size_t i = size_ - 1; i > 0; --i) max_[i] = std::max(max_[2 * i], max_[2 * i + 1]);
  }
  // The largest value in [0, p); at most none / 2 when every value there is none (values and adds
  // stay below 2^61).
  [[nodiscard]] std::int64_t max_before(std::size_t p) const {
    // Down the path to p: a left child wholly before p counts, with the adds of its ancestors.
    std::int64_t best = none, above = 0;
    std::size_t i = 1, lo = 0, hi = size_;
    while (lo < p) {
      if (hi <= p) return std::max(best, max_[i] + above);
      above += add_[i];
      const std::size_t mid = (lo + hi) / 2;
      if (p > mid) {
        best = std::max(best, max_[2 * i] + above);
        i = 2 * i + 1;
        lo = mid;
      } else {
        i = 2 * i;
        hi = mid;
      }
    }
    return best;
  }
  void add_before(std::size_t p, std::int64_t x) { add_before(1, 0, size_, p, x); }
  // The value at k.
  [[nodiscard]] std::int64_t at(std::size_t k) const {
    std::size_t i = size_ + k;
    std::int64_t value = max_[i];
    for (i /= 2; i > 0; i /= 2) value += add_[i];
    return value;
  }
  void clear(std::size_t k) {
    std::size_t i = size_ + k;
    max_[i] = none;
    for (i /= 2; i > 0; i /= 2) max_[i] = std::max(max_[2 * i], max_[2 * i + 1]) + add_[i];
  }

 private:
  void add_before(std::size_t i, std::size_t lo, std::size_t hi, std::size_t p, std::int64_t x) {
    if (lo >= p) return;
    if (hi <= p) {
      max_[i] += x;
      if (i < size_) add_[i] += x;
      return;
    }
    const std::size_t mid = (lo + hi) / 2;
    add_before(2 * i, lo, mid, p, x);
    add_before(2 * i + 1, mid, hi, p, x);
    max_[i] = std::max(max_[2 * i], max_[2 * i + 1]) + add_[i];
  }

  std::size_t size_ = 1;
  std::vector<std::int64_t> max_;  // of the subtree, its own adds and those below included
  std::vector<std::int64_t> add_;  // added to the whole subtree
};

class memory_admission {
 public:
  // Follows the devices that could fill up, if the reference run fits; otherwise (or when `rank` is
  // not a topological order, or byte counts near 2^62) the rule is off and every start is admitted.
  template <memory_model M, device_set D>
  void init(const csr_graph& g, const M& model, const D& devices, std::span<const device_id> placement,
            std::span<const std::uint32_t> rank, bool cache_transfers) {
    trees_.clear();
    tree_of_.clear();
    capacity_.clear();
    version_.clear();
    lowest_refused_.clear();
    refused_.clear();
    copy_turn_.clear();
    const std::size_t n = g.vertex_count(), m = devices.device_count();
    bool bounded = false;
    for (device_id d = 0; d < m && !bounded; ++d) bounded = devices.capacity(d) != unlimited_memory;
    if (!bounded) return;
    // What each device would hold if nothing were ever freed.
    std::vector<byte_count> lifetime(m, 0);
    for (vertex_id v = 0; v < n; ++v) {
      const device_id d = placement[v];
      const byte_count own = saturating_add(model.temporary_bytes(v), model.output_bytes(v));
      lifetime[d] = saturating_add(lifetime[d], saturating_add(model.persistent_bytes(v), own));
      const auto out = g.out_edges(v);
      const auto succ = g.successors(v);
      for (std::size_t i = 0; i < succ.size(); ++i) {
        if (rank[succ[i]] <= rank[v]) return;  // R needs a topological order
        if (placement[succ[i]] != d)
          lifetime[placement[succ[i]]] = saturating_add(lifetime[placement[succ[i]]], model.edge_bytes(out[i]));
      }
    }
    constexpr byte_count too_large = byte_count{1} << 61;
    tree_of_.assign(m, no_tree);
    std::size_t followed = 0;
    for (device_id d = 0; d < m; ++d) {
      if (lifetime[d] <= devices.capacity(d)) continue;
      if (lifetime[d] >= too_large) return tree_of_.clear();
      tree_of_[d] = static_cast<std::uint32_t>(followed++);
    }
    if (followed == 0) return tree_of_.clear();

    // need, as differences between consecutive steps, on each followed device.
    std::vector<std::vector<std::int64_t>> need(followed, std::vector<std::int64_t>(n + 1, 0));
    const auto hold = [&](device_id d, byte_count bytes, std::size_t from, std::size_t to) {
      if (tree_of_[d] == no_tree || bytes == 0) return;
      need[tree_of_[d]][from] += static_cast<std::int64_t>(bytes);
      need[tree_of_[d]][to + 1] -= static_cast<std::int64_t>(bytes);
    };
    struct copy {
      device_id to;
      byte_count bytes;
      std::size_t first, last;
    };
    std::vector<copy> copies;
    for (vertex_id v = 0; v < n; ++v) {
      const device_id d = placement[v];
      const std::size_t step = rank[v];
      hold(d, model.persistent_bytes(v), 0, n - 1);
      hold(d, model.temporary_bytes(v), step, step);
      // The copies the loop makes (one per device and size when cached, else one per edge).
      copies.clear();
      std::size_t last_use = step;
      const auto out = g.out_edges(v);
      const auto succ = g.successors(v);
      for (std::size_t i = 0; i < succ.size(); ++i) {
        const device_id to = placement[succ[i]];
        const std::size_t reader = rank[succ[i]];
        if (to == d) {
          last_use = std::max(last_use, reader);
          continue;
        }
        const byte_count bytes = model.edge_bytes(out[i]);
        auto it = copies.end();
        if (cache_transfers)
          it =
              std::find_if(copies.begin(), copies.end(), [&](const copy& c) { return c.to == to && c.bytes == bytes; });
        if (it == copies.end()) copies.push_back({to, bytes, reader, reader});
        else {
          it->first = std::min(it->first, reader);
          it->last = std::max(it->last, reader);
        }
      }
      for (const copy& c : copies) {
        hold(c.to, c.bytes, c.first, c.last);
        last_use = std::max(last_use, c.first);
      }
      hold(d, model.output_bytes(v), step, last_use);
    }
    for (device_id d = 0; d < m; ++d) {
      if (tree_of_[d] == no_tree) continue;
      auto& values = need[tree_of_[d]];
      std::int64_t sum = 0;
      for (std::size_t k = 0; k < n; ++k) {
        sum += values[k];
        values[k] = sum;
        if (sum > static_cast<std::int64_t>(devices.capacity(d))) return tree_of_.clear();  // R does not fit
      }
      values.pop_back();
      capacity_.push_back(static_cast<std::int64_t>(devices.capacity(d)));
    }
    trees_.reserve(followed);
    for (auto& values : need) trees_.emplace_back(values);
    version_.assign(followed, 1);
    lowest_refused_.assign(followed, std::numeric_limits<std::int64_t>::max());
    refused_.assign(n, 0);
  }

  [[nodiscard]] bool engaged() const noexcept { return !tree_of_.empty(); }

  // Room R leaves on d at every step to come before `step`, with `bytes` more held (< 0: none).
  [[nodiscard]] std::int64_t slack(device_id d, std::size_t step, byte_count bytes) const {
    if (!engaged() || tree_of_[d] == no_tree) return std::numeric_limits<std::int64_t>::max();
    const std::uint32_t t = tree_of_[d];
    const std::int64_t most = trees_[t].max_before(step);
    if (most <= prefix_max_tree::none / 2) return std::numeric_limits<std::int64_t>::max();
    return capacity_[t] - most - static_cast<std::int64_t>(bytes);
  }
  // `bytes` held on d from now until step `step` (an early start's output, an early copy), if R
  // keeps room for them; records them and says yes, or says no and changes nothing. `asker` names
  // who asks (any number below 2^32, the same for the same bytes and step): a no is remembered, and
  // the same question gets it again without a look at the tree until a start may have changed it.
  bool hold_until(device_id d, std::size_t step, byte_count bytes, std::size_t asker) {
    if (!engaged() || tree_of_[d] == no_tree || bytes == 0) return true;
    const std::uint32_t t = tree_of_[d];
    if (asker >= refused_.size()) refused_.resize(std::max(2 * refused_.size(), asker + 1), 0);
    if (refused_[asker] == version_[t]) return false;
    if (slack(d, step, bytes) < 0) {
      // Holding more only raises need, so this stays a no until a step holding more than
      // capacity - bytes is gone.
      refused_[asker] = version_[t];
      lowest_refused_[t] = std::min(lowest_refused_[t], capacity_[t] - static_cast<std::int64_t>(bytes));
      return false;
    }
    trees_[t].add_before(step, static_cast<std::int64_t>(bytes));
    return true;
  }
  // The start of vertex v at step `rank` on d, whose output (`held` bytes) is then held until v's
  // turn: hold_until() under v's name, and started() when yes.
  bool admit_start(device_id d, std::uint32_t rank, byte_count held, vertex_id v) {
    if (!engaged()) return true;
    if (!hold_until(d, rank, held, v)) return false;
    started(rank);
    return true;
  }
  // The receipt of copy number t (of `transfers` made so far; `vertices` in the graph) on `to`,
  // held from now until its first reader's turn: first_reader() gives that reader's step, asked
  // once per copy.
  template <class FirstReader>
  bool admit_copy(std::uint32_t t, std::size_t transfers, std::size_t vertices, device_id to, byte_count bytes,
                  FirstReader first_reader) {
    if (!engaged()) return true;
    if (t >= copy_turn_.size()) copy_turn_.resize(transfers, no_turn);
    if (copy_turn_[t] == no_turn) copy_turn_[t] = first_reader();
    return hold_until(to, copy_turn_[t], bytes, vertices + t);
  }

  // The vertex at `step` has started: R no longer has that step.
  void started(std::size_t step) {
    for (std::size_t t = 0; t < trees_.size(); ++t) {
      if (trees_[t].at(step) > lowest_refused_[t]) {  // a remembered no may turn yes
        ++version_[t];
        lowest_refused_[t] = std::numeric_limits<std::int64_t>::max();
      }
      trees_[t].clear(step);
    }
  }

 private:
  static constexpr std::uint32_t no_tree = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> tree_of_;  // per device: its tree, or no_tree when it cannot fill up
  std::vector<prefix_max_tree> trees_;
  std::vector<std::int64_t> capacity_;  // per tree
  // Remembered noes: per tree a version (the noes of older versions are forgotten) and the lowest
  // need that made one; per asker the version of its last no (0: none).
  std::vector<std::uint32_t> version_;
  std::vector<std::int64_t> lowest_refused_;
  std::vector<std::uint32_t> refused_;
  static constexpr std::uint32_t no_turn = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> copy_turn_;  // per copy: its first reader's step (admit_copy)
};

}  // namespace gantry::detail
