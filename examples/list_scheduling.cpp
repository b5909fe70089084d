// Places one small training graph with ETF, m-ETF, Critical Path and HEFT and prints each
// schedule's makespan, placement and memory, then shows m-ETF's answer when memory is too short.
//
//      embed ---> attn ---> mlp ---> loss
//        \                  ^          |
//         `----> side ------'          v
//                               mlp_grad -> attn_grad -> embed_grad
#include <gantry/place/critical_path.hpp>
#include <gantry/place/etf.hpp>
#include <gantry/place/heft.hpp>
#include <gantry/schedule/validate.hpp>

#include <cstdio>

int main() {
  using namespace gantry;
  graph g;
  const byte_count mib = 1 << 20;
  const auto vertex = [&](const char* name, seconds compute, byte_count weights) {
    return g.add_vertex(
        vertex_properties{.name = name, .compute = compute, .persistent = weights * mib, .output = 16 * mib});
  };
  const auto embed = vertex("embed", 0.002, 200), attn = vertex("attn", 0.006, 300), side = vertex("side", 0.004, 100),
             mlp = vertex("mlp", 0.005, 400), loss = vertex("loss", 0.001, 0),
             mlp_grad = vertex("mlp_grad", 0.010, 400), attn_grad = vertex("attn_grad", 0.012, 300),
             embed_grad = vertex("embed_grad", 0.004, 200);
  for (const auto& [u, v] : {std::pair{embed, attn},
                             {embed, side},
                             {attn, mlp},
                             {side, mlp},
                             {mlp, loss},
                             {loss, mlp_grad},
                             {mlp_grad, attn_grad},
                             {attn_grad, embed_grad}})
    g.add_edge(u, v, 16 * mib);
  g.set_forward(mlp_grad, mlp);
  g.set_forward(attn_grad, attn);
  g.set_forward(embed_grad, embed);

  // Two devices of 1.5 GiB joined by a 10 GB/s link that carries one transfer at a time.
  const auto devices =
      cluster::uniform(2, 1536 * mib, link_model{.latency = 1e-5, .bandwidth = 1e10}, comm_mode::sequential);
  const graph_model model(g, devices);
  const list_options pairs{.forward_of = forward_pairs(g), .co_place_forward_backward = true};

  const auto show = [&](const char* name, const list_schedule_result& r) {
    if (!r.ok()) {
      std::printf("%-14s %s: %s\n", name, to_string(r.placement.outcome.code), r.placement.outcome.message.c_str());
      return;
    }
    const auto report = validate(r.schedule, g, model, devices);
    std::printf("%-14s makespan %.2f ms, %s, placement:", name, r.schedule.makespan * 1e3,
                report.ok()                                                        ? "valid"
                : report.count(violation_kind::memory) == report.violations.size() ? "over capacity"
                                                                                   : "INVALID");
    for (vertex_id v = 0; v < g.vertex_count(); ++v) std::printf(" %s@%u", g[v].name.c_str(), r.placement.device[v]);
    std::printf("\n%-14s peak memory:", "");
    for (device_id d = 0; d < devices.device_count(); ++d)
      std::printf(" d%u %llu MiB", d, static_cast<unsigned long long>(r.schedule.peak_memory[d] / mib));
    std::printf("\n");
  };
  show("ETF", etf(g, model, devices));
  show("m-ETF + pairs", m_etf(g, model, devices, pairs));
  show("Critical Path", critical_path_schedule(g, model, devices));
  show("HEFT", heft(g, model, devices));

  // Halve the memory: m-ETF's answer says which vertex no device can hold, and why.
  const auto small =
      cluster::uniform(2, 700 * mib, link_model{.latency = 1e-5, .bandwidth = 1e10}, comm_mode::sequential);
  const graph_model small_model(g, small);
  const auto failed = m_etf(g, small_model, small, pairs);
  std::printf("\nwith 700 MiB per device, m-ETF says: %s\n", failed.placement.outcome.message.c_str());
  return 0;
}
