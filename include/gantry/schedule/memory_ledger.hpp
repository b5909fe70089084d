// detail::memory_ledger: who still reads each tensor a device holds, and until when, by the memory
// rules of schedule/schedule.hpp. The one piece of bookkeeping behind the list-scheduling engine
// (which knows future times), the event loop (which learns them as they come) and memory_events().
#pragma once

#include <gantry/core/types.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace gantry::detail {

// The holdings that outlive the activity making them (schedule.hpp): the output of a vertex on its
// own device, read by each consumer there and by each copy sent out; and each received copy, read
// by the consumers it serves. A holding is freed once its last reader is done, at the latest end of
// its owner and its readers. The ledger counts readers and keeps that end; where the bytes are
// counted (counters of now, a timeline of the future, a list of events) is its user's business.
// Holding ids: the output of vertex u is u; copy number t is vertices + t. O(1) per operation.
// KeepsEnds = false counts readers only (4 bytes a holding), for a user that frees at once when the
// last reader is done (the event loop); the ends are then not kept.
template <bool KeepsEnds = true>
class memory_ledger {
 public:
  using holding = std::uint32_t;

  // The outputs of `vertices` vertices, no copies, nothing taken.
  void reset(std::size_t vertices) {
    vertices_ = vertices;
    entries_.assign(vertices, {});
  }
  [[nodiscard]] static holding output(vertex_id u) noexcept { return u; }
  [[nodiscard]] holding copy(std::size_t t) const noexcept { return static_cast<holding>(vertices_ + t); }
  // A new copy: number copies() before the call.
  holding add_copy() {
    entries_.emplace_back();
    return static_cast<holding>(entries_.size() - 1);
  }
  [[nodiscard]] std::size_t copies() const noexcept { return entries_.size() - vertices_; }
  void reserve_copies(std::size_t copies) { entries_.reserve(vertices_ + copies); }

  // The holding is taken; its owner ends at `until` (a vertex's finish, a copy's arrival) and
  // `readers` readers will read it.
  void take(holding h, [[maybe_unused]] seconds until, std::uint32_t readers) {
    entries_[h].readers = readers;
    if constexpr (KeepsEnds) entries_[h].end = until;
  }
  // One more reader will read h.
  void expect(holding h) { ++entries_[h].readers; }
  // A reader is done with h at `end`. True when it was the last one: h is free from end(h) on.
  // Requires readers(h) > 0.
  bool read(holding h, [[maybe_unused]] seconds end) {
    entry& e = entries_[h];
    if constexpr (KeepsEnds) e.end = std::max(e.end, end);
    return --e.readers == 0;
  }
  // A reader not counted in advance (a consumer served by a cached copy the engine keeps open until
  // the tensor's last consumer is placed) is done with h at `end`.
  void extend(holding h, seconds end) requires KeepsEnds { entries_[h].end = std::max(entries_[h].end, end); }
  [[nodiscard]] std::uint32_t readers(holding h) const { return entries_[h].readers; }
  // The latest end so far of h's owner and readers: when h is freed, once readers(h) is 0.
  [[nodiscard]] seconds end(holding h) const requires KeepsEnds { return entries_[h].end; }

 private:
  struct counted {
    std::uint32_t readers = 0;
  };
  struct timed {
    seconds end = 0;
    std::uint32_t readers = 0;
  };
  using entry = std::conditional_t<KeepsEnds, timed, counted>;
  std::size_t vertices_ = 0;
  std::vector<entry> entries_;
};

}  // namespace gantry::detail
