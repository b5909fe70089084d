// The "gantry.cluster" reader and writer: round trips with per-pair links and every mode, the
// example files, and one message per kind of bad input.
#include <gantry/io/json_cluster.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <string>

using namespace gantry;
namespace fs = std::filesystem;

namespace {

void require_same_cluster(const cluster& a, const cluster& b) {
  REQUIRE(a.device_count() == b.device_count());
  CHECK(a.comm() == b.comm());
  CHECK(a.default_link() == b.default_link());
  for (device_id d = 0; d < a.device_count(); ++d) {
    CHECK(a[d].name == b[d].name);
    CHECK(a[d].kind == b[d].kind);
    CHECK(a[d].capacity == b[d].capacity);
    CHECK(a[d].speed == b[d].speed);
    for (device_id e = 0; e < a.device_count(); ++e) {
      CHECK(a.has_own_link(d, e) == b.has_own_link(d, e));
      CHECK(a.link(d, e) == b.link(d, e));
    }
  }
}

std::string cluster_error(const std::string& text) {
  try {
    (void)read_cluster_json(text, "c.json");
  } catch (const parse_error& e) {
    return e.what();
  }
  return "no error";
}

std::string doc(const std::string& devices, const std::string& rest = "") {
  return R"({"format": "gantry.cluster", "version": 1, "devices": )" + devices + rest + "}";
}

const fs::path clusters = fs::path(GANTRY_SOURCE_DIR) / "examples" / "clusters";

}  // namespace

TEST_CASE("a cluster with kinds, speeds, memory, pair links and a mode round-trips exactly") {
  cluster c({{.name = "cpu", .kind = "cpu", .capacity = 64ull << 30, .speed = 0.25},
             {.name = "gpu \"0\"", .kind = "gpu", .capacity = 16ull << 30, .speed = 1.0},
             {.name = "gpu1", .kind = "gpu", .capacity = unlimited_memory, .speed = 1.0 / 3.0}},
            {.latency = 1e-5, .bandwidth = 1.2e10}, comm_mode::duplex);
  c.set_link(1, 2, {.latency = 5e-6, .bandwidth = 2.4e10});
  c.set_link(2, 1, {.latency = 0, .bandwidth = std::numeric_limits<double>::infinity()});
  const auto dir = fs::temp_directory_path() / ("gantry_test_io_cluster_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_cluster(dir / "c.json", c);
  require_same_cluster(read_cluster(dir / "c.json"), c);
  write_cluster(dir / "c.json.gz", c);
  require_same_cluster(read_cluster(dir / "c.json.gz"), c);
  fs::remove_all(dir);

  for (const comm_mode mode : {comm_mode::parallel, comm_mode::sequential, comm_mode::duplex}) {
    const cluster u = cluster::uniform(2, 1 << 20, {}, mode);
    require_same_cluster(read_cluster_json(cluster_to_json_text(u)), u);
  }
}

TEST_CASE("the example clusters read with their links") {
  const cluster four = read_cluster(clusters / "4gpu.json");
  REQUIRE(four.device_count() == 4);
  CHECK(four.comm() == comm_mode::parallel);
  CHECK(four[2].name == "gpu2");
  CHECK(four[2].kind == "gpu");
  CHECK(four.capacity(3) == 16ull << 30);
  CHECK(four.link(0, 1).bandwidth == 2.4e10);
  CHECK(four.link(0, 2).bandwidth == 1.2e10);
  CHECK(four.link(3, 2).latency == 5e-6);
  CHECK(four.has_own_link(1, 0));
  CHECK(!four.has_own_link(1, 2));

  const cluster mixed = read_cluster(clusters / "cpu_2gpu.json");
  REQUIRE(mixed.device_count() == 3);
  CHECK(mixed.comm() == comm_mode::sequential);
  CHECK(mixed[0].kind == "cpu");
  CHECK(mixed.capacity(1) == 8ull << 30);
  CHECK(mixed.default_link().latency == doctest::Approx(15e-6));
  CHECK(mixed.default_link().bandwidth == doctest::Approx(12e9));
  CHECK(mixed.link(1, 2).bandwidth == doctest::Approx(24e9));
}

TEST_CASE("defaults: kind default, unlimited memory, speed 1, free default link, parallel mode") {
  const cluster c = read_cluster_json(doc(R"([{"name": "a"}, {"name": "b", "memory": "unlimited"}])"));
  CHECK(c.comm() == comm_mode::parallel);
  CHECK(c[0].kind == "default");
  CHECK(c.capacity(0) == unlimited_memory);
  CHECK(c.capacity(1) == unlimited_memory);
  CHECK(c[0].speed == 1.0);
  CHECK(c.transfer_time(1 << 30, 0, 1) == 0.0);
  // A pair link takes the default link's values for the fields it leaves out.
  const cluster p = read_cluster_json(doc(
      R"([{"name": "a", "memory": 1024}, {"name": "b"}])",
      R"(, "link": {"latency": 0.5, "bandwidth": 100}, "links": [{"from": "a", "to": "b", "bandwidth": "1 kB/s"}])"));
  CHECK(p.capacity(0) == 1024);
  CHECK(p.link(0, 1) == link_model{.latency = 0.5, .bandwidth = 1000});
  CHECK(p.link(1, 0) == link_model{.latency = 0.5, .bandwidth = 100});
}

TEST_CASE("cluster documents: header, missing and mistyped fields") {
  CHECK(
      cluster_error(R"({"format": "gantry.graph", "version": 1, "devices": []})") ==
      "c.json: /format: expected \"gantry.cluster\", got string \"gantry.graph\" (this is not a gantry.cluster file)");
  CHECK(cluster_error(R"({"format": "gantry.cluster", "version": 3, "devices": []})") ==
        "c.json: /version: unsupported version 3 (this reader reads version 1)");
  CHECK(cluster_error(R"({"format": "gantry.cluster", "version": 1})") ==
        "c.json: (document): missing field \"devices\"");
  CHECK(cluster_error(doc("[]")) == "c.json: /devices: a cluster needs at least one device");
  CHECK(cluster_error(doc(R"([{"kind": "gpu"}])")) == "c.json: /devices/0: missing field \"name\"");
  CHECK(cluster_error(doc(R"([{"name": "a", "kind": 1}])")) ==
        "c.json: /devices/0/kind: expected a string, got number 1");
  CHECK(cluster_error(doc(R"([{"name": "a", "speed": "fast"}])")) ==
        "c.json: /devices/0/speed: expected a number, got string \"fast\"");
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "link": 5)")) ==
        "c.json: /link: expected an object, got number 5");
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "links": {})")) ==
        "c.json: /links: expected an array, got object {}");
  CHECK(cluster_error("{\"format\": \"gantry.cluster\",\n \"version\": 1,\n \"devices\": [}") ==
        "c.json: line 3, column 14 (byte offset 57): JSON syntax error: syntax error while parsing value - unexpected "
        "'}'; "
        "expected '[', '{', or a literal");
}

TEST_CASE("cluster values: memory, speed, latency, bandwidth and mode") {
  CHECK(cluster_error(doc(R"([{"name": "a", "memory": "16 GiBs"}])")) ==
        "c.json: /devices/0/memory: invalid byte count '16 GiBs': unknown unit 'GiBs' (use B, kB, MB, GB, TB, KiB, "
        "MiB, GiB, TiB, ...)");
  CHECK(cluster_error(doc(R"([{"name": "a", "memory": -16}])")) ==
        "c.json: /devices/0/memory: a byte count must be a non-negative integer, got -16");
  CHECK(cluster_error(doc(R"([{"name": "a", "speed": 0}])")) ==
        "c.json: /devices/0/speed: speed must be a finite number > 0, got number 0");
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "link": {"latency": -1e-5})")) ==
        "c.json: /link/latency: latency must be a finite number of seconds >= 0, got number -1e-05");
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "link": {"bandwidth": 0})")) ==
        "c.json: /link/bandwidth: bandwidth must be > 0 bytes per second, got number 0");
  // So small that the largest transfer would take longer than a double holds: the run's times would
  // be infinite, and the error would surface far from the file.
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "link": {"bandwidth": 5e-324})")) ==
        "c.json: /link/bandwidth: bandwidth must be at least 5.13e-290 bytes per second, got number 5e-324");
  CHECK(cluster_error(doc(R"([{"name": "a"}, {"name": "b"}])",
                          R"(, "domains": [{"name": "x", "devices": ["a", "b"], "bandwidth": 1e-300}])")) ==
        "c.json: /domains/0/bandwidth: bandwidth must be at least 5.13e-290 bytes per second, got number 1e-300");
  CHECK_THROWS_WITH_AS((void)cluster::uniform(2, unlimited_memory, {.latency = 0, .bandwidth = 1e-300}),
                       "default link: bandwidth must be at least 5.13e-290 bytes per second, got 1e-300",
                       invalid_input);
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "link": {"bandwidth": "fast"})")) ==
        "c.json: /link/bandwidth: invalid bandwidth 'fast': expected a number of bytes per second, such as 12 GB/s");
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "communication": "broadcast")")) ==
        "c.json: /communication: unknown mode 'broadcast' (expected parallel, sequential or duplex)");
}

TEST_CASE("a cluster's unknown keys are refused, naming the key and the field it most likely meant") {
  CHECK(cluster_error(doc(R"([{"name": "a", "memmory": "16GiB"}])")) ==
        "c.json: /devices/0/memmory: unknown field (did you mean \"memory\"?); a device has name, kind, memory, speed, "
        "node; "
        "free-form data belongs under /metadata");
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "link": {"latency": 0, "bandwith": "1 GB/s"})")) ==
        "c.json: /link/bandwith: unknown field (did you mean \"bandwidth\"?); a link has latency, bandwidth; free-form "
        "data "
        "belongs under /metadata");
  CHECK(
      cluster_error(doc(R"([{"name": "a"}, {"name": "b"}])", R"(, "links": [{"from": "a", "to": "b", "speed": 2}])")) ==
      "c.json: /links/0/speed: unknown field; a link has from, to, latency, bandwidth; free-form data belongs under "
      "/metadata");
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "domains": [{"name": "d", "devices": ["a"], "core": 2}])")) ==
        "c.json: /domains/0/core: unknown field (did you mean \"cores\"?); a bandwidth domain has name, devices, "
        "bandwidth, "
        "copies, cores; free-form data belongs under /metadata");
  CHECK(cluster_error(doc(R"([{"name": "a"}])", R"(, "comunication": "sequential")"))
            .starts_with("c.json: /comunication: unknown field (did you mean \"communication\"?); a cluster document "
                         "has format, version, "));
  // Free-form data under /metadata is read past.
  CHECK(
      read_cluster_json(doc(R"([{"name": "a"}])", R"(, "metadata": {"machine": "h200", "links": 3})")).device_count() ==
      1);
}

TEST_CASE("device names must be unique and links must join two known, different devices once") {
  CHECK(cluster_error(doc(R"([{"name": "a"}, {"name": "b"}, {"name": "a"}])")) ==
        "c.json: /devices/2/name: duplicate device name \"a\" (also at /devices/0)");
  CHECK(cluster_error(doc(R"([{"name": "a"}, {"name": "b"}])", R"(, "links": [{"from": "a", "to": "c"}])")) ==
        "c.json: /links/0/to: unknown device \"c\" (no device has this name)");
  CHECK(cluster_error(doc(R"([{"name": "a"}, {"name": "b"}])", R"(, "links": [{"to": "a"}])")) ==
        "c.json: /links/0: missing field \"from\"");
  CHECK(cluster_error(doc(R"([{"name": "a"}, {"name": "b"}])", R"(, "links": [{"from": "a", "to": "a"}])")) ==
        "c.json: /links/0: a link joins two different devices, but both ends are \"a\"");
  CHECK(cluster_error(
            doc(R"([{"name": "a"}, {"name": "b"}])",
                R"(, "links": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}, {"from": "a", "to": "b"}])")) ==
        "c.json: /links/2: a second link from \"a\" to \"b\" (the first is /links/0)");
}

TEST_CASE("the writer refuses clusters a file cannot describe") {
  CHECK_THROWS_WITH_AS((void)cluster_to_json(cluster({{.name = "x"}, {.name = "x"}})),
                       "cluster_to_json: devices 0 and 1 are both named 'x'", invalid_input);
  CHECK_THROWS_WITH_AS((void)cluster_to_json(cluster({{.name = ""}})), "cluster_to_json: device 0 has no name",
                       invalid_input);
}

TEST_CASE("a cluster nested 100,000 deep is refused with the depth") {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  CHECK(cluster_error(deep).find(
            "c.json: line 1, column 257 (byte offset 256): arrays and objects nest deeper than 256") == 0);
  CHECK(cluster_error(doc(R"([{"name": )" + deep + "}]")).find("nest deeper") != std::string::npos);
}

TEST_CASE("20,000 devices with one explicit link read, write and read back with one link") {
  std::string devices = "[";
  for (int d = 0; d < 20'000; ++d) devices += (d ? ",{\"name\":\"g" : "{\"name\":\"g") + std::to_string(d) + "\"}";
  devices += "]";
  const cluster c =
      read_cluster_json(doc(devices, R"(, "links": [{"from": "g19999", "to": "g0", "bandwidth": 5}])"), "c.json");
  CHECK(c.device_count() == 20'000);
  CHECK(c.own_link_count() == 1);
  CHECK(c.link(19'999, 0).bandwidth == 5);
  const cluster back = read_cluster_json(cluster_to_json_text(c), "back.json");
  CHECK(back.own_link_count() == 1);
  CHECK(back.link(19'999, 0).bandwidth == 5);
  CHECK(back.find("g12345") == device_id{12'345});
}
