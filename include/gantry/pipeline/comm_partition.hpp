// Partitioning a chain when communication costs and stages may be replicated, as PipeDream's
// planner does (Narayanan et al., SOSP 2019) on the Euro-Par 2021 chain model: the cuts and the
// workers of each stage that minimise the period, a cut paying a transfer of its boundary tensors
// (§3.1: one more stage of time 2·a/β) and a stage on r workers a ring all-reduce of its gradients.
#pragma once

#include <gantry/model/cluster.hpp>
#include <gantry/pipeline/chain.hpp>
#include <gantry/pipeline/pattern.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace gantry {

// Where the transfers between stages run.
enum class transfer_overlap {
  // On their own link, a stage of the pattern beside the processors (§3.1): a processor computes
  // while its last output is sent, as GPUs do with copy engines. The default.
  link_stages,
  // On the processors: the sender's and the receiver's stages both pay every transfer, for
  // hardware where a copy stalls the computation.
  on_processors,
};

inline constexpr enum_name<transfer_overlap> transfer_overlap_names[] = {
    {transfer_overlap::link_stages, "link-stages"}, {transfer_overlap::on_processors, "on-processors"}};
[[nodiscard]] constexpr std::span<const enum_name<transfer_overlap>> enum_names(transfer_overlap) noexcept {
  return transfer_overlap_names;
}
[[nodiscard]] constexpr const char* to_string(transfer_overlap t) noexcept { return name_of(t); }

// The cost of communication, in one place: the partition search, the stages handed to the
// patterns and the benchmark's evaluation of other plans all call these.
struct pipeline_comm {
  std::optional<link_model> link{};  // none: transfers and all-reduces are free
  transfer_overlap overlap = transfer_overlap::link_stages;

  // One direction of one batch's boundary tensors: latency + bytes/β.
  [[nodiscard]] seconds transfer(byte_count bytes) const noexcept { return link ? link->time(bytes) : 0.0; }
  // Ring all-reduce of `bytes` of gradients over r workers: 2(r-1) steps each moving bytes/r,
  // 2·(r-1)/r·bytes/β in all (plus latencies).
  [[nodiscard]] seconds allreduce(byte_count bytes, std::size_t replicas) const noexcept {
    if (!link || replicas <= 1) return 0.0;
    const auto r = static_cast<double>(replicas);
    return 2.0 * (r - 1.0) * (link->latency + static_cast<double>(bytes) / (r * link->bandwidth));
  }
};

namespace detail {

// Prefix sums of a chain, so a stage's totals cost O(1).
struct chain_sums {
  std::vector<seconds> forward, backward;
  std::vector<byte_count> weights, activation, parameters;

  explicit chain_sums(const chain& c)
      : forward(c.size() + 1, 0), backward(c.size() + 1, 0), weights(c.size() + 1, 0), activation(c.size() + 1, 0),
        parameters(c.size() + 1, 0) {
    for (std::size_t l = 0; l < c.size(); ++l) {
      forward[l + 1] = forward[l] + c[l].forward;
      backward[l + 1] = backward[l] + c[l].backward;
      weights[l + 1] = weights[l] + c[l].weights;
      activation[l + 1] = activation[l] + c[l].activation;
      parameters[l + 1] = parameters[l] + c[l].gradient_bytes();
    }
  }
};

// Per-batch forward and backward time of stage [x, e) on r workers: each worker runs every r-th
// batch and an all-reduce per batch, so the stage takes 1/r of (compute + all-reduce) per batch;
// on_processors adds the transfers in and out to both passes.
inline std::pair<seconds, seconds> stage_times(const chain& c, const chain_sums& sums, const pipeline_comm& comm,
                                               std::size_t x, std::size_t e, std::size_t replicas) {
  seconds forward = sums.forward[e] - sums.forward[x];
  seconds backward =
      sums.backward[e] - sums.backward[x] + comm.allreduce(sums.parameters[e] - sums.parameters[x], replicas);
  if (comm.overlap == transfer_overlap::on_processors) {
    const seconds moved = (x > 0 ? comm.transfer(c.crossing_bytes(x - 1)) : 0.0) +
                          (e < c.size() ? comm.transfer(c.crossing_bytes(e - 1)) : 0.0);
    forward += moved;
    backward += moved;
  }
  const auto r = static_cast<double>(std::max<std::size_t>(1, replicas));
  return {forward / r, backward / r};
}

// Per-batch time of each direction of the link after layer `last`, between stages on r_a and r_b
// workers: min(r_a, r_b) pairs of workers move batches at once.
inline seconds link_time(const chain& c, const pipeline_comm& comm, std::size_t last, std::size_t replicas_before,
                         std::size_t replicas_after) {
  if (comm.overlap != transfer_overlap::link_stages || !comm.link) return 0.0;
  return comm.transfer(c.crossing_bytes(last)) /
         static_cast<double>(std::max<std::size_t>(1, std::min(replicas_before, replicas_after)));
}

}  // namespace detail

// The stages of a partition whose stage s runs on replicas[s] workers (empty: one each), ready for
// the pattern builders (1F1B*, 1F1B, GPipe, k-periodic): compute stage s on resource s with its
// per-batch times, and with link_stages and a link a link stage after every stage but the last.
[[nodiscard]] inline std::vector<stage> pipeline_stages(const chain& c, const chain_partition& partition,
                                                        const std::vector<std::uint32_t>& replicas,
                                                        const pipeline_comm& comm) {
  check_partition(partition, c.size());
  const std::size_t count = partition.stage_count();
  if (!replicas.empty() && replicas.size() != count)
    throw invalid_input("pipeline_stages: " + std::to_string(replicas.size()) + " replica counts for " +
                        std::to_string(count) + " stages");
  const detail::chain_sums sums(c);
  const auto replicas_of = [&](std::size_t s) {
    return replicas.empty() ? 1u : std::max<std::uint32_t>(1, replicas[s]);
  };
  const bool links = comm.link && comm.overlap == transfer_overlap::link_stages;
  std::vector<stage> stages;
  for (std::size_t s = 0; s < count; ++s) {
    stage st;
    st.first_layer = partition.first[s];
    st.end_layer = partition.end(s, c.size());
    st.resource = static_cast<device_id>(s);
    st.replicas = replicas_of(s);
    std::tie(st.forward, st.backward) = detail::stage_times(c, sums, comm, st.first_layer, st.end_layer, st.replicas);
    st.weights = sums.weights[st.end_layer] - sums.weights[st.first_layer];
    st.activation = sums.activation[st.end_layer] - sums.activation[st.first_layer];
    stages.push_back(st);
    if (links && s + 1 < count) {
      stage ln;
      ln.first_layer = st.end_layer - 1;
      ln.end_layer = st.end_layer;
      ln.link = true;
      ln.resource = static_cast<device_id>(count + s);
      ln.forward = ln.backward = detail::link_time(c, comm, st.end_layer - 1, st.replicas, replicas_of(s + 1));
      stages.push_back(ln);
    }
  }
  return stages;
}

struct comm_partition_options {
  pipeline_comm comm;
  // Most workers one stage may run on; 1 keeps a straight pipeline (one worker per stage).
  std::size_t max_replicas = 1;
  // Called after each of the L rows of the program with (rows done, L); row x costs about L - x,
  // so (done / L)² of the work is done. Empty: not called.
  std::function<void(std::size_t, std::size_t)> progress{};
};

struct comm_partition_result {
  gantry::outcome outcome;  // why nothing fits, naming layers, workers and bytes
  chain_partition partition;
  std::vector<std::uint32_t> replicas;  // per stage
  seconds period = 0;                   // the largest per-batch load over compute and link stages
  std::vector<stage> stages;            // pipeline_stages of the answer

  [[nodiscard]] bool ok() const noexcept { return outcome.ok(); }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] std::size_t workers() const noexcept {
    std::size_t sum = 0;
    for (const auto r : replicas) sum += r;
    return sum;
  }
};

// The cuts and replica counts, on at most `workers` workers of memory `capacity` each, that
// minimise the period T = max over stages of the per-batch load, compute stages and links alike
// (the period of 1F1B on those stages). Suffix dynamic program:
//   best[x][m][r] = smallest T for layers [x, L) on exactly m workers, the first stage on r,
//   best[x][m][r] = min over e of max(load(x, e, r), next[e][m-r][r]),
//   next[e][m'][r] = min over r' of max(link(e, r, r'), best[e][m'][r']),
// exact for this cost over the chain's layer order. next[e] does not depend on x, and the link
// depends on min(r, r') only, so one prefix and one suffix minimum over r' give every next[e][m'][·]
// in O(R). A stage fits when its weights and ceil(n / r) activations do, n = 1 + the resources
// after it (stages and links), the number the 1F1B pattern keeps; patterns built afterwards hold
// no more. Workers beyond L·R cannot help (at most L stages of R workers each), so P is first cut
// to useful_workers(L, P, R). O(L²·P·R) time for R = max_replicas, usually far less: the scan over
// a stage's end starts where the rest, at least its compute over its workers, could still beat a
// first candidate (the end chosen for the stage one layer shorter), and stops once the stage's
// load reaches the best found; stage loads are computed once per (x, e, r), not per m. O(L·P·R)
// memory, 20 bytes per entry. Ties go to the first end and the fewest replicas after it.
// Returns status out_of_memory, naming the layer, when no partition fits.
[[nodiscard]] inline comm_partition_result comm_aware_partition(const chain& c, std::size_t workers,
                                                                byte_count capacity = unlimited_memory,
                                                                comm_partition_options options = {}) {
  check_chain(c);
  if (workers == 0) throw invalid_input("comm_aware_partition: at least one worker is needed");
  if (options.comm.link && !(options.comm.link->bandwidth > 0))
    throw invalid_input("comm_aware_partition: the link bandwidth must be > 0");
  comm_partition_result result;
  const std::size_t L = c.size();
  if (L == 0) {
    result.outcome.code = status::infeasible;
    result.outcome.message = "the chain has no layers";
    return result;
  }
  const std::size_t P = useful_workers(L, workers, options.max_replicas);
  const std::size_t R = std::clamp<std::size_t>(options.max_replicas, 1, P);
  const detail::chain_sums sums(c);
  const auto& comm = options.comm;
  const bool links = comm.link && comm.overlap == transfer_overlap::link_stages;
  constexpr double none = std::numeric_limits<double>::infinity();
  const auto at = [&](std::size_t x, std::size_t m, std::size_t r) { return (x * P + (m - 1)) * R + (r - 1); };
  // best[x] is needed only while row x is filled (and for x = 0 at the end); next[e] for every e > x,
  // laid out with e innermost, since the scan over a stage's end reads it along e.
  const auto in_row = [&](std::size_t m, std::size_t r) { return (m - 1) * R + (r - 1); };
  const auto along = [&](std::size_t e, std::size_t m, std::size_t r) { return in_row(m, r) * L + e; };
  std::vector<double> best(P * R, none), next(L * P * R, none);
  std::vector<std::uint32_t> cut(L * P * R, 0), next_replicas(L * P * R, 0), next_choice(L * P * R, 0);
  const auto fits = [&](std::size_t x, std::size_t e, std::size_t r, std::size_t m) {
    const std::size_t after = (m - r) * (links ? 2 : 1);
    const std::uint64_t held = (after + 1 + r - 1) / r;
    return detail::stage_fits(sums.weights[e] - sums.weights[x], sums.activation[e] - sums.activation[x], held,
                              capacity);
  };
  std::vector<double> prefix(R + 1), suffix(R + 2);
  std::vector<std::uint32_t> prefix_at(R + 1), suffix_at(R + 2);
  // The load of stage [x, e) on r workers does not depend on m: computed once per row, on demand.
  std::vector<double> loads(R * (L + 1));
  std::vector<std::size_t> loads_until(R);
  const seconds total_compute = sums.forward[L] + sums.backward[L];
  const auto compute_after = [&](std::size_t e) {
    return (sums.forward[L] - sums.forward[e]) + (sums.backward[L] - sums.backward[e]);
  };
  for (std::size_t x = L; x-- > 0;) {
    std::fill(loads_until.begin(), loads_until.end(), x);
    const auto load_at = [&](std::size_t e, std::size_t r) {
      double* load_of = &loads[(r - 1) * (L + 1)];
      std::size_t& known = loads_until[r - 1];
      for (; known < e; ++known) {
        const auto [forward, backward] = detail::stage_times(c, sums, comm, x, known + 1, r);
        load_of[known + 1] = forward + backward;
      }
      return load_of[e];
    };
    for (std::size_t m = 1; m <= P; ++m)
      for (std::size_t r = 1; r <= std::min(m, R); ++r) {
        double& value = best[in_row(m, r)];
        std::size_t chosen = 0;
        if (m == r) {  // the stage runs to the end
          if (fits(x, L, r, m)) {
            value = load_at(L, r);
            cut[at(x, m, r)] = static_cast<std::uint32_t>(L);
          }
          continue;
        }
        // The candidate of ending the stage at e: the answer is the smallest, the first e on ties.
        const auto consider = [&](std::size_t e, double load) {
          if (e == L) return;
          const double rest = next[along(e, m - r, r)];
          const double candidate = std::max(load, rest);
          if (candidate < value || (candidate == value && e < chosen)) {
            value = candidate;
            chosen = e;
            cut[at(x, m, r)] = static_cast<std::uint32_t>(e);
            next_replicas[at(x, m, r)] = next_choice[along(e, m - r, r)];
          }
        };
        // A first candidate where the stage starting one layer later ended; then every end whose
        // rest could beat it: the rest on m - r workers takes at least compute_after(e) / (m - r)
        // (a stage's load is at least its compute over its workers), which only falls as e grows.
        std::size_t from = x + 1;
        if (x + 1 < L) {
          const std::size_t guess = cut[at(x + 1, m, r)];
          if (guess > x + 1 && guess < L && fits(x, guess, r, m)) {
            consider(guess, load_at(guess, r));
            const double others = static_cast<double>(m - r);
            const double margin = detail::pipeline_tolerance * (value + total_compute);
            std::size_t low = x + 1, high = guess;  // the first e whose bound is within value + margin
            while (low < high) {
              const std::size_t mid = (low + high) / 2;
              if (compute_after(mid) / others - margin > value) low = mid + 1;
              else high = mid;
            }
            from = low;
          }
        }
        for (std::size_t e = from; e <= L; ++e) {
          if (!fits(x, e, r, m)) break;  // a longer stage holds more
          const double load = load_at(e, r);
          if (load >= value) {
            if (load == value && e < chosen) consider(e, load);
            // Longer stages only cost more, unless on_processors makes the transfer out cheaper.
            if (comm.overlap != transfer_overlap::on_processors || !comm.link) break;
            continue;
          }
          consider(e, load);
        }
      }
    if (options.progress) options.progress(L - x, L);
    if (x == 0) break;
    // next[x][m][r] for the cut after layer x-1: the link moves per batch transfer / min(r, r'), so
    // r' < r costs max(best, 2·transfer/r') (a prefix minimum over r') and r' >= r costs
    // max(min over r' >= r of best, 2·transfer/r) (a suffix minimum). Ties go to the smaller r'.
    const double transfer = detail::link_time(c, comm, x - 1, 1, 1);
    for (std::size_t m = 1; m <= P; ++m) {
      const std::size_t most = std::min(m, R);
      prefix[0] = none;
      prefix_at[0] = 0;
      for (std::size_t q = 1; q <= most; ++q) {
        const double here = std::max(best[in_row(m, q)], 2.0 * (transfer / static_cast<double>(q)));
        const bool better = here < prefix[q - 1];
        prefix[q] = better ? here : prefix[q - 1];
        prefix_at[q] = better ? static_cast<std::uint32_t>(q) : prefix_at[q - 1];
      }
      suffix[most + 1] = none;
      suffix_at[most + 1] = 0;
      for (std::size_t q = most; q >= 1; --q) {
        const bool better = best[in_row(m, q)] <= suffix[q + 1];
        suffix[q] = better ? best[in_row(m, q)] : suffix[q + 1];
        suffix_at[q] = better ? static_cast<std::uint32_t>(q) : suffix_at[q + 1];
      }
      for (std::size_t r = 1; r <= R; ++r) {
        const std::size_t below = std::min(r - 1, most);  // r' < r
        double value = prefix[below];
        std::uint32_t choice = prefix_at[below];
        if (r <= most) {
          const double above = std::max(suffix[r], 2.0 * (transfer / static_cast<double>(r)));
          if (above < value) {
            value = above;
            choice = suffix_at[r];
          }
        }
        if (value < none) {
          next[along(x, m, r)] = value;
          next_choice[along(x, m, r)] = choice;
        }
      }
    }
    std::fill(best.begin(), best.end(), none);
  }
  // Fewer workers may do better (a replica's all-reduce can cost more than it saves); ties go to
  // fewer workers.
  double period = none;
  std::size_t best_m = 0, best_r = 0;
  for (std::size_t m = 1; m <= P; ++m)
    for (std::size_t r = 1; r <= std::min(m, R); ++r)
      if (best[in_row(m, r)] < period) {
        period = best[in_row(m, r)];
        best_m = m;
        best_r = r;
      }
  if (period == none) {
    result.outcome.code = status::out_of_memory;
    std::ostringstream out;
    out << "no partition of the " << L << " layers on " << workers << " workers of " << detail::capacity_text(capacity)
        << " holds its stages' weights and activations";
    for (std::size_t l = 0; l < L; ++l)
      if (!detail::stage_fits(c[l].weights, c[l].activation, 1, capacity)) {
        out << "; layer " << l << " ('" << c[l].name << "') alone needs "
            << format_bytes(detail::saturating_add(c[l].weights, c[l].activation));
        break;
      }
    result.outcome.message = out.str();
    return result;
  }
  for (std::size_t x = 0, m = best_m, r = best_r; x < L;) {
    result.partition.first.push_back(static_cast<std::uint32_t>(x));
    result.replicas.push_back(static_cast<std::uint32_t>(r));
    const std::size_t e = cut[at(x, m, r)], r2 = next_replicas[at(x, m, r)];
    m -= r;
    x = e;
    r = r2;
  }
  result.period = period;
  result.stages = pipeline_stages(c, result.partition, result.replicas, comm);
  return result;
}

}  // namespace gantry
