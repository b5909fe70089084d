// `gantry learn`: trains DOPPLER's dual policy (gantry/learn/doppler.hpp) on one graph, stage by
// stage (imitation of a teacher, by default the library's best placer on the graph; REINFORCE on
// the simulator; REINFORCE on the simulator with drawn durations), printing progress with the best
// makespan so far, and writes the best placement (never worse than the teacher's, and the report
// says which it is), the weights and the learning curve (CSV, and an SVG plot). --weights-in
// starts from saved weights (fine-tuning, e.g. trained on ChainMM, tuned on a Llama block). The
// training itself is compiled in learn_training.cpp.

#include "commands.hpp"
#include "files.hpp"
#include "heartbeat.hpp"
#include "inputs.hpp"
#include "learn_training.hpp"

#include <gantry/core/units.hpp>
#include <gantry/io/atomic_file.hpp>
#include <gantry/place/placers.hpp>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace gantry::cli {

// --stages' values, in the order the stages run.
inline const std::vector<std::string> learn_stage_names{"imitation", "reinforce", "measured"};

struct learn_command_flags {
  std::string graph_path;
  std::vector<std::string> stages{"imitation", "reinforce"};
  std::string time_limit = "10min";
  training_request training;  // episodes of every stage, network, optimiser, teacher, weights to start from
  std::string weights_out, out, curve_csv, curve_svg;
};

// The learning curve as CSV: one row per episode.
[[nodiscard]] inline std::string learning_curve_csv(const std::vector<learn::learning_point>& curve) {
  std::ostringstream out;
  out << std::setprecision(17) << "episode,stage,makespan,best,baseline,agreement,seconds\n";
  for (const auto& p : curve)
    out << p.episode << ',' << learn::to_string(p.stage) << ',' << p.makespan << ',' << p.best << ',' << p.baseline
        << ',' << p.agreement << ',' << p.seconds_elapsed << '\n';
  return out.str();
}

// The learning curve as an SVG line plot: each episode's makespan (grey) and the best so far (blue).
[[nodiscard]] inline std::string learning_curve_svg(const std::vector<learn::learning_point>& curve,
                                                    const std::string& title) {
  constexpr double width = 800, height = 400, left = 90, right = 20, top = 40, bottom = 50;
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (const auto& p : curve)
    for (const double y : {p.makespan, p.best})
      if (std::isfinite(y)) low = std::min(low, y), high = std::max(high, y);
  if (!std::isfinite(low)) low = 0, high = 1;
  if (high <= low) high = low + 1;
  const double episodes = std::max<double>(1, static_cast<double>(curve.size()));
  const auto x_of = [&](std::size_t i) { return left + (width - left - right) * static_cast<double>(i) / episodes; };
  const auto y_of = [&](double y) { return top + (height - top - bottom) * (1 - (y - low) / (high - low)); };
  std::ostringstream out;
  out << std::setprecision(6);
  std::string escaped;
  for (const char c : title) {
    switch (c) {
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '&':
        escaped += "&amp;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      default:
        escaped += c;
    }
  }
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"22\" font-size=\"14\">" << escaped << "</text>\n"
      << "<line x1=\"" << left << "\" y1=\"" << height - bottom << "\" x2=\"" << width - right << "\" y2=\""
      << height - bottom << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << height - bottom
      << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << (width / 2) << "\" y=\"" << height - 12 << "\" text-anchor=\"middle\">episode ("
      << curve.size() << ")</text>\n"
      << "<text x=\"12\" y=\"" << (top + height - bottom) / 2 << "\" transform=\"rotate(-90 12 "
      << (top + height - bottom) / 2 << ")\" text-anchor=\"middle\">simulated makespan</text>\n";
  // Ticks: episodes at a round step, makespans at five evenly spaced values.
  const double raw_step = episodes / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(std::max(1.0, raw_step))));
  const double step = raw_step <= magnitude       ? magnitude
                      : raw_step <= 2 * magnitude ? 2 * magnitude
                      : raw_step <= 5 * magnitude ? 5 * magnitude
                                                  : 10 * magnitude;
  for (double e = 0; e <= episodes + 1e-9; e += step) {
    const double x = left + (width - left - right) * e / episodes;
    out << "<line x1=\"" << x << "\" y1=\"" << height - bottom << "\" x2=\"" << x << "\" y2=\"" << height - bottom + 5
        << "\" stroke=\"black\"/><text x=\"" << x << "\" y=\"" << height - bottom + 18 << "\" text-anchor=\"middle\">"
        << static_cast<long long>(e) << "</text>\n";
  }
  for (int k = 0; k <= 4; ++k) {
    const double value = low + (high - low) * k / 4;
    const double y = y_of(value);
    out << "<line x1=\"" << left - 5 << "\" y1=\"" << y << "\" x2=\"" << left << "\" y2=\"" << y
        << "\" stroke=\"black\"/><text x=\"" << left - 8 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
        << format_seconds(value) << "</text>\n";
  }
  const auto line = [&](auto value, const char* colour) {
    out << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1\" points=\"";
    for (std::size_t i = 0; i < curve.size(); ++i) {
      const double y = value(curve[i]);
      if (std::isfinite(y)) out << x_of(i) << ',' << y_of(y) << ' ';
    }
    out << "\"/>\n";
  };
  line([](const learn::learning_point& p) { return p.makespan; }, "#bbbbbb");
  line([](const learn::learning_point& p) { return p.best; }, "#1f77b4");
  out << "<text x=\"" << width - right - 160 << "\" y=\"" << top << "\" fill=\"#1f77b4\">best so far</text>\n"
      << "<text x=\"" << width - right - 160 << "\" y=\"" << top + 16 << "\" fill=\"#888888\">episode makespan</text>\n"
      << "</svg>\n";
  return out.str();
}

// Runs `gantry learn`; read_graph() reads --graph, make_cluster() builds the cluster from the
// shared flags. Returns the exit status (0 ok, 1 failed, 2 bad input).
template <class ReadGraph, class MakeCluster>
int run_learn_command(const learn_command_flags& flags, ReadGraph&& read_graph, MakeCluster&& make_cluster,
                      std::ostream& out, std::ostream& err) {
  try {
    bool imitation = false, reinforce = false, measured = false;
    for (const auto& s : flags.stages) {
      if (s == "imitation") imitation = true;
      else if (s == "reinforce") reinforce = true;
      else if (s == "measured") measured = true;
      else
        throw invalid_input("--stages: unknown stage '" + s + "'" + did_you_mean(s, learn_stage_names) +
                            " (imitation, reinforce, measured)");
    }
    const seconds time_limit = duration_option("--time-limit", flags.time_limit);
    if (!(time_limit > 0)) throw invalid_input("--time-limit: expected a duration > 0, got '" + flags.time_limit + "'");
    // --time-limit counts from here: reading the graph and building the cluster (a million devices
    // take seconds) are part of the run it bounds.
    const auto started = std::chrono::steady_clock::now();
    const graph g = read_graph();
    const cluster c = make_cluster();
    const bool tty = isatty(STDERR_FILENO) != 0;
    std::size_t shown = 0;
    training_request request = flags.training;
    if (!imitation) request.imitation_episodes = 0;
    if (!reinforce) request.reinforce_episodes = 0;
    if (!measured) request.measured_episodes = 0;
    request.time_limit =
        std::max(0.0, time_limit - std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    const seconds request_limit = request.time_limit;
    const std::size_t total = request.imitation_episodes + request.reinforce_episodes + request.measured_episodes;
    // Every 2 s once training has run 2 s, terminal or not, however long an episode takes.
    std::optional<heartbeat> beat(std::in_place, "learn", "choosing the teacher");
    request.on_progress = [&](const std::string& what) { beat->set(what); };
    request.on_episode = [&](const learn::learning_point& p) {
      ++shown;
      beat->set("training: " + std::to_string(shown) + " of " + std::to_string(total) + " episodes, " +
                learn::to_string(p.stage) + ", best " +
                (std::isfinite(p.best) ? format_seconds(p.best) : std::string("none yet")));
      const std::size_t step = std::max<std::size_t>(1, total / 20);
      if (!tty && shown % step != 0 && shown != total) return;
      const std::size_t filled = total == 0 ? 0 : std::min<std::size_t>(30, 30 * shown / total);
      err << (tty ? "\r" : "") << "[" << std::string(filled, '#') << std::string(30 - filled, '.') << "] " << shown
          << "/" << total << " " << learn::to_string(p.stage) << ", best "
          << (std::isfinite(p.best) ? format_seconds(p.best) : std::string("none yet")) << (tty ? "   " : "\n")
          << std::flush;
    };
    const auto learned = train_doppler(g, c, std::move(request));
    beat.reset();
    if (tty) err << "\n";
    if (!learned.ok()) {
      err << "gantry learn: no placement: " << learned.outcome.message;
      if (learned.stopped_by_time_limit || learned.outcome.message.find("time limit") != std::string::npos)
        err << " (of --time-limit " << format_seconds(time_limit)
            << ", reading the graph and building the cluster took " << format_seconds(time_limit - request_limit)
            << " and choosing the teacher " << format_seconds(learned.teacher_seconds) << ")";
      err << "\n";
      return 1;
    }
    // As place and simulate do: a makespan that overflowed is bad input, not a result.
    if (!std::isfinite(learned.makespan))
      throw invalid_input("the best simulated makespan is not finite (" + format_seconds(learned.makespan) +
                          "): the graph's compute and transfer times are too large to add up in a double");
    // The curve holds the training episodes (the progress line's count); the rest were greedy decodes.
    const std::size_t trained = learned.curve.size(), decoded = learned.episodes - std::min(learned.episodes, trained);
    out << "episodes      " << trained << " of " << total
        << (decoded ? " and " + std::to_string(decoded) + " greedy decodes" : "") << " in "
        << format_seconds(learned.training_seconds) << " ("
        << fixed_text(static_cast<double>(learned.episodes) / learned.training_seconds, 1) << " runs/s)"
        << (learned.stopped_by_time_limit ? ", stopped by --time-limit" : "") << "\n";
    if (learned.teacher == builtin_teacher_name)
      out << "teacher       " << builtin_teacher_name << " (DOPPLER's built-in rule"
          << (learned.teacher_fallback.empty() ? "" : ": " + learned.teacher_fallback) << ")\n";
    else
      out << "teacher       " << learned.teacher << ": " << format_seconds(learned.teacher_makespan)
          << (flags.training.teacher == best_teacher_name
                  ? (learned.teachers_cut_short
                         ? ", the best of the first " + std::to_string(learned.teachers_tried) + " of " +
                               std::to_string(placers().size()) +
                               " registry placers (half of --time-limit passed before the rest)"
                         : ", the best of " + std::to_string(learned.teachers_tried) + " registry placers")
                  : std::string())
          << ", chosen in " << format_seconds(learned.teacher_seconds) << "\n";
    const bool imitated = std::any_of(learned.curve.begin(), learned.curve.end(), [](const learn::learning_point& p) {
      return p.stage == learn::learn_stage::imitation;
    });
    if (imitated) out << "imitation     " << fixed_text(learned.agreement, 3) << " agreement with the teacher\n";
    out << "best          " << format_seconds(learned.makespan) << " simulated makespan, ";
    if (learned.from_policy) out << "decoded by the policy\n";
    else
      out << "the teacher's placement (the policy's best: "
          << (std::isfinite(learned.policy_makespan) ? format_seconds(learned.policy_makespan) : std::string("none"))
          << ")\n";
    atomic_file_group outputs;
    if (!flags.out.empty())
      outputs.add_text(flags.out, placement_text(g, c, learned.placed,
                                                 {.algorithm = "doppler",
                                                  .schedule = learned.simulated ? &*learned.simulated : nullptr}));
    if (!flags.weights_out.empty()) outputs.add_text(flags.weights_out, learned.weights);
    if (!flags.curve_csv.empty()) outputs.add_text(flags.curve_csv, learning_curve_csv(learned.curve));
    if (!flags.curve_svg.empty())
      outputs.add_text(
          flags.curve_svg,
          learning_curve_svg(learned.curve, "DOPPLER on " + std::to_string(g.vertex_count()) + " vertices, " +
                                                std::to_string(c.device_count()) + " devices"));
    outputs.commit();
    return 0;
  } catch (const std::invalid_argument& e) {
    err << "gantry learn: " << e.what() << "\n";
    return 2;
  } catch (const parse_error& e) {
    err << "gantry learn: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "gantry learn: " << e.what() << "\n";
    return 1;
  }
}

void register_learn_command(CLI::App& app, cluster_flags& cluster_options, graph_reading& reading,
                            input_flags& inputs) {
  auto flags = std::make_shared<learn_command_flags>();
  auto* command = app.add_subcommand("learn",
                                     "train DOPPLER's dual policy on a graph (imitation, REINFORCE, "
                                     "measured rewards) and write the best placement, weights and curve");
  command->add_option("--graph,-g", flags->graph_path, "graph file (.json or .json.gz) or PipeDream graph.txt")
      ->required()
      ->check(CLI::ExistingFile);
  add_graph_reading_options(*command, reading);
  cluster_options.add_to(*command);
  inputs.add_to(*command);
  command->add_option("--stages", flags->stages, "imitation, reinforce, measured (comma separated, run in that order)")
      ->delimiter(',')
      ->check(one_of(learn_stage_names))
      ->capture_default_str();
  command->add_option("--imitation-episodes", flags->training.imitation_episodes, "stage I episodes")
      ->check(whole_number_from<std::size_t>(0))
      ->capture_default_str();
  command
      ->add_option("--episodes,-e", flags->training.reinforce_episodes,
                   "stage II (REINFORCE on the simulator) episodes")
      ->check(whole_number_from<std::size_t>(0))
      ->capture_default_str();
  command
      ->add_option("--measured-episodes", flags->training.measured_episodes,
                   "stage III episodes (rewards from the simulator with drawn durations)")
      ->check(whole_number_from<std::size_t>(0))
      ->capture_default_str();
  command
      ->add_option("--measured-cv", flags->training.measured_cv, "stage III: coefficient of variation of the durations")
      ->check(finite_number_in(0, 10))
      ->capture_default_str();
  command
      ->add_option("--teacher", flags->training.teacher,
                   "stage I imitates this placer, whose placement training never returns worse than: best (the "
                   "fastest placement of the library's placers under training's judge), any of their names, or "
                   "doppler-critical-path (DOPPLER's built-in rule)")
      ->capture_default_str();
  command->add_option("--seed", flags->training.seed, "seed of the weights and the sampling")
      ->check(whole_number_from<std::uint64_t>(0))
      ->capture_default_str();
  command->add_option("--time-limit", flags->time_limit, "training time at most, over all stages, e.g. 90s or 10min")
      ->capture_default_str();
  command->add_option("--hidden", flags->training.hidden, "width of the hidden layer of SEL and PLC")
      ->check(whole_number_between<std::size_t>(1, 4096))
      ->capture_default_str();
  command->add_option("--rate", flags->training.rate, "REINFORCE step size (Adam)")
      ->check(positive_number())
      ->capture_default_str();
  command->add_option("--entropy", flags->training.entropy, "entropy bonus at the first REINFORCE episode")
      ->check(non_negative_number())
      ->capture_default_str();
  command
      ->add_option("--entropy-half-life", flags->training.entropy_half_life,
                   "REINFORCE episodes over which the entropy bonus halves (0: constant, which drifts toward "
                   "random placements on long runs)")
      ->check(non_negative_number())
      ->capture_default_str();
  command
      ->add_option("--restart-after", flags->training.restart_after,
                   "REINFORCE episodes without a better placement after which the entropy bonus starts over "
                   "(0: never)")
      ->check(whole_number_from<std::size_t>(0))
      ->capture_default_str();
  command->add_option("--weights-in", flags->training.weights_in, "start from these weights (fine-tuning)")
      ->check(CLI::ExistingFile);
  command->add_option("--weights-out", flags->weights_out, "write the trained weights here");
  command->add_option("--out,-o", flags->out, "write the best placement (JSON) here");
  command->add_option("--curve", flags->curve_csv, "write the learning curve (CSV) here");
  command->add_option("--curve-svg", flags->curve_svg, "plot the learning curve (SVG) here");
  command->callback([flags, &cluster_options, &reading, &inputs] {
    const int code = run_learn_command(
        *flags, [&] { return read_any_graph_file(flags->graph_path, reading, inputs.make()).graph; },
        [&] { return cluster_options.make(inputs.make()); }, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace gantry::cli
