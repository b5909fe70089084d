// The four compute graphs DOPPLER published beside its code (the authors' repository,
// compute_graph/: chain_mm_112nodes, ffnn_192nodes, transformer_block_215nodes and
// full_transformer_layer_261nodes), rebuilt node for node, so that gantry's placers and DOPPLER's
// run on the same graphs: vertex v is the file's node v, and every edge of the file is an edge here.
//
// How the files read, and so how these graphs are built:
//  * A file's first line counts its nodes plus its input list (line 2), but DOPPLER's reader
//    (utils.py, _read_compute_graph) subtracts the input list and keeps every node with a cost
//    line: 76, 180, 182 and 229 nodes, the input list unused. Here, as there, every node is an
//    operator with compute, those the input list names included; none has op "input".
//  * Lines 3 and 4 are the edges' sources and destinations (80, 208, 234 and 284 edges). ChainMM's
//    destination line reads "16,6, 16, 16": its second edge is 1 -> 6, not 1 -> 16, so node 6 (an
//    input by line 2) has an in-edge, and node 16 has three in-edges where its siblings have four.
//    DOPPLER trains on that graph, and so it is kept.
//  * Each node's line is "comp, comm": compute in DOPPLER's cost unit, and the bytes of the node's
//    output, which every out-edge carries (DOPPLER's edge feature is its source's comm). In all
//    four files comm = 4 comp.
//  * Compute time = comp / cost_per_second, 1e10 by default; output = comm bytes; no persistent or
//    temporary memory (DOPPLER models none, so place them on devices of unlimited capacity, the
//    cluster's default).
//
// The tables list the nodes in runs that share a cost and a wiring ("rows"); doppler_meta_ops()
// reads each row back as one meta-op, named "<graph>.r<row>" (its vertices "<graph>.r<row>[i]").
// Checked against the files' own figures (counts, total compute and bytes, critical paths) by
// tests/test_workloads.cpp.
#pragma once

#include <gantry/core/enum_names.hpp>
#include <gantry/core/types.hpp>
#include <gantry/graph/graph.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>

namespace gantry {

enum class doppler_graph { chain_mm, ffnn, transformer_block, transformer_layer };

inline constexpr enum_name<doppler_graph> doppler_graph_names[] = {{doppler_graph::chain_mm, "chain_mm"},
                                                                   {doppler_graph::ffnn, "ffnn"},
                                                                   {doppler_graph::transformer_block, "block"},
                                                                   {doppler_graph::transformer_layer, "layer"}};
[[nodiscard]] constexpr std::span<const enum_name<doppler_graph>> enum_names(doppler_graph) noexcept {
  return doppler_graph_names;
}
[[nodiscard]] constexpr const char* to_string(doppler_graph g) noexcept { return name_of(g); }

struct doppler_published_options {
  double cost_per_second = 1e10;  // compute = the file's comp / this
};

namespace detail::published {

// One operand of every vertex of a row: shard i of the row (its vertex first + i) reads the
// `width` consecutive vertices starting at  from + stride * (i / period) + phase * (i % period).
inline constexpr std::uint32_t unused = ~std::uint32_t{0};
struct operand {
  std::uint32_t from = unused, stride = 0, period = 1, phase = 0, width = 1;
};

// `count` vertices first, first + 1, ..., each of cost `comp`, wired alike.
struct row {
  std::uint32_t first = 0, count = 0;
  std::uint64_t comp = 0;
  operand operands[3] = {};  // those with from == unused are absent
};

// Rows follow one another without gaps, and every operand is an earlier vertex: the tables below
// are checked at compile time.
template <std::size_t N>
constexpr bool well_formed(const row (&rows)[N]) {
  std::uint32_t next = 0;
  for (const auto& r : rows) {
    if (r.first != next || r.count == 0 || r.comp == 0) return false;
    for (const auto& o : r.operands)
      for (std::uint32_t i = 0; o.from != unused && i < r.count; ++i)
        if (o.period == 0 || o.width == 0 ||
            o.from + o.stride * (i / o.period) + o.phase * (i % o.period) + o.width > r.first)
          return false;
    next += r.count;
  }
  return true;
}

// The four files as rows; the comment after each row gives its vertices.
inline constexpr row chain_mm_rows[] = {
    {0, 6, 1000000000000, {}},                            // 0..5
    {6, 1, 1000000000000, {{1, 0, 1, 0}}},                // 6
    {7, 9, 1000000000000, {}},                            // 7..15
    {16, 1, 100000000, {{0, 0, 1, 0}, {2, 0, 1, 0, 2}}},  // 16
    {17, 3, 100000000, {{4, 4, 1, 0, 4}}},                // 17..19
    {20, 4, 1000000000000, {{16, 1, 2, 2}}},              // 20..23
    {24, 4, 1000000000000, {{16, 1, 2, 2}}},              // 24..27
    {28, 4, 1000000000000, {{16, 1, 2, 2}}},              // 28..31
    {32, 4, 1000000000000, {{16, 1, 2, 2}}},              // 32..35
    {36, 8, 100000000, {{20, 2, 1, 0, 2}}},               // 36..43
    {44, 16, 1000000000000, {}},                          // 44..59
    {60, 8, 100000000, {{44, 2, 1, 0, 2}}},               // 60..67
    {68, 8, 100000000, {{36, 1, 1, 0}, {60, 1, 1, 0}}},   // 68..75
};

inline constexpr row ffnn_rows[] = {
    {0, 16, 68719476736, {}},                              // 0..15
    {16, 16, 2147483648, {{0, 1, 1, 0}}},                  // 16..31
    {32, 16, 2147483648, {{16, 1, 1, 0}}},                 // 32..47
    {48, 16, 68719476736, {{32, 1, 1, 0}}},                // 48..63
    {64, 4, 1048576, {{48, 4, 1, 0, 4}}},                  // 64..67
    {68, 16, 1048576, {{64, 1, 4, 0}}},                    // 68..83
    {84, 16, 32768, {{68, 1, 1, 0}}},                      // 84..99
    {100, 16, 1048576, {{64, 1, 4, 0}, {84, 1, 1, 0}}},    // 100..115
    {116, 16, 1048576, {{100, 1, 1, 0}}},                  // 116..131
    {132, 16, 1048576, {{116, 1, 1, 0}}},                  // 132..147
    {148, 16, 32768, {{132, 1, 1, 0}}},                    // 148..163
    {164, 16, 1048576, {{116, 1, 1, 0}, {148, 1, 1, 0}}},  // 164..179
};

inline constexpr row block_rows[] = {
    {0, 4, 16777216, {}},                                     // 0..3
    {4, 3, 16777216, {{0, 1, 1, 0}}},                         // 4..6
    {7, 1, 16777216, {{0, 0, 1, 0}, {3, 0, 1, 0}}},           // 7
    {8, 4, 16777216, {{4, 1, 1, 0}}},                         // 8..11
    {12, 2, 4096, {{8, 2, 1, 0, 2}}},                         // 12..13
    {14, 2, 4096, {{12, 1, 1, 0}}},                           // 14..15
    {16, 2, 4096, {{14, 1, 1, 0}}},                           // 16..17
    {18, 1, 16777216, {{16, 0, 1, 0}}},                       // 18
    {19, 3, 16777216, {{1, 1, 1, 0}, {16, 1, 2, 1}}},         // 19..21
    {22, 4, 16777216, {{18, 1, 1, 0}}},                       // 22..25
    {26, 4, 16777216, {{22, 1, 1, 0}}},                       // 26..29
    {30, 4, 68719476736, {{26, 0, 2, 1}, {28, 0, 2, 1}}},     // 30..33
    {34, 2, 16777216, {{30, 2, 1, 0, 2}}},                    // 34..35
    {36, 4, 68719476736, {{26, 2, 2, 0, 2}}},                 // 36..39
    {40, 4, 16777216, {{36, 1, 1, 0}}},                       // 40..43
    {44, 4, 68719476736, {{26, 2, 2, 0, 2}}},                 // 44..47
    {48, 4, 16777216, {{44, 1, 1, 0}}},                       // 48..51
    {52, 2, 16777216, {{34, 1, 1, 0}}},                       // 52..53
    {54, 2, 8388608, {{52, 1, 1, 0}}},                        // 54..55
    {56, 2, 8388608, {{54, 1, 1, 0}}},                        // 56..57
    {58, 2, 16777216, {{56, 1, 1, 0}}},                       // 58..59
    {60, 2, 16777216, {{58, 1, 1, 0}}},                       // 60..61
    {62, 4, 16777216, {{40, 1, 1, 0}}},                       // 62..65
    {66, 4, 8388608, {{62, 1, 1, 0}}},                        // 66..69
    {70, 4, 8388608, {{66, 1, 1, 0}}},                        // 70..73
    {74, 4, 16777216, {{70, 1, 1, 0}}},                       // 74..77
    {78, 4, 16777216, {{74, 1, 1, 0}}},                       // 78..81
    {82, 4, 68719476736, {{60, 1, 2, 0}, {78, 1, 2, 2}}},     // 82..85
    {86, 4, 536870912, {{82, 1, 1, 0}}},                      // 86..89
    {90, 4, 536870912, {{86, 1, 1, 0}}},                      // 90..93
    {94, 4, 536870912, {{90, 1, 1, 0}}},                      // 94..97
    {98, 4, 536870912, {{94, 1, 1, 0}}},                      // 98..101
    {102, 2, 131072, {{98, 2, 1, 0, 2}}},                     // 102..103
    {104, 4, 536870912, {{94, 1, 1, 0}, {102, 1, 2, 0}}},     // 104..107
    {108, 4, 536870912, {{104, 1, 1, 0}}},                    // 108..111
    {112, 4, 536870912, {{108, 1, 1, 0}}},                    // 112..115
    {116, 2, 131072, {{112, 2, 1, 0, 2}}},                    // 116..117
    {118, 4, 536870912, {{108, 1, 1, 0}, {116, 1, 2, 0}}},    // 118..121
    {122, 4, 536870912, {{118, 1, 1, 0}}},                    // 122..125
    {126, 4, 68719476736, {{48, 1, 2, 2}, {122, 1, 1, 0}}},   // 126..129
    {130, 2, 16777216, {{126, 2, 1, 0, 2}}},                  // 130..131
    {132, 4, 68719476736, {{130, 0, 2, 1}}},                  // 132..135
    {136, 2, 16777216, {{132, 2, 1, 0, 2}}},                  // 136..137
    {138, 2, 16777216, {{136, 1, 1, 0}}},                     // 138..139
    {140, 2, 16777216, {{138, 1, 1, 0}}},                     // 140..141
    {142, 2, 16777216, {{140, 1, 1, 0}}},                     // 142..143
    {144, 2, 16777216, {{142, 1, 1, 0}}},                     // 144..145
    {146, 1, 4096, {{144, 0, 1, 0, 2}}},                      // 146
    {147, 1, 4096, {{146, 0, 1, 0}}},                         // 147
    {148, 1, 4096, {{147, 0, 1, 0}}},                         // 148
    {149, 1, 16777216, {{140, 0, 1, 0, 2}, {148, 0, 1, 0}}},  // 149
    {150, 1, 16777216, {{149, 0, 1, 0}}},                     // 150
    {151, 1, 16777216, {{150, 0, 1, 0}}},                     // 151
    {152, 4, 184683593728, {{151, 0, 1, 0}}},                 // 152..155
    {156, 4, 45088768, {{152, 1, 1, 0}}},                     // 156..159
    {160, 4, 45088768, {{156, 1, 1, 0}}},                     // 160..163
    {164, 4, 184683593728, {{151, 0, 1, 0}}},                 // 164..167
    {168, 4, 45088768, {{164, 1, 1, 0}}},                     // 168..171
    {172, 4, 45088768, {{160, 1, 1, 0}, {168, 1, 1, 0}}},     // 172..175
    {176, 4, 184683593728, {{172, 1, 1, 0}}},                 // 176..179
    {180, 1, 16777216, {{176, 0, 1, 0, 4}}},                  // 180
    {181, 1, 16777216, {{138, 0, 1, 0, 2}, {180, 0, 1, 0}}},  // 181
};

inline constexpr row layer_rows[] = {
    {0, 2, 16777216, {}},                                    // 0..1
    {2, 1, 262144, {}},                                      // 2
    {3, 4, 16777216, {}},                                    // 3..6
    {7, 4, 16777216, {{3, 1, 1, 0}}},                        // 7..10
    {11, 4, 16777216, {{7, 1, 1, 0}}},                       // 11..14
    {15, 2, 4096, {{11, 2, 1, 0, 2}}},                       // 15..16
    {17, 2, 4096, {{15, 1, 1, 0}}},                          // 17..18
    {19, 2, 4096, {{17, 1, 1, 0}}},                          // 19..20
    {21, 4, 16777216, {{3, 1, 1, 0}, {19, 1, 2, 0}}},        // 21..24
    {25, 4, 16777216, {{21, 1, 1, 0}}},                      // 25..28
    {29, 4, 16777216, {{25, 1, 1, 0}}},                      // 29..32
    {33, 4, 68719476736, {{29, 2, 2, 0, 2}}},                // 33..36
    {37, 1, 16777216, {{33, 0, 1, 0}}},                      // 37
    {38, 1, 16777216, {{0, 0, 1, 0}, {34, 0, 1, 0}}},        // 38
    {39, 2, 16777216, {{35, 1, 1, 0}}},                      // 39..40
    {41, 4, 68719476736, {{29, 0, 2, 1}, {31, 0, 2, 1}}},    // 41..44
    {45, 2, 16777216, {{41, 2, 1, 0, 2}}},                   // 45..46
    {47, 4, 68719476736, {{29, 0, 2, 1}, {31, 0, 2, 1}}},    // 47..50
    {51, 2, 16777216, {{47, 2, 1, 0, 2}}},                   // 51..52
    {53, 4, 16777216, {{37, 1, 1, 0}}},                      // 53..56
    {57, 4, 8388608, {{53, 1, 1, 0}}},                       // 57..60
    {61, 4, 8388608, {{2, 0, 1, 0}, {57, 1, 1, 0}}},         // 61..64
    {65, 4, 16777216, {{61, 1, 1, 0}}},                      // 65..68
    {69, 4, 16777216, {{65, 1, 1, 0}}},                      // 69..72
    {73, 2, 16777216, {{45, 1, 1, 0}}},                      // 73..74
    {75, 2, 8388608, {{73, 1, 1, 0}}},                       // 75..76
    {77, 2, 8388608, {{2, 0, 1, 0}, {75, 1, 1, 0}}},         // 77..78
    {79, 2, 16777216, {{77, 1, 1, 0}}},                      // 79..80
    {81, 2, 16777216, {{79, 1, 1, 0}}},                      // 81..82
    {83, 4, 68719476736, {{69, 1, 2, 2}, {81, 1, 2, 0}}},    // 83..86
    {87, 4, 536870912, {{83, 1, 1, 0}}},                     // 87..90
    {91, 4, 536870912, {{87, 1, 1, 0}}},                     // 91..94
    {95, 2, 536870912, {{0, 1, 1, 0}, {91, 1, 1, 0}}},       // 95..96
    {97, 1, 536870912, {{93, 0, 1, 0}}},                     // 97
    {98, 1, 536870912, {{1, 0, 1, 0}, {94, 0, 1, 0}}},       // 98
    {99, 4, 536870912, {{95, 1, 1, 0}}},                     // 99..102
    {103, 4, 536870912, {{99, 1, 1, 0}}},                    // 103..106
    {107, 4, 131072, {{103, 1, 1, 0}}},                      // 107..110
    {111, 4, 536870912, {{99, 1, 1, 0}, {107, 1, 1, 0}}},    // 111..114
    {115, 4, 536870912, {{111, 1, 1, 0}}},                   // 115..118
    {119, 4, 536870912, {{115, 1, 1, 0}}},                   // 119..122
    {123, 4, 131072, {{119, 1, 1, 0}}},                      // 123..126
    {127, 4, 536870912, {{115, 1, 1, 0}, {123, 1, 1, 0}}},   // 127..130
    {131, 4, 536870912, {{127, 1, 1, 0}}},                   // 131..134
    {135, 4, 68719476736, {{51, 1, 2, 0}, {131, 1, 1, 0}}},  // 135..138
    {139, 4, 16777216, {{135, 1, 1, 0}}},                    // 139..142
    {143, 4, 68719476736, {{139, 1, 2, 2}}},                 // 143..146
    {147, 2, 16777216, {{143, 2, 1, 0, 2}}},                 // 147..148
    {149, 2, 16777216, {{147, 1, 1, 0}}},                    // 149..150
    {151, 2, 16777216, {{149, 1, 1, 0}}},                    // 151..152
    {153, 2, 16777216, {{151, 1, 1, 0}}},                    // 153..154
    {155, 2, 16777216, {{153, 1, 1, 0}}},                    // 155..156
    {157, 2, 4096, {{155, 1, 1, 0}}},                        // 157..158
    {159, 2, 4096, {{157, 1, 1, 0}}},                        // 159..160
    {161, 2, 4096, {{159, 1, 1, 0}}},                        // 161..162
    {163, 2, 16777216, {{151, 1, 1, 0}, {161, 1, 1, 0}}},    // 163..164
    {165, 2, 16777216, {{163, 1, 1, 0}}},                    // 165..166
    {167, 2, 16777216, {{165, 1, 1, 0}}},                    // 167..168
    {169, 4, 184683593728, {{167, 1, 2, 0}}},                // 169..172
    {173, 4, 45088768, {{169, 1, 1, 0}}},                    // 173..176
    {177, 4, 45088768, {{173, 1, 1, 0}}},                    // 177..180
    {181, 4, 184683593728, {{167, 1, 2, 0}}},                // 181..184
    {185, 4, 45088768, {{181, 1, 1, 0}}},                    // 185..188
    {189, 4, 45088768, {{177, 1, 1, 0}, {185, 1, 1, 0}}},    // 189..192
    {193, 4, 184683593728, {{189, 1, 1, 0}}},                // 193..196
    {197, 2, 16777216, {{193, 2, 1, 0, 2}}},                 // 197..198
    {199, 2, 16777216, {{149, 1, 1, 0}, {197, 1, 1, 0}}},    // 199..200
    {201, 2, 16777216, {{199, 1, 1, 0}}},                    // 201..202
    {203, 2, 16777216, {{201, 1, 1, 0}}},                    // 203..204
    {205, 2, 16777216, {{203, 1, 1, 0}}},                    // 205..206
    {207, 2, 4096, {{205, 1, 1, 0}}},                        // 207..208
    {209, 2, 4096, {{207, 1, 1, 0}}},                        // 209..210
    {211, 2, 4096, {{209, 1, 1, 0}}},                        // 211..212
    {213, 2, 16777216, {{201, 1, 1, 0}, {211, 1, 1, 0}}},    // 213..214
    {215, 2, 16777216, {{213, 1, 1, 0}}},                    // 215..216
    {217, 2, 16777216, {{215, 1, 1, 0}}},                    // 217..218
    {219, 1, 4096, {{218, 0, 1, 0}}},                        // 219
    {220, 1, 4096, {{219, 0, 1, 0}}},                        // 220
    {221, 4, 131072000, {{220, 0, 1, 0}}},                   // 221..224
    {225, 4, 32000, {{221, 1, 1, 0}}},                       // 225..228
};

static_assert(well_formed(chain_mm_rows) && well_formed(ffnn_rows) && well_formed(block_rows) &&
                  well_formed(layer_rows),
              "a published graph's rows must follow one another and read only earlier vertices");

template <std::size_t N>
[[nodiscard]] graph build(const row (&rows)[N], const char* name, const doppler_published_options& options) {
  if (!std::isfinite(options.cost_per_second) || !(options.cost_per_second > 0))
    throw invalid_input(std::string("doppler_published(") + name + "): cost_per_second must be finite and > 0, got " +
                        std::to_string(options.cost_per_second));
  std::size_t vertices = 0, edges = 0;
  for (const auto& r : rows) {
    vertices += r.count;
    for (const auto& o : r.operands) edges += o.from == unused ? 0 : std::size_t{r.count} * o.width;
  }
  graph g;
  g.reserve(vertices, edges);
  for (std::size_t k = 0; k < N; ++k) {
    const auto& r = rows[k];
    const std::string meta_op = std::string(name) + ".r" + std::to_string(k);
    for (std::uint32_t i = 0; i < r.count; ++i) {
      const auto comp = static_cast<double>(r.comp);
      const auto v = g.add_vertex({.name = r.count == 1 ? meta_op : meta_op + "[" + std::to_string(i) + "]",
                                   .compute = comp / options.cost_per_second,
                                   .output = 4 * r.comp,
                                   .flops = comp});
      for (const auto& o : r.operands)
        for (std::uint32_t w = 0; o.from != unused && w < o.width; ++w) {
          const vertex_id u = o.from + o.stride * (i / o.period) + o.phase * (i % o.period) + w;
          g.add_edge(u, v, g[u].output);
        }
    }
  }
  return g;
}

}  // namespace detail::published

// One of DOPPLER's published graphs; invalid_input for a cost_per_second that is not finite and > 0.
[[nodiscard]] inline graph doppler_published(doppler_graph which, const doppler_published_options& options = {}) {
  namespace p = detail::published;
  switch (which) {
    case doppler_graph::chain_mm:
      return p::build(p::chain_mm_rows, "chain_mm", options);
    case doppler_graph::ffnn:
      return p::build(p::ffnn_rows, "ffnn", options);
    case doppler_graph::transformer_block:
      return p::build(p::block_rows, "block", options);
    case doppler_graph::transformer_layer:
      return p::build(p::layer_rows, "layer", options);
  }
  throw invalid_input("doppler_published: unknown graph " + std::to_string(static_cast<int>(which)));
}

}  // namespace gantry
