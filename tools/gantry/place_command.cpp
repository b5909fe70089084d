// `gantry place`: one placer, its placement simulated, written with its pictures.
#include "heartbeat.hpp"
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
              const std::string& out, const std::string& format, const output_flags& of, const fuse_flags& ff,
              const placer_limit_flags& ef, const read_limits& limits) {
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
  placer_result placed = [&] {
    const heartbeat beat("place", "placing with " + algorithm);
    return place_reduced(*entry, ff.request(g, model, c, !sf.no_cache), coarse, ff);
  }();
  placement& p = placed.placement;
  p.placement_time = elapsed_since(t0);
  progress(show, " " + format_seconds(p.placement_time) + "\n");
  if (!p.ok()) {
    std::cerr << "gantry place: " << algorithm << " failed (" << to_string(p.outcome.code) << "): " << p.outcome.message
              << "\n";
    return exit_failed;
  }
  // Judged as compare judges it: the fastest of the replay, the run in its order and its own schedule.
  judged_run judged =
      judge_placement(g, model, c, std::span<const device_id>(p.device), p.order, sf, placed.own_schedule);
  std::string chosen = ff.fuse == "none" ? algorithm : algorithm + " (--fuse " + ff.fuse + ")";
  // Never silently worse than one device: say so, and with --fallback take the device instead.
  if (const auto reference = best_single_device(g, model, c, sf);
      reference &&
      (!judged.ok() || reference->simulated.schedule.makespan * (1 + 1e-9) < judged.kept().schedule.makespan)) {
    const std::string device = c[reference->device].name;
    std::cerr << "gantry place: " << algorithm << "'s placement "
              << (judged.ok() ? "runs in " + format_seconds(judged.kept().schedule.makespan)
                              : std::string("does not run"))
              << ", " << device << " alone runs the whole graph in "
              << format_seconds(reference->simulated.schedule.makespan)
              << (after.fallback == "single-device" ? "; using " + device + " alone (--fallback single-device)"
                                                    : "; --fallback single-device would use it")
              << "\n";
    if (after.fallback == "single-device") {
      placed = {reference->placed, std::nullopt};
      p.placement_time = elapsed_since(t0);
      judged = {reference->simulated, reference->simulated};  // one device: its order is the replay's
      chosen = "single-device (fallback from " + algorithm + ")";
    }
  }
  const auto searched = improve_locally(g, model, c, placed, judged, coarse, after, sf, "place", show);
  if (searched) {
    if (searched->improved) chosen += " + local search";
    p.placement_time = elapsed_since(t0);
  }
  // The report: text on stdout, or with --format json a document on stdout and the text on stderr.
  const bool json = format == "json";
  std::ostream& text = json ? std::cerr : std::cout;
  text << "cluster       " << describe_devices(c) << ", " << to_string(c.comm()) << " transfers, links " << link_text(c)
       << "\n";
  text << "algorithm     " << chosen << " (placed in " << format_seconds(p.placement_time) << ", "
       << (entry->respects_memory ? "honours device memory" : "ignores device memory") << ")\n";
  const bool fallback = placed.placement.outcome.message.find(" instead") != std::string::npos;
  if (fallback) text << "fallback      " << placed.placement.outcome.message << "\n";
  const auto note = note_of(placed);
  if (note) text << "note          " << *note << "\n";
  if (searched) text << "local search  " << searched->text() << "\n";
  // The runs the placement is judged by; the fastest that runs is kept and written.
  const auto shown = [](const simulation_result& r) {
    return r.ok() ? format_seconds(r.schedule.makespan)
                  : "does not run (" + std::string(to_string(r.outcome.code)) + ")";
  };
  if (judged.own)
    text << "own schedule  " << shown(*judged.own)
         << " (the placer's schedule, replayed: strict-order, transfers in the order it reserved them"
         << kept_mark(judged, judged_kind::own, sf) << ")\n";
  if (sf.policy != "strict-order")
    text << "replayed      " << shown(judged.replay) << " (--policy " << sf.policy
         << (sf.policy == "placement-order" ? ", work-conserving" : "") << kept_mark(judged, judged_kind::replay, sf)
         << ")\n";
  text << "in its order  " << shown(judged.in_order)
       << " (each device runs its vertices in the placer's order: strict-order"
       << kept_mark(judged, judged_kind::in_order, sf) << ")\n";
  if (algorithm == "exact")
    text << "proven bound  " << format_seconds(proof->bound)
         << (proof->optimal              ? " (the schedule is optimal)"
             : proof->time_limit_reached ? " (time limit reached: the schedule may be longer than the optimum)"
             : !proof->stopped.empty()   ? " (" + proof->stopped + ")"
                                         : " (the schedule may be longer than the optimum)")
         << "\n";
  if (!judged.ok()) {
    std::cerr << "gantry place: the placement does not run: " << judged.replay.outcome.message
              << (sf.policy != "strict-order" ? "; nor in its order: " + judged.in_order.outcome.message : "")
              << " (no output files written)\n";
    return exit_failed;
  }
  const simulation_result& sim = judged.kept();
  require_finite(sim.schedule.makespan, graph_path, "the simulated makespan");
  atomic_file_group outputs;
  nlohmann::json metadata = nlohmann::json::object();
  for (const auto& [key, value] : placed.metadata) metadata[key] = value;
  if (ff.fuse != "none") metadata["fuse"] = ff.fuse;
  metadata["run"] = judged.kept_name(sf);  // which run the schedule is
  stage_output(outputs, out, [&] {
    return placement_text(g, c, p, {.algorithm = chosen, .schedule = &sim.schedule, .metadata = metadata});
  });
  of.stage(outputs, g, c, p, sim.schedule,
           std::filesystem::path(graph_path).filename().string() + ": " + chosen + " on " + describe_devices(c) +
               ", makespan " + format_seconds(sim.schedule.makespan));
  outputs.commit();
  if (!json) {
    print_schedule_summary(sim.schedule, c);
    return 0;
  }
  const auto makespan_or_null = [](const simulation_result& r) {
    return r.ok() ? nlohmann::ordered_json(r.schedule.makespan) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json document;
  document["graph"] = graph_path;
  document["cluster"] = describe_devices(c);
  document["communication"] = to_string(c.comm());
  document["algorithm"] = chosen;
  document["respects_memory"] = entry->respects_memory;
  document["placement_seconds"] = p.placement_time;
  if (fallback) document["fallback"] = placed.placement.outcome.message;
  if (note) document["note"] = *note;
  if (searched) document["local_search"] = searched->json();
  document["own_makespan"] = judged.own ? makespan_or_null(*judged.own) : nlohmann::ordered_json(nullptr);
  document["replay_makespan"] = makespan_or_null(judged.replay);
  document["in_order_makespan"] = makespan_or_null(judged.in_order);
  document["run"] = metadata["run"];
  if (algorithm == "exact") {
    document["proven_bound"] = {
        {"bound", proof->bound}, {"optimal", proof->optimal}, {"time_limit_reached", proof->time_limit_reached}};
    if (!proof->stopped.empty()) document["proven_bound"]["stopped"] = proof->stopped;
  }
  auto summary = schedule_summary_json(sim.schedule, c);
  for (auto& [key, value] : summary.items()) document[key] = std::move(value);
  std::cout << document.dump(2) << "\n";
  return 0;
}

}  // namespace gantry::cli
