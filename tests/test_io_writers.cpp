// DOT, Chrome trace and SVG Gantt writers: output that parses (the trace with nlohmann, the SVG
// with a strict little XML checker, the DOT with a quote and brace checker), names escaped so
// they come back exactly, overlapping transfers on separate trace threads, and a 100k-vertex
// chart whose drawn detail stays bounded.
#include <gantry/workloads/random_dag.hpp>
#include <gantry/graph/snapshot.hpp>
#include <gantry/io/chrome_trace.hpp>
#include <gantry/io/dot.hpp>
#include <gantry/io/svg_gantt.hpp>
#include <gantry/model/model.hpp>
#include <gantry/schedule/memory_profile.hpp>
#include <gantry/schedule/validate.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace gantry;

namespace {

const std::string name_a = "a \"quoted\" <tag> & \\ back";
const std::string name_b = "b\nnewline \xC3\xBCn\xC3\xAF \xE2\x9C\x93";
const std::string name_c = "c'apos";

// The chain of tests/support.hpp with names that need escaping in every format.
struct chain : test::chain_schedule {
  chain() : chain_schedule({name_a, name_b, name_c}, {"gpu<0>", "gpu&1"}, "aten.<op>") {}
};

// A valid schedule of g on m devices of `c` (parallel transfers): vertex v on device
// v % m, in id order (ids of a layered DAG are topological), each cross-device edge sent when its
// source finishes.
schedule round_robin_schedule(const graph& g, const cluster& c) {
  const std::size_t n = g.vertex_count(), m = c.device_count();
  const graph_model model(g, c);
  const csr_graph s_graph = snapshot(g);
  schedule s;
  s.device.resize(n);
  s.start.resize(n);
  s.finish.resize(n);
  std::vector<seconds> device_free(m, 0);
  for (vertex_id v = 0; v < n; ++v) {
    const auto d = static_cast<device_id>(v % m);
    s.device[v] = d;
    seconds ready = device_free[d];
    for (const edge_id e : s_graph.in_edges(v)) {
      const vertex_id u = s_graph.source(e);
      if (s.device[u] == d) {
        ready = std::max(ready, s.finish[u]);
      } else {
        const seconds arrive = s.finish[u] + model.transfer_time(e, s.device[u], d);
        s.transfers.push_back({.tensor = u,
                               .edge = e,
                               .from = s.device[u],
                               .to = d,
                               .start = s.finish[u],
                               .finish = arrive,
                               .bytes = g.bytes(e)});
        ready = std::max(ready, arrive);
      }
    }
    s.start[v] = ready;
    s.finish[v] = ready + model.compute_time(v, d);
    device_free[d] = s.finish[v];
  }
  summarize(s, s_graph, model, m);
  return s;
}

// A strict enough XML check: tags balance, attributes are quoted, '<' never appears in text or
// attribute values, '&' only starts a known entity, no control characters. Returns "" or why not.
std::string xml_problem(const std::string& text, std::size_t& elements) {
  std::vector<std::string> open;
  elements = 0;
  const auto entity_ok = [&](std::size_t at) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
      if (text.compare(at, std::char_traits<char>::length(e), e) == 0) return true;
    if (text.compare(at, 2, "&#") == 0) {
      std::size_t k = at + 2;
      while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
      return k > at + 2 && k < text.size() && text[k] == ';';
    }
    return false;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') return "control character at " + std::to_string(i);
    if (ch == '&' && !entity_ok(i)) return "bare & at " + std::to_string(i);
    if (ch == '>' && open.empty() && i + 1 < text.size()) return "text outside the root at " + std::to_string(i);
    if (ch != '<') {
      ++i;
      continue;
    }
    if (text.compare(i, 2, "<?") == 0) {
      const auto end = text.find("?>", i);
      if (end == std::string::npos) return "unterminated declaration";
      i = end + 2;
      continue;
    }
    const bool closing = text.compare(i, 2, "</") == 0;
    std::size_t k = i + (closing ? 2 : 1);
    const std::size_t name_begin = k;
    while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '-' || text[k] == ':'))
      ++k;
    const std::string tag = text.substr(name_begin, k - name_begin);
    if (tag.empty()) return "empty tag name at " + std::to_string(i);
    bool self_closing = false;
    while (true) {
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      if (k >= text.size()) return "unterminated tag " + tag;
      if (text[k] == '>') break;
      if (text.compare(k, 2, "/>") == 0) {
        self_closing = true;
        ++k;
        break;
      }
      if (closing) return "attribute in closing tag " + tag;
      const std::size_t attribute_begin = k;
      while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '-' || text[k] == ':'))
        ++k;
      if (k == attribute_begin || k + 1 >= text.size() || text[k] != '=' || text[k + 1] != '"')
        return "unquoted attribute in " + tag + " at " + std::to_string(k);
      const auto end = text.find('"', k + 2);
      if (end == std::string::npos) return "unterminated attribute in " + tag;
      for (std::size_t a = k + 2; a < end; ++a) {
        if (text[a] == '<') return "'<' in an attribute of " + tag;
        if (text[a] == '&' && !entity_ok(a)) return "bare & in an attribute of " + tag;
      }
      k = end + 1;
    }
    if (closing) {
      if (open.empty() || open.back() != tag)
        return "</" + tag + "> does not close <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
    } else {
      ++elements;
      if (!self_closing) open.push_back(tag);
    }
    i = k + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return "";
}

// Quotes and braces of DOT text: strings end on the line they start, braces balance outside them.
std::string dot_problem(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') ++i;
      else if (ch == '"') in_string = false;
      else if (ch == '\n') return "newline inside a string at " + std::to_string(i);
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '{') {
      ++depth;
    } else if (ch == '}') {
      if (--depth < 0) return "unbalanced } at " + std::to_string(i);
    }
  }
  if (in_string) return "unterminated string";
  return depth == 0 ? "" : "unbalanced {";
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("DOT: names escaped, times in labels, vertices coloured by device with a legend") {
  chain t;
  const std::string plain = to_dot(t.g);
  CHECK(dot_problem(plain).empty());
  CHECK(plain.starts_with("digraph \"gantry\" {\n"));
  CHECK(plain.find("label=\"a \\\"quoted\\\" <tag> & \\\\ back\\n1.00 s\"") != std::string::npos);
  CHECK(plain.find("label=\"b\\nnewline \xC3\xBCn\xC3\xAF \xE2\x9C\x93\\n2.00 s\"") != std::string::npos);
  CHECK(plain.find("v1 -> v2 [label=\"1000 B\"];") != std::string::npos);
  CHECK(plain.find("cluster_legend") == std::string::npos);

  const std::string placed = to_dot(t.g, {.device = t.s.device,
                                          .devices = &t.devices,
                                          .forward_pairs = true,
                                          .left_to_right = true,
                                          .graph_name = "my \"graph\""});
  CHECK(dot_problem(placed).empty());
  CHECK(placed.starts_with("digraph \"my \\\"graph\\\"\" {\n  rankdir=LR;"));
  CHECK(count(placed, "fillcolor=\"" + detail::device_colour(0) + "\"") == 3);  // a, b and the legend entry
  CHECK(count(placed, "fillcolor=\"" + detail::device_colour(1) + "\"") == 2);
  CHECK(placed.find("\\ngpu&1\"") != std::string::npos);
  CHECK(placed.find("legend1 [label=\"gpu&1\"") != std::string::npos);

  graph odd;
  odd.add_vertex("tab\there, bell\a, invalid \xff end");
  const std::string repaired = to_dot(odd);
  CHECK(dot_problem(repaired).empty());
  CHECK(repaired.find("tab here, bell , invalid \xEF\xBF\xBD end") != std::string::npos);
  CHECK_THROWS_WITH_AS((void)to_dot(t.g, {.device = std::span<const device_id>(t.s.device).first(2)}),
                       "to_dot: 2 devices given for 3 vertices", invalid_input);
}

TEST_CASE("Chrome trace: parseable JSON with one process per device, X events in microseconds") {
  chain t;
  const std::string text = chrome_trace_text(t.g, t.s, {.devices = &t.devices});
  const auto trace = nlohmann::json::parse(text);
  REQUIRE(trace.contains("traceEvents"));
  CHECK(trace["displayTimeUnit"] == "ms");
  CHECK(trace["otherData"]["makespan_s"] == 4.5);
  std::map<std::string, nlohmann::json> compute;
  std::vector<nlohmann::json> transfers;
  std::map<std::uint64_t, std::string> process_names;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process_names[e["pid"]] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    if (e["cat"] == "compute") compute[e["name"]] = e;
    else transfers.push_back(e);
  }
  CHECK(process_names == std::map<std::uint64_t, std::string>{{1, "gpu<0>"}, {2, "gpu&1"}});
  REQUIRE(compute.size() == 3);
  // The names come back exactly: the writer escaped them.
  REQUIRE(compute.count(name_a) == 1);
  REQUIRE(compute.count(name_b) == 1);
  CHECK(compute[name_b]["ts"] == 1e6);
  CHECK(compute[name_b]["dur"] == 2e6);
  CHECK(compute[name_b]["pid"] == 1);
  CHECK(compute[name_c]["pid"] == 2);
  CHECK(compute[name_c]["ts"] == 3.5e6);
  CHECK(compute[name_a]["args"]["op"] == "aten.<op>");
  CHECK(compute[name_a]["tid"] == compute[name_b]["tid"]);
  // The transfer appears on the sender's send thread and the receiver's receive thread.
  REQUIRE(transfers.size() == 2);
  for (const auto& e : transfers) {
    CHECK(e["args"]["bytes"] == 1000);
    CHECK(e["args"]["tensor"] == name_b);
    CHECK(e["ts"] == 3e6);
    CHECK(e["dur"] == 0.5e6);
  }
  CHECK(transfers[0]["cat"] == "send");
  CHECK(transfers[0]["pid"] == 1);
  CHECK(transfers[0]["name"] == name_b + " to gpu&1");
  CHECK(transfers[1]["cat"] == "receive");
  CHECK(transfers[1]["pid"] == 2);
  CHECK(transfers[1]["tid"] != compute[name_c]["tid"]);

  // Without a cluster the devices are d0, d1; without transfers only compute remains.
  const auto bare = chrome_trace(t.g, t.s, {.transfers = false});
  std::size_t x_events = 0;
  for (const auto& e : bare["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") CHECK(e["args"]["name"].get<std::string>().starts_with("d"));
    x_events += e["ph"] == "X";
  }
  CHECK(x_events == 3);
}

TEST_CASE("Chrome trace: overlapping transfers go to separate threads, so no thread has overlaps") {
  const graph g = random_layered_dag({.vertices = 400, .layers = 8, .mean_out_degree = 3, .seed = 11});
  const cluster c = cluster::uniform(3, unlimited_memory, {.latency = 1e-4, .bandwidth = 1e8});
  const schedule s = round_robin_schedule(g, c);
  const graph_model model(g, c);
  const auto report = validate(s, g, model, c);
  REQUIRE_MESSAGE(report.ok(), report.to_string());
  const auto trace = nlohmann::json::parse(chrome_trace_text(g, s, {.devices = &c}));
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::pair<double, double>>> threads;
  std::size_t x_events = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") {
      ++x_events;
      threads[{e["pid"], e["tid"]}].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    }
  CHECK(x_events == g.vertex_count() + 2 * s.transfers.size());
  std::size_t send_threads = 0;
  for (auto& [key, intervals] : threads) {
    std::sort(intervals.begin(), intervals.end());
    for (std::size_t i = 1; i < intervals.size(); ++i) CHECK(intervals[i].first >= intervals[i - 1].second - 1e-6);
    send_threads += key.second > (std::uint64_t{1} << 44) && key.second < (std::uint64_t{1} << 45);
  }
  CHECK(send_threads > 6);  // transfers overlapped and were spread out
  // Transfers are grouped by link: every send thread is named after the device it sends to, and
  // a device has no more send thread groups than peers.
  std::map<std::uint64_t, std::set<std::string>> send_groups;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      const std::string name = e["args"]["name"];
      if (name.starts_with("send to ")) send_groups[e["pid"]].insert(name.substr(0, name.find(" (")));
    }
  REQUIRE(send_groups.size() == 3);
  for (const auto& [pid, groups] : send_groups) CHECK(groups.size() <= 2);
}

TEST_CASE("SVG Gantt: well-formed, names escaped in tooltips, rows per device and transfers, a time axis") {
  chain t;
  const std::string svg = svg_gantt(t.g, t.s, {.devices = &t.devices, .title = "chain <&> \"test\""});
  std::size_t elements = 0;
  CHECK(xml_problem(svg, elements) == "");
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find("<title>a &quot;quoted&quot; &lt;tag&gt; &amp; \\ back&#10;0 s") != std::string::npos);
  CHECK(svg.find("<title>b&#10;newline \xC3\xBCn\xC3\xAF \xE2\x9C\x93&#10;1.00 s") != std::string::npos);
  CHECK(svg.find("<title>c&apos;apos") != std::string::npos);
  CHECK(svg.find(">gpu&lt;0&gt;</text>") != std::string::npos);
  CHECK(svg.find(">gpu&amp;1</text>") != std::string::npos);
  CHECK(svg.find("chain &lt;&amp;&gt; &quot;test&quot;") != std::string::npos);
  CHECK(count(svg, "transfers (out / in)") == 2);
  CHECK(count(svg, "b&#10;newline \xC3\xBCn\xC3\xAF \xE2\x9C\x93: gpu&lt;0&gt; \xE2\x86\x92 gpu&amp;1, 1000 B") ==
        2);  // send and receive
  CHECK(svg.find("makespan 4.50 s") != std::string::npos);
  CHECK(count(svg, "class=\"tick\"") >= 5);
  // The same vertex has the same colour wherever it is drawn: b's compute bar and its transfers.
  CHECK(count(svg, "fill=\"" + detail::vertex_colour(1) + "\"") == 3);
  // A key says what colours and rows mean.
  CHECK(svg.find("a colour per vertex, the same in every row") != std::string::npos);
  CHECK(svg.find("transfer rows: sends above, receives below") != std::string::npos);

  const std::string no_transfers = svg_gantt(t.g, t.s, {.transfers = false});
  CHECK(xml_problem(no_transfers, elements) == "");
  CHECK(no_transfers.find("transfers (out / in)") == std::string::npos);
  CHECK(no_transfers.find(">d1</text>") != std::string::npos);
}

TEST_CASE("SVG Gantt: invalid UTF-8 and control characters in names still give well-formed XML") {
  graph g;
  g.add_vertex("bad \xff\xfe utf8 \x01 ctl \xed\xa0\x80 surrogate");
  schedule s;
  s.device = {0};
  s.start = {0};
  s.finish = {1};
  std::size_t elements = 0;
  const std::string svg = svg_gantt(g, s);
  CHECK(xml_problem(svg, elements) == "");
  CHECK(svg.find("bad \xEF\xBF\xBD\xEF\xBF\xBD utf8 \xEF\xBF\xBD ctl") != std::string::npos);
  // The trace repairs it as well and stays parseable.
  const auto trace = nlohmann::json::parse(chrome_trace_text(g, s));
  CHECK(trace["traceEvents"].is_array());
}

TEST_CASE("SVG Gantt: 100k vertices are drawn with bounded detail") {
  const graph g = random_layered_dag({.vertices = 100000, .layers = 500, .mean_out_degree = 1.5, .seed = 3});
  const cluster c = cluster::uniform(4, unlimited_memory, {.latency = 1e-5, .bandwidth = 1e10});
  const schedule s = round_robin_schedule(g, c);
  const graph_model model(g, c);
  const auto report = validate(s, g, model, c);
  REQUIRE_MESSAGE(report.ok(), report.to_string());
  const std::string svg = svg_gantt(g, s, {.devices = &c, .title = "100k"});
  std::size_t elements = 0;
  CHECK(xml_problem(svg, elements) == "");
  MESSAGE("100k vertices, " << s.transfers.size() << " transfers: " << elements << " SVG elements, " << svg.size()
                            << " bytes");
  // Each of the 12 tracks holds at most about one bar per pixel column of the 1200 px axis.
  CHECK(elements > 1000);  // merged bars still show the shape of the run
  CHECK(elements < 12 * 1300);
  CHECK(svg.size() < 8'000'000);
  CHECK(svg.find("class=\"merged\"") != std::string::npos);
  CHECK(svg.find(" items, ") != std::string::npos);
}

TEST_CASE("writers reject schedules that do not cover the graph") {
  chain t;
  schedule short_schedule = t.s;
  short_schedule.start.pop_back();
  CHECK_THROWS_WITH_AS((void)chrome_trace(t.g, short_schedule),
                       "chrome_trace: the schedule has 3 devices, 2 starts and 3 finishes for a graph of 3 vertices",
                       invalid_input);
  schedule unplaced = t.s;
  unplaced.device[1] = no_device;
  CHECK_THROWS_WITH_AS((void)svg_gantt(t.g, unplaced), "svg_gantt: vertex 1 has no device (or device 4294967295)",
                       invalid_input);
  CHECK_THROWS_AS((void)svg_gantt(t.g, t.s, {.width = 0}), invalid_input);
}

TEST_CASE("the file writers write what the text functions return") {
  chain t;
  const auto dir = std::filesystem::temp_directory_path() / ("gantry_test_io_writers_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  write_dot(dir / "g.dot", t.g);
  write_chrome_trace(dir / "t.json", t.g, t.s, {.devices = &t.devices});
  write_svg_gantt(dir / "s.svg", t.g, t.s);
  write_chrome_trace(dir / "t.json.gz", t.g, t.s);
  CHECK(slurp(dir / "g.dot") == to_dot(t.g));
  CHECK(slurp(dir / "t.json") == chrome_trace_text(t.g, t.s, {.devices = &t.devices}));
  CHECK(slurp(dir / "s.svg") == svg_gantt(t.g, t.s));
  CHECK(read_text_file(dir / "t.json.gz") == chrome_trace_text(t.g, t.s));
  std::filesystem::remove_all(dir);
}
