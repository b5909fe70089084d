// `gantry compare`: every placer on one graph, ranked, with the lower bound beside them.
#include "heartbeat.hpp"
#include "placement_support.hpp"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace gantry::cli {

namespace {

struct compare_row {
  const placer_entry* entry;
  placer_result placed;
  std::optional<judged_run> runs;  // when the placer succeeded: the replay, the run in its order, its own schedule
  std::optional<local_search_step> searched;  // --local-search, after the placer
  // The run the row is ranked by, place's judge: the fastest of those that run.
  [[nodiscard]] const simulation_result* judged() const { return runs && runs->ok() ? &runs->kept() : nullptr; }
};

}  // namespace

int run_compare(const std::string& graph_path, const graph_reading& reading, const cluster_flags& cf,
                const simulation_flags& sf, const after_placing_flags& after, const std::vector<std::string>& only,
                const std::string& format, const fuse_flags& ff, const placer_limit_flags& ef,
                const std::string& svg_path, const read_limits& limits) {
  (void)after.local_search_seconds();  // a bad --local-search-time is refused before the graph is read
  const auto file = read_any_graph_file(graph_path, reading, limits);
  const graph& g = file.graph;
  const cluster c = cf.make(limits);
  const graph_model model(g, c);
  if (const auto warning = profile_mismatch(g, file.metadata, c))
    std::cerr << "gantry compare: warning: " << *warning << "\n";
  const bool show = progress_wanted(g);
  std::vector<compare_row> rows;
  const auto proof = std::make_shared<exact_proof>();
  const auto all = tool_placers(ef.exact_milliseconds(), proof, ef.doppler_seconds());
  for (const auto& name : only)
    if (find_tool_placer(all, name) == nullptr) throw unknown_algorithm(all, name);
  const std::string exact_refusal = exact_too_large(g.vertex_count(), c.device_count());
  const bool exact_too_large = !exact_refusal.empty();
  if (exact_too_large && std::find(only.begin(), only.end(), "exact") != only.end())
    throw invalid_input("--algorithms exact: " + exact_refusal);
  std::optional<exact_proof> exact_ran;
  const auto coarse = ff.reduce(g, c);
  std::size_t index = 0;
  std::optional<heartbeat> beat(std::in_place, "compare", "starting");  // while placers run
  for (const auto& entry : all) {
    ++index;
    if (!only.empty() && std::find(only.begin(), only.end(), entry.name) == only.end()) continue;
    if (entry.name == "exact" && exact_too_large) continue;
    progress(show, "[" + std::to_string(index) + "/" + std::to_string(all.size()) + "] " + entry.name + "...");
    beat->set("placer " + std::to_string(index) + " of " + std::to_string(all.size()) + ": " + entry.name);
    compare_row row{&entry, {}, std::nullopt, std::nullopt};
    const auto t0 = std::chrono::steady_clock::now();
    row.placed = place_reduced(entry, ff.request(g, model, c, !sf.no_cache), coarse, ff);
    auto& p = row.placed.placement;
    p.placement_time = elapsed_since(t0);
    if (p.ok()) {
      row.runs =
          judge_placement(g, model, c, std::span<const device_id>(p.device), p.order, sf, row.placed.own_schedule);
      beat->set("");  // the search reports itself
      row.searched = improve_locally(g, model, c, row.placed, *row.runs, coarse, after, sf, "compare", show);
    }
    if (entry.name == "exact" && p.ok()) exact_ran = *proof;
    progress(show, " done\n");
    rows.push_back(std::move(row));
  }
  beat.reset();
  // Speed-ups are over the fastest device running the whole graph with unlimited memory, so that
  // they exist even when one device cannot hold the run.
  std::optional<seconds> baseline;
  std::string baseline_device;
  {
    std::vector<device> roomy = c.devices();
    for (auto& d : roomy) d.capacity = unlimited_memory;
    cluster unlimited(std::move(roomy), c.default_link(), c.comm());
    for (const auto& domain : c.domains()) unlimited.add_domain(domain);
    const graph_model unlimited_model(g, unlimited);
    if (const auto fastest = best_single_device(g, unlimited_model, unlimited, sf)) {
      baseline = fastest->simulated.schedule.makespan;
      baseline_device = c[fastest->device].name;
    }
  }
  if (baseline) require_finite(*baseline, graph_path, "the baseline's simulated makespan");
  for (const auto& row : rows)
    if (row.runs)
      for (const auto* run : {&row.runs->replay, &row.runs->in_order, row.runs->own ? &*row.runs->own : nullptr})
        if (run != nullptr && run->ok())
          require_finite(run->schedule.makespan, graph_path, row.entry->name + "'s simulated makespan");
  // Ranked by the fastest of the replay, the run in the placer's order and its own schedule replayed,
  // failures last in the registry's order.
  std::stable_sort(rows.begin(), rows.end(), [](const compare_row& a, const compare_row& b) {
    const auto* x = a.judged();
    const auto* y = b.judged();
    if (x == nullptr || y == nullptr) return x != nullptr && y == nullptr;
    return x->schedule.makespan < y->schedule.makespan;
  });
  // The fastest device that can hold the whole run within its memory, if any.
  const auto alone = best_single_device(g, model, c, sf);
  const auto bound = make_compare_bound(g, model, c, exact_ran);
  if (!svg_path.empty()) {
    std::vector<chart_row> chart;
    for (const auto& row : rows) {
      chart_row bar{row.entry->name, std::nullopt, {}};
      if (!row.placed.placement.ok())
        bar.failure = std::string("failed: ") + to_string(row.placed.placement.outcome.code);
      else if (row.judged() == nullptr)
        bar.failure = std::string("does not run: ") + to_string(row.runs->replay.outcome.code);
      else bar.makespan = row.judged()->schedule.makespan;
      chart.push_back(std::move(bar));
    }
    atomic_file_group outputs;
    stage_output(outputs, svg_path, [&] {
      return compare_svg(std::filesystem::path(graph_path).filename().string() + " on " + describe_devices(c) + ", " +
                             to_string(c.comm()) + " transfers",
                         chart, bound);
    });
    outputs.commit();
  }
  // Placed by a fallback (memory_fallback(), the one-device answer, the hand-off to m-ETF): the message says which.
  const auto is_fallback = [](const placement& p) {
    return p.ok() && p.outcome.message.find(" instead") != std::string::npos;
  };
  const auto slower_than_alone = [&](const compare_row& row) {
    // Relative: a placement that is the one device's run may differ from it by rounding alone.
    return alone && row.judged() != nullptr &&
           row.judged()->schedule.makespan > alone->simulated.schedule.makespan * (1 + 1e-9);
  };
  if (format == "json") {
    nlohmann::ordered_json out;
    out["graph"] = graph_path;
    out["vertices"] = g.vertex_count();
    out["edges"] = g.edge_count();
    out["devices"] = c.device_count();
    out["communication"] = to_string(c.comm());
    const link_model& link = c.default_link();
    out["link"] = {{"latency", link.latency},
                   {"bandwidth", std::isfinite(link.bandwidth) ? nlohmann::ordered_json(link.bandwidth)
                                                               : nlohmann::ordered_json(nullptr)},
                   {"pairs_with_own_link", c.own_link_count()}};
    out["units"] = {{"time", "seconds"}, {"memory", "bytes"}};
    out["cluster"] = describe_devices(c);
    out["baseline"] = baseline ? baseline_device + " alone with unlimited memory (the fastest device)"
                               : std::string("none: no device runs the graph alone");
    out["lower_bound"] = nlohmann::ordered_json{
        {"value", bound.value},
        {"binding", bound.source},
        {"critical_path", bound.simple.critical_path},
        {"work", bound.simple.work},
        {"exact", bound.exact ? nlohmann::ordered_json{{"bound", bound.exact->bound},
                                                       {"optimal", bound.exact->optimal},
                                                       {"time_limit_reached", bound.exact->time_limit_reached}}
                              : nlohmann::ordered_json(nullptr)}};
    out["baseline_makespan"] = baseline ? nlohmann::ordered_json(*baseline) : nlohmann::ordered_json(nullptr);
    out["results"] = nlohmann::ordered_json::array();
    out["single_device"] = alone ? nlohmann::ordered_json{{"device", c[alone->device].name},
                                                          {"makespan", alone->simulated.schedule.makespan}}
                                 : nlohmann::ordered_json(nullptr);
    out["ranked_by"] =
        "ranked_makespan: the fastest of makespan (the --policy replay), in_order_makespan (each device runs its "
        "vertices in the placer's order, strict-order) and own_makespan (a list scheduler's own schedule, replayed "
        "strict-order with its transfers in the order it reserved them) among those that run; ranked_run says which";
    std::size_t rank = 0;
    for (const auto& row : rows) {
      nlohmann::ordered_json r;
      const auto& p = row.placed.placement;
      r["rank"] = row.judged() != nullptr ? nlohmann::ordered_json(++rank) : nlohmann::ordered_json(nullptr);
      r["algorithm"] = row.entry->name;
      r["respects_memory"] = row.entry->respects_memory;
      r["placement_seconds"] = p.placement_time;
      r["own_makespan"] = row.runs && row.runs->own && row.runs->own->ok()
                              ? nlohmann::ordered_json(row.runs->own->schedule.makespan)
                              : nlohmann::ordered_json(nullptr);
      if (!p.ok()) {
        r["status"] = to_string(p.outcome.code);
        r["message"] = p.outcome.message;
      } else if (row.judged() == nullptr) {
        r["status"] = "simulation: " + std::string(to_string(row.runs->replay.outcome.code));
        r["message"] = row.runs->replay.outcome.message;
      } else {
        if (is_fallback(p)) r["fallback"] = p.outcome.message;
        if (const auto note = note_of(row.placed)) r["note"] = *note;
        if (row.searched) r["local_search"] = row.searched->json();
        const auto& s = row.judged()->schedule;
        r["status"] = "ok";
        const auto& in_order = row.runs->in_order;
        const auto& replay = row.runs->replay;
        r["ranked_makespan"] = s.makespan;
        r["ranked_run"] = judged_kind_name(row.runs->which());
        r["in_order_makespan"] =
            in_order.ok() ? nlohmann::ordered_json(in_order.schedule.makespan) : nlohmann::ordered_json(nullptr);
        if (!in_order.ok()) r["in_order_message"] = in_order.outcome.message;
        r["makespan"] =
            replay.ok() ? nlohmann::ordered_json(replay.schedule.makespan) : nlohmann::ordered_json(nullptr);
        if (!replay.ok()) r["replay_message"] = replay.outcome.message;
        const auto up = baseline ? speedup(*baseline, s.makespan) : std::nullopt;
        r["speedup"] = up ? nlohmann::ordered_json(*up) : nlohmann::ordered_json(nullptr);
        r["bound_ratio"] =
            bound.value > 0 ? nlohmann::ordered_json(s.makespan / bound.value) : nlohmann::ordered_json(nullptr);
        r["slower_than_single_device"] = slower_than_alone(row);
        r["peak_memory"] = s.peak_memory;
        r["bytes_moved"] = s.bytes_moved;
      }
      out["results"].push_back(std::move(r));
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << g.vertex_count() << " vertices, " << g.edge_count() << " edges on " << describe_devices(c) << ", "
            << to_string(c.comm()) << " transfers, links " << link_text(c) << "\n";
  std::cout << describe_bound(bound) << "\n\n";
  // The name column fits the longest placer name (backward-critical-path is 22 characters).
  std::size_t name_width = std::string("algorithm").size();
  for (const auto& row : rows) name_width = std::max(name_width, row.entry->name.size());
  const int name_column = static_cast<int>(name_width) + 2;
  std::cout << std::right << std::setw(4) << "rank"
            << "  " << std::left << std::setw(name_column) << "algorithm" << std::right << std::setw(12) << "place time"
            << std::setw(14) << "own schedule" << std::setw(14) << "in its order" << std::setw(14) << "replayed"
            << std::setw(10) << "speed-up" << std::setw(10) << "vs bound" << std::setw(14) << "bytes moved"
            << "  peak memory per device\n";
  std::size_t rank = 0;
  for (const auto& row : rows) {
    const auto& p = row.placed.placement;
    const auto* judged = row.judged();
    std::cout << std::right << std::setw(4) << (judged != nullptr ? std::to_string(++rank) : std::string("-")) << "  "
              << std::left << std::setw(name_column) << row.entry->name << std::right << std::setw(12)
              << format_seconds(p.placement_time);
    std::vector<std::string> notes;
    if (!row.entry->respects_memory) notes.emplace_back("ignores memory");
    if (!p.ok()) {
      std::cout << "  failed: " << to_string(p.outcome.code) << "\n";
      continue;
    }
    if (judged == nullptr) {
      std::cout << std::setw(14) << "-";
      const auto& failed = row.runs->replay.outcome;
      std::cout << "  does not run: " << to_string(failed.code) << " on device " << failed.device
                << (notes.empty() ? "" : " (" + notes.front() + ")") << "\n";
      continue;
    }
    // The run kept is starred.
    const auto shown = [&](const simulation_result& r) {
      return r.ok() ? format_seconds(r.schedule.makespan) + (&r == judged ? "*" : "") : std::string("no run");
    };
    const auto& s = judged->schedule;
    const auto& in_order = row.runs->in_order;
    const auto& replay = row.runs->replay;
    const auto* own = row.runs->own ? &*row.runs->own : nullptr;
    if (own != nullptr && !own->ok()) notes.emplace_back("own schedule: " + std::string(to_string(own->outcome.code)));
    if (!in_order.ok()) notes.emplace_back("in its order: " + std::string(to_string(in_order.outcome.code)));
    if (!replay.ok()) notes.emplace_back("replayed: " + std::string(to_string(replay.outcome.code)));
    if (slower_than_alone(row)) notes.emplace_back("slower than " + c[alone->device].name + " alone");
    if (is_fallback(p)) notes.emplace_back("a fallback, see below");
    if (note_of(row.placed)) notes.emplace_back("see below");
    if (row.searched && row.searched->improved) notes.emplace_back("local search, see below");
    std::cout << std::setw(14) << (own != nullptr ? shown(*own) : std::string("-")) << std::setw(14) << shown(in_order)
              << std::setw(14) << shown(replay) << std::setw(10)
              << (baseline && speedup(*baseline, s.makespan) ? fixed_text(*speedup(*baseline, s.makespan), 2) + "x"
                                                             : std::string("-"))
              << std::setw(10) << ratio_to_bound(s.makespan, bound) << std::setw(14) << format_bytes(s.bytes_moved)
              << "  " << percent_list(s.peak_memory, c);
    for (std::size_t i = 0; i < notes.size(); ++i) std::cout << (i == 0 ? "  (" : ", ") << notes[i];
    std::cout << (notes.empty() ? "" : ")") << "\n";
  }
  for (const auto& row : rows) {
    if (!row.placed.placement.ok() || is_fallback(row.placed.placement))
      std::cout << "\n" << named_message(row.entry->name, row.placed.placement.outcome.message);
    else if (row.judged() == nullptr)
      std::cout << "\n" << named_message(row.entry->name, row.runs->replay.outcome.message);
    if (const auto note = note_of(row.placed); note && row.placed.placement.ok())
      std::cout << "\n" << row.entry->name << ": " << *note;
    if (row.searched) std::cout << "\n" << row.entry->name << ": local search " << row.searched->text();
  }
  std::cout
      << "\n\"own schedule\" replays a list scheduler's own schedule (strict-order, its transfers in the order it "
         "reserved them); \"in its order\" simulates its placement with each device "
         "running its vertices in the placer's order (strict-order); \"replayed\" simulates it with the "
      << sf.policy << " policy" << (sf.policy == "placement-order" ? " (work-conserving)" : "")
      << (sf.no_cache ? ", no transfer caching" : "")
      << "; rows are ranked by the fastest of those that run, starred (the run place keeps and writes)";
  if (alone)
    std::cout << "; " << c[alone->device].name << " alone runs it in "
              << format_seconds(alone->simulated.schedule.makespan);
  std::cout
      << "\nspeed-up (over " << (baseline ? baseline_device : std::string("one device"))
      << " alone with unlimited memory), \"vs bound\" (makespan over the lower bound, 1.000x: optimal), bytes moved "
         "and peak memory (% of capacity) are those of the ranked run\n";
  return 0;
}

}  // namespace gantry::cli
