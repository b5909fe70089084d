// `gantry place`: one placer, its placement simulated, written with its pictures.
#include "placement_support.hpp"

#include <gantry/place/local_search.hpp>

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gantry::cli {

int run_place(const std::string& graph_path, const graph_reading& reading, const cluster_flags& cf,
              const simulation_flags& sf, const std::string& algorithm, const after_placing_flags& after,
              const std::string& out, const output_flags& of, const fuse_flags& ff, const placer_limit_flags& ef,
              const read_limits& limits) {
  (void)after.local_search_seconds();  // a bad --local-search-time is refused before the graph is read
  const auto file = read_any_graph_file(graph_path, reading, limits);
  const graph& g = file.graph;
  const cluster c = cf.make(limits);
  const graph_model model(g, c);
  if (const auto warning = profile_mismatch(g, file.metadata, c))
    std::cerr << "gantry place: warning: " << *warning << "\n";
  const auto proof = std::make_shared<exact_proof>();
  const auto all = tool_placers(algorithm == "exact" ? ef.exact_milliseconds() : 1, proof, ef.doppler_seconds());
  const auto* entry = find_tool_placer(all, algorithm);
  if (entry == nullptr) throw unknown_algorithm(all, algorithm);
  const bool show = progress_wanted(g);
  progress(show, "placing " + std::to_string(g.vertex_count()) + " vertices with " + algorithm + "...");
  const auto t0 = std::chrono::steady_clock::now();
  const auto coarse = ff.reduce(g, c);
  placer_result placed = place_reduced(*entry, ff.request(g, model, c, !sf.no_cache), coarse, ff);
  placement& p = placed.placement;
  p.placement_time = elapsed_since(t0);
  progress(show, " " + fixed_text(p.placement_time * 1e3, 1) + " ms\n");
  if (!p.ok()) {
    std::cerr << "gantry place: " << algorithm << " failed (" << to_string(p.outcome.code) << "): " << p.outcome.message
              << "\n";
    return exit_failed;
  }
  auto sim = simulate(g, model, c, std::span<const device_id>(p.device), sf.make(p.order));
  std::string chosen = ff.fuse == "none" ? algorithm : algorithm + " (--fuse " + ff.fuse + ")";
  // Never silently worse than one device: say so, and with --fallback take the device instead.
  if (const auto reference = best_single_device(g, model, c, sf);
      reference && (!sim.ok() || reference->simulated.schedule.makespan * (1 + 1e-9) < sim.schedule.makespan)) {
    const std::string device = c[reference->device].name;
    std::cerr << "gantry place: " << algorithm << "'s placement "
              << (sim.ok() ? "runs in " + format_seconds(sim.schedule.makespan) : std::string("does not run")) << ", "
              << device << " alone runs the whole graph in " << format_seconds(reference->simulated.schedule.makespan)
              << (after.fallback == "single-device" ? "; using " + device + " alone (--fallback single-device)"
                                                    : "; --fallback single-device would use it")
              << "\n";
    if (after.fallback == "single-device") {
      placed = {reference->placed, std::nullopt};
      p.placement_time = elapsed_since(t0);
      sim = reference->simulated;
      chosen = "single-device (fallback from " + algorithm + ")";
    }
  }
  std::optional<local_search_result> searched;
  if (after.local_search > 0 && sim.ok()) {
    // Units: the colocation groups of the graph the placer saw (--fuse baechi and exact pair
    // forward and backward vertices first) and the fused clusters.
    const auto opts = sf.make(p.order);
    const bool fused = coarse && !placed_unfused(placed);
    const std::optional<seconds> budget = after.local_search_seconds();
    progress(show, "local search, at most " + std::to_string(after.local_search) + " simulations" +
                       (budget ? " or " + format_seconds(*budget) : std::string()) + "...");
    try {
      // A search that runs longer than 2 s says where it stands every 2 s, terminal or not.
      const auto report = [show](const local_search_progress& at) {
        std::cerr << (show ? "\n" : "") << "gantry place: local search: " << fixed_text(at.elapsed, 0) << " s, "
                  << at.simulations << " simulations, " << at.moves << " moves, best " << format_seconds(at.best)
                  << (show ? "" : "\n") << std::flush;
      };
      searched = local_search(g, model, c, p,
                              {.policy = opts.policy,
                               .cache_transfers = opts.cache_transfers,
                               .group = colocation_groups(fused ? colocate_forward_backward(g) : g),
                               .cluster = fused ? coarse->coarse_of : std::vector<vertex_id>{},
                               .max_simulations = after.local_search,
                               .time_limit = budget.value_or(std::numeric_limits<double>::infinity()),
                               .progress = report});
      progress(show, " " + fixed_text(searched->placement.placement_time, 1) + " s\n");
    } catch (const invalid_input& e) {  // a placer that splits colocation groups (enumerative)
      progress(show, "\n");
      std::cerr << "gantry place: warning: --local-search skipped: " << e.what() << "\n";
    }
    if (searched && searched->placement.ok() && searched->makespan < sim.schedule.makespan) {
      p.device = searched->placement.device;
      p.order = searched->placement.order;
      sim = simulate(g, model, c, std::span<const device_id>(p.device), sf.make(p.order));
      chosen += " + local search";
    }
    p.placement_time = elapsed_since(t0);
  }
  std::cout << "cluster       " << describe_devices(c) << ", " << to_string(c.comm()) << " transfers, links "
            << link_text(c) << "\n";
  std::cout << "algorithm     " << chosen << " (placed in " << fixed_text(p.placement_time * 1e3, 2) << " ms, "
            << (entry->respects_memory ? "honours device memory" : "ignores device memory") << ")\n";
  if (placed.placement.outcome.message.find(" instead") != std::string::npos)
    std::cout << "fallback      " << placed.placement.outcome.message << "\n";
  if (const auto note = note_of(placed)) std::cout << "note          " << *note << "\n";
  if (searched)
    std::cout << "local search  " << searched->moves << " moves in " << searched->simulations << " simulations ("
              << fixed_text(searched->placement.placement_time, 2)
              << " s): " << format_seconds(searched->start_makespan) << " -> " << format_seconds(searched->makespan)
              << (searched->moves == 0 && searched->makespan >= searched->start_makespan
                      ? ", the placer's placement kept"
                      : "")
              << (searched->timed_out ? " (stopped at --local-search-time)" : "") << "\n";
  if (placed.own_schedule)
    std::cout << "own schedule  " << format_seconds(placed.own_schedule->makespan) << " (the placer's schedule; below: "
              << (sf.policy == "strict-order" ? "its placement replayed in the placer's order on each device"
                                              : "the replay of its placement with --policy " + sf.policy)
              << ")\n";
  if (sim.ok() && sf.policy != "strict-order" && p.ok()) {
    // What following the placer gives: each device runs its vertices in the placer's order.
    const auto in_order = simulate(g, model, c, std::span<const device_id>(p.device), sf.make_in_order(p.order));
    std::cout << "in its order  "
              << (in_order.ok() ? format_seconds(in_order.schedule.makespan)
                                : "does not run (" + std::string(to_string(in_order.outcome.code)) + ")")
              << " (each device runs its vertices in the placer's order: --policy strict-order)\n";
  }
  if (algorithm == "exact")
    std::cout << "proven bound  " << format_seconds(proof->bound)
              << (proof->optimal              ? " (the schedule is optimal)"
                  : proof->time_limit_reached ? " (time limit reached: the schedule may be longer than the optimum)"
                                              : " (the schedule may be longer than the optimum)")
              << "\n";
  if (!sim.ok()) {
    std::cerr << "gantry place: the placement does not run: " << sim.outcome.message << " (no output files written)\n";
    return exit_failed;
  }
  require_finite(sim.schedule.makespan, graph_path, "the simulated makespan");
  atomic_file_group outputs;
  nlohmann::json metadata = nlohmann::json::object();
  for (const auto& [key, value] : placed.metadata) metadata[key] = value;
  if (ff.fuse != "none") metadata["fuse"] = ff.fuse;
  stage_output(outputs, out, [&] {
    return placement_text(g, c, p, {.algorithm = chosen, .schedule = &sim.schedule, .metadata = metadata});
  });
  of.stage(outputs, g, c, p, sim.schedule,
           std::filesystem::path(graph_path).filename().string() + ": " + chosen + " on " + describe_devices(c) +
               ", makespan " + format_seconds(sim.schedule.makespan));
  outputs.commit();
  print_schedule_summary(sim.schedule, c);
  return 0;
}

}  // namespace gantry::cli
