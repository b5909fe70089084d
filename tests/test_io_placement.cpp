// The "gantry.placement" writer and reader: round trips (with and without a schedule summary,
// failed placements), mapping by name to a reordered cluster, and one message per bad input.
#include <gantry/graph/snapshot.hpp>
#include <gantry/io/json_placement.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/validate.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <filesystem>
#include <limits>
#include <string>

using namespace gantry;
namespace fs = std::filesystem;

namespace {

using chain = test::chain_schedule;
using test::scratch_directory;

std::string placement_error(const std::string& text, const graph& g, const cluster& c) {
  try {
    (void)read_placement_json(text, g, c, "p.json");
  } catch (const parse_error& e) {
    return e.what();
  }
  return "no error";
}

std::string doc(const std::string& placement, const std::string& rest = "") {
  return R"({"format": "gantry.placement", "version": 1, "placement": )" + placement + rest + "}";
}

}  // namespace

TEST_CASE("a placement with a schedule summary round-trips through a file") {
  chain t;
  const auto dir = fs::temp_directory_path() / ("gantry_test_io_placement_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_placement(dir / "p.json", t.g, t.devices, t.p,
                  {.algorithm = "m-topo", .schedule = &t.s, .metadata = {{"graph", "chain.json"}}});
  const placement_file back = read_placement(dir / "p.json", t.g, t.devices);
  fs::remove_all(dir);
  CHECK(back.algorithm == "m-topo");
  CHECK(back.placement.ok());
  CHECK(back.placement.outcome.message.empty());
  CHECK(back.placement.device == t.p.device);
  CHECK(back.placement.order == t.p.order);
  CHECK(back.placement.placement_time == 0.0125);
  REQUIRE(back.makespan.has_value());
  CHECK(*back.makespan == 4.5);
  CHECK(back.metadata == nlohmann::json{{"graph", "chain.json"}});

  const auto document = placement_to_json(t.g, t.devices, t.p, {.algorithm = "m-topo", .schedule = &t.s});
  CHECK(document["format"] == "gantry.placement");
  CHECK(document["devices"] == nlohmann::ordered_json{"gpu0", "gpu1"});
  CHECK(document["placement"][2] ==
        nlohmann::ordered_json{{"vertex", "c"}, {"device", "gpu1"}, {"start", 3.5}, {"finish", 4.5}});
  CHECK(document["bytes_moved"] == 1000);
  CHECK(document["transfers"] == 1);
  CHECK(document["device_summary"][0]["busy"] == 3.0);
  CHECK(document["device_summary"][1]["peak_memory"] == t.s.peak_memory[1]);
  CHECK(document["order"] == nlohmann::ordered_json{"a", "b", "c"});
}

TEST_CASE("names map to the ids of the cluster it is read against, whatever their order there") {
  chain t;
  const std::string text = placement_to_json_text(t.g, t.devices, t.p);
  const cluster reordered({{.name = "gpu1"}, {.name = "gpu0"}});
  const auto back = read_placement_json(text, t.g, reordered);
  CHECK(back.placement.device == std::vector<device_id>{1, 1, 0});
  CHECK(!back.makespan.has_value());
  CHECK(placement_error(text, t.g, cluster::uniform(2)) ==
        "p.json: /devices/0: unknown device \"gpu0\" (the cluster has no device of this name)");
}

TEST_CASE("a failed placement keeps its status, message and unplaced vertices") {
  chain t;
  placement failed;
  failed.outcome.code = status::out_of_memory;
  failed.outcome.message = "vertex 'b' needs 1000 B but gpu0 has 512 B free";
  failed.device = {0, no_device, no_device};
  failed.order = {0};
  const auto back =
      read_placement_json(placement_to_json_text(t.g, t.devices, failed, {.algorithm = "m-etf"}), t.g, t.devices);
  CHECK(back.placement.outcome.code == status::out_of_memory);
  CHECK(back.placement.outcome.message == failed.outcome.message);
  CHECK(back.placement.device == failed.device);
  CHECK(back.placement.order == failed.order);
  // Entries may also be left out of a failed placement.
  const auto partial =
      read_placement_json(doc(R"([{"vertex": "a", "device": "gpu1"}])", R"(, "status": "infeasible")"), t.g, t.devices);
  CHECK(partial.placement.outcome.code == status::infeasible);
  CHECK(partial.placement.device == std::vector<device_id>{1, no_device, no_device});
}

TEST_CASE("placement files: unknown names, missing and repeated vertices, bad status") {
  chain t;
  CHECK(placement_error(doc(R"([{"vertex": "a", "device": "gpu0"}, {"vertex": "x", "device": "gpu0"}])"), t.g,
                        t.devices) ==
        "p.json: /placement/1/vertex: unknown vertex \"x\" (the graph has no vertex of this name)");
  CHECK(placement_error(doc(R"([{"vertex": "a", "device": "gpu7"}])"), t.g, t.devices) ==
        "p.json: /placement/0/device: unknown device \"gpu7\" (the cluster has no device of this name)");
  CHECK(placement_error(doc(R"([{"vertex": "a", "device": "gpu0"}])"), t.g, t.devices) ==
        "p.json: /placement: 2 of the graph's 3 vertices are not placed: \"b\", \"c\"");
  CHECK(
      placement_error(
          doc(R"([{"vertex": "a", "device": "gpu0"}, {"vertex": "b", "device": "gpu0"}, {"vertex": "a", "device": "gpu1"}])"),
          t.g, t.devices) == "p.json: /placement/2/vertex: vertex \"a\" is placed twice (also at /placement/0)");
  CHECK(placement_error(doc(R"([{"vertex": "a"}])"), t.g, t.devices) ==
        "p.json: /placement/0: vertex \"a\" has no device, but the status is ok");
  CHECK(placement_error(doc(R"([{"device": "gpu0"}])"), t.g, t.devices) ==
        "p.json: /placement/0: missing field \"vertex\"");
  const std::string all =
      R"([{"vertex": "a", "device": "gpu0"}, {"vertex": "b", "device": "gpu0"}, {"vertex": "c", "device": "gpu1"}])";
  CHECK(placement_error(doc(all, R"(, "order": ["a", "b", "a"])"), t.g, t.devices) ==
        "p.json: /order/2: vertex \"a\" appears twice in the order (also at /order/0)");
  CHECK(placement_error(doc(all, R"(, "order": ["a", "q"])"), t.g, t.devices) ==
        "p.json: /order/1: unknown vertex \"q\" (the graph has no vertex of this name)");
  CHECK(
      placement_error(doc(all, R"(, "status": "done")"), t.g, t.devices) ==
      "p.json: /status: unknown status 'done' (expected ok, out_of_memory, over_capacity, infeasible or solver_error)");
  CHECK(placement_error(doc(all, R"(, "makespan": -1)"), t.g, t.devices) ==
        "p.json: /makespan: makespan must be a finite number of seconds >= 0, got number -1");
  CHECK(placement_error(doc(R"([{"vertex": "a", "devise": "gpu0"}])"), t.g, t.devices) ==
        "p.json: /placement/0/devise: unknown field (did you mean \"device\"?); a placement entry has vertex, device, "
        "start, "
        "finish; free-form data belongs under /metadata");
  CHECK(placement_error(doc(all, R"(, "oder": ["a", "b"])"), t.g, t.devices)
            .starts_with("p.json: /oder: unknown field (did you mean \"order\"?); a placement document has format, "));
  CHECK(placement_error(R"({"format": "gantry.graph", "version": 1, "placement": []})", t.g, t.devices) ==
        "p.json: /format: expected \"gantry.placement\", got string \"gantry.graph\" (this is not a gantry.placement "
        "file)");
  CHECK(placement_error(R"({"format": "gantry.placement", "version": 1})", t.g, t.devices) ==
        "p.json: (document): missing field \"placement\"");
}

TEST_CASE("a placement file carries its cluster, so it can be simulated without the cluster file") {
  chain t;
  t.devices.set_link(0, 1, {.latency = 1e-3, .bandwidth = 5e9});
  const auto dir = fs::temp_directory_path() / ("gantry_test_io_placement_cluster_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_placement(dir / "p.json.gz", t.g, t.devices, t.p, {.algorithm = "m-sct"});
  const cluster c = read_placement_cluster(dir / "p.json.gz");
  fs::remove_all(dir);
  REQUIRE(c.device_count() == 2);
  CHECK(c[1].name == "gpu1");
  CHECK(c[1].kind == "gpu");
  CHECK(c.default_link() == t.devices.default_link());
  CHECK(c.link(0, 1) == link_model{.latency = 1e-3, .bandwidth = 5e9});
  CHECK(!c.has_own_link(1, 0));

  const auto error = [](const std::string& text) {
    try {
      (void)placement_cluster_from_json(nlohmann::json::parse(text), "p.json");
    } catch (const parse_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error(doc("[]")) == "p.json: (document): missing field \"cluster\"");
  CHECK(error(doc("[]", R"(, "cluster": {"format": "gantry.cluster", "version": 1, "devices": [{"name": 3}]})")) ==
        "p.json: /cluster/devices/0/name: expected a string, got number 3");
  CHECK(error(doc("[]", R"(, "cluster": [])")) == "p.json: /cluster: expected an object, got array []");
}

TEST_CASE("the writer and reader refuse graphs and placements that names cannot describe") {
  chain t;
  graph twins;
  twins.add_vertex("x");
  twins.add_vertex("x");
  CHECK_THROWS_WITH_AS(
      (void)read_placement_json(doc("[]"), twins, t.devices),
      "placement_from_json: vertices 0 and 1 are both named 'x' (a placement file refers to vertices by name)",
      invalid_input);
  placement short_placement;
  short_placement.device = {0};
  CHECK_THROWS_WITH_AS((void)placement_to_json(t.g, t.devices, short_placement),
                       "placement_to_json: the placement has 1 devices but the graph has 3 vertices", invalid_input);
  placement off_cluster = t.p;
  off_cluster.device[2] = 5;
  CHECK_THROWS_WITH_AS((void)placement_to_json(t.g, t.devices, off_cluster),
                       "placement_to_json: vertex 'c' is on device 5 but the cluster has 2", invalid_input);
}

TEST_CASE("placements nested deep, failed, or with a short order are refused naming the file and field") {
  const chain ch;
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  CHECK(placement_error(deep, ch.g, ch.devices).find("p.json: line 1, column 257") == 0);
  CHECK(placement_error(doc(R"([{"vertex": )" + deep + "}])"), ch.g, ch.devices).find("nest deeper than 256") !=
        std::string::npos);

  // A failed placement reads (its status and unplaced vertices are kept) but cannot be simulated.
  placement failed;
  failed.outcome.code = status::out_of_memory;
  failed.outcome.message = "no room";
  failed.device.assign(ch.g.vertex_count(), no_device);
  failed.device[0] = 0;
  const auto file =
      read_placement_json(placement_to_json_text(ch.g, ch.devices, failed), ch.g, ch.devices, "failed.json");
  CHECK(file.placement.device[1] == no_device);
  CHECK_THROWS_WITH_AS(require_complete_placement(file, "failed.json"),
                       doctest::Contains("failed.json: /status: the placement failed (out_of_memory: no room)"),
                       parse_error);

  // With status ok, an order that lists some vertices only is refused where it is read.
  placement ok = ch.p;
  ok.order.resize(1);
  CHECK(placement_error(placement_to_json_text(ch.g, ch.devices, ok), ch.g, ch.devices)
            .find("p.json: /order: lists 1 of the graph's " + std::to_string(ch.g.vertex_count()) + " vertices") == 0);
  CHECK_NOTHROW(require_complete_placement(
      read_placement_json(placement_to_json_text(ch.g, ch.devices, ch.p), ch.g, ch.devices), "p.json"));
}

TEST_CASE("a schedule whose makespan overflowed is refused naming the file to be written") {
  chain ch;
  ch.s.makespan = std::numeric_limits<double>::infinity();
  scratch_directory dir("io_placement_inf");
  const fs::path target = dir.path / "p.json";
  const std::string expected = "cannot write '" + target.string() + "': placement_to_json: makespan is not finite";
  CHECK_THROWS_WITH_AS(write_placement(target, ch.g, ch.devices, ch.p, {.schedule = &ch.s}),
                       doctest::Contains(expected.c_str()), invalid_input);
  CHECK(dir.entries() == 0);
}

TEST_CASE("the placement text is the document placement_to_json gives, written without the tree") {
  // Names that need escapes or are not ASCII, a vertex without a device, an order that leaves some
  // out, times of every notation; with and without the schedule.
  graph g;
  const char* names[] = {"plain", "with \"quote\"", "back\\slash", "tab\there", "caf\xc3\xa9", "\xe6\x97\xa5"};
  for (std::size_t v = 0; v < 300; ++v) g.add_vertex(std::string(names[v % 6]) + std::to_string(v));
  const cluster devices = cluster::uniform(3, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e9});
  placement p;
  p.placement_time = 0.125;
  p.outcome.message = "said \"so\"";
  for (vertex_id v = 0; v < 300; ++v) {
    p.device.push_back(v == 7 ? no_device : v % 3);
    if (v % 5 != 0) p.order.push_back(299 - v);
  }
  schedule s;
  s.makespan = 2.5;
  for (vertex_id v = 0; v < 300; ++v) {
    const double scale[] = {1e-9, 1e-5, 1e-3, 1.0, 1e9, 3e16};
    s.start.push_back(v * scale[v % 6] / 7);
    s.finish.push_back((v + 1) * scale[v % 6] / 3);
  }
  using json = nlohmann::ordered_json;
  for (const schedule* with : {static_cast<const schedule*>(nullptr), static_cast<const schedule*>(&s)}) {
    CAPTURE(with != nullptr);
    const placement_json_options options{.algorithm = "test", .schedule = with};
    const std::string text = placement_to_json_text(g, devices, p, options);
    const std::string tree = detail::document_text(placement_to_json(g, devices, p, options), "test");
    CHECK(json::parse(text) == json::parse(tree));
    if (with == nullptr) CHECK(text == tree);  // no times in the arrays: the same bytes
  }
  // Nothing placed, nothing ordered: empty arrays, as the tree writes them.
  graph none;
  CHECK(placement_to_json_text(none, devices, placement{}) ==
        detail::document_text(placement_to_json(none, devices, placement{}), "test"));
  // The same refusals as the tree's writer: a time that is not finite, a name that is not UTF-8.
  schedule bad = s;
  bad.finish[4] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS((void)placement_to_json_text(g, devices, p, {.schedule = &bad}),
                       doctest::Contains("placement_to_json: finish of 'caf\xc3\xa9"
                                         "4' is not finite"),
                       invalid_input);
  graph broken;
  broken.add_vertex("ok");
  broken.add_vertex("bad\xff");
  placement two;
  two.device = {0, 1};
  CHECK_THROWS_AS((void)placement_to_json_text(broken, devices, two), invalid_input);
}

TEST_CASE("the placement text writer refuses twins as the tree's writer does") {
  test::chain_schedule t;
  graph twins;
  twins.add_vertex("x");
  twins.add_vertex("x");
  placement p;
  p.device = {0, 1};
  const char* message =
      "placement_to_json: vertices 0 and 1 are both named 'x' (a placement file refers to vertices by name)";
  CHECK_THROWS_WITH_AS((void)placement_to_json_text(twins, t.devices, p), message, invalid_input);
  CHECK_THROWS_WITH_AS((void)placement_to_json(twins, t.devices, p), message, invalid_input);
}
