// The ideals (downsets) of a training graph's forward vertices: the sets closed under inputs, each
// one what runs before some pipeline cut. The backward pass (backward_owners) and work-free
// sources (weights: forward_anchors) are left out; they travel with a forward vertex. Enumerated by size up to a cap,
// with the covering relation (one vertex more), so a dynamic program can walk every pair of nested ideals.
#pragma once

#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>
#include <gantry/order/topological.hpp>
#include <gantry/pipeline/chain.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace gantry {

struct ideal_options {
  std::size_t max_ideals = 100000;  // past this many the lattice stops, incomplete
};

// Ideal k is a set of forward vertices by dense index i (vertex vertices()[i]); dense indices follow
// a topological order, ideals are numbered by size: 0 is the empty one and, when complete(), the last
// is all of them. Built by forward_ideals().
class ideal_lattice {
 public:
  struct cover {
    std::uint32_t ideal;   // the larger ideal
    std::uint32_t vertex;  // the dense index it adds
  };

  [[nodiscard]] std::size_t size() const noexcept { return sizes_.size(); }
  [[nodiscard]] bool complete() const noexcept { return complete_; }
  // Forward vertices by dense index, in a topological order (Kahn's, smallest id first).
  [[nodiscard]] const std::vector<vertex_id>& vertices() const noexcept { return vertices_; }
  [[nodiscard]] bool contains(std::size_t ideal, std::size_t i) const noexcept {
    return (bits_[ideal * words_ + i / 64] >> (i % 64)) & 1u;
  }
  [[nodiscard]] std::size_t members(std::size_t ideal) const noexcept { return sizes_[ideal]; }
  // The ideals with one vertex more than `ideal`; empty for those past the cap.
  [[nodiscard]] std::span<const cover> covers(std::size_t ideal) const noexcept {
    if (ideal + 1 >= first_cover_.size()) return {};
    return {covers_.data() + first_cover_[ideal], covers_.data() + first_cover_[ideal + 1]};
  }

 private:
  friend ideal_lattice forward_ideals(const graph& g, ideal_options options);
  std::vector<vertex_id> vertices_;
  std::size_t words_ = 1;
  std::vector<std::uint64_t> bits_;  // ideal k's members: words_ words from k·words_
  std::vector<std::uint32_t> sizes_;
  std::vector<std::uint32_t> first_cover_;  // CSR over covers_, for the ideals expanded
  std::vector<cover> covers_;
  bool complete_ = false;
};

// Enumerates the ideals breadth first: an ideal's covers add one of its ready vertices (all inputs
// inside), found again through a Zobrist hash of the member set. O(N·d·w) for N ideals, d ready
// vertices each and w = ceil(n/64) words per set. Throws not_a_dag when the graph has a cycle.
[[nodiscard]] inline ideal_lattice forward_ideals(const graph& g, ideal_options options = {}) {
  ideal_lattice lattice;
  std::vector<std::uint32_t> dense(g.vertex_count(), std::numeric_limits<std::uint32_t>::max());
  const std::vector<vertex_id> backward_of = backward_owners(g);
  const std::vector<vertex_id> anchor = forward_anchors(g, backward_of);  // work-free sources travel with these
  for (const auto v : kahn_order(g))
    if (backward_of[v] == no_vertex && anchor[v] == no_vertex) {
      dense[v] = static_cast<std::uint32_t>(lattice.vertices_.size());
      lattice.vertices_.push_back(v);
    }
  const std::size_t n = lattice.vertices_.size(), words = std::max<std::size_t>(1, (n + 63) / 64);
  lattice.words_ = words;
  // Forward inputs and outputs by dense index (CSR).
  std::vector<std::uint32_t> first_input(n + 1, 0), inputs, first_output(n + 1, 0), outputs;
  for (std::size_t i = 0; i < n; ++i) {
    g.for_each_in_edge(lattice.vertices_[i], [&](edge_id e) {
      if (const auto u = dense[g.source(e)]; u != std::numeric_limits<std::uint32_t>::max()) inputs.push_back(u);
    });
    first_input[i + 1] = static_cast<std::uint32_t>(inputs.size());
    g.for_each_out_edge(lattice.vertices_[i], [&](edge_id e) {
      if (const auto w = dense[g.target(e)]; w != std::numeric_limits<std::uint32_t>::max()) outputs.push_back(w);
    });
    first_output[i + 1] = static_cast<std::uint32_t>(outputs.size());
  }
  // Zobrist keys (splitmix64 of the index): a set's hash is the xor of its members' keys.
  std::vector<std::uint64_t> key(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t z = 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    key[i] = z ^ (z >> 31);
  }
  constexpr std::uint32_t empty_slot = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint64_t> hash;
  std::vector<std::uint32_t> table(64, empty_slot);
  // Ready vertices of the ideals not expanded yet, found when each is first reached.
  std::vector<std::uint32_t> first_ready{0}, ready;
  const auto member = [&](std::size_t ideal, std::size_t i) {
    return (lattice.bits_[ideal * words + i / 64] >> (i % 64)) & 1u;
  };
  const auto place = [&](std::uint32_t ideal) {
    std::size_t slot = hash[ideal] & (table.size() - 1);
    while (table[slot] != empty_slot) slot = (slot + 1) & (table.size() - 1);
    table[slot] = ideal;
  };
  lattice.bits_.assign(words, 0);
  lattice.sizes_.push_back(0);
  hash.push_back(0);
  place(0);
  for (std::uint32_t i = 0; i < n; ++i)
    if (first_input[i] == first_input[i + 1]) ready.push_back(i);
  first_ready.push_back(static_cast<std::uint32_t>(ready.size()));
  std::vector<std::uint64_t> scratch(words);
  bool capped = false;
  lattice.first_cover_.push_back(0);
  for (std::size_t k = 0; k < lattice.sizes_.size() && !capped; ++k) {
    for (auto at = first_ready[k]; at < first_ready[k + 1] && !capped; ++at) {
      const std::uint32_t v = ready[at];
      const std::uint64_t h = hash[k] ^ key[v];
      std::copy_n(lattice.bits_.begin() + static_cast<std::ptrdiff_t>(k * words), words, scratch.begin());
      scratch[v / 64] |= std::uint64_t{1} << (v % 64);
      std::size_t slot = h & (table.size() - 1);
      std::uint32_t found = empty_slot;
      for (; table[slot] != empty_slot; slot = (slot + 1) & (table.size() - 1))
        if (const auto j = table[slot];
            hash[j] == h && std::equal(scratch.begin(), scratch.end(),
                                       lattice.bits_.begin() + static_cast<std::ptrdiff_t>(j * words))) {
          found = j;
          break;
        }
      if (found == empty_slot) {
        if (lattice.sizes_.size() >= options.max_ideals) {
          capped = true;
          break;
        }
        found = static_cast<std::uint32_t>(lattice.sizes_.size());
        lattice.bits_.insert(lattice.bits_.end(), scratch.begin(), scratch.end());
        lattice.sizes_.push_back(lattice.sizes_[k] + 1);
        hash.push_back(h);
        // Ready in the new ideal: k's ready vertices but v, and v's outputs whose inputs are all in.
        for (auto r = first_ready[k]; r < first_ready[k + 1]; ++r)
          if (ready[r] != v) ready.push_back(ready[r]);
        for (auto o = first_output[v]; o < first_output[v + 1]; ++o) {
          const auto w = outputs[o];
          if (member(found, w) || std::find(ready.begin() + first_ready.back(), ready.end(), w) != ready.end())
            continue;
          bool all_in = true;
          for (auto x = first_input[w]; x < first_input[w + 1] && all_in; ++x) all_in = member(found, inputs[x]);
          if (all_in) ready.push_back(w);
        }
        first_ready.push_back(static_cast<std::uint32_t>(ready.size()));
        if (2 * lattice.sizes_.size() > table.size()) {
          table.assign(2 * table.size(), empty_slot);
          for (std::uint32_t j = 0; j < lattice.sizes_.size(); ++j) place(j);
        } else {
          table[slot] = found;
        }
      }
      lattice.covers_.push_back({found, v});
    }
    if (!capped) lattice.first_cover_.push_back(static_cast<std::uint32_t>(lattice.covers_.size()));
  }
  lattice.complete_ = !capped;
  if (lattice.complete_ && lattice.sizes_.back() != n)
    throw not_a_dag("forward_ideals: the forward vertices form a cycle");
  return lattice;
}

// Walks the proper supersets of an ideal through the covering relation, each once. Holds its own
// marks, so one walker serves many walks without allocating.
class superset_walker {
 public:
  explicit superset_walker(const ideal_lattice& lattice) : lattice_(&lattice), mark_(lattice.size(), 0) {}

  // Calls visit(j) for every ideal j that strictly contains `ideal`, depth first.
  template <class Visit>
  void operator()(std::size_t ideal, Visit&& visit) {
    if (++round_ == 0) {
      std::fill(mark_.begin(), mark_.end(), 0);
      round_ = 1;
    }
    stack_.assign(1, static_cast<std::uint32_t>(ideal));
    while (!stack_.empty()) {
      const auto k = stack_.back();
      stack_.pop_back();
      for (const auto& c : lattice_->covers(k))
        if (mark_[c.ideal] != round_) {
          mark_[c.ideal] = round_;
          visit(static_cast<std::size_t>(c.ideal));
          stack_.push_back(c.ideal);
        }
    }
  }

 private:
  const ideal_lattice* lattice_;
  std::vector<std::uint32_t> mark_;
  std::vector<std::uint32_t> stack_;
  std::uint32_t round_ = 0;
};

// A topological order of the forward vertices that lists ideal nested[0], then nested[1] \ nested[0],
// and so on (each nested in the next), the rest last: its prefixes include every one of those ideals.
// Inside each part the lattice's topological order is kept.
[[nodiscard]] inline std::vector<vertex_id> linear_extension(const ideal_lattice& lattice,
                                                             std::span<const std::uint32_t> nested) {
  const std::size_t n = lattice.vertices().size();
  std::vector<std::uint32_t> part(n, static_cast<std::uint32_t>(nested.size()));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t s = 0; s < nested.size(); ++s)
      if (lattice.contains(nested[s], i)) {
        part[i] = static_cast<std::uint32_t>(s);
        break;
      }
  std::vector<std::uint32_t> index(n);
  for (std::uint32_t i = 0; i < n; ++i) index[i] = i;
  std::stable_sort(index.begin(), index.end(), [&](std::uint32_t a, std::uint32_t b) { return part[a] < part[b]; });
  std::vector<vertex_id> order(n);
  for (std::size_t k = 0; k < n; ++k) order[k] = lattice.vertices()[index[k]];
  return order;
}

}  // namespace gantry
