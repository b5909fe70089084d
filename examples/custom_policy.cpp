// Writes a list-scheduling policy in user code and runs it on gantry's engine beside ETF.
// "Least loaded": the ready vertex with the largest bottom level goes next, onto the device with
// the least work so far among those where it can start within 10% of its earliest start.
//
//      a ---> b ---> d
//       \           ^
//        `--> c ---'     (and e, f: independent work)
#include <gantry/place/etf.hpp>
#include <gantry/schedule/validate.hpp>

#include <cstdio>
#include <optional>
#include <vector>

struct least_loaded {
  std::vector<double> work;  // per device: compute time placed there so far

  std::string_view name() const { return "least loaded"; }
  template <class View>
  void start(const View& view) {
    work.assign(view.device_count(), 0.0);
  }
  template <class View>
  void on_placed(const View& view, gantry::vertex_id v, gantry::device_id d) {
    work[d] += view.model().compute_time(v, d);
  }
  template <class View>
  std::optional<gantry::list_choice> choose(const View& view) {
    std::optional<gantry::vertex_id> next;
    for (const gantry::vertex_id v : view.ready())
      if (!next || view.bottom_level(v) > view.bottom_level(*next)) next = v;
    if (!next) return std::nullopt;
    double soonest = 1e300;
    for (gantry::device_id d = 0; d < view.device_count(); ++d)
      if (view.allowed(*next, d) && view.fits(*next, d)) soonest = std::min(soonest, view.earliest_start(*next, d));
    std::optional<gantry::device_id> best;
    for (gantry::device_id d = 0; d < view.device_count(); ++d)
      if (view.allowed(*next, d) && view.fits(*next, d) && view.earliest_start(*next, d) <= 1.1 * soonest &&
          (!best || work[d] < work[*best]))
        best = d;
    if (!best) return std::nullopt;  // fits nowhere now: the engine reports it
    return gantry::list_choice{*next, *best};
  }
};

int main() {
  using namespace gantry;
  graph g;
  const auto a = g.add_vertex("a", 0.002), b = g.add_vertex("b", 0.004), c = g.add_vertex("c", 0.003),
             d = g.add_vertex("d", 0.001);
  g.add_vertex("e", 0.005);
  g.add_vertex("f", 0.005);
  for (const auto& [u, v] : {std::pair{a, b}, {a, c}, {b, d}, {c, d}}) g.add_edge(u, v, 1 << 20);
  const auto devices = cluster::uniform(2, unlimited_memory, link_model{.latency = 1e-5, .bandwidth = 1e10});
  const graph_model model(g, devices);

  const auto mine = list_schedule(g, model, devices, least_loaded{});
  const auto reference = etf(g, model, devices);
  for (const auto* r : {&mine, &reference}) {
    std::printf("%-13s makespan %.3f ms, valid: %s, devices:", r == &mine ? "least loaded" : "ETF",
                r->schedule.makespan * 1e3, validate(r->schedule, g, model, devices).ok() ? "yes" : "no");
    for (vertex_id v = 0; v < g.vertex_count(); ++v) std::printf(" %s->%u", g[v].name.c_str(), r->placement.device[v]);
    std::printf("\n");
  }
  return 0;
}
