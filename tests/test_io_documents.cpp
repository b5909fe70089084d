// The member tables of cluster, placement and chain documents (io/document_schema.hpp) against the
// writers, the readers and the documentation: every writer's output holds only members its tables
// list, with the listed types, and writes every member but the free-form ones; every object of
// every document refuses an unknown key and a missing required member the same way; every member
// is documented in its section of docs/.
#include <gantry/io/document_schema.hpp>
#include <gantry/io/json_chain.hpp>
#include <gantry/io/json_cluster.hpp>
#include <gantry/io/json_placement.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <fstream>
#include <functional>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace gantry;

namespace {

using json = nlohmann::json;

// A cluster that sets every member of the cluster tables: memory, kinds, nodes, a default link, a
// pair link and a domain with cores.
cluster every_member_cluster() {
  cluster c({{.name = "gpu0", .kind = "gpu", .capacity = 1 << 20, .speed = 2},
             {.name = "gpu1", .kind = "gpu", .capacity = 1 << 20},
             {.name = "cpu", .kind = "cpu"}},
            {.latency = 1e-5, .bandwidth = 1e10}, comm_mode::duplex);
  c.set_nodes({0, 0, 1});
  c.set_link(0, 1, {.latency = 2e-6, .bandwidth = 5e10});
  c.add_domain({.name = "hbm", .devices = {0, 1}, .bandwidth = 3e12, .copies = false, .cores = 2});
  return c;
}

// Where an object of a document sits (a JSON pointer) and which table it follows.
struct located_object {
  std::string pointer;
  const document_object* table;
};

// Checks `value` against `table`: only listed keys, required members present, each value of its
// listed type; records each (table, key) seen and each object's location.
void check_against(const json& value, const document_object& table, const std::string& pointer,
                   std::set<std::pair<const document_object*, std::string>>& seen,
                   std::vector<located_object>& objects) {
  CAPTURE(pointer);
  REQUIRE(value.is_object());
  objects.push_back({pointer, &table});
  for (auto it = value.begin(); it != value.end(); ++it) {
    const document_member* m = table.find(it.key());
    CAPTURE(it.key());
    REQUIRE_MESSAGE(m != nullptr, "written but not in the table of " << table.what);
    if (it->is_null()) continue;  // the readers take null as absent (an unplaced vertex's device)
    seen.emplace(&table, it.key());
    const json& v = *it;
    const std::string at = pointer + "/" + it.key();
    switch (m->type) {
      case member_type::text:
      case member_type::choice:
        CHECK(v.is_string());
        break;
      case member_type::name:
        CHECK((v.is_string() && !v.get<std::string>().empty()));
        break;
      case member_type::boolean:
        CHECK(v.is_boolean());
        break;
      case member_type::whole:
      case member_type::bytes:
        CHECK(v.is_number_unsigned());
        break;
      case member_type::number:
        CHECK(v.is_number());
        break;
      case member_type::time:
        CHECK((v.is_number() && v.get<double>() >= 0));
        break;
      case member_type::bandwidth:
        CHECK(((v.is_number() && v.get<double>() > 0) || v == "unlimited"));
        break;
      case member_type::object:
        REQUIRE(v.is_object());
        if (m->items != nullptr) check_against(v, *m->items, at, seen, objects);
        break;
      case member_type::list:
        REQUIRE(v.is_array());
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (m->items != nullptr) check_against(v[i], *m->items, at + "/" + std::to_string(i), seen, objects);
          else CHECK_FALSE(v[i].is_structured());
        }
        break;
    }
  }
  for (const document_member& m : table.members)
    if (m.required) CHECK_MESSAGE(value.contains(m.key), "required member " << m.key << " not written");
}

// Every member of `table` and of the tables under it, as (table, key).
void all_members(const document_object& table, std::set<std::pair<const document_object*, std::string>>& out) {
  for (const document_member& m : table.members) {
    if (!out.emplace(&table, std::string(m.key)).second) continue;
    if (m.items != nullptr) all_members(*m.items, out);
  }
}

// The objects the writer put in `document`, each with its table (check_against's walk).
std::vector<located_object> objects_of(const json& document, const document_object& root) {
  std::set<std::pair<const document_object*, std::string>> seen;
  std::vector<located_object> objects;
  check_against(document, root, "", seen, objects);
  return objects;
}

// The members of `root`'s tables that the writer left out of `document`, as "<table>.<key>".
std::vector<std::string> unwritten_members(const json& document, const document_object& root) {
  std::set<std::pair<const document_object*, std::string>> seen, all;
  std::vector<located_object> objects;
  check_against(document, root, "", seen, objects);
  all_members(root, all);
  std::vector<std::string> unwritten;
  for (const auto& [table, key] : all)
    if (!seen.contains({table, key})) unwritten.push_back(std::string(table->what) + "." + key);
  return unwritten;
}

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const parse_error& e) {
    return e.what();
  }
  return "no error";
}

// For each object the writer put in `document`: an unknown key there is refused naming its
// pointer and the table's members; each required member taken out is refused naming it; anything
// under a free-form member is read past.
void check_one_policy(const json& document, const std::vector<located_object>& objects,
                      const std::function<void(const std::string&)>& read) {
  REQUIRE(error_of([&] { read(document.dump()); }) == "no error");
  for (const auto& [pointer, table] : objects) {
    CAPTURE(pointer);
    json unknown = document;
    unknown[json::json_pointer(pointer)]["colour"] = "red";
    const std::string message = error_of([&] { read(unknown.dump()); });
    CHECK(message.find("doc.json: " + pointer + "/colour: unknown field") == 0);
    CHECK(message.find(std::string(table->what) + " has ") != std::string::npos);

    json misspelt = document;  // the first member after a document's format and version, with an 's'
    const auto& member = table->members[table->members[0].key == "format" ? 2 : 0];
    const std::string first(member.key);
    auto& object = misspelt[json::json_pointer(pointer)];
    object[first + "s"] = object.contains(first) ? object[first] : json(1);
    object.erase(first);
    CHECK(error_of([&] { read(misspelt.dump()); }).find("(did you mean \"" + first + "\"?)") != std::string::npos);

    for (const document_member& m : table->members) {
      if (m.required) {
        CAPTURE(m.key);
        json missing = document;
        missing[json::json_pointer(pointer)].erase(std::string(m.key));
        const std::string where = pointer.empty() ? "(document)" : pointer;
        const std::string text = error_of([&] { read(missing.dump()); });
        CHECK(text.find("doc.json: " + where + ": missing field \"" + std::string(m.key) + "\"") == 0);
      }
      if (m.type == member_type::object && m.items == nullptr) {
        CAPTURE(m.key);
        json free_form = document;
        free_form[json::json_pointer(pointer)][std::string(m.key)] = {{"anything", {1, "two", {{"x", nullptr}}}}};
        CHECK(error_of([&] { read(free_form.dump()); }) == "no error");
        free_form[json::json_pointer(pointer)][std::string(m.key)] = json::array({1});
        CHECK(error_of([&] {
                read(free_form.dump());
              }).find(pointer + "/" + std::string(m.key) + ": expected an object") != std::string::npos);
      }
    }
  }
}

std::string section_of(const std::string& file, const std::string& heading) {
  std::ifstream in(std::string(GANTRY_SOURCE_DIR) + "/" + file);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const auto begin = doc.find("\n" + heading);
  REQUIRE_MESSAGE(begin != std::string::npos, file << " has no section " << heading);
  const auto end = doc.find("\n## ", begin + 1);
  return doc.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// Every member of `tables` appears as `key` in the section of `file` under `heading`.
void check_documented(std::initializer_list<const document_object*> tables, const std::string& file,
                      const std::string& heading) {
  const std::string section = section_of(file, heading);
  for (const document_object* table : tables)
    for (const document_member& m : table->members) {
      CAPTURE(table->what);
      CAPTURE(m.key);
      CHECK(section.find("`" + std::string(m.key) + "`") != std::string::npos);
    }
}

}  // namespace

TEST_CASE("the cluster writer writes what its tables list, and every member but metadata") {
  const json document = json::parse(cluster_to_json_text(every_member_cluster()));
  CHECK(unwritten_members(document, schema::cluster_document) ==
        std::vector<std::string>{"a cluster document.metadata"});
}

TEST_CASE("the placement writer writes what its tables list, and every member") {
  test::chain_schedule t;
  const placement_json_options options{.algorithm = "m-etf", .schedule = &t.s, .metadata = {{"graph", "g.json"}}};
  // The embedded cluster is checked by the cluster case; here it is the two-device one of t.
  const json document = json::parse(placement_to_json_text(t.g, t.devices, t.p, options));
  std::set<std::pair<const document_object*, std::string>> seen;
  std::vector<located_object> objects;
  check_against(document, schema::placement_document, "", seen, objects);
  for (const document_object* table :
       {&schema::placement_document, &schema::placement_entry, &schema::placement_device_summary})
    for (const document_member& m : table->members) {
      CAPTURE(table->what);
      CAPTURE(m.key);
      CHECK(seen.contains({table, std::string(m.key)}));
    }

  // A failed placement writes null for a vertex it did not place: the reader takes it as absent.
  placement failed = t.p;
  failed.device[2] = no_device;
  failed.outcome = {.code = status::out_of_memory, .message = "c does not fit"};
  const json partial = json::parse(placement_to_json_text(t.g, t.devices, failed));
  seen.clear();
  objects.clear();
  check_against(partial, schema::placement_document, "", seen, objects);
  CHECK(partial["placement"][2]["device"].is_null());
  const placement_file back = read_placement_json(partial.dump(), t.g, t.devices);
  CHECK(back.placement.device[2] == no_device);
}

TEST_CASE("the chain writer writes what its tables list, and every member but metadata") {
  const chain c{{{"embed", 0.01, 0.02, 1048576, 524288}, {"head", 0.5, 1.25, 7, 0}}};
  const json document = json::parse(chain_text(c));
  CHECK(unwritten_members(document, schema::chain_document) == std::vector<std::string>{"a chain document.metadata"});
}

TEST_CASE("every object of a cluster document refuses unknown keys and missing members the same way") {
  const json document = json::parse(cluster_to_json_text(every_member_cluster()));
  const std::vector<located_object> objects = objects_of(document, schema::cluster_document);
  CHECK(objects.size() == 1 + 3 + 1 + 1 + 1);  // document, devices, link, links, domains
  check_one_policy(document, objects, [](const std::string& text) { (void)read_cluster_json(text, "doc.json"); });
}

TEST_CASE("every object of a placement document refuses unknown keys and missing members the same way") {
  test::chain_schedule t;
  const json document = json::parse(
      placement_to_json_text(t.g, t.devices, t.p, {.algorithm = "m-etf", .schedule = &t.s, .metadata = {}}));
  const std::vector<located_object> objects = objects_of(document, schema::placement_document);
  // The embedded cluster is held to the same tables by the reader of the placement's cluster.
  std::vector<located_object> own, embedded;
  for (const auto& o : objects) (o.pointer.starts_with("/cluster") ? embedded : own).push_back(o);
  CHECK(own.size() == 1 + 2 + 3);  // document, device summaries, entries
  CHECK(embedded.size() == 1 + 2 + 1);
  check_one_policy(document, own,
                   [&](const std::string& text) { (void)read_placement_json(text, t.g, t.devices, "doc.json"); });
  check_one_policy(document, embedded,
                   [](const std::string& text) { (void)placement_cluster_from_json(json::parse(text), "doc.json"); });
}

TEST_CASE("every object of a chain document refuses unknown keys and missing members the same way") {
  const chain c{{{"embed", 0.01, 0.02, 1048576, 524288}, {"head", 0.5, 1.25, 7, 0}}};
  const json document = json::parse(chain_text(c));
  const std::vector<located_object> objects = objects_of(document, schema::chain_document);
  CHECK(objects.size() == 3);
  check_one_policy(document, objects, [](const std::string& text) { (void)parse_chain(text, "doc.json"); });
}

TEST_CASE("every member of the cluster, placement and chain tables is documented in its section") {
  check_documented({&schema::cluster_document, &schema::cluster_device, &schema::cluster_link,
                    &schema::cluster_pair_link, &schema::cluster_domain},
                   "docs/format.md", "## Cluster");
  check_documented({&schema::placement_document, &schema::placement_entry, &schema::placement_device_summary},
                   "docs/format.md", "## Placement");
  check_documented({&schema::chain_document, &schema::chain_layer}, "docs/pipeline.md", "## Chain files");
}
