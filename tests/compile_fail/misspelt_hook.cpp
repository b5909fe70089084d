// Must not compile: a policy with on_place (for on_placed) would never be told of a placement.
// tests/CMakeLists.txt compiles this file and expects the engine's message.
#include <gantry/place/list_scheduler.hpp>

#include <optional>

struct misspelt_policy {
  template <class View>
  void on_place(const View&, gantry::vertex_id, gantry::device_id) {}
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
  return gantry::list_schedule(g, model, c, misspelt_policy{}).ok() ? 0 : 1;
}
