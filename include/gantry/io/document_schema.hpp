// The members of gantry's cluster, placement and chain documents, listed once per kind of object.
// Graph files have their own table, with member pointers into vertex_properties
// (io/graph_schema.hpp). Every reader checks each object it reads against its table with one
// policy (json_reader::check_members, io/json_support.hpp): a key the table does not list is refused
// naming the nearest one it does; a required member that is missing is refused naming it. The tests
// walk each writer's output against the same tables (keys, required members, value types) and check
// that docs/format.md and docs/pipeline.md document every member, so a member added to a writer
// without its table, or to a table without its documentation, fails a test.
#pragma once

#include <span>
#include <string_view>

namespace gantry {

// What a member's value is, as a file writes it.
enum class member_type {
  text,       // any string
  name,       // a non-empty string naming something (a device, a vertex)
  choice,     // one of a fixed set of identifiers ("parallel", "ok")
  boolean,    // true or false
  whole,      // an integer >= 0
  number,     // any finite number
  time,       // seconds >= 0, or a duration string ("1.2ms")
  bytes,      // whole bytes, or a size string ("16MiB"); a device's memory may also be "unlimited"
  bandwidth,  // bytes per second > 0, a string such as "12 GB/s", or "unlimited"
  object,     // an object: the members of `items`, or free-form where `items` is null (metadata)
  list,       // an array: of objects with the members of `items`, or of plain values where it is null
};

struct document_object;

// One member of an object.
struct document_member {
  std::string_view key;
  member_type type;
  std::string_view unit{};                 // for documents and messages: "s", "B", "B/s" or empty
  bool required = false;                   // an object without it is refused
  const document_object* items = nullptr;  // see member_type::object and member_type::list
};

// One kind of object: what messages call it ("a device") and its members, in the order writers
// put them.
struct document_object {
  std::string_view what;
  std::span<const document_member> members;

  // The member named `key`, or nullptr.
  [[nodiscard]] constexpr const document_member* find(std::string_view key) const noexcept {
    for (const document_member& m : members)
      if (m.key == key) return &m;
    return nullptr;
  }
};

namespace schema {

// gantry.cluster (docs/format.md, "Cluster")
inline constexpr document_member cluster_device_members[] = {
    {.key = "name", .type = member_type::name, .required = true},
    {.key = "kind", .type = member_type::name},
    {.key = "memory", .type = member_type::bytes, .unit = "B"},
    {.key = "speed", .type = member_type::number},
    {.key = "node", .type = member_type::whole},
};
inline constexpr document_object cluster_device{"a device", cluster_device_members};

inline constexpr document_member cluster_link_members[] = {
    {.key = "latency", .type = member_type::time, .unit = "s"},
    {.key = "bandwidth", .type = member_type::bandwidth, .unit = "B/s"},
};
inline constexpr document_object cluster_link{"a link", cluster_link_members};

inline constexpr document_member cluster_pair_link_members[] = {
    {.key = "from", .type = member_type::name, .required = true},
    {.key = "to", .type = member_type::name, .required = true},
    {.key = "latency", .type = member_type::time, .unit = "s"},
    {.key = "bandwidth", .type = member_type::bandwidth, .unit = "B/s"},
};
inline constexpr document_object cluster_pair_link{"a link", cluster_pair_link_members};

inline constexpr document_member cluster_domain_members[] = {
    {.key = "name", .type = member_type::name, .required = true},
    {.key = "devices", .type = member_type::list, .required = true},
    {.key = "bandwidth", .type = member_type::bandwidth, .unit = "B/s"},
    {.key = "copies", .type = member_type::boolean},
    {.key = "cores", .type = member_type::whole},
};
inline constexpr document_object cluster_domain{"a bandwidth domain", cluster_domain_members};

inline constexpr document_member cluster_document_members[] = {
    {.key = "format", .type = member_type::choice, .required = true},
    {.key = "version", .type = member_type::whole, .required = true},
    {.key = "metadata", .type = member_type::object},
    {.key = "communication", .type = member_type::choice},
    {.key = "devices", .type = member_type::list, .required = true, .items = &cluster_device},
    {.key = "link", .type = member_type::object, .items = &cluster_link},
    {.key = "links", .type = member_type::list, .items = &cluster_pair_link},
    {.key = "domains", .type = member_type::list, .items = &cluster_domain},
};
inline constexpr document_object cluster_document{"a cluster document", cluster_document_members};

// gantry.placement (docs/format.md, "Placement")
inline constexpr document_member placement_device_summary_members[] = {
    {.key = "device", .type = member_type::name, .required = true},
    {.key = "vertices", .type = member_type::whole},
    {.key = "busy", .type = member_type::time, .unit = "s"},
    {.key = "peak_memory", .type = member_type::bytes, .unit = "B"},
    {.key = "peak_memory_time", .type = member_type::time, .unit = "s"},
};
inline constexpr document_object placement_device_summary{"a device summary", placement_device_summary_members};

inline constexpr document_member placement_entry_members[] = {
    {.key = "vertex", .type = member_type::name, .required = true},
    {.key = "device", .type = member_type::name},  // null: a vertex a failed placer did not place
    {.key = "start", .type = member_type::time, .unit = "s"},
    {.key = "finish", .type = member_type::time, .unit = "s"},
};
inline constexpr document_object placement_entry{"a placement entry", placement_entry_members};

inline constexpr document_member placement_document_members[] = {
    {.key = "format", .type = member_type::choice, .required = true},
    {.key = "version", .type = member_type::whole, .required = true},
    {.key = "algorithm", .type = member_type::text},
    {.key = "status", .type = member_type::choice},
    {.key = "message", .type = member_type::text},
    {.key = "metadata", .type = member_type::object},
    {.key = "placement_time", .type = member_type::time, .unit = "s"},
    {.key = "makespan", .type = member_type::time, .unit = "s"},
    {.key = "bytes_moved", .type = member_type::bytes, .unit = "B"},
    {.key = "transfers", .type = member_type::whole},
    {.key = "devices", .type = member_type::list},
    {.key = "cluster", .type = member_type::object, .items = &cluster_document},
    {.key = "device_summary", .type = member_type::list, .items = &placement_device_summary},
    {.key = "placement", .type = member_type::list, .required = true, .items = &placement_entry},
    {.key = "order", .type = member_type::list},
};
inline constexpr document_object placement_document{"a placement document", placement_document_members};

// gantry.chain (docs/pipeline.md, "Chain files")
inline constexpr document_member chain_layer_members[] = {
    {.key = "name", .type = member_type::name},
    {.key = "forward", .type = member_type::time, .unit = "s", .required = true},
    {.key = "backward", .type = member_type::time, .unit = "s", .required = true},
    {.key = "weights", .type = member_type::bytes, .unit = "B"},
    {.key = "activation", .type = member_type::bytes, .unit = "B"},
};
inline constexpr document_object chain_layer{"a layer", chain_layer_members};

inline constexpr document_member chain_document_members[] = {
    {.key = "format", .type = member_type::choice, .required = true},
    {.key = "version", .type = member_type::whole, .required = true},
    {.key = "metadata", .type = member_type::object},
    {.key = "layers", .type = member_type::list, .required = true, .items = &chain_layer},
};
inline constexpr document_object chain_document{"a chain document", chain_document_members};

}  // namespace schema
}  // namespace gantry
