// The one field table of graph files (io/graph_schema.hpp): every field it lists survives JSON
// (both writers, both readers) and DOT, fields at their default are left out, required fields
// are required, and every field is documented in docs/format.md.
#include <gantry/io/graph_schema.hpp>
#include <gantry/io/import_dot.hpp>
#include <gantry/io/json_graph.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

using namespace gantry;

namespace {

// Vertex 0 "plain" has only a name; vertex 1 "full" has every field of the table set to a value
// other than its default, chosen by the field's type, so a field added to the table is covered
// without changing this test.
graph every_field_set() {
  graph g;
  const vertex_id plain = g.add_vertex("plain");
  const vertex_id full = g.add_vertex("full");
  double number = 1.5;
  byte_count bytes = 1000;
  for (const vertex_field& f : vertex_fields) {
    switch (f.type) {
      case field_type::name:
        break;
      case field_type::text:
        g[full].*f.text = std::string(f.key) + " \"quoted\" \\ \xC3\xBC";
        break;
      case field_type::time:
      case field_type::number:
        g[full].*f.real = (number *= 3) * 1e-4;
        break;
      case field_type::bytes:
        g[full].*f.whole = (bytes += 24);
        break;
      case field_type::vertex_reference:
        g.set_forward(full, plain);
        break;
    }
    if (f.per_kind) g.set_compute(full, "gpu", 2.5e-5);
  }
  g.add_edge(plain, full, 4096);
  return g;
}

void require_every_field_same(const graph& a, const graph& b) {
  REQUIRE(a.vertex_count() == b.vertex_count());
  REQUIRE(a.edge_count() == b.edge_count());
  for (vertex_id v = 0; v < a.vertex_count(); ++v)
    for (const vertex_field& f : vertex_fields) {
      CAPTURE(v);
      CAPTURE(f.key);
      CHECK(same_field(a, v, b, v, f));
    }
  for (edge_id e = 0; e < a.edge_count(); ++e) {
    CHECK(a.source(e) == b.source(e));
    CHECK(a.target(e) == b.target(e));
    CHECK(a.bytes(e) == b.bytes(e));
  }
}

}  // namespace

TEST_CASE("the field table names each vertex property once, and the test graph sets every field") {
  const graph g = every_field_set();
  for (std::size_t i = 0; i < vertex_field_count; ++i) {
    CAPTURE(vertex_fields[i].key);
    CHECK(find_vertex_field(vertex_fields[i].key) == i);
    if (vertex_fields[i].type != field_type::name) {
      CHECK(at_default(g, 0, vertex_fields[i]));
      CHECK_FALSE(at_default(g, 1, vertex_fields[i]));
    }
  }
  CHECK(find_vertex_field("colour") == vertex_field_count);
  CHECK(find_edge_field("bytes") == edge_bytes_field);
}

TEST_CASE("every field survives the JSON text writer and the fast reader") {
  const graph g = every_field_set();
  const std::string text = graph_to_json_text(g);
  require_every_field_same(g, parse_graph_file(text, "every.json").graph);
}

TEST_CASE("every field survives the JSON tree writer and the checked reader") {
  const graph g = every_field_set();
  const auto document = graph_to_json(g);
  CHECK(document.dump() == nlohmann::ordered_json::parse(graph_to_json_text(g)).dump());  // one layout
  require_every_field_same(g, graph_from_json(nlohmann::json::parse(document.dump()), "every.json").graph);
}

TEST_CASE("every field survives the DOT writer and reader") {
  const graph g = every_field_set();
  const std::string text = write_graph_dot(g);
  require_every_field_same(g, parse_graph_dot(text, "every.dot"));
}

TEST_CASE("fields at their default value are left out; always-written fields are not") {
  graph g;
  (void)g.add_vertex("only");
  const auto document = graph_to_json(g);
  const auto& vertex = document["vertices"][0];
  for (const vertex_field& f : vertex_fields) {
    CAPTURE(f.key);
    CHECK(vertex.contains(std::string(f.key)) == f.always_written);
  }
  // DOT: the name is the node ID, the rest as attributes.
  const std::string dot = write_graph_dot(g);
  for (const vertex_field& f : vertex_fields)
    if (f.type != field_type::name) {
      CAPTURE(f.key);
      CHECK((dot.find(std::string(f.key) + "=") != std::string::npos) == f.always_written);
    }
}

TEST_CASE("a required field that is missing is refused, naming where") {
  for (const vertex_field& f : vertex_fields) {
    if (!f.required) continue;
    CAPTURE(f.key);
    nlohmann::json vertex = {{"name", "a"}, {"compute", 1}};
    vertex.erase(std::string(f.key));
    const nlohmann::json document = {{"format", "gantry.graph"}, {"version", 1}, {"vertices", {vertex}}};
    try {
      (void)parse_graph_file(document.dump(), "g.json");
      FAIL("no error for a vertex without " << f.key);
    } catch (const parse_error& e) {
      const std::string message = e.what();
      CHECK(message.find("g.json") == 0);
      CHECK(message.find("/vertices/0") != std::string::npos);
      CHECK(message.find(std::string(f.key)) != std::string::npos);
    }
  }
}

TEST_CASE("every vertex and edge field is documented in docs/format.md") {
  std::ifstream in(std::string(GANTRY_SOURCE_DIR) + "/docs/format.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (const vertex_field& f : vertex_fields) {
    CAPTURE(f.key);
    CHECK(doc.find("`" + std::string(f.key) + "`") != std::string::npos);
  }
  for (const edge_field& f : edge_fields) {
    CAPTURE(f.key);
    CHECK(doc.find("`" + std::string(f.key) + "`") != std::string::npos);
  }
}
