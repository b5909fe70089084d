// DOPPLER's dual policy (DOPPLER §4-5) as a policy of the list-scheduling engine
// (place/list_scheduler.hpp): at each step SEL scores the ready vertices and one is picked, then
// PLC scores the devices that may take it and one is picked. Decoding is greedy (argmax), sampled
// (softmax with a temperature) or teacher-forced (Critical Path's choice, or a given placement's,
// is placed and both policies' scores are recorded against it, for imitation). A trace of every step's candidate
// features and choices lets the trainer (learn/doppler.hpp) backpropagate after the episode.
// Weights are saved to and read from a small text file.
#pragma once

#include <gantry/io/atomic_file.hpp>
#include <gantry/learn/features.hpp>
#include <gantry/learn/mlp.hpp>
#include <gantry/place/list_policy.hpp>
#include <gantry/place/ready_by_priority.hpp>
#include <gantry/schedule/schedule.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <istream>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace gantry::learn {

// The learned weights: SEL and PLC heads and the encoder's number of rounds.
struct dual_policy {
  unsigned rounds = 2;
  mlp select;
  mlp place;

  dual_policy() = default;
  explicit dual_policy(std::size_t hidden, unsigned encoder_rounds = 2)
      : rounds(encoder_rounds), select(select_input_size(encoder_rounds), hidden), place(place_input_size(), hidden) {}
  void initialize(std::uint64_t seed) {
    detail::portable_random random(seed);
    select.initialize(random);
    place.initialize(random);
  }
  friend bool operator==(const dual_policy& a, const dual_policy& b) {
    return a.rounds == b.rounds && a.select.hidden() == b.select.hidden() && a.place.hidden() == b.place.hidden() &&
           a.select.parameters() == b.select.parameters() && a.place.parameters() == b.place.parameters();
  }
};

enum class decoding {
  greedy,   // the highest score
  sampled,  // drawn from the softmax of the scores
  teacher,  // the teacher's choice (imitation); the policy's own argmax is compared with it
};

// One step of an episode: the candidates' features and the index chosen (or taught).
struct step_record {
  matrix select_inputs;
  Eigen::Index select_choice = 0;
  matrix place_inputs;
  Eigen::Index place_choice = 0;
  bool agreed = false;  // teacher decoding: the policy's argmax pair equals the teacher's
};

// Thrown by doppler_policy::choose() once its deadline has passed (set_deadline), to end an
// episode that would run past a time limit; the trainer catches it.
struct episode_deadline_passed {};

struct episode_trace {
  std::vector<step_record> steps;
  [[nodiscard]] double agreement() const {
    if (steps.empty()) return 1.0;
    std::size_t agreed = 0;
    for (const auto& s : steps) agreed += s.agreed ? 1 : 0;
    return static_cast<double>(agreed) / static_cast<double>(steps.size());
  }
};

// The dual policy on the engine. Holds pointers: the weights, the encoding (computed at start when
// null), the random source (sampled decoding), the trace (none when null) and the teacher must
// outlive the run. The teacher of teacher decoding is Critical Path (largest bottom level, earliest
// start) unless a placement is given: then its choice is the ready vertex it placed first, on the
// device it chose (the earliest start when that device cannot take the vertex now). The features
// flag Critical Path's choices, as DOPPLER's do, and the teacher's, in every decoding (with no
// placement given, both are Critical Path's).
class doppler_policy {
 public:
  doppler_policy(const dual_policy& weights, decoding mode, detail::portable_random* random = nullptr,
                 episode_trace* trace = nullptr, const graph_encoding* encoding = nullptr, double temperature = 1.0,
                 const placement* teacher = nullptr)
      : weights_(&weights), mode_(mode), random_(random), trace_(trace), encoding_(encoding), temperature_(temperature),
        teacher_(teacher) {
    if (mode == decoding::sampled && random == nullptr)
      throw invalid_input("doppler_policy: sampled decoding needs a random source");
    if (!(temperature > 0)) throw invalid_input("doppler_policy: temperature must be > 0");
  }
  [[nodiscard]] std::string_view name() const { return "DOPPLER"; }
  // From this time on, choose() throws episode_deadline_passed: an episode on a large cluster can
  // take long (each step scores every device), and a time limit must not wait for it to end.
  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }

  template <class View>
  void start(const View& view) {
    if (encoding_ == nullptr) {
      own_ = encode_graph(view.graph(), view.model(), view.device_count(), weights_->rounds);
      encoding_ = &*own_;
    }
    const auto n = static_cast<Eigen::Index>(view.vertex_count());
    if (encoding_->features.rows() != n)
      throw invalid_input("doppler_policy: the encoding has " + std::to_string(encoding_->features.rows()) +
                          " vertices, the graph " + std::to_string(n));
    const auto m = static_cast<Eigen::Index>(view.device_count());
    device_features_ = matrix::Zero(m, static_cast<Eigen::Index>(vertex_feature_count));
    device_count_.assign(view.device_count(), 0);
    device_load_.assign(view.device_count(), 0);
    placed_load_ = 0;
    if (teacher_ != nullptr) {
      if (teacher_->device.size() != view.vertex_count() || teacher_->order.size() != view.vertex_count())
        throw invalid_input("doppler_policy: the teacher placement has " + std::to_string(teacher_->device.size()) +
                            " devices and " + std::to_string(teacher_->order.size()) + " order entries, the graph " +
                            std::to_string(view.vertex_count()) + " vertices");
      teacher_rank_.assign(view.vertex_count(), view.vertex_count());
      for (std::size_t i = 0; i < teacher_->order.size(); ++i) {
        const vertex_id v = teacher_->order[i];
        if (v >= view.vertex_count() || teacher_rank_[v] != view.vertex_count())
          throw invalid_input("doppler_policy: the teacher's order is not a permutation of the vertices (at position " +
                              std::to_string(i) + ")");
        teacher_rank_[v] = i;
      }
      for (vertex_id v = 0; v < view.vertex_count(); ++v)
        if (teacher_->device[v] >= view.device_count())
          throw invalid_input("doppler_policy: the teacher puts vertex " + std::to_string(v) + " on no device of the " +
                              std::to_string(view.device_count()));
    }
  }

  template <class View>
  void on_placed(const View&, vertex_id v, device_id d) {
    device_features_.row(d) += encoding_->features.row(static_cast<Eigen::Index>(v));
    ++device_count_[d];
    device_load_[d] += encoding_->compute[v];
    placed_load_ += encoding_->compute[v];
  }

  template <class View>
  [[nodiscard]] std::optional<list_choice> choose(const View& view) {
    check_deadline();
    const graph_encoding& enc = *encoding_;
    const double s = enc.scale;
    const std::size_t m = view.device_count();
    // Candidates: ready vertices that some device may take now.
    candidates_.clear();
    earliest_.clear();
    for (const vertex_id v : view.ready()) {
      seconds first = std::numeric_limits<seconds>::infinity();
      for (device_id d = 0; d < m; ++d) {
        tick(d);
        if (view.allowed(v, d) && view.fits(v, d)) first = std::min(first, view.earliest_start(v, d));
      }
      if (first == std::numeric_limits<seconds>::infinity()) continue;
      candidates_.push_back(v);
      earliest_.push_back(first);
    }
    if (candidates_.empty()) return std::nullopt;
    // Critical Path's vertex: largest bottom level, ties to the earlier in Kahn order.
    std::size_t teacher_vertex = 0;
    for (std::size_t i = 1; i < candidates_.size(); ++i) {
      const vertex_id a = candidates_[i], b = candidates_[teacher_vertex];
      if (enc.bottom[a] > enc.bottom[b] || (enc.bottom[a] == enc.bottom[b] && view.kahn_rank(a) < view.kahn_rank(b)))
        teacher_vertex = i;
    }
    const seconds now = view.now();
    const double n = static_cast<double>(view.vertex_count());
    const auto k = static_cast<Eigen::Index>(candidates_.size());
    const Eigen::Index e = enc.embedding.cols();
    constexpr auto f = static_cast<Eigen::Index>(vertex_feature_count);
    matrix select_x(k, static_cast<Eigen::Index>(select_input_size(weights_->rounds)));
    const seconds top_bottom = enc.bottom[candidates_[teacher_vertex]];
    // The teacher's vertex: the ready one it placed first (Critical Path's without a placement).
    std::size_t taught_vertex = teacher_vertex;
    if (teacher_ != nullptr)
      for (std::size_t i = 0; i < candidates_.size(); ++i)
        if (teacher_rank_[candidates_[i]] < teacher_rank_[candidates_[taught_vertex]]) taught_vertex = i;
    for (Eigen::Index i = 0; i < k; ++i) {
      const vertex_id v = candidates_[static_cast<std::size_t>(i)];
      const auto r = static_cast<Eigen::Index>(v);
      auto row = select_x.row(i);
      row.head(e) = enc.embedding.row(r);
      row.segment(e, f) = enc.bottom_path.row(r);
      row.segment(e + f, f) = enc.top_path.row(r);
      const Eigen::Index o = e + 2 * f;
      row[o] = (earliest_[static_cast<std::size_t>(i)] - now) / s;
      row[o + 1] = (enc.bottom[v] - top_bottom) / s;
      row[o + 2] = static_cast<std::size_t>(i) == taught_vertex ? 1.0 : 0.0;
      row[o + 3] = static_cast<double>(view.kahn_rank(v)) / n;
      row[o + 4] = static_cast<double>(view.placed_count()) / n;
      row[o + 5] = static_cast<std::size_t>(i) == teacher_vertex ? 1.0 : 0.0;
    }
    const vector select_scores = scores(weights_->select, select_x);
    const auto own_vertex = argmax(select_scores);
    std::size_t vertex_index = 0;
    switch (mode_) {
      case decoding::greedy:
        vertex_index = static_cast<std::size_t>(own_vertex);
        break;
      case decoding::sampled:
        vertex_index = static_cast<std::size_t>(draw(softmax(select_scores, temperature_)));
        break;
      case decoding::teacher:
        vertex_index = taught_vertex;
        break;
    }
    const vertex_id v = candidates_[vertex_index];

    // Devices for v.
    devices_.clear();
    starts_.clear();
    for (device_id d = 0; d < m; ++d) {
      tick(d);
      if (view.allowed(v, d) && view.fits(v, d)) {
        devices_.push_back(d);
        starts_.push_back(view.earliest_start(v, d));
      }
    }
    std::size_t teacher_device = 0;
    for (std::size_t i = 1; i < devices_.size(); ++i)
      if (starts_[i] < starts_[teacher_device]) teacher_device = i;
    const seconds first = starts_[teacher_device];
    // The teacher's device for v (the earliest start when that device cannot take v now).
    std::size_t taught_device = teacher_device;
    if (teacher_ != nullptr)
      for (std::size_t i = 0; i < devices_.size(); ++i)
        if (devices_[i] == teacher_->device[v]) taught_device = i;
    seconds input_bytes = 0;
    const auto pred = view.graph().predecessors(v);
    const auto in = view.graph().in_edges(v);
    for (const edge_id edge : in) input_bytes += static_cast<double>(view.model().edge_bytes(edge));
    const auto pk = static_cast<Eigen::Index>(devices_.size());
    matrix place_x(pk, static_cast<Eigen::Index>(place_input_size()));
    const auto vr = static_cast<Eigen::Index>(v);
    for (Eigen::Index i = 0; i < pk; ++i) {
      tick(static_cast<std::size_t>(i));
      const device_id d = devices_[static_cast<std::size_t>(i)];
      const seconds start = starts_[static_cast<std::size_t>(i)];
      auto row = place_x.row(i);
      row.head(f) = enc.features.row(vr);
      double local = 0;
      bool follows = false;
      for (std::size_t j = 0; j < pred.size(); ++j)
        if (view.device_of(pred[j]) == d) {
          local += static_cast<double>(view.model().edge_bytes(in[j]));
          follows = follows || view.last_on(d) == pred[j];
        }
      row[f] = (start - first) / s;
      row[f + 1] = static_cast<std::size_t>(i) == taught_device ? 1.0 : 0.0;
      row[f + 2] = (view.available_at(d) - now) / s;
      row[f + 3] = placed_load_ > 0 ? device_load_[d] / placed_load_ : 0.0;
      row[f + 4] = view.placed_count() > 0
                       ? static_cast<double>(device_count_[d]) / static_cast<double>(view.placed_count())
                       : 0.0;
      row[f + 5] = input_bytes > 0 ? local / input_bytes : 0.0;
      row[f + 6] = (start - now) / s;
      row[f + 7] = view.model().compute_time(v, d) / s;
      row[f + 8] = follows ? 1.0 : 0.0;
      const auto capacity = static_cast<double>(view.devices().capacity(d));
      row[f + 9] = capacity > 0 ? static_cast<double>(view.free_memory(d)) / capacity : 0.0;
      row[f + 10] = static_cast<std::size_t>(i) == teacher_device ? 1.0 : 0.0;
      if (device_count_[d] > 0) row.tail(f) = device_features_.row(d) / static_cast<double>(device_count_[d]);
      else row.tail(f).setZero();
    }
    const vector place_scores = scores(weights_->place, place_x);
    const auto own_device = argmax(place_scores);
    std::size_t device_index = 0;
    switch (mode_) {
      case decoding::greedy:
        device_index = static_cast<std::size_t>(own_device);
        break;
      case decoding::sampled:
        device_index = static_cast<std::size_t>(draw(softmax(place_scores, temperature_)));
        break;
      case decoding::teacher:
        device_index = taught_device;
        break;
    }
    if (trace_ != nullptr) {
      trace_->steps.push_back({std::move(select_x), static_cast<Eigen::Index>(vertex_index), std::move(place_x),
                               static_cast<Eigen::Index>(device_index),
                               static_cast<std::size_t>(own_vertex) == taught_vertex &&
                                   static_cast<std::size_t>(own_device) == taught_device});
    }
    return list_choice{v, devices_[device_index]};
  }

 private:
  // With a deadline, a step checks it every this many devices and scored rows, so that a step over
  // a million devices (seconds under a sanitizer) ends within a fraction of one.
  static constexpr std::size_t deadline_stride = 4096;
  void check_deadline() const {
    if (deadline_ && std::chrono::steady_clock::now() >= *deadline_) throw episode_deadline_passed{};
  }
  // Called for the i-th device or row of a loop: checks the deadline every deadline_stride of them.
  void tick(std::size_t i) const {
    if (deadline_ && i % deadline_stride == deadline_stride - 1) check_deadline();
  }
  // net.forward(x), in blocks of deadline_stride rows when there is a deadline.
  [[nodiscard]] vector scores(const mlp& net, const matrix& x) const {
    const auto stride = static_cast<Eigen::Index>(deadline_stride);
    if (!deadline_ || x.rows() <= stride) return net.forward(x);
    vector out(x.rows());
    for (Eigen::Index i = 0; i < x.rows(); i += stride) {
      check_deadline();
      const Eigen::Index rows = std::min(stride, x.rows() - i);
      out.segment(i, rows) = net.forward(x.middleRows(i, rows));
    }
    return out;
  }
  // Ties to the first candidate.
  [[nodiscard]] static Eigen::Index argmax(const vector& scores) {
    Eigen::Index best = 0;
    for (Eigen::Index i = 1; i < scores.size(); ++i)
      if (scores[i] > scores[best]) best = i;
    return best;
  }
  [[nodiscard]] Eigen::Index draw(const vector& p) {
    const double u = random_->unit();
    double sum = 0;
    for (Eigen::Index i = 0; i < p.size(); ++i) {
      sum += p[i];
      if (u < sum) return i;
    }
    return p.size() - 1;
  }

  const dual_policy* weights_;
  decoding mode_;
  detail::portable_random* random_;
  episode_trace* trace_;
  const graph_encoding* encoding_;
  std::optional<graph_encoding> own_;
  double temperature_;
  const placement* teacher_;
  std::vector<std::size_t> teacher_rank_;  // per vertex: its position in the teacher's order
  matrix device_features_;                 // per device: sum of the static features of the vertices on it
  std::vector<std::size_t> device_count_;
  std::vector<seconds> device_load_;
  seconds placed_load_ = 0;
  std::vector<vertex_id> candidates_;
  std::vector<seconds> earliest_, starts_;
  std::vector<device_id> devices_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

// --- weight files ---------------------------------------------------------------------------------
//
//   gantry-doppler-weights 1
//   rounds 2
//   select <inputs> <hidden>
//   <parameters, one per line>
//   place <inputs> <hidden>
//   <parameters, one per line>

inline void write_weights(std::ostream& out, const dual_policy& w) {
  out << "gantry-doppler-weights 1\nrounds " << w.rounds << '\n';
  out << std::setprecision(17);
  const auto head = [&](const char* name, const mlp& net) {
    out << name << ' ' << net.inputs() << ' ' << net.hidden() << '\n';
    for (Eigen::Index i = 0; i < net.parameters().size(); ++i) out << net.parameters()[i] << '\n';
  };
  head("select", w.select);
  head("place", w.place);
}

// Reads weights written by write_weights; `source` names the input in errors. Throws parse_error
// naming the source, line and what was wrong.
[[nodiscard]] inline dual_policy read_weights(std::istream& in, const std::string& source = "weights") {
  std::size_t line_number = 0;
  std::string line;
  const auto fail = [&](const std::string& what) -> void {
    throw parse_error(source + ":" + std::to_string(line_number) + ": " + what);
  };
  const auto next = [&](const char* expected) {
    if (!std::getline(in, line)) {
      ++line_number;
      fail(std::string("the file ends where ") + expected + " was expected");
    }
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
  };
  next("the header 'gantry-doppler-weights 1'");
  if (line != "gantry-doppler-weights 1")
    fail("expected the header 'gantry-doppler-weights 1', got '" + line.substr(0, 60) + "'");
  next("'rounds <n>'");
  dual_policy w;
  {
    std::istringstream fields(line);
    std::string key;
    long long rounds = -1;
    std::string rest;
    if (!(fields >> key >> rounds) || key != "rounds" || (fields >> rest) || rounds < 0 || rounds > 8)
      fail("expected 'rounds <n>' with n in 0..8, got '" + line.substr(0, 60) + "'");
    w.rounds = static_cast<unsigned>(rounds);
  }
  const auto head = [&](const char* name, std::size_t expected_inputs) {
    next((std::string("'") + name + " <inputs> <hidden>'").c_str());
    std::istringstream fields(line);
    std::string key, rest;
    long long inputs = -1, hidden = -1;
    if (!(fields >> key >> inputs >> hidden) || key != name || (fields >> rest))
      fail(std::string("expected '") + name + " <inputs> <hidden>', got '" + line.substr(0, 60) + "'");
    if (inputs != static_cast<long long>(expected_inputs))
      fail(std::string(name) + " takes " + std::to_string(expected_inputs) + " inputs with " +
           std::to_string(w.rounds) + " encoder rounds, the file says " + std::to_string(inputs));
    if (hidden < 1 || hidden > 4096)
      fail(std::string(name) + ": hidden must be in 1..4096, got " + std::to_string(hidden));
    mlp net(static_cast<std::size_t>(inputs), static_cast<std::size_t>(hidden));
    for (Eigen::Index i = 0; i < net.parameters().size(); ++i) {
      next((std::string("parameter ") + std::to_string(i + 1) + " of " + name).c_str());
      std::size_t used = 0;
      double value = 0;
      try {
        value = std::stod(line, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      while (used < line.size() && (line[used] == ' ' || line[used] == '\t')) ++used;
      if (line.empty() || used != line.size() || !std::isfinite(value))
        fail(std::string("parameter ") + std::to_string(i + 1) + " of " + name + " is not a finite number: '" +
             line.substr(0, 60) + "'");
      net.parameters()[i] = value;
    }
    return net;
  };
  w.select = head("select", select_input_size(w.rounds));
  w.place = head("place", place_input_size());
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") != std::string::npos) fail("unexpected text after the weights");
  }
  return w;
}

// Writes the weights to `path` atomically (io/atomic_file.hpp).
inline void save_weights(const std::filesystem::path& path, const dual_policy& w) {
  write_file_atomically(path, [&](std::ostream& out) { write_weights(out, w); });
}

// Reads weights from `path`; throws parse_error (bad content) or io_error (cannot open).
[[nodiscard]] inline dual_policy load_weights(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error("cannot open weights file '" + path.string() + "'");
  return read_weights(in, path.string());
}

}  // namespace gantry::learn
