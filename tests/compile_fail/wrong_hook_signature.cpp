// Must not compile: on_placed without the device cannot be called as the hook, so the engine would
// never call it. tests/CMakeLists.txt compiles this file and expects the engine's message.
#include <gantry/place/list_scheduler.hpp>

#include <optional>

struct wrong_signature_policy {
  template <class View>
  void on_placed(const View&, gantry::vertex_id) {}
  template <class View>
  std::optional<gantry::list_choice> choose(const View&) {
    return std::nullopt;
  }
};

int main() {
  gantry::graph g;
  g.add_vertex("a", 1.0);
  const auto c = gantry::cluster::uniform(1);
  const gantry::graph_model model(g, c);
  return gantry::list_schedule(g, model, c, wrong_signature_policy{}).ok() ? 0 : 1;
}
