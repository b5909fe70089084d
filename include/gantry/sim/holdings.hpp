// Who holds what in a run of the event loop (sim/event_loop.hpp): each output on its own device and
// each received copy, with the readers still to come (schedule/memory_ledger.hpp), and the transfer
// that serves each cross-device edge. A holding is freed as its last reader finishes, by the rules
// of schedule/schedule.hpp; this part says when and how many bytes, the loop frees them.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/schedule/memory_ledger.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace gantry::detail {

class run_holdings {
 public:
  // Nothing held, no transfer made; output_bytes: each vertex's (the model's). g, placement and
  // output_bytes must outlive the holdings.
  void reset(const csr_graph& g, std::span<const device_id> placement, std::span<const byte_count> output_bytes) {
    g_ = &g;
    output_bytes_ = output_bytes;
    placement_ = placement;
    ledger_.reset(g.vertex_count());
    edge_transfer_.assign(g.edge_count(), no_transfer);
  }

  // The run made its next transfer (number copies() before the call).
  void add_copy() { ledger_.add_copy(); }
  // Transfer t carries edge e's tensor: its copy has one more reader.
  void serve(edge_id e, std::uint32_t t) {
    edge_transfer_[e] = t;
    ledger_.expect(ledger_.copy(t));
  }
  // The transfer serving edge e, or no_transfer.
  [[nodiscard]] std::uint32_t transfer_of(edge_id e) const { return edge_transfer_[e]; }
  // The smallest rank among the readers of transfer t, which carries u's output (the copy is held
  // until then: sim/admission.hpp); the largest std::uint32_t when it serves none yet.
  [[nodiscard]] std::uint32_t first_reader(std::uint32_t t, vertex_id u, std::span<const std::uint32_t> rank) const {
    std::uint32_t first = std::numeric_limits<std::uint32_t>::max();
    const auto succ = g_->successors(u);
    const auto out = g_->out_edges(u);
    for (std::size_t i = 0; i < succ.size(); ++i)
      if (edge_transfer_[out[i]] == t) first = std::min(first, rank[succ[i]]);
    return first;
  }

  // v's output is taken at `now`, with `readers` readers (its consumers on its device and its copies).
  void take_output(vertex_id v, seconds now, std::uint32_t readers) { ledger_.take(ledger_.output(v), now, readers); }
  // u's output has been read once more (a transfer of it finished): true when that was the last read.
  bool read_output(vertex_id u, seconds now) { return ledger_.read(ledger_.output(u), now); }

  // v is done with its inputs at `now`: release(d, bytes) for each holding on v's device whose last
  // reader it was. skip_unmade: an edge no transfer serves is left alone (a measured run draining
  // after a failure).
  template <class Release>
  void release_inputs(vertex_id v, const std::vector<transfer>& transfers, seconds now, bool skip_unmade,
                      Release release) {
    const device_id d = placement_[v];
    const auto pred = g_->predecessors(v);
    const auto in = g_->in_edges(v);
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (placement_[u] == d) {
        if (ledger_.read(ledger_.output(u), now)) release(d, output_bytes_[u]);
      } else {
        const std::uint32_t t = edge_transfer_[in[i]];
        if (skip_unmade && t == no_transfer) continue;
        if (ledger_.read(ledger_.copy(t), now)) release(d, transfers[t].bytes);
      }
    }
  }
  // The bytes release_inputs(v) would free on v's device.
  [[nodiscard]] byte_count freed_by_inputs(vertex_id v, const std::vector<transfer>& transfers) {
    const device_id d = placement_[v];
    const auto pred = g_->predecessors(v);
    const auto in = g_->in_edges(v);
    drops_.clear();
    for (std::size_t i = 0; i < pred.size(); ++i) {
      const vertex_id u = pred[i];
      if (placement_[u] == d) drops_.emplace_back(0, u);
      else drops_.emplace_back(1, edge_transfer_[in[i]]);
    }
    std::sort(drops_.begin(), drops_.end());
    byte_count freed = 0;
    for (std::size_t i = 0; i < drops_.size();) {
      std::size_t j = i;
      while (j < drops_.size() && drops_[j] == drops_[i]) ++j;
      const auto [kind, id] = drops_[i];
      const auto count = static_cast<std::uint32_t>(j - i);
      if (kind == 0 && ledger_.readers(ledger_.output(id)) == count) freed += output_bytes_[id];
      if (kind == 1 && ledger_.readers(ledger_.copy(id)) == count) freed += transfers[id].bytes;
      i = j;
    }
    return freed;
  }

 private:
  const csr_graph* g_ = nullptr;
  std::span<const device_id> placement_;
  std::span<const byte_count> output_bytes_;
  // Readers only: a holding is freed as its last reader finishes, so no ends are kept.
  memory_ledger<false> ledger_;
  std::vector<std::uint32_t> edge_transfer_;  // the transfer serving each cross-device edge
  std::vector<std::pair<int, std::uint32_t>> drops_;
};

}  // namespace gantry::detail
